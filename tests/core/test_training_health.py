"""Gradient health over training steps: the recorded norms against torch's own, and the
flags on constructed cases (vanishing, exploding, dead units) and on a healthy MLP."""

from __future__ import annotations

import contextlib
import io
import math
from typing import Any

import numpy as np
import pytest
import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.training import DEAD, EXPLODE, VANISH, training_health

LOOP = """
opt = torch.optim.{optimizer}(model.parameters(), lr={lr})
for step in range({steps}):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _script(build: str, optimizer: str = "SGD", lr: float = 0.1, steps: int = 3) -> str:
    head = "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
    return head + build + LOOP.format(optimizer=optimizer, lr=lr, steps=steps)


HEALTHY = _script(
    "model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))\n"
    "x, y = torch.randn(64, 4), torch.randn(64, 1)\n",
    optimizer="Adam", lr=0.01, steps=20,
)  # fmt: skip
VANISHING = _script(
    "layers = []\n"
    "for i in range(30):\n"
    "    layers += [nn.Linear(16, 16), nn.Sigmoid()]\n"
    "model = nn.Sequential(*layers, nn.Linear(16, 1))\n"
    "x, y = torch.randn(32, 16), torch.randn(32, 1)\n"
)
EXPLODING = _script(
    "model = nn.Sequential(*[nn.Linear(16, 16) for _ in range(8)], nn.Linear(16, 1))\n"
    "for p in model.parameters():\n"
    "    nn.init.normal_(p, std=3.0)\n"
    "x, y = torch.randn(32, 16), torch.randn(32, 1)\n",
    lr=0.01,
)  # fmt: skip
DEAD_UNITS = _script(
    "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
    "with torch.no_grad():\n"
    "    model[0].bias[:3] = -100.0\n"
    "x, y = torch.randn(32, 4), torch.randn(32, 1)\n"
)


def _torch_steps(code: str) -> list[dict[str, Any]]:
    """Run `code` under torch alone; torch's own optimizer hooks read each step's norms."""
    steps: list[dict[str, Any]] = []
    before: dict[int, torch.Tensor] = {}

    def pre(optimizer, args, kwargs) -> None:
        before.clear()
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    before[id(p)] = p.detach().clone()

    def post(optimizer, args, kwargs) -> None:
        norms = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                if id(p) in before:
                    norms.append(
                        {
                            "grad_norm": p.grad.double().norm().item(),
                            "update_norm": (p.detach() - before[id(p)]).double().norm().item(),
                            "norm": p.detach().double().norm().item(),
                        }
                    )
        steps.append({"parameters": norms})

    hooks = [
        register_optimizer_step_pre_hook(pre),
        register_optimizer_step_post_hook(post),
    ]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "<plain>", "exec"), {"__name__": "__main__"})
    finally:
        for hook in hooks:
            hook.remove()
    return steps


@pytest.mark.parametrize("code", [HEALTHY, DEAD_UNITS], ids=["adam", "sgd"])
def test_each_steps_norms_are_torchs(code: str) -> None:
    trace = run_source(code)
    theirs = _torch_steps(code)
    assert len(trace.steps) == len(theirs)
    for ours, plain in zip(trace.steps, theirs, strict=True):
        assert len(ours["parameters"]) == len(plain["parameters"])
        for a, b in zip(ours["parameters"], plain["parameters"], strict=True):
            for key in ("grad_norm", "update_norm", "norm"):
                assert math.isclose(a[key], b[key], rel_tol=1e-9, abs_tol=1e-12), key
    # The loss charted for each step is the one its backward started from.
    losses = [e["values"][0]["data"] for e in trace.events if e.get("assigned") == "loss"]
    assert [s["loss"] for s in trace.steps] == pytest.approx(losses)


def test_a_healthy_mlp_is_not_flagged() -> None:
    health = training_health(run_source(HEALTHY))
    assert health.steps == 20 and len(health.parameters) == 4
    assert health.flags == []
    assert health.loss[-1] < health.loss[0]


def test_a_deep_sigmoid_mlp_flags_vanishing_gradients_in_its_first_layers() -> None:
    health = training_health(run_source(VANISHING))
    flagged = {f.name: f.step for f in health.flags if f.kind == VANISH}
    assert flagged["model.0.weight"] == 0 and flagged["model.0.bias"] == 0
    assert {f.kind for f in health.flags} == {VANISH}
    last = health.names.index("model.60.weight")  # the output layer learns
    assert health.grad_norm[last, 0] > 1e-3 and "model.60.weight" not in flagged


def test_a_too_large_init_flags_exploding_gradients() -> None:
    health = training_health(run_source(EXPLODING))
    assert {f.kind for f in health.flags} == {EXPLODE}
    assert health.flags[0].step == 0 and health.flags[0].value > 1e4


def test_a_large_negative_bias_flags_dead_units() -> None:
    health = training_health(run_source(DEAD_UNITS))
    (flag,) = health.flags
    assert flag.kind == DEAD and flag.name == "model.0.weight" and flag.value == 3
    assert flag.step == 0 and "3 of 8 units" in flag.text
    # torch agrees: the three units are off for every sample.
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 8)
    torch.nn.Linear(8, 1)
    with torch.no_grad():
        layer.bias[:3] = -100.0
    x = torch.randn(32, 4)
    assert (torch.relu(layer(x))[:, :3] == 0).all()


def test_steps_past_the_event_cap_keep_their_norms() -> None:
    trace = run_source(_script(
        "model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))\n"
        "x, y = torch.randn(64, 4), torch.randn(64, 1)\n", steps=30,
    ), max_events=200)  # fmt: skip
    assert any("recording stopped" in note for note in trace.notes)
    health = training_health(trace)
    assert health.steps == 30 and not np.isnan(health.grad_norm[:, -1]).any()
    assert health.events[0] is not None and health.events[-1] is None
    assert health.detailed_steps == sum(e is not None for e in health.events) < 30


def test_a_bias_a_batch_norm_cancels_is_flagged_with_that_cause() -> None:
    """A Conv2d's bias right before a BatchNorm2d: torch's gradient is 4.5e-08, rounding
    of an exact zero, and the flag said "the gradient vanished before reaching it", as if
    depth had starved it. It now says the norm cancels it; a bias not before a norm keeps
    the old words."""
    trace = run_source(
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),\n"
        "                      nn.Flatten(), nn.Linear(4 * 6 * 6, 2))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.randn(8, 1, 8, 8)\n"
        "for _ in range(2):\n"
        "    opt.zero_grad()\n"
        "    model(x).pow(2).mean().backward()\n"
        "    opt.step()\n"
    )
    health = training_health(trace)
    flags = [f for f in health.flags if f.name == "model.0.bias"]
    assert flags and "a BatchNorm right after it" in flags[0].text, health.flags
    assert flags[0].value < 1e-6
    assert not [f for f in health.flags if "BatchNorm" in f.text and f.name != "model.0.bias"]
