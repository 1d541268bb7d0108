"""The learning-rate spin box, which writes a rate exactly as the caption does."""

from __future__ import annotations

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QDoubleSpinBox, QWidget


class RateBox(QDoubleSpinBox):
    """A QDoubleSpinBox whose text is the caption's "lr = …" number (0.10, 0.00103)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Enough decimals to hold every slider rate (0.00103); the text is not these.
        self.setDecimals(6)

    def textFromValue(self, value: float) -> str:
        """The caption's own format, so the box and the caption never disagree."""
        from autograd_viz.core.descent.paths import _rate  # the caption's formatter

        return _rate(value)

    def valueFromText(self, text: str) -> float:
        """A typed rate, in any float notation (1e-3 too)."""
        try:
            return float(text.replace(",", "."))
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int) -> object:
        """Accept anything a float could become while it is typed."""
        allowed = set("0123456789.,eE+-")
        state = QValidator.State.Intermediate
        if text and set(text) <= allowed:
            try:
                float(text.replace(",", "."))
                state = QValidator.State.Acceptable
            except ValueError:
                pass
        elif text and not set(text) <= allowed:
            state = QValidator.State.Invalid
        return state, text, pos
