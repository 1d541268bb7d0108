"""Gradient descent with the real torch.optim optimizers, against the lesson's numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograd_viz.core.descent.paths import (
    FUNCTIONS,
    OPTIMIZERS,
    descend,
    descend_many,
    describe_path,
    learning_rate_thresholds,
    run_descent,
    steps_to_minimum,
    surface,
    user_function,
)

BOWL = FUNCTIONS["bowl"]


def test_first_step_by_hand() -> None:
    path = descend(BOWL.fn, BOWL.start, 0.1, 1)
    # w = 0.5 + 0.1·2·(3 − 0.5) = 1.0;  b = 1.0 − 0.1·2·(1 + 2) = 0.4
    assert path[1, 0].item() == pytest.approx(1.0) and path[1, 1].item() == pytest.approx(0.4)
    assert path[0, 2].item() == pytest.approx(15.25)  # (0.5−3)² + (1+2)²


@pytest.mark.parametrize(
    ("lr", "steps"), [(0.01, 410), (0.1, 38), (0.3, 10), (0.5, 1), (0.9, 38), (1.01, None)]
)
def test_steps_to_within_a_thousandth(lr: float, steps: int | None) -> None:
    path = descend(BOWL.fn, BOWL.start, lr, 500)
    assert steps_to_minimum(path, BOWL.minimum) == steps


@pytest.mark.parametrize(
    ("lr", "kind"),
    [
        (0.1, "converges"),
        (0.9, "oscillates"),
        (1.0, "bounces"),
        (1.1, "diverges"),
        (0.001, "too slow"),
    ],
)
def test_caption_classes(lr: float, kind: str) -> None:
    path = descend(BOWL.fn, BOWL.start, lr, 200)
    caption = describe_path(path, lr, BOWL.minimum)
    assert caption.kind == kind
    if kind == "converges":
        assert caption.text == "lr = 0.10 — steady convergence toward (w=3, b=−2) in 38 steps"


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_each_optimizer_path_is_torchs_own(name: str) -> None:
    cls, options = OPTIMIZERS[name]
    p = torch.tensor(BOWL.start, dtype=torch.float64, requires_grad=True)
    opt = cls([p], lr=0.05, **options)
    expected = [p.detach().clone()]
    for _ in range(20):
        opt.zero_grad()
        BOWL.fn(p[0], p[1]).backward()
        opt.step()
        expected.append(p.detach().clone())
    path = descend(BOWL.fn, BOWL.start, 0.05, 20, optimizer=name)
    assert torch.allclose(path[:, :2], torch.stack(expected), atol=1e-12)


def test_batched_rows_equal_single_runs() -> None:
    rates = [0.01, 0.2, 0.7, 1.05]
    many = descend_many(FUNCTIONS["rosenbrock"].fn, (-1.5, 2.0), rates, 30, optimizer="adam")
    for row, lr in zip(many, rates, strict=True):
        one = descend(FUNCTIONS["rosenbrock"].fn, (-1.5, 2.0), lr, 30, optimizer="adam")
        assert torch.allclose(row, one, equal_nan=True)


def test_surface_grid_matches_the_function() -> None:
    ws, bs, z = surface(BOWL.fn, BOWL.extent, 64)
    assert z.shape == (64, 64)
    assert z[10, 20].item() == pytest.approx(BOWL.fn(ws[20], bs[10]).item())


def test_user_function_and_headless_cli(tmp_path: Path) -> None:
    script = tmp_path / "mine.py"
    script.write_text("import torch\ndef loss(w, b):\n    return (w - 1) ** 2 + (b - 2) ** 2\n")
    result = run_descent(user_function(script.read_text()), (0.0, 0.0), 0.5, 3)
    assert result["path"][1] == {"w": 1.0, "b": 2.0, "loss": 0.0}
    out = tmp_path / "d.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograd_viz",
            "descent",
            "--lr",
            "0.1",
            "--steps",
            "60",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["steps_to_tolerance"] == 38 and data["caption"]["kind"] == "converges"
    assert len(data["path"]) == 61 and data["path"][0] == {"w": 0.5, "b": 1.0, "loss": 15.25}
    bad = subprocess.run(
        [sys.executable, "-m", "autograd_viz", "descent", "--function", "nope"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "unknown function" in bad.stderr


def test_bowl_thresholds_from_its_hessian() -> None:
    t = learning_rate_thresholds(BOWL.fn, BOWL.minimum, BOWL.start)
    assert (t.one_step, t.bounce) == (0.5, 1.0)  # λ = 2, 2: exactly 1/2 and 2/2
    assert t.at == "minimum" and t.exact and t.eigenvalues == (2.0, 2.0)
    # What the ticks promise is what the real optimizer does at those rates.
    assert steps_to_minimum(descend(BOWL.fn, BOWL.start, t.one_step, 3), BOWL.minimum) == 1
    assert describe_path(descend(BOWL.fn, BOWL.start, t.bounce, 100), 1.0, BOWL.minimum).kind == (
        "bounces"
    )


def test_elongated_thresholds_follow_the_steep_direction() -> None:
    spec = FUNCTIONS["elongated"]
    t = learning_rate_thresholds(spec.fn, spec.minimum, spec.start)
    assert t.eigenvalues == pytest.approx((2.0, 20.0))
    assert t.one_step == pytest.approx(0.05) and t.bounce == pytest.approx(0.1) and t.exact
    below = descend(spec.fn, spec.start, t.bounce * 0.95, 400)
    above = descend(spec.fn, spec.start, t.bounce * 1.05, 400)
    assert describe_path(below, t.bounce * 0.95, spec.minimum).kind in ("converges", "oscillates")
    assert describe_path(above, t.bounce * 1.05, spec.minimum).kind == "diverges"


def test_non_quadratic_thresholds_say_where_they_hold() -> None:
    rosen = FUNCTIONS["rosenbrock"]
    t = learning_rate_thresholds(rosen.fn, rosen.minimum, rosen.start)
    hessian = torch.tensor([[802.0, -400.0], [-400.0, 200.0]], dtype=torch.float64)
    expected = torch.linalg.eigvalsh(hessian)
    assert t.eigenvalues == pytest.approx(tuple(expected.tolist()))
    assert not t.exact and "not quadratic" in t.note
    saddle = FUNCTIONS["saddle"]
    t = learning_rate_thresholds(saddle.fn, saddle.minimum, saddle.start)
    assert t.at == "start" and t.point == saddle.start and t.eigenvalues == (-2.0, 2.0)
    assert "start" in t.note and "no minimum" in t.note and "−2 < 0" in t.note
