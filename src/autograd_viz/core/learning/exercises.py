"""Exercises that check themselves: the registry and the results of a check.

Every expected value is computed by real torch when the check runs, never typed in (see
`exercise_catalog`). The learner's code runs in a child process with a time limit (see
`exercise_runner`), so a solution that hangs or kills its interpreter fails its case
instead of taking the app down.

Importing this module does not import torch: the GUI lists exercises without loading it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from autograd_viz.core.learning.exercise_catalog import EXERCISES, Case, Exercise

__all__ = [
    "DEFAULT_TIMEOUT",
    "EXERCISES",
    "Case",
    "CaseResult",
    "CheckResult",
    "Exercise",
    "get_exercise",
]

DEFAULT_TIMEOUT = 5.0  # seconds for loading a solution, and again for each case


@dataclass
class CaseResult:
    """How one case went: expected and got as text, and the learner's error if any."""

    name: str
    description: str
    passed: bool
    expected: str
    got: str | None = None
    message: str = ""  # why it failed, in one line ("values differ", "timed out after 5 s")
    error: str | None = None  # the traceback of the learner's exception, their lines only
    line: int | None = None  # the learner's line where it went wrong
    seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)

    def verdict(self) -> str:
        """One line: `PASS name`, `FAIL name: expected X, got Y (why)` or `FAIL name: why`."""
        if self.passed:
            return f"PASS {self.name}"
        if self.got is not None and self.error is None:
            why = f" ({self.message})" if self.message else ""
            return f"FAIL {self.name}: expected {self.expected}, got {self.got}{why}"
        return f"FAIL {self.name}: {self.message or 'failed'}"


@dataclass
class CheckResult:
    """All cases of one exercise against one solution."""

    exercise: str
    cases: list[CaseResult] = field(default_factory=list)
    output: str = ""  # what the solution printed (stdout and stderr)
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        """Number of passing cases."""
        return sum(c.passed for c in self.cases)

    @property
    def failed(self) -> int:
        """Number of failing cases."""
        return len(self.cases) - self.passed

    @property
    def all_passed(self) -> bool:
        """Every case passed (and there was at least one)."""
        return bool(self.cases) and self.failed == 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the totals."""
        return {
            "exercise": self.exercise,
            "passed": self.passed,
            "failed": self.failed,
            "all_passed": self.all_passed,
            "seconds": round(self.seconds, 3),
            "cases": [c.to_dict() for c in self.cases],
            "output": self.output,
        }


def get_exercise(exercise_id: str) -> Exercise:
    """The exercise with this id, or a KeyError naming the ones there are."""
    try:
        return EXERCISES[exercise_id]
    except KeyError:
        raise KeyError(
            f"no exercise {exercise_id!r}: choose one of {', '.join(EXERCISES)}"
        ) from None
