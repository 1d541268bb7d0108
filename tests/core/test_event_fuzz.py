"""Random programs of writes, views, resets, steps and backward passes: the event values
must still agree with the eager reference.

The tracer shares one snapshot between events while a tensor is unchanged, so its risk
is a write it did not notice. Each program mixes the ways a tensor gets written (in place,
through a view, through `.data`, through `detach()`, by the optimizer, by NumPy, by the
engine accumulating `.grad`) with the events that show tensors. Every statement runs in a
`try`, so a program carries on past torch's own errors, which both sides raise alike.

`AUTOGRAD_VIZ_FUZZ_PROGRAMS` sets how many programs run (CI runs the default).
"""

from __future__ import annotations

import os
import random

import pytest

from tests.core.test_event_fidelity import assert_events_agree

PROGRAMS = int(os.environ.get("AUTOGRAD_VIZ_FUZZ_PROGRAMS", "100"))
STATEMENTS = 14
TORCH_ERRORS = "(RuntimeError, AttributeError, TypeError, IndexError, ValueError)"

SETUP = """
import numpy as np
import torch
torch.manual_seed({seed})
w = torch.randn(3, 80, requires_grad=True)
b = torch.randn(80, requires_grad=True)
x = torch.randn(2, 3)
arr = np.ones((2, 80), dtype=np.float32)
shared = torch.from_numpy(arr)
opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9)
adam = torch.optim.Adam([w, b], lr=0.01, foreach=True)
h = x @ w + b
"""

# Each entry is one statement (or a few), written against w, b, x, h, arr, shared, opt.
MOVES = [
    "h = x @ w + b",
    "h = torch.tanh(h) * 2",
    "h = h.relu() + shared",
    "h = (h * h).sum(dim=0) + b",
    "h.mul_(1.5)",
    "h[:, :4].add_(1.0)",
    "(h ** 2).mean().backward(retain_graph=True)",
    "(h ** 2).mean().backward()",
    "h.sum().backward(retain_graph=True)",
    "torch.autograd.backward([(h * 3).sum(), b.sum()], retain_graph=True)",
    "opt.step()",
    "opt.step()\n    w.data.mul_(0.9)\n    opt.step()",
    "(x @ w + b).pow(2).sum().backward()\n    opt.step()",
    "opt.zero_grad()",
    "w.grad = None",
    "w.grad.zero_()",
    "w.grad.add_(1.0)",
    "b.grad.mul_(2.0)",
    "with torch.no_grad():\n        w -= 0.1 * w.grad",
    "w.data.mul_(0.9)",
    "w.detach().add_(0.01)",
    "b.data[0] = 5.0",
    "arr += 1.0",
    "b.detach().numpy()[1] = -3.0",
    "h.register_hook(lambda g: g * 2)",
    "torch.nn.utils.clip_grad_norm_([w, b], 1.0)",
    "g, = torch.autograd.grad(h.sum(), w, retain_graph=True)",
    "v = w[:, :10]\n    v2 = v * 2\n    v2.sum().backward()",
    "w.grad.data.mul_(0.5)",
    "torch.add(b.grad, 1.0, out=b.grad)",
    "w.grad.copy_(torch.ones_like(w.grad))",
    "torch.nn.utils.clip_grad_value_([w, b], 0.1)",
    "h.retain_grad()\n    (h * h).sum().backward(retain_graph=True)",
    "flat = h.view(-1)\n    flat.mul_(2)",
    "w.grad.numpy()[0, 0] = 5.0",
    "adam.step()",
    "adam.zero_grad(set_to_none=False)",
]


def _program(seed: int) -> str:
    rng = random.Random(seed)
    lines = [SETUP.format(seed=seed)]
    for _ in range(STATEMENTS):
        move = rng.choice(MOVES)
        lines.append(f"try:\n    {move}\nexcept {TORCH_ERRORS}:\n    pass\n")
    return "".join(lines)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_random_programs_agree_with_the_reference(seed: int) -> None:
    assert_events_agree(_program(seed), f"program {seed}:\n{_program(seed)}")
