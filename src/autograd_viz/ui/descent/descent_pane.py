"""The descent pane: a loss surface, a learning-rate slider, and the paths real torch.optim
takes (several optimizers side by side), each with a caption computed from its path. The
surface can also be the user's own loss(w, b), or a model's loss landscape: both are
computed in the kernel, where the user's code ran."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.ui._plot_theme import DARK_PLOT, LIGHT_PLOT, style_plot
from autograd_viz.ui._step_buttons import StepControls
from autograd_viz.ui.descent._descent_paths import LOOKS, PathLayers
from autograd_viz.ui.descent._descent_sweep import RATE_COUNT, Sweep
from autograd_viz.ui.descent._rate_box import RateBox
from autograd_viz.ui.descent._rate_ticks import RateTicks
from autograd_viz.ui.descent._surface_plot import SurfacePlot
from autograd_viz.ui.descent._sweep_drawing import SweepDrawing
from autograd_viz.ui.descent._sweeper import Sweeper

if TYPE_CHECKING:
    from autograd_viz.session import KernelSession

USER, MODEL = "user", "model"  # the function choices computed in the kernel
LOSS_PLOT_HEIGHT = 170
WORDS_HEIGHT = 64  # the captions' and readouts' scroll area at its smallest
LANDSCAPE_DELAY_MS = 300  # a model's path is recomputed in the kernel once the slider rests
HELP = {
    USER: "Runs your editor's <code>def loss(w, b): …</code> in the kernel, on its device: "
    "write it with torch operations, press Ctrl+Enter, then choose this. Click the surface "
    "to start elsewhere.",
    MODEL: "Your editor's code defines <code>model</code> (an nn.Module) and "
    "<code>loss_fn()</code>, a function with no arguments returning the loss, e.g. "
    "<code>def loss_fn(): return F.mse_loss(model(x), y)</code>. Press Ctrl+Enter, then "
    "choose this. The surface is L(θ + α·d1 + β·d2) along two random filter-normalized "
    "directions around the current parameters θ (Li et al. 2018); the path is real SGD at "
    "the slider's rate from θ, projected onto that plane.",
}


class DescentPane(SweepDrawing, QWidget):
    """Drag the learning rate: the paths are already computed, so only the drawing changes."""

    sweep_ready = Signal()
    sweep_failed = Signal(str)

    def __init__(self, session: KernelSession | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        from autograd_viz.core.descent.paths import (  # torch loads here
            FUNCTIONS,
            learning_rate_grid,
        )

        self._functions = FUNCTIONS
        self._rates = learning_rate_grid(count=RATE_COUNT)
        self.session = session
        self._drawn: Sweep | None = None  # what is drawn: maybe only some rates yet
        self._asked = 0.0  # when the kernel was asked (its progress says for how long)
        self._drew_far = False  # the drawn path reached far outside the view
        self.start = FUNCTIONS["bowl"].start
        self.caption_texts: dict[str, str] = {}
        self.caption_kinds: dict[str, str] = {}
        self._keep_view = self._stale = False
        self.sweeper = Sweeper(session, self)
        self.sweeper.ready.connect(self._on_sweep)
        self.sweeper.failed.connect(self._on_failed)
        self.function = QComboBox()
        for key, spec in FUNCTIONS.items():
            self.function.addItem(f"{spec.title}: {spec.formula}", key)
        self.function.insertSeparator(self.function.count())
        self.function.addItem("Use loss(w, b) from the editor", USER)
        self.function.addItem("Model landscape: model and loss_fn() from the editor", MODEL)
        # Beale's formula is long: let the box be narrower than its longest item.
        self.function.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.function.setMinimumContentsLength(24)
        self.optimizer_boxes = {name: QCheckBox(look[2]) for name, look in LOOKS.items()}
        self.optimizer_boxes["sgd"].setChecked(True)
        self.rate_slider = QSlider(Qt.Orientation.Horizontal)
        self.rate_slider.setRange(0, len(self._rates) - 1)
        self.rate_ticks = RateTicks(self.rate_slider)
        self.rate_box = RateBox()
        self.rate_box.setRange(0.001, 2.0)
        self.rate_box.setSingleStep(0.01)
        self.steps = QSpinBox()
        self.steps.setRange(1, 1000)
        self.steps.setValue(50)
        self.span = QDoubleSpinBox()  # the model landscape's α, β range
        self.span.setRange(0.01, 20.0)
        self.span.setValue(1.0)
        self.span.setSingleStep(0.25)
        self.span.setToolTip("The grid covers α and β in [−span, span] (Li et al. use 1)")
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.help = QLabel()
        self.help.setWordWrap(True)
        self.help.setObjectName("descentHelp")
        self.help.setStyleSheet("color: #475569;")
        self.message = QLabel()
        self.message.setObjectName("descentMessage")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b91c1c; font-weight: 600;")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.caption = QLabel()
        self.caption.setObjectName("descentCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.readout = QLabel()
        self.readout.setWordWrap(True)
        self._landscape_timer = QTimer(self)
        self._landscape_timer.setSingleShot(True)
        self._landscape_timer.setInterval(LANDSCAPE_DELAY_MS)
        self._landscape_timer.timeout.connect(self.recompute)
        self._waiting = QTimer(self)  # the kernel computes: say for how long, every second
        self._waiting.setInterval(1000)
        self._waiting.timeout.connect(self._say_waiting)
        self._build_plots()
        self._build_layout()
        self.function.currentIndexChanged.connect(self._function_changed)
        for box in self.optimizer_boxes.values():
            box.toggled.connect(self._optimizers_changed)
        self.steps.valueChanged.connect(self.recompute)
        self.span.valueChanged.connect(self.recompute)
        self.rate_slider.valueChanged.connect(self._rate_slider_moved)
        # A drag can leave pixels of a far-reaching path behind (its old bounds were huge):
        # once the handle is let go the whole plot repaints, from the final rate's data.
        self.rate_slider.sliderReleased.connect(self.surface_plot.repaint_whole)
        self.rate_box.editingFinished.connect(self._rate_typed)
        self.step_slider.valueChanged.connect(self._draw_path)
        if session is not None:
            session.run_finished.connect(self._code_ran)
        self.set_learning_rate(0.1)
        self._show_source_widgets()
        self.recompute()

    # ---- assembly --------------------------------------------------------------
    def _build_plots(self) -> None:
        self.surface_plot = SurfacePlot(self._functions["bowl"].extent)
        self.surface_plot.scene().sigMouseClicked.connect(self._surface_clicked)
        self.loss_plot = pg.PlotWidget(background="#ffffff")
        self.loss_plot.setLabel("bottom", "step")
        self.loss_plot.setLabel("left", "loss")
        self.loss_plot.setMinimumHeight(LOSS_PLOT_HEIGHT)  # a 60 px chart read as nothing
        self.loss_plot.setLogMode(y=True)
        self.loss_plot.getAxis("left").setStyle(maxTextLevel=0)  # label decades only
        self.paths = PathLayers(self.surface_plot, self.loss_plot, LOOKS)
        # Axes and the colour bar change with a new sweep, not with a slider tick: each is
        # drawn once into a pixmap and copied while the paths move (half a tick's paint).
        cached = [self.surface_plot.colour_bar]
        for plot in (self.surface_plot, self.loss_plot):
            cached += [plot.getAxis(name) for name in ("left", "bottom")]
        for item in cached:
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def _build_layout(self) -> None:
        form = QFormLayout()
        form.addRow("function", self.function)
        boxes = QHBoxLayout()
        for box in self.optimizer_boxes.values():
            boxes.addWidget(box)
        boxes.addStretch(1)
        form.addRow("optimizers", boxes)
        rate_column = QVBoxLayout()
        rate_column.setSpacing(0)
        rate_column.addWidget(self.rate_slider)
        rate_column.addWidget(self.rate_ticks)
        rate_row = QHBoxLayout()
        rate_row.addLayout(rate_column, 1)
        rate_row.addWidget(self.rate_box, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("learning rate", rate_row)
        form.addRow("steps", self.steps)
        form.addRow("span", self.span)
        self.step_controls = StepControls(self.step_slider)
        form.addRow("step", self.step_controls)
        self.form = form
        side = QVBoxLayout()
        side.addLayout(form)
        side.addWidget(self.help)
        side.addWidget(self.message)
        # Three optimizers' captions and readouts wrap to a dozen lines: in a small window
        # they scroll, and the loss chart keeps its height instead of being pushed out.
        words = QWidget()
        column = QVBoxLayout(words)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.caption)
        column.addWidget(self.readout)
        column.addStretch(1)
        self.words = _WordsArea()
        self.words.setWidget(words)
        self.words.setWidgetResizable(True)
        self.words.setFrameShape(QFrame.Shape.NoFrame)
        self.words.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.words.setMinimumHeight(WORDS_HEIGHT)
        side.addWidget(self.words, 0)
        side.addWidget(self.loss_plot, 1)
        row = QHBoxLayout(self)
        row.addWidget(self.surface_plot, 3)
        row.addLayout(side, 2)

    def _show_source_widgets(self) -> None:
        source = self.function.currentData()
        self.form.setRowVisible(self.span, source == MODEL)
        for name, box in self.optimizer_boxes.items():
            box.setEnabled(source != MODEL or name == "sgd")
        self.help.setText(HELP.get(source, ""))
        self.help.setVisible(source in HELP)

    # ---- inputs ----------------------------------------------------------------
    @property
    def sweep(self) -> Sweep | None:
        """The sweep once every rate's path is computed (None while computing or failed)."""
        return self._drawn if self._drawn is not None and self._drawn.complete else None

    @property
    def learning_rate(self) -> float:
        """The learning rate the slider shows."""
        return self._rates[self.rate_slider.value()]

    def rates(self) -> list[float]:
        """The slider's learning rates (log-spaced, with the lesson's round values)."""
        return self._rates

    @property
    def optimizers(self) -> list[str]:
        """The optimizers whose paths are shown (only SGD for a model landscape)."""
        if self.function.currentData() == MODEL:
            return ["sgd"]
        return [name for name, box in self.optimizer_boxes.items() if box.isChecked()]

    def set_dark(self, dark: bool) -> None:
        """Follow the window's theme: plot backgrounds, axes and the help text."""
        self.surface_plot.set_dark(dark)
        style_plot(self.loss_plot, dark)
        self.help.setStyleSheet(f"color: {'#a3a3a3' if dark else '#475569'};")
        self.message.setStyleSheet(f"color: {'#f87171' if dark else '#b91c1c'}; font-weight: 600;")
        self.rate_ticks.set_dark(dark)
        # The legend box followed no theme: a white box on the dark plot.
        legend = self.paths.legend
        legend.setBrush(pg.mkBrush(23, 23, 23, 215) if dark else pg.mkBrush(255, 255, 255, 215))
        legend.setPen(pg.mkPen(DARK_PLOT[1] if dark else LIGHT_PLOT[1]))
        legend.setLabelTextColor(DARK_PLOT[1] if dark else "#0f172a")
        for _, label in legend.items:  # setLabelTextColor stores the colour, draws nothing
            label.setText(label.text)

    def set_learning_rate(self, rate: float) -> None:
        """Move the slider to the position nearest `rate`."""
        rates = self._rates
        index = min(range(len(rates)), key=lambda i: abs(math.log(rates[i] / rate)))
        self.rate_slider.setValue(index)
        self._rate_slider_moved(index)

    def set_function(self, key: str) -> None:
        """Show a built-in function ("bowl", …), "user" (loss(w, b)) or "model"."""
        self.function.setCurrentIndex(self.function.findData(key))

    def set_optimizers(self, names: list[str]) -> None:
        """Show exactly these optimizers' paths (one recompute, of the new ones only)."""
        for name, box in self.optimizer_boxes.items():
            box.blockSignals(True)
            box.setChecked(name in names)
            box.blockSignals(False)
        self.recompute()

    def _optimizers_changed(self, checked: bool) -> None:
        if not checked and not self.optimizers:  # keep at least one path to show
            box = self.sender()
            box.blockSignals(True)
            box.setChecked(True)
            box.blockSignals(False)
            return
        self.recompute()

    def _rate_slider_moved(self, _index: int) -> None:
        self.rate_box.blockSignals(True)
        self.rate_box.setValue(self.learning_rate)
        self.rate_box.blockSignals(False)
        if self.function.currentData() == MODEL:
            if self._drawn is None or self._drawn.rates != [self.learning_rate]:
                self._landscape_timer.start()  # its path is computed at one rate, in the kernel
            return
        self.step_slider.setValue(self.step_slider.maximum())
        self._draw_path()

    def _rate_typed(self) -> None:
        self.set_learning_rate(self.rate_box.value())

    def _function_changed(self) -> None:
        source = self.function.currentData()
        self.start = self._functions[source].start if source in self._functions else (0.5, 1.0)
        self._show_source_widgets()
        self.recompute()

    def _code_ran(self, _ok: bool) -> None:
        # The editor's code ran again: its loss or model may have changed. A hidden pane
        # waits until it is shown, so the kernel is not kept busy for nothing.
        self._stale = self.function.currentData() in (USER, MODEL)
        if self._stale and self.isVisible():
            self.recompute()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.recompute()

    def _surface_clicked(self, event) -> None:
        if (
            self._drawn is None
            or self._drawn.kind == "model"
            or event.button() != Qt.MouseButton.LeftButton
        ):
            return
        point = self.surface_plot.getViewBox().mapSceneToView(event.scenePos())
        drawn = self._drawn
        w, b = float(point.x()), float(point.y())
        (w0, w1), (b0, b1) = sorted(drawn.ws[[0, -1]]), sorted(drawn.bs[[0, -1]])
        if not (w0 <= w <= w1 and b0 <= b <= b1):
            # Off the coloured surface (the white below an equal-aspect plot): a start
            # there would be drawn nowhere, its paths coming in from the surface's edge.
            self.caption.setText("Click on the coloured surface to start the paths there.")
            return
        self.start = (w, b)
        self._keep_view = True  # a new start on the user's surface keeps its window
        self.recompute()

    # ---- computing (off the GUI thread, or in the kernel) -----------------------
    def recompute(self) -> None:
        """Start computing paths for every learning rate; the pane redraws as they come."""
        self._landscape_timer.stop()
        source, steps = self.function.currentData(), self.steps.value()
        self._keep_view, keep_view = False, self._keep_view
        self._stale = False
        self._waiting.stop()
        self.caption.setText("Computing the paths…")
        drawn = self._drawn
        if source in (USER, MODEL):
            self._asked = time.monotonic()
            self._waiting.start()
        if source == MODEL:
            self.caption.setText("Computing the landscape in the kernel…")
            self.sweeper.model(self.learning_rate, steps, self.span.value())
        elif source == USER:
            self.caption.setText("Computing the paths in the kernel…")
            same = keep_view and drawn is not None and drawn.key[0] == USER
            bounds = [list(drawn.ws[[0, -1]]), list(drawn.bs[[0, -1]])] if same else None
            self.sweeper.user_function(
                self.optimizers, self.start, steps, bounds, self.learning_rate
            )
        else:
            reuse = self.sweep if self.sweep is not None and self.sweep.kind == "function" else None
            self.sweeper.builtin(
                source, self.optimizers, self.start, steps, reuse, self.learning_rate
            )

    def _say_waiting(self) -> None:
        seconds = time.monotonic() - self._asked
        self.caption.setText(f"Computing in the kernel… {seconds:.0f} s")


class _WordsArea(QScrollArea):
    """The captions and the readout: as tall as their text at this width, the loss chart
    taking the rest; they scroll only when the pane is too short for both (four
    optimizers' captions were cut mid-line under a chart with room to spare)."""

    def __init__(self) -> None:
        super().__init__()
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self._fitted = -1

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(hint.width(), self._text_height())

    def refit(self) -> None:
        """The text changed: ask the pane again for room, when its height did."""
        height = self._text_height()
        if height != self._fitted:
            self._fitted = height
            self.updateGeometry()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.refit()  # the text wraps to another number of lines

    def _text_height(self) -> int:
        inner = self.widget()
        layout = inner.layout() if inner is not None else None
        if layout is None:
            return super().sizeHint().height()
        width = max(1, self.viewport().width())
        return layout.totalHeightForWidth(width) + 2 * self.frameWidth()
