"""The player bar: Forward / Backward, the transport buttons, a timeline and a caption."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.core.playback.bar_text import caption_now, end_caption
from autograd_viz.core.playback.player import BACKWARD, EVERYTHING, FORWARD, Player
from autograd_viz.core.playback.run_text import nothing_ran
from autograd_viz.core.playback.run_view import MODE_NAMES, RunView, ShownRun
from autograd_viz.ui.graph._caption_label import CaptionLabel
from autograd_viz.ui.graph.memory_bar import MemoryBar

STEP_MS = 700  # one step per this many milliseconds at 1× speed
SPEEDS = {"0.5×": 0.5, "1×": 1.0, "2×": 2.0, "4×": 4.0, "10×": 10.0}

SLIDER_MIN_WIDTH = 80
PREPARING = "Preparing the replay: the steps of this run are on their way…"
OPEN_TEXT = "Show its {n} ops"
FOLD_TEXT = "Fold into one step"


class PlayerBar(QWidget):
    """Drives a Player; the canvas, the editor and the inspector follow the player (through
    their RunView), not this bar."""

    frame_changed = Signal()  # the player moved (or was replaced)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playerBar")
        self.player: Player | None = None
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._tick)
        self._build()
        self.set_player(None)

    # ---- assembly --------------------------------------------------------------
    def _button(self, icon: QStyle.StandardPixmap, tip: str, slot) -> QToolButton:
        # The style's own media icons: a font may lack the ⏮ ⏸ ⏭ glyphs.
        button = QToolButton(self)
        button.setIcon(self.style().standardIcon(icon))
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(slot)
        return button

    def _build(self) -> None:
        self.mode_buttons = QButtonGroup(self)
        modes = QHBoxLayout()
        modes.setSpacing(0)
        for mode, tip in (
            (FORWARD, "Each op in execution order, with its value"),
            (BACKWARD, "The engine's real order, the gradient on each edge"),
            (EVERYTHING, "Every recorded event, in order"),
        ):
            button = QToolButton(self)
            button.setText(MODE_NAMES[mode])
            button.setToolTip(tip)
            button.setCheckable(True)
            button.setProperty("mode", mode)
            self.mode_buttons.addButton(button)
            modes.addWidget(button)
        self.mode_buttons.buttonClicked.connect(
            lambda b: self.player and self.player.set_mode(b.property("mode"))
        )
        pixmap = QStyle.StandardPixmap
        self.start_button = self._button(
            pixmap.SP_MediaSkipBackward, "To the start (Home)", self.to_start
        )
        self.back_button = self._button(
            pixmap.SP_MediaSeekBackward, "Step back (←)", self.step_back
        )
        self.play_button = self._button(
            pixmap.SP_MediaPlay, "Play / pause (Space)", self.toggle_play
        )
        self.step_button = self._button(
            pixmap.SP_MediaSeekForward, "Step forward (→)", self.step_forward
        )
        self.end_button = self._button(pixmap.SP_MediaSkipForward, "To the end (End)", self.to_end)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setToolTip("Timeline: drag to any step")
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.setMinimumWidth(SLIDER_MIN_WIDTH)  # a timeline, never a dot to aim at
        self.speed = QComboBox(self)
        self.speed.addItems(list(SPEEDS))
        self.speed.setCurrentText("1×")
        self.speed.setToolTip("Playback speed")
        self.speed.currentTextChanged.connect(self._update_interval)
        self.position_label = QLabel(self)
        self.position_label.setMinimumWidth(70)
        # Two lines always: a one-line caption must not make the controls above it jump,
        # and a longer one is elided, whole in its tooltip.
        self.caption = CaptionLabel(self)
        self.caption.setObjectName("playerCaption")
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.caption.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addLayout(modes)
        row.addSpacing(8)
        for widget in (
            self.start_button,
            self.back_button,
            self.play_button,
            self.step_button,
            self.end_button,
        ):
            row.addWidget(widget)
        row.addWidget(self.slider, 1)
        row.addWidget(self.position_label)
        row.addWidget(self.speed)
        # A step that folds a module's construction opens into its ops, and folds back.
        # The button keeps its room while hidden, so the caption beside it never reflows.
        self.fold_button = QToolButton(self)
        self.fold_button.setObjectName("foldButton")
        self.fold_button.clicked.connect(self.toggle_fold)
        policy = self.fold_button.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.fold_button.setSizePolicy(policy)
        self.fold_button.setText(FOLD_TEXT)  # the longer text sizes it
        self.fold_button.setFixedWidth(self.fold_button.sizeHint().width())
        self.fold_button.hide()
        below = QHBoxLayout()
        below.setContentsMargins(0, 0, 0, 0)
        below.addWidget(self.caption, 1)
        below.addWidget(self.fold_button, 0, Qt.AlignmentFlag.AlignTop)
        # What the graph holds for backward now (hidden for a run whose nodes saved none).
        self.memory = MemoryBar(self)
        below.addWidget(self.memory, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 4)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addLayout(below)
        self._update_interval()

    def install_shortcuts(self, area: QWidget) -> None:
        """Space, ←, →, Home, End drive the player while focus is inside `area`."""
        for key, slot in (
            ("Space", self.toggle_play),
            ("Left", self.step_back),
            ("Right", self.step_forward),
            ("Home", self.to_start),
            ("End", self.to_end),
        ):
            shortcut = QShortcut(QKeySequence(key), area)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)

    # ---- the player ------------------------------------------------------------
    def follow(self, view: RunView) -> None:
        """Drive the player of whatever run `view` shows."""

        def follow_run(run: ShownRun | None) -> None:
            if run is None:
                self.set_player(None)
            elif nothing_ran(run.trace):  # no invitation to replay what did not run
                self.set_player(
                    None, "Nothing to replay: the code did not compile, so no line ran."
                )
            elif not run.player.ready:  # a big run: its steps follow the picture
                self.set_player(None, PREPARING)
            else:
                self.set_player(run.player)

        def ready() -> None:
            if view.run is not None and self.player is not view.run.player:
                self.set_player(view.run.player)

        view.run_changed.connect(follow_run)
        view.player_ready.connect(ready)
        self.memory.follow(view)

    def set_player(self, player: Player | None, why: str = "") -> None:
        """Follow a new player (None: nothing to play, and `why`, if said)."""
        self.pause()
        if self.player is not None:
            self.player.position_changed.disconnect(self._on_position)
            self.player.mode_changed.disconnect(self._on_mode)
        self.player = player
        for widget in (
            self.start_button,
            self.back_button,
            self.play_button,
            self.step_button,
            self.end_button,
            self.slider,
            self.speed,
        ):
            widget.setEnabled(player is not None)
        for button in self.mode_buttons.buttons():
            button.setEnabled(player is not None)
        if player is None:
            self.caption.setText(
                why or "Run your code, then step through its forward and backward passes here."
            )
            self.position_label.setText("")
            self.slider.blockSignals(True)
            self.slider.setRange(-1, -1)  # an empty timeline, not the last run's position
            self.slider.blockSignals(False)
            self.fold_button.hide()
            return
        player.position_changed.connect(self._on_position)
        player.mode_changed.connect(self._on_mode)
        self._on_mode(player.mode)
        self.caption.setText(end_caption(player))

    def _on_mode(self, mode: str) -> None:
        for button in self.mode_buttons.buttons():
            button.setChecked(button.property("mode") == mode)
        self._sync()

    def _on_position(self, _position: int) -> None:
        self._sync()
        if self.player is not None:
            self.caption.setText(caption_now(self.player))
        self.frame_changed.emit()

    def _sync(self) -> None:
        player = self.player
        if player is None:
            return
        count = len(player.steps)
        # Until the player first moves the canvas shows the run's end, so the timeline
        # stands at its end too; ⏮ and ← then leave it.
        end = not player.moved and count > 0
        self.slider.blockSignals(True)
        self.slider.setRange(-1, max(-1, count - 1))
        self.slider.setValue(count - 1 if end else player.position)
        self.slider.blockSignals(False)
        self.position_label.setText(f"end / {count}" if end else f"{player.position + 1} / {count}")
        self._sync_fold(player)

    def _sync_fold(self, player: Player) -> None:
        group = player.fold_at()
        step = player.current
        self.fold_button.setVisible(bool(group))
        if group and step is not None and step.folded:
            self.fold_button.setText(OPEN_TEXT.format(n=len(group)))
            self.fold_button.setToolTip("Step through each torch op this statement ran")
        elif group:
            self.fold_button.setText(FOLD_TEXT)
            self.fold_button.setToolTip("Show this statement's ops as one step again")

    def toggle_fold(self) -> None:
        """Open the current module-building step into its ops, or fold them back."""
        self.pause()
        if self.player is not None:
            self.player.toggle_fold()

    # ---- transport -------------------------------------------------------------
    def step_forward(self) -> None:
        """One step on."""
        if self.player is not None:
            self.player.step_forward()

    def step_back(self) -> None:
        """One step back."""
        self.pause()
        if self.player is not None:
            if not self.player.moved:  # from the run's end, back to the view's last step
                self.player.seek(len(self.player.steps) - 1, force=True)
            else:
                self.player.step_back()

    def to_start(self) -> None:
        """Back to the start."""
        self.pause()
        if self.player is not None:
            # Already at position -1 while the run's end is shown: the start must still show.
            self.player.seek(-1, force=not self.player.moved)

    def to_end(self) -> None:
        """Jump to the last step."""
        self.pause()
        if self.player is not None:
            self.player.to_end()

    @property
    def playing(self) -> bool:
        """Whether playback is running."""
        return self._timer.isActive()

    def toggle_play(self) -> None:
        """Play from here (from the start when at the end), or pause."""
        if self.playing:
            self.pause()
            return
        if self.player is None or not self.player.steps:
            return
        if self.player.at_end():
            self.player.to_start()
        self._timer.start()
        self.play_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPause))

    def pause(self) -> None:
        """Stop playback where it is."""
        self._timer.stop()
        self.play_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))

    def _tick(self) -> None:
        if self.player is None or not self.player.step_forward():
            self.pause()

    def _slider_moved(self, value: int) -> None:
        if self.player is not None:
            self.player.seek(value)

    def _update_interval(self, *_args) -> None:
        self._timer.setInterval(int(STEP_MS / SPEEDS.get(self.speed.currentText(), 1.0)))
