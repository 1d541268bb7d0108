"""Predict first: the question before an action, one button per choice, and Skip."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from autograd_viz.core.learning.lab_predict import Question


class PredictBar(QWidget):
    """Asks one Question; `answered` carries the choice ("" when the learner skips)."""

    answered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("labPredict")
        self.question: Question | None = None
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setStyleSheet("font-weight: 600; color: #1e3a8a;")
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        self.buttons: dict[str, QPushButton] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.label)
        layout.addLayout(self._row)
        self.setStyleSheet("#labPredict { background: #eff6ff; border: 1px solid #bfdbfe; }")
        self.hide()

    def ask(self, question: Question) -> None:
        """Show a question; the action waits until a choice (or Skip) is clicked."""
        self.question = question
        self.label.setText(f"Predict first — {question.text}")
        while self._row.count():
            item = self._row.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.buttons = {}
        for choice in question.choices:
            button = QPushButton(choice)
            button.clicked.connect(lambda _=False, c=choice: self._answer(c))
            self._row.addWidget(button)
            self.buttons[choice] = button
        skip = QPushButton("Skip")
        skip.setToolTip("Run the action without predicting")
        skip.clicked.connect(lambda: self._answer(""))
        self._row.addWidget(skip)
        self.buttons[""] = skip
        self._row.addStretch(1)
        self.show()

    def _answer(self, choice: str) -> None:
        self.hide()
        self.answered.emit(choice)
