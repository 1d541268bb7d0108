"""Every exercise, in lesson order: lesson 1's practice, then lesson 2's Part 2.

An exercise is a statement, a starter and hidden cases (see `exercise_checks.Case`); each
case computes its expected answer with real torch when the check runs. torch is imported
inside the case functions, so listing the exercises does not load it.
"""

from __future__ import annotations

from autograd_viz.core.learning.exercise_checks import Case, Exercise
from autograd_viz.core.learning.exercises_lesson1 import LESSON1_EXERCISES
from autograd_viz.core.learning.exercises_lesson2 import LESSON2_EXERCISES

__all__ = ["EXERCISES", "Case", "Exercise"]

EXERCISES: dict[str, Exercise] = {e.id: e for e in (*LESSON1_EXERCISES, *LESSON2_EXERCISES)}
