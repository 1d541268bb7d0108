"""First / back / forward / last buttons around a step slider."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QSlider, QStyle, QToolButton, QWidget

PIXMAP = QStyle.StandardPixmap


class StepControls(QWidget):
    """A step slider with first / back buttons before it and forward / last after it; the
    buttons only move the slider.

    They show the style's own media icons, as the graph's player bar does: a font may lack
    the ⏮ ⏭ glyphs, and a missing glyph draws as an empty box.
    """

    def __init__(self, slider: QSlider, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.slider = slider
        self.buttons: dict[str, QToolButton] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        moves = (
            ("first", PIXMAP.SP_MediaSkipBackward, "First step (the start)", slider.minimum),
            ("back", PIXMAP.SP_MediaSeekBackward, "One step back", lambda: slider.value() - 1),
            ("forward", PIXMAP.SP_MediaSeekForward, "One step forward", lambda: slider.value() + 1),
            ("last", PIXMAP.SP_MediaSkipForward, "Last step", slider.maximum),
        )
        for name, icon, tip, target in moves[:2]:
            layout.addWidget(self._button(name, icon, tip, target))
        layout.addWidget(slider, 1)
        for name, icon, tip, target in moves[2:]:
            layout.addWidget(self._button(name, icon, tip, target))
        slider.valueChanged.connect(self._update_enabled)
        slider.rangeChanged.connect(lambda *_: self._update_enabled())
        self._update_enabled()

    def _button(self, name: str, icon: QStyle.StandardPixmap, tip: str, target) -> QToolButton:
        button = QToolButton()
        button.setIcon(self.style().standardIcon(icon))
        button.setToolTip(tip)
        button.setAccessibleName(tip)  # a screen reader has no icon to read
        button.setAutoRaise(True)
        button.clicked.connect(lambda: self.slider.setValue(target()))
        self.buttons[name] = button
        return button

    def _update_enabled(self) -> None:
        at_start = self.slider.value() <= self.slider.minimum()
        at_end = self.slider.value() >= self.slider.maximum()
        self.buttons["first"].setEnabled(not at_start)
        self.buttons["back"].setEnabled(not at_start)
        self.buttons["forward"].setEnabled(not at_end)
        self.buttons["last"].setEnabled(not at_end)
