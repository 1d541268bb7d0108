"""\"Why is this .grad None?\": every reason on a script that has it, each answer confirmed
by torch (its one-line fix, applied to the script, gives the gradient; or torch itself
shows the stated cause)."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
import torch

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback import why_grad as why

HEAD = "import torch\n"


def _plain(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        exec(compile(code, "<plain>", "exec"), namespace)
    return namespace


def _ask(code: str, name: str, index: int | None = None) -> why.GradAnswer:
    trace = run_source(code)
    tensor = trace.tensor_named(name)
    assert tensor is not None
    return why.why_grad(trace, tensor.id, index, code)


# (script, the tensor asked about, the reason, the line named)
FIXABLE = {
    "created without requires_grad": (
        "x = torch.tensor([1.0, 2.0])\n"
        "w = torch.tensor([3.0, 4.0], requires_grad=True)\n"
        "loss = (x * w).sum()\n"
        "loss.backward()\n",
        "x",
        why.NO_REQUIRES_GRAD,
        2,
    ),
    "requires_grad switched off": (
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "w = torch.tensor([3.0, 4.0], requires_grad=True)\n"
        "x.requires_grad_(False)\n"
        "loss = (x * w).sum()\n"
        "loss.backward()\n",
        "x",
        why.SWITCHED_OFF,
        4,
    ),
    "a non-leaf": (
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "h = x * 2\n"
        "loss = (h * h).sum()\n"
        "loss.backward()\n",
        "h",
        why.NON_LEAF,
        3,
    ),
    "reset by zero_grad": (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.1)\n"
        "for step in range(2):\n"
        "    loss = (w * w).sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    opt.zero_grad()\n",
        "w",
        why.RESET,
        8,
    ),
    "no backward at all": (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\nloss = (w * 3).sum()\n",
        "w",
        why.NO_BACKWARD,
        None,
    ),
    "cut by detach()": (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = torch.tensor(1.0, requires_grad=True)\n"
        "loss = (w.detach() * 3).sum() + b\n"
        "loss.backward()\n",
        "w",
        why.CUT,
        4,
    ),
    "cut by .data": (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = torch.tensor(1.0, requires_grad=True)\n"
        "loss = (w.data * 3).sum() + b\n"
        "loss.backward()\n",
        "w",
        why.CUT,
        4,
    ),
    "computed under no_grad": (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = torch.tensor([1.0, 1.0], requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    h = w * 2\n"
        "loss = (h * b).sum()\n"
        "loss.backward()\n",
        "w",
        why.NO_GRAD_MODE,
        4,
    ),
    "computed in a no_grad function": (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = torch.tensor([1.0, 1.0], requires_grad=True)\n"
        "@torch.no_grad()\n"
        "def double(t):\n"
        "    return t * 2\n"
        "loss = (double(w) * b).sum()\n"
        "loss.backward()\n",
        "w",
        why.NO_GRAD_MODE,
        4,
    ),
}


@pytest.mark.parametrize("case", sorted(FIXABLE))
def test_each_reason_is_named_with_its_line_and_its_fix_gives_the_gradient(case: str) -> None:
    body, name, reason, line = FIXABLE[case]
    code = HEAD + body
    assert _plain(code)[name].grad is None  # torch agrees: no gradient as written
    answer = _ask(code, name)
    assert answer.reason == reason, answer
    assert answer.line == line
    assert answer.question == f"Why is {name}.grad None?"
    assert answer.answer and answer.fix
    assert answer.edit is not None
    fixed = _plain(answer.edit.apply(code))
    assert fixed[name].grad is not None  # the named cause was the cause


def test_torch_autograd_grad_returns_instead_of_filling_grad() -> None:
    code = HEAD + (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "loss = (w * 3).sum()\n"
        "(g,) = torch.autograd.grad(loss, [w])\n"
    )
    answer = _ask(code, "w")
    assert answer.reason == why.AUTOGRAD_GRAD and answer.line == 4
    plain = _plain(code)
    assert plain["w"].grad is None and plain["g"].tolist() == [3.0, 3.0]


def test_a_value_turned_into_a_number_is_named() -> None:
    code = HEAD + (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = torch.tensor(1.0, requires_grad=True)\n"
        "s = w.sum().item()\n"
        "loss = b * s\n"
        "loss.backward()\n"
    )
    answer = _ask(code, "w")
    assert answer.reason == why.CUT and answer.line == 4 and "item" in answer.answer
    plain = _plain(code)
    assert plain["w"].grad is None and plain["b"].grad is not None


def test_a_tensor_the_loss_does_not_use() -> None:
    code = HEAD + (
        "a = torch.ones(2, requires_grad=True)\n"
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "loss = (w * 2).sum()\n"
        "loss.backward()\n"
    )
    answer = _ask(code, "a")
    assert answer.reason == why.NOT_REACHING and "loss" in answer.answer
    plain = _plain(code)
    # torch's own word: loss does not depend on a.
    assert torch.autograd.grad((plain["w"] * 2).sum(), plain["a"], allow_unused=True) == (None,)


def test_before_the_backward_the_answer_is_that_none_ran_yet() -> None:
    code = HEAD + (
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\nloss = (w * 3).sum()\nloss.backward()\n"
    )
    trace = run_source(code)
    w = trace.tensor_named("w").id
    backward = next(i for i, e in enumerate(trace.events) if e["kind"] == "backward")
    early = why.why_grad(trace, w, backward - 1, code)
    assert early.reason == why.NO_BACKWARD and early.answer == "No backward() ran yet."
    late = why.why_grad(trace, w, None, code)
    assert late.reason == why.HAS_GRAD and late.question == "Why is w.grad [3.0, 3.0]?"


def test_sixteen_not_eight_shows_each_backward_that_added() -> None:
    # The lesson's loop without zero_grad(): the second backward adds 8 to the first 8.
    code = HEAD + (
        "w = torch.tensor(2.0, requires_grad=True)\n"
        "for step in range(2):\n"
        "    loss = w * w * 2\n"
        "    loss.backward()\n"
    )
    answer = _ask(code, "w")
    plain = _plain(code)
    assert plain["w"].grad.item() == 16.0
    assert answer.reason == why.HAS_GRAD and answer.question == "Why is w.grad 16.0?"
    assert answer.history == (
        "line 5: backward() added → None becomes 8.0",
        "line 5: backward() added → 8.0 becomes 16.0",
    )
    assert "2 backward passes added" in answer.answer and "zero_grad" in answer.fix
    # With the reset the fix names, torch gives the 8.
    fixed = code.replace("    loss.backward()\n", "    w.grad = None\n    loss.backward()\n")
    assert _plain(fixed)["w"].grad.item() == 8.0
