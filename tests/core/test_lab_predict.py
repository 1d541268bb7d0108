"""Predict first against plain torch: every short action sequence, every question.

The Lab builds each question from torch's outcome on a copy of its namespace; here the real
answer is computed again by plain torch code written in this file (not the lab's action
strings, not its state readers), and the question's choices must hold it. The step that
really runs must then be judged to that same answer.
"""

from __future__ import annotations

import contextlib
import io
import itertools
from collections.abc import Callable

import pytest
import torch

from autograd_viz.core.learning.lab import ACTIONS, Lab, format_number, lab_step
from autograd_viz.core.learning.lab_predict import judge, question_for

START = {"w": 3.0, "x": 2.0, "b": 1.0}  # the lesson's numbers
ACTION_KEYS = tuple(ACTIONS)  # forward, no_grad forward, backward(s), zero_grads, item, detach…


def _forward(t: dict) -> None:
    t["z"] = t["w"] * t["x"]
    t["loss"] = (t["z"] + t["b"] - 5) ** 2


def _forward_no_grad(t: dict) -> None:
    with torch.no_grad():
        _forward(t)


def _zero_none(t: dict) -> None:
    for name in "wxb":
        t[name].grad = None


def _zero_inplace(t: dict) -> None:
    for name in "wxb":
        if t[name].grad is not None:
            t[name].grad.zero_()


def _item(t: dict) -> None:
    t["z_item"] = t["z"].item()
    t["loss"] = (t["z_item"] + t["b"] - 5) ** 2


def _detach(t: dict) -> None:
    t["z_detached"] = t["z"].detach()
    t["loss"] = (t["z_detached"] + t["b"] - 5) ** 2


PLAIN: dict[str, Callable[[dict], None]] = {
    "forward": _forward,
    "forward_no_grad": _forward_no_grad,
    "backward": lambda t: t["loss"].backward(),
    "backward_retain": lambda t: t["loss"].backward(retain_graph=True),
    "zero_none": _zero_none,
    "zero_inplace": _zero_inplace,
    "retain_grad": lambda t: t["z"].retain_grad(),
    "item": _item,
    "detach": _detach,
}


def _reaches_w(t: dict) -> bool:
    loss = t.get("loss")
    todo = [loss.grad_fn] if isinstance(loss, torch.Tensor) and loss.grad_fn else []
    while todo:
        node = todo.pop()
        if getattr(node, "variable", None) is t["w"]:
            return True
        todo.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _text(grad: torch.Tensor | None) -> str:
    return "None" if grad is None else format_number(grad.item())


def _leaves(requires: dict[str, bool]) -> dict:
    return {n: torch.tensor(v, requires_grad=requires[n]) for n, v in START.items()}


def torch_answer(requires: dict[str, bool], sequence: tuple[str, ...]) -> str:
    """Plain torch: run the sequence; the answer to the last action's question."""
    t = _leaves(requires)
    *before, last = sequence
    for key in before:
        with contextlib.suppress(Exception):  # an error here is part of the history
            PLAIN[key](t)
    old = None if t["w"].grad is None else t["w"].grad.clone()
    try:
        PLAIN[last](t)
    except Exception:
        return "an error"
    new = t["w"].grad
    if last.startswith("backward"):
        if new is not None and old is not None and torch.equal(new, old):
            return f"unchanged ({_text(old)})"
        return _text(new)
    if last.startswith("zero"):
        return _text(new)
    if last in ("item", "detach"):
        return "yes" if _reaches_w(t) else "no"
    if last.startswith("forward"):
        return "yes" if t["loss"].requires_grad else "no"
    return "yes" if t["z"].is_leaf else "no"  # retain_grad: is z a leaf?


def _played(requires: dict[str, bool], prefix: tuple[str, ...]) -> tuple[Lab, dict]:
    lab = Lab()
    lab.requires_grad.update(requires)
    namespace: dict = {}
    with contextlib.redirect_stderr(io.StringIO()):
        lab.record("setup", lab.setup(), lab_step(namespace, lab.setup(), fresh=True))
        for key in prefix:
            lab.record(key, lab.code_for(key), lab_step(namespace, lab.code_for(key)))
    return lab, namespace


def _check_every_question(requires: dict[str, bool], longest_prefix: int, judged: bool) -> int:
    asked = 0
    for length in range(longest_prefix + 1):
        for prefix in itertools.product(ACTION_KEYS, repeat=length):
            lab, _ = _played(requires, prefix)
            state = lab.state
            for key in ACTION_KEYS:
                question = question_for(key, state)
                assert question is not None, (prefix, key)
                real = torch_answer(requires, (*prefix, key))
                assert real in question.choices, (prefix, key, real, question.choices)
                assert question.expected == real, (prefix, key)
                assert "an error" in question.choices
                asked += 1
                if judged:  # run it for real, in a copy of the lab, and judge it
                    lab2, _ = _played(requires, (*prefix, key))
                    verdict = judge(question, real, state, lab2.last)
                    assert verdict.actual == real and verdict.held, (prefix, key)
    return asked


ALL_ON = {"w": True, "x": True, "b": True}
DEFAULT = {"w": True, "x": False, "b": True}


def test_every_question_of_sequences_up_to_three_holds_torchs_answer() -> None:
    # Sequences of length ≤ 3: every prefix of ≤ 2 actions, then each action asked about.
    assert _check_every_question(DEFAULT, 2, judged=False) == 9 * (1 + 9 + 81)


@pytest.mark.parametrize("requires", [ALL_ON, {"w": False, "x": False, "b": True}])
def test_every_question_with_other_requires_grad(requires: dict[str, bool]) -> None:
    assert _check_every_question(requires, 1, judged=False) == 9 * 10


def test_the_judge_agrees_with_torch_on_two_action_sequences() -> None:
    _check_every_question(DEFAULT, 1, judged=True)


@pytest.mark.slow
def test_every_question_of_sequences_up_to_four() -> None:
    _check_every_question(DEFAULT, 3, judged=False)


def test_after_item_the_next_backward_column_is_what_torch_adds() -> None:
    keys = ("forward", "backward") * 3 + ("forward", "item")
    lab, _ = _played(DEFAULT, keys)
    # plain torch: w.grad is 24 after three rounds; a backward of the item() loss adds nothing
    t = _leaves(DEFAULT)
    for key in keys:
        PLAIN[key](t)
    w_before, b_before = t["w"].grad.clone(), t["b"].grad.clone()
    t["loss"].backward()
    w_added = (t["w"].grad - w_before).item()
    b_added = (t["b"].grad - b_before).item()
    measured = lab.state["next_backward"]["leaves"]
    assert (measured["w"]["added"], measured["b"]["added"]) == (w_added, b_added) == (0.0, 4.0)
    assert lab.last.grad("w") == 24.0
    question = question_for("backward", lab.state)
    assert question.expected == "unchanged (24)" and "unchanged (24)" in question.choices
