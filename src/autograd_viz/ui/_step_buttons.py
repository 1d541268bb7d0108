"""First / back / forward / last buttons around a step slider."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QSlider, QToolButton, QWidget


class StepControls(QWidget):
    """A step slider with ⏮ ◀ ▶ ⏭ beside it; the buttons only move the slider."""

    def __init__(self, slider: QSlider, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.slider = slider
        self.buttons: dict[str, QToolButton] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        moves = (
            ("first", "⏮", "First step (the start)", lambda: slider.minimum()),
            ("back", "◀", "One step back", lambda: slider.value() - 1),
            ("forward", "▶", "One step forward", lambda: slider.value() + 1),
            ("last", "⏭", "Last step", lambda: slider.maximum()),
        )
        for name, text, tip, target in moves[:2]:
            layout.addWidget(self._button(name, text, tip, target))
        layout.addWidget(slider, 1)
        for name, text, tip, target in moves[2:]:
            layout.addWidget(self._button(name, text, tip, target))
        slider.valueChanged.connect(self._update_enabled)
        slider.rangeChanged.connect(lambda *_: self._update_enabled())
        self._update_enabled()

    def _button(self, name: str, text: str, tip: str, target) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
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
