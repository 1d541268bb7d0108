"""The quiz: "check your understanding" questions per lesson, judged at once, with a score
kept in the learner's progress."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget
from shiboken6 import isValid

from autograd_viz.core.learning.lessons import Lesson, load_lessons
from autograd_viz.core.learning.progress import Progress
from autograd_viz.core.learning.quiz import QUESTIONS, Feedback, Question, answer
from autograd_viz.ui.learning._question_card import QuestionCard

KIND = "quiz"


class QuizPane(QWidget):
    """Every question of every lesson, one card each; the score counts right answers."""

    example_requested = Signal(str, bool)  # a question's torch snippet, run

    def __init__(
        self,
        progress: Progress,
        questions: tuple[Question, ...] = QUESTIONS,
        lessons: tuple[Lesson, ...] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.progress = progress
        self.questions = questions
        self.cards: dict[str, QuestionCard] = {}

        self.score = QLabel()
        self.score.setObjectName("quizScore")
        self.score.setStyleSheet("font-weight: 600;")
        page = QWidget()
        page.setObjectName("quizPage")
        column = QVBoxLayout(page)
        column.setContentsMargins(16, 12, 16, 16)
        column.setSpacing(10)
        lessons = lessons or load_lessons()
        titles = {lesson.id: lesson.title for lesson in lessons}
        asked = dict.fromkeys(q.lesson_id for q in questions)
        order = [i for i in titles if i in asked] + [i for i in asked if i not in titles]
        number = 0
        for lesson_id in order:
            heading = QLabel(titles.get(lesson_id, lesson_id))
            heading.setStyleSheet("font-size: 13pt; font-weight: 600; margin-top: 6px;")
            column.addWidget(heading)
            for q in (q for q in questions if q.lesson_id == lesson_id):
                number += 1
                card = QuestionCard(q, number)
                card.answered.connect(self.answer)
                card.code_requested.connect(self.example_requested)
                column.addWidget(card)
                self.cards[q.id] = card
        column.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.score)
        layout.addWidget(self.scroll, 1)

        progress.changed.connect(self._on_progress)
        progress.was_reset.connect(self._on_reset)
        self._restore()

    def answer(self, question_id: str, choice: int) -> Feedback:
        """Judge a choice, show the verdict on its card and record it in the progress."""
        feedback = answer(question_id, choice)
        card = self.cards[question_id]
        card.show_feedback(feedback, choice)
        self.progress.mark(KIND, question_id, feedback.correct)
        self._show_score()
        return feedback

    @property
    def right_count(self) -> int:
        """How many questions the learner has answered right."""
        return sum(self.progress.is_done(KIND, q.id) for q in self.questions)

    def _restore(self) -> None:
        """Questions answered right in an earlier session show as answered."""
        for q in self.questions:
            card = self.cards[q.id]
            if self.progress.is_done(KIND, q.id):
                card.show_feedback(answer(q.id, q.right), q.right, earlier=True)
            else:
                card.clear()
        self._show_score()

    def _show_score(self) -> None:
        total = len(self.questions)
        self.score.setText(f"Score: {self.right_count} of {total} answered right")

    def _on_progress(self, kind: str, _key: str, _done: bool) -> None:
        if kind == KIND and isValid(self):  # psygnal may outlive the widget
            self._show_score()

    def _on_reset(self) -> None:
        if isValid(self):
            self._restore()
