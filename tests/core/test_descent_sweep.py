"""The sweep the descent pane draws, and its kernel form for the user's own loss(w, b)."""

from __future__ import annotations

import json
import math
import re

import pytest
import torch

from autograd_viz.core.descent.paths import FUNCTIONS, OPTIMIZERS, descend, describe_path
from autograd_viz.core.descent.sweep import (
    NO_FUNCTION,
    POINTWISE,
    as_batched,
    batched_loss,
    sweep_in_namespace,
    sweep_optimizer,
)

RATES = [0.01, 0.1, 0.5, 1.05]
USER_CODE = "import torch\ndef loss(w, b):\n    return (w - 1) ** 2 + 4 * (b + 0.5) ** 2\n"


def _namespace(code: str) -> dict:
    namespace: dict = {"__name__": "__main__"}
    exec(compile(code, "<editor>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_sweep_rows_are_single_runs_with_autograds_gradient(optimizer: str) -> None:
    bowl = FUNCTIONS["bowl"]
    run = sweep_optimizer(bowl.fn, bowl.start, RATES, 30, optimizer, bowl.minimum)
    for row, lr in enumerate(RATES):
        one = descend(bowl.fn, bowl.start, lr, 30, optimizer)
        assert torch.allclose(run.paths[row], one, equal_nan=True)
        assert run.captions[row] == describe_path(one, lr, bowl.minimum)
    # ∂L/∂w = 2(w − 3), ∂L/∂b = 2(b + 2) at the start
    assert run.grads[0, 0].tolist() == [2 * (0.5 - 3), 2 * (1.0 + 2)]


def test_sweep_in_namespace_runs_the_users_function() -> None:
    namespace = _namespace(USER_CODE)
    result = sweep_in_namespace(
        namespace, optimizers=["sgd", "momentum"], learning_rates=RATES, steps=20, resolution=16
    )
    json.dumps(result)  # plain data, ready for the kernel's answer
    assert result["device"] in ("cpu", "cuda:0") and result["start"] == [0.5, 1.0]
    fn = namespace["loss"]
    for name in ("sgd", "momentum"):
        expected = descend(fn, (0.5, 1.0), 0.1, 20, name)
        found = torch.tensor(result["runs"][name]["paths"][1], dtype=torch.float64)
        assert torch.allclose(found, expected)
    (w0, w1), (b0, b1) = result["extent"]
    assert w0 < 0.5 < w1 and b0 < 1.0 < b1 and w0 < 1.0 < w1 and b0 < -0.5 < b1
    ws, bs, grid = result["ws"], result["bs"], result["grid"]
    assert grid[3][7] == pytest.approx(fn(torch.tensor(ws[7]), torch.tensor(bs[3])).item())
    # Hessian diag(2, 8): 1/8 one step, 2/8 bounces, taken at the start (no known minimum)
    t = result["thresholds"]
    assert t["one_step"] == pytest.approx(0.125) and t["bounce"] == pytest.approx(0.25)
    assert t["at"] == "start" and t["exact"]


def test_sweep_in_namespace_says_what_is_missing() -> None:
    with pytest.raises(LookupError, match=re.escape(NO_FUNCTION)):
        sweep_in_namespace({}, learning_rates=RATES, steps=3)
    tensor_loss = _namespace("import torch\nloss = torch.tensor(2.0)\n")
    with pytest.raises(LookupError, match="is a tensor, not a function loss"):
        sweep_in_namespace(tensor_loss, learning_rates=RATES, steps=3)
    raising = _namespace("def loss(w, b):\n    return w / 0 if False else 1 / 0\n")
    with pytest.raises(ZeroDivisionError):
        sweep_in_namespace(raising, learning_rates=RATES, steps=3)


def test_scalar_only_user_code_is_evaluated_point_by_point() -> None:
    scalar = _namespace(
        "import math, torch\n"
        "def loss(w, b):\n"
        "    if w.item() > 100:\n"  # a Python if on one value: cannot take a batch
        "        return w * 0\n"
        "    return (w - 1) ** 2 + 4 * (b + 0.5) ** 2\n"
    )
    batched = as_batched(scalar["loss"])
    w, b = torch.tensor([[0.0, 2.0]]), torch.tensor([[1.0, -1.0]])
    assert batched(w, b).tolist() == [[1 + 4 * 2.25, 1 + 4 * 0.25]]
    a = sweep_in_namespace(scalar, learning_rates=RATES, steps=10, resolution=8)
    b = sweep_in_namespace(_namespace(USER_CODE), learning_rates=RATES, steps=10, resolution=8)
    assert a["runs"]["sgd"]["paths"] == b["runs"]["sgd"]["paths"]


def test_every_optimizer_sweeps() -> None:
    bowl = FUNCTIONS["bowl"]
    for name in OPTIMIZERS:
        run = sweep_optimizer(bowl.fn, bowl.start, [0.05], 5, name, bowl.minimum)
        assert run.paths.shape == (1, 6, 3) and run.grads.shape == (1, 6, 2)


def test_what_the_kernel_writes_is_read_back_the_same() -> None:
    """The app decodes a kernel's sweep with the inverse of the kernel's encoder."""
    from autograd_viz.core.descent.paths import learning_rate_thresholds
    from autograd_viz.core.descent.sweep import (
        caption_from_json,
        sweep_optimizer,
        thresholds_from_json,
        thresholds_json,
    )

    spec = FUNCTIONS["bowl"] if "bowl" in FUNCTIONS else next(iter(FUNCTIONS.values()))
    thresholds = learning_rate_thresholds(spec.fn, spec.minimum, (0.5, 1.0))
    assert thresholds_from_json(thresholds_json(thresholds), "start") == thresholds
    assert thresholds_from_json(None, "start") is None
    run = sweep_optimizer(spec.fn, (0.5, 1.0), [0.01, 0.1], 5, "sgd", spec.minimum)
    from autograd_viz.core.descent.sweep import sweep_json

    written = sweep_json(run)
    assert [caption_from_json(c) for c in written["captions"]] == run.captions


DATASET_LOSS = (
    "import torch\n"
    "calls = []\n"
    "x = torch.linspace(-1, 1, 20)\n"
    "y = 3 * x - 2 + 0.1 * torch.sin(5 * x)\n"
    "def loss(w, b):\n"
    "    calls.append(1)\n"
    "    return ((w * x + b - y) ** 2).mean()\n"
)


def test_a_loss_over_a_dataset_is_batched_by_vmap_not_called_per_point() -> None:
    """A learner's mean-squared error reduces to one number a point: torch.func.vmap gives
    every point of the sweep in a few calls, with the values one call per point gives."""
    namespace = _namespace(DATASET_LOSS)
    batched, how = batched_loss(namespace["loss"])
    assert how == "vmap"
    w = torch.linspace(-3, 4, 35, dtype=torch.float64).reshape(5, 7)
    b = torch.linspace(2, -5, 35, dtype=torch.float64).reshape(5, 7)
    del namespace["calls"][:]
    got = batched(w, b)
    assert len(namespace["calls"]) == 1
    expected = torch.stack(
        [namespace["loss"](wi, bi) for wi, bi in zip(w.reshape(-1), b.reshape(-1), strict=True)]
    ).reshape(5, 7)
    # w * x with a float32 x computes in float32 either way (a 0-d w does not promote it)
    assert got.shape == (5, 7) and torch.equal(got, expected.double())

    del namespace["calls"][:]
    answer = sweep_in_namespace(namespace, learning_rates=RATES, steps=20, resolution=16)
    assert answer["evaluation"] == "vmap"
    assert len(namespace["calls"]) < 100  # 4 rates × 21 steps + 256 surface points, batched

    def point_by_point(w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        values = [namespace["loss"](wi, bi) for wi, bi in zip(w, b, strict=True)]
        return torch.stack(values).to(w.dtype)

    for row, lr in enumerate(RATES):
        one = descend(point_by_point, (0.5, 1.0), lr, 20)
        got = torch.tensor(answer["runs"]["sgd"]["paths"][row], dtype=torch.float64)
        assert torch.allclose(got, one, rtol=1e-6, atol=1e-9, equal_nan=True)


def test_how_a_loss_is_evaluated_and_a_sweep_without_its_surface() -> None:
    assert batched_loss(_namespace(USER_CODE)["loss"])[1] == "element-wise"
    scalar = _namespace("def loss(w, b):\n    return (w.item() - 1) ** 2 + b * b\n")
    assert batched_loss(scalar["loss"])[1] == POINTWISE
    answer = sweep_in_namespace(
        _namespace(USER_CODE),
        learning_rates=[0.1],
        steps=5,
        resolution=0,
        bounds=[[-1, 2], [-2, 1]],
    )
    assert answer["grid"] == [] and answer["ws"] == [] and answer["extent"] == [[-1, 2], [-2, 1]]
    assert len(answer["runs"]["sgd"]["paths"]) == 1


def test_a_users_surface_is_framed_on_the_start_the_minimum_and_the_paths() -> None:
    """A line fit's paths at big rates run dozens of units away: the window still frames
    the start and the least-squares minimum (torch.linalg.lstsq) closely, not ±60."""
    namespace = _namespace(DATASET_LOSS)
    answer = sweep_in_namespace(namespace, steps=50, resolution=8)
    (w0, w1), (b0, b1) = answer["extent"]
    x, y = namespace["x"].double(), namespace["y"].double()
    design = torch.stack([x, torch.ones_like(x)], dim=1)
    w, b = torch.linalg.lstsq(design, y[:, None]).solution[:, 0].tolist()
    distance = math.dist((0.5, 1.0), (w, b))
    for point in ((0.5, 1.0), (w, b)):
        assert w0 < point[0] < w1 and b0 < point[1] < b1
    assert w1 - w0 < 5 * distance and b1 - b0 < 5 * distance
    far = [max(abs(p[0]), abs(p[1])) for row in answer["runs"]["sgd"]["paths"] for p in row]
    assert max(v for v in far if math.isfinite(v)) > 5 * (w1 - w0)  # some paths ran far
