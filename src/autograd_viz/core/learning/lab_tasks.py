"""The lab's self-checking tasks: predicates over the state torch reported, step by step.

A task never asks which buttons were pressed. It reads the `Step`s of a `core.lab.Lab`:
each step's .grad values, requires_grad and is_leaf as torch had them afterwards, the
error torch raised, how many backward passes the engine ran, and which forward pass the
current loss came from. The targets are what torch itself says one backward adds
(`Step.adds`), so "accumulates to 16" means "twice what one backward adds".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from autograd_viz.core.learning.lab import Step

DESCENT_MAX_STEPS = 10  # "pick a learning rate that converges within 10 steps"


@dataclass(frozen=True)
class LabTask:
    """One task: its progress key, the lesson it comes from, its text and its check."""

    key: str
    lesson: int
    text: str
    check: Callable[[Sequence[Step]], bool] | None  # None: checked by another view


def _close(a: object, b: object) -> bool:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return False
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _rounds(steps: Sequence[Step]) -> list[tuple[int, Step]]:
    """The steps whose backward pass ran without an error, with their index."""
    return [(i, s) for i, s in enumerate(steps) if s.backward_ok]


def _consecutive_rounds(steps: Sequence[Step]):
    return itertools.pairwise(_rounds(steps))


def w_and_b_but_not_x(steps: Sequence[Step]) -> bool:
    """w and b hold a gradient while x (there, not requiring grad) still has None."""
    return any(
        s.grad("w") is not None
        and s.grad("b") is not None
        and s.tensor("x") is not None
        and s.grad("x") is None
        for s in steps
    )


def accumulated_over_two_rounds(steps: Sequence[Step]) -> bool:
    """Two backwards on two different forwards, nothing reset between: w.grad doubled."""
    for (_, a), (_, b) in _consecutive_rounds(steps):
        one = b.adds("w")
        if one is None:
            continue
        if (
            a.state.get("forward") != b.state.get("forward")
            and _close(a.grad("w"), one)
            and _close(b.grad("w"), 2 * one)
        ):
            return True
    return False


def reset_between_rounds(steps: Sequence[Step]) -> bool:
    """A backward that gave w a gradient, w.grad emptied (None or zeros), another backward:
    w.grad ends at what one backward adds."""
    for (i, a), (j, b) in _consecutive_rounds(steps):
        had = a.grad("w") is not None and not _close(a.grad("w"), 0.0)
        emptied = any(s.grad("w") is None or _close(s.grad("w"), 0.0) for s in steps[i + 1 : j])
        if had and emptied and _close(b.grad("w"), b.adds("w")):
            return True
    return False


def second_time_error(steps: Sequence[Step]) -> bool:
    """torch refused to walk a freed graph again."""
    return any(
        s.error is not None
        and s.error.get("type") == "RuntimeError"
        and "backward through the graph a second time" in s.error.get("message", "")
        for s in steps
    )


def retained_graph_twice(steps: Sequence[Step]) -> bool:
    """Two backwards on ONE forward, both without an error: w.grad doubled."""
    for (_, a), (_, b) in _consecutive_rounds(steps):
        one = b.adds("w")
        if one is None:
            continue
        if (
            a.state.get("forward") is not None
            and a.state.get("forward") == b.state.get("forward")
            and _close(a.grad("w"), one)
            and _close(b.grad("w"), 2 * one)
        ):
            return True
    return False


def leaf_holds_grad_non_leaf_does_not(steps: Sequence[Step]) -> bool:
    """After a backward the leaf w has a .grad and the non-leaf z has none."""
    return any(
        (w := s.tensor("w")) is not None
        and (z := s.tensor("z")) is not None
        and w["is_leaf"]
        and w["grad"] is not None
        and not z["is_leaf"]
        and z["grad"] is None
        for s in steps
    )


def non_leaf_kept_its_grad(steps: Sequence[Step]) -> bool:
    """The non-leaf z came out of a backward with a .grad (it asked to retain it)."""
    return any(
        (z := s.tensor("z")) is not None and not z["is_leaf"] and z["grad"] is not None
        for s in steps
    )


def forward_without_recording(steps: Sequence[Step]) -> bool:
    """w requires grad, yet z = w * x and loss came out with requires_grad False."""
    return any(
        (w := s.tensor("w")) is not None
        and (z := s.tensor("z")) is not None
        and (loss := s.tensor("loss")) is not None
        and w["requires_grad"]
        and not z["requires_grad"]
        and z["grad_fn"] is None
        and not loss["requires_grad"]
        for s in steps
    )


def check_descent_task(steps_to_tolerance: int | None) -> bool:
    """The descent view's path reached the minimum within DESCENT_MAX_STEPS steps."""
    return steps_to_tolerance is not None and 0 <= steps_to_tolerance <= DESCENT_MAX_STEPS


TASKS: tuple[LabTask, ...] = (
    LabTask(
        "lab.w_b_not_x",
        2,
        "One forward and one backward: w and b get gradients, x stays None "
        "(x does not require grad).",
        w_and_b_but_not_x,
    ),
    LabTask(
        "lab.accumulate_16",
        2,
        "Make w.grad accumulate to 16: two full forward-and-backward rounds, "
        "no zero_grad in between.",
        accumulated_over_two_rounds,
    ),
    LabTask(
        "lab.zero_grad_8",
        2,
        "Reset between rounds: two backwards with a zero_grad between them, "
        "so w.grad ends at 8, not 16.",
        reset_between_rounds,
    ),
    LabTask(
        "lab.second_time_error",
        2,
        "Trigger the 'second time' error on purpose: backward twice on one forward pass.",
        second_time_error,
    ),
    LabTask(
        "lab.retain_graph_16",
        2,
        "Two backwards on ONE forward without an error, by keeping the graph the first "
        "time (retain_graph=True); w.grad ends at 16.",
        retained_graph_twice,
    ),
    LabTask(
        "lesson1.leaf_non_leaf",
        1,
        "Leaf vs non-leaf: after a backward, the leaf w holds a .grad while the "
        "non-leaf z = w * x holds none.",
        leaf_holds_grad_non_leaf_does_not,
    ),
    LabTask(
        "lesson1.retain_grad",
        1,
        "retain_grad: make the non-leaf z keep its gradient through a backward.",
        non_leaf_kept_its_grad,
    ),
    LabTask(
        "lesson1.no_grad",
        1,
        "no_grad: with w requiring grad, run a forward whose z and loss come out "
        "with requires_grad False.",
        forward_without_recording,
    ),
    LabTask(
        "lesson1.descent_10_steps",
        1,
        f"Descent view: pick a learning rate that reaches the minimum within "
        f"{DESCENT_MAX_STEPS} steps.",
        None,
    ),
)


def tasks_done(steps: Sequence[Step]) -> dict[str, bool]:
    """Which lab tasks the steps so far satisfy (tasks checked elsewhere are left out)."""
    return {t.key: bool(t.check(steps)) for t in TASKS if t.check is not None}
