"""The quiz: well-formed questions, judged answers, and right answers that torch agrees with."""

from __future__ import annotations

import contextlib
import io

import pytest

from autograd_viz.core.learning.lessons import load_lessons
from autograd_viz.core.learning.quiz import QUESTIONS, Feedback, answer, question, questions_for


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def run_snippet(code: str) -> object:
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<quiz>", "exec"), namespace)
    return namespace["result"]


def test_questions_are_well_formed() -> None:
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    lesson_ids = {lesson.id for lesson in load_lessons()}
    for q in QUESTIONS:
        assert q.lesson_id in lesson_ids
        assert len(q.choices) >= 2 and len(set(q.choices)) == len(q.choices)
        assert 0 <= q.right < len(q.choices)
        assert q.prompt.strip() and len(q.explanation) > 40
        assert q.code, f"{q.id}: every question shows its answer in torch"
    assert len(questions_for("lesson1")) >= 3 and len(questions_for("lesson2")) >= 5


def test_lesson_2s_check_your_understanding_question() -> None:
    q = question("l2-item")
    assert q.choices == ("Yes", "No") and q.right_choice == "No"
    assert ".item()" in q.prompt


def test_answer_judges_by_index_or_text() -> None:
    right = answer("l2-item", 1)
    assert right == Feedback(True, question("l2-item").explanation, "No")
    wrong = answer("l2-item", "Yes")
    assert not wrong.correct and wrong.right_choice == "No" and wrong.explanation
    with pytest.raises(ValueError):
        answer("l2-item", 2)
    with pytest.raises(ValueError):
        answer("l2-item", "Maybe")
    with pytest.raises(KeyError):
        answer("no-such-question", 0)


@pytest.mark.parametrize("q", QUESTIONS, ids=[q.id for q in QUESTIONS])
def test_right_answers_are_what_torch_computes(q) -> None:
    result = run_snippet(q.code)
    number = _number(q.right_choice)
    if number is not None:
        assert float(result) == number  # e.g. 16, 15, 12, 3.0: torch's own numbers
        for other in q.choices:
            if other != q.right_choice and _number(other) is not None:
                assert float(result) != _number(other)
        return
    expected = {
        "l2-item": "float",  # a Python float: "No", no autograd connection
        "l2-second-backward": "RuntimeError",
        "l2-eval": True,  # still recorded after eval(): "No"
        "l1-leaf-grads": (42.0, 28.0, None),  # x and w only
    }
    if q.id in expected:
        assert result == expected[q.id]
    else:
        assert str(result) == q.right_choice  # None, False, torch.float32


def test_retain_grad_question_says_the_original_14_was_wrong() -> None:
    q = question("l1-retain-grad")
    assert q.right_choice == "12" and "14" in q.choices and "14" in q.explanation
    assert run_snippet(q.code) == 12.0
