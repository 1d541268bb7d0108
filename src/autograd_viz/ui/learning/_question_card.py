"""One quiz question: the prompt, a radio button per choice, and the feedback once answered."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.core.learning.quiz import Feedback, Question

RIGHT_COLOUR, WRONG_COLOUR = "#166534", "#b91c1c"


class QuestionCard(QFrame):
    """Shows a question; picking a choice emits `answered` (the pane judges it and calls
    `show_feedback`). Choices lock once answered; a wrong answer offers Try again."""

    answered = Signal(str, int)  # question id, choice index
    code_requested = Signal(str, bool)  # the question's torch snippet, run

    def __init__(self, question: Question, number: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = question
        self.setObjectName("questionCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#questionCard { background: #f8fafc; border: 1px solid #d0d7de; border-radius: 6px; }"
        )
        self.prompt = QLabel(f"**{number}.** {question.prompt}")
        self.prompt.setTextFormat(Qt.TextFormat.MarkdownText)
        self.prompt.setWordWrap(True)
        self.group = QButtonGroup(self)
        self.buttons: list[QRadioButton] = []
        column = QVBoxLayout(self)
        column.setContentsMargins(10, 8, 10, 8)
        column.setSpacing(4)
        column.addWidget(self.prompt)
        for index, choice in enumerate(question.choices):
            button = QRadioButton(choice)
            self.group.addButton(button, index)
            self.buttons.append(button)
            column.addWidget(button)
        self.group.idClicked.connect(lambda index: self.answered.emit(question.id, index))
        self.feedback = QLabel()
        self.feedback.setObjectName("quizFeedback")
        self.feedback.setTextFormat(Qt.TextFormat.MarkdownText)
        self.feedback.setWordWrap(True)
        self.feedback.hide()
        column.addWidget(self.feedback)
        self.retry_button = QPushButton("Try again")
        self.retry_button.clicked.connect(self.clear)
        self.code_button = QPushButton("See it in torch: open in editor")
        self.code_button.setToolTip(
            "Put a snippet that computes the answer with torch in the editor"
        )
        self.code_button.clicked.connect(lambda: self.code_requested.emit(question.code, False))
        row = QHBoxLayout()
        row.addWidget(self.retry_button)
        row.addWidget(self.code_button)
        row.addStretch(1)
        column.addLayout(row)
        self.clear()

    def show_feedback(self, feedback: Feedback, chosen: int, earlier: bool = False) -> None:
        """Tick the chosen answer, lock the choices, say whether it was right and why."""
        self.buttons[chosen].setChecked(True)
        for index, button in enumerate(self.buttons):
            button.setEnabled(False)
            if index == self.question.right:
                button.setStyleSheet(f"color: {RIGHT_COLOUR}; font-weight: 600;")
            elif index == chosen:
                button.setStyleSheet(f"color: {WRONG_COLOUR};")
        if feedback.correct:
            verdict = "✓ **Right** (answered earlier)." if earlier else "✓ **Right.**"
            colour = RIGHT_COLOUR
        else:
            verdict = f"✗ **Not quite.** The answer is *{feedback.right_choice}*."
            colour = WRONG_COLOUR
        self.feedback.setStyleSheet(f"color: {colour};")
        self.feedback.setText(f"{verdict} {feedback.explanation}")
        self.feedback.show()
        self.retry_button.setVisible(not feedback.correct)
        self.code_button.setVisible(bool(self.question.code))

    def clear(self) -> None:
        """Back to unanswered: no choice ticked, no feedback."""
        self.group.setExclusive(False)
        for button in self.buttons:
            button.setChecked(False)
            button.setEnabled(True)
            button.setStyleSheet("")
        self.group.setExclusive(True)
        self.feedback.hide()
        self.feedback.clear()
        self.retry_button.hide()
        self.code_button.hide()

    @property
    def is_answered(self) -> bool:
        """Whether feedback is showing."""
        return not self.feedback.isHidden()
