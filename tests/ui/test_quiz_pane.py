"""The quiz pane: answer by clicking, see the verdict and the score, keep it between launches."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt

from autograd_viz.core.learning.progress import load_progress
from autograd_viz.core.learning.quiz import QUESTIONS, question
from autograd_viz.ui.learning.quiz_pane import QuizPane
from autograd_viz.ui.main_window import MainWindow

TOTAL = len(QUESTIONS)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "progress.json"


def _pane(qtbot, path: Path) -> QuizPane:
    widget = QuizPane(load_progress(path))
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    return widget


def _choose(qtbot, pane: QuizPane, question_id: str, index: int) -> None:
    button = pane.cards[question_id].buttons[index]
    # On the indicator: a radio button takes clicks on its circle and label only.
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))


def test_every_question_has_a_card_and_the_score_starts_at_zero(qtbot, path) -> None:
    pane = _pane(qtbot, path)
    by_lesson = [q.id for q in QUESTIONS if q.lesson_id == "lesson1"]
    by_lesson += [q.id for q in QUESTIONS if q.lesson_id == "lesson2"]
    assert list(pane.cards) == by_lesson  # in lesson order
    assert pane.score.text() == f"Score: 0 of {TOTAL} answered right"
    assert not any(card.is_answered for card in pane.cards.values())


def test_a_right_answer_is_praised_explained_scored_and_saved(qtbot, path) -> None:
    pane = _pane(qtbot, path)
    _choose(qtbot, pane, "l2-item", 1)  # "No"
    card = pane.cards["l2-item"]
    assert card.is_answered and card.feedback.text().startswith("✓ **Right.**")
    assert question("l2-item").explanation in card.feedback.text()
    assert not any(b.isEnabled() for b in card.buttons)  # locked once answered
    assert card.retry_button.isHidden()
    assert pane.score.text() == f"Score: 1 of {TOTAL} answered right"
    assert load_progress(path).is_done("quiz", "l2-item")


def test_a_wrong_answer_names_the_right_one_and_can_be_retried(qtbot, path) -> None:
    pane = _pane(qtbot, path)
    _choose(qtbot, pane, "l1-retain-grad", 2)  # 14: the original lesson's mistake
    card = pane.cards["l1-retain-grad"]
    assert "Not quite" in card.feedback.text() and "*12*" in card.feedback.text()
    assert "14" in card.feedback.text()
    assert pane.score.text() == f"Score: 0 of {TOTAL} answered right"
    assert not load_progress(path).is_done("quiz", "l1-retain-grad")
    qtbot.mouseClick(card.retry_button, Qt.MouseButton.LeftButton)
    assert not card.is_answered and all(b.isEnabled() for b in card.buttons)
    _choose(qtbot, pane, "l1-retain-grad", 1)
    assert "Right" in card.feedback.text()
    assert pane.score.text() == f"Score: 1 of {TOTAL} answered right"


def test_answers_survive_a_new_launch_and_reset_clears_them(qtbot, path) -> None:
    first = _pane(qtbot, path)
    _choose(qtbot, first, "l2-parameters", 1)  # 15
    _choose(qtbot, first, "l2-accumulate", 1)  # 16
    second = _pane(qtbot, path)  # a new load_progress(), as after a restart
    assert second.score.text() == f"Score: 2 of {TOTAL} answered right"
    card = second.cards["l2-parameters"]
    assert card.is_answered and "answered earlier" in card.feedback.text()
    assert card.buttons[1].isChecked()
    second.progress.reset()
    assert second.score.text() == f"Score: 0 of {TOTAL} answered right"
    assert not card.is_answered and not any(b.isChecked() for b in card.buttons)
    assert load_progress(path).count("quiz") == (0, 0)


def test_see_it_in_torch_opens_the_snippet_in_the_editor(qtbot, path) -> None:
    win = MainWindow(progress=load_progress(path))
    qtbot.addWidget(win)
    win.show()
    win.show_tab("Quiz")
    _choose(qtbot, win.quiz, "l2-accumulate", 0)
    card = win.quiz.cards["l2-accumulate"]
    assert card.code_button.isVisibleTo(win.quiz)
    qtbot.mouseClick(card.code_button, Qt.MouseButton.LeftButton)
    assert win.editor.text().rstrip("\n") == question("l2-accumulate").code.rstrip("\n")
    assert "Quiz 0/" in win.lessons.summary.text()
    _choose(qtbot, win.quiz, "l1-dtype", 1)
    assert f"Quiz 1/{TOTAL}" in win.lessons.summary.text()  # the lessons header follows
    win.close()
