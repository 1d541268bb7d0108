"""The descent view at its edges, in numbers and words: torch's inf and nan kept as they
are, the captions' classes on constructed paths, plurals, the loss chart's scale and the
path cut to the surface."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from autograd_viz.core.descent.captions import describe_path, overflow_step, turns
from autograd_viz.core.descent.clip import clip_path
from autograd_viz.core.descent.loss_axis import loss_axis
from autograd_viz.core.descent.paths import FUNCTIONS, descend, loss_at_minimum
from autograd_viz.core.descent.sweep import sweep_optimizer

BOWL, ROSENBROCK = FUNCTIONS["bowl"], FUNCTIONS["rosenbrock"]
MIN = (0.0, 0.0)


def _plain_torch(fn, start, lr, steps, optimizer=torch.optim.SGD, **options):
    # The oracle: one parameter, one optimizer, loss.backward(), nothing else.
    p = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    opt = optimizer([p], lr=lr, **options)
    points, grads = [], []
    for _ in range(steps + 1):
        opt.zero_grad()
        loss = fn(p[0], p[1])
        loss.backward()
        points.append([*p.detach().tolist(), float(loss.detach())])
        grads.append(p.grad.tolist())
        opt.step()
    return torch.tensor(points, dtype=torch.float64), torch.tensor(grads, dtype=torch.float64)


def test_an_overflowing_path_keeps_torchs_inf_and_nan() -> None:
    run = sweep_optimizer(ROSENBROCK.fn, ROSENBROCK.start, [0.005], 12, "sgd", ROSENBROCK.minimum)
    points, grads = _plain_torch(ROSENBROCK.fn, ROSENBROCK.start, 0.005, 12)
    torch.testing.assert_close(run.paths[0], points, equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(run.grads[0], grads, equal_nan=True, rtol=0, atol=0)
    k = overflow_step(points)
    assert k is not None and math.isinf(points[k, 2])  # the loss overflows first
    assert torch.isinf(run.grads[0, k]).any()  # never a 0 where torch says inf
    assert torch.isnan(run.paths[0, -1]).all()  # and then nan, as torch's step gives
    assert not (run.grads[0, k:] == 0).any()
    caption = run.captions[0]
    assert caption.kind == "diverges" and f"loss = inf at step {k}" in caption.text


def test_a_diverging_row_leaves_the_other_rows_alone() -> None:
    rows = sweep_optimizer(
        ROSENBROCK.fn, ROSENBROCK.start, [0.001, 0.005], 30, "adam", ROSENBROCK.minimum
    )
    alone, _ = _plain_torch(ROSENBROCK.fn, ROSENBROCK.start, 0.001, 30, torch.optim.Adam)
    torch.testing.assert_close(rows.paths[0], alone, equal_nan=True)
    assert rows.paths.shape == (2, 31, 3)


def test_plurals() -> None:
    one = describe_path(descend(BOWL.fn, BOWL.start, 0.5, 50), 0.5, BOWL.minimum)
    assert one.steps == 1 and one.text.endswith("in 1 step")
    two = describe_path(descend(BOWL.fn, BOWL.start, 0.5, 50, "nesterov"), 0.5, BOWL.minimum)
    assert two.text.endswith(f"in {two.steps} steps") and two.steps > 1


def _path(points) -> torch.Tensor:
    xy = torch.tensor(points, dtype=torch.float64)
    return torch.cat([xy, (xy**2).sum(dim=1, keepdim=True)], dim=1)


@pytest.mark.parametrize(
    ("points", "kind"),
    [
        ([(1.0 * 0.5**k, 0.0) for k in range(20)], "converges"),  # straight in, reaches
        ([(1.0 - 0.01 * k, 0.0) for k in range(20)], "too slow"),  # straight in, slowly
        ([((-0.6) ** k, 0.3 * (-0.6) ** k) for k in range(30)], "oscillates"),  # overshoots in
        ([((-0.95) ** k, 0.0) for k in range(30)], "oscillates"),  # overshoots, not there yet
        (  # a spiral (momentum's overshoot) that is not there yet
            [(0.97**k * math.cos(k), 0.97**k * math.sin(k)) for k in range(30)],
            "oscillates",
        ),
        ([((-1.0) ** k, 0.5) for k in range(30)], "bounces"),  # the same distance forever
        ([((-1.3) ** k, 0.0) for k in range(30)], "diverges"),  # each overshoot further
        ([(1.0 + k, 2.0 * k) for k in range(30)], "diverges"),  # straight out
    ],
)
def test_classes_on_constructed_paths(points, kind: str) -> None:
    assert describe_path(_path(points), 0.1, MIN).kind == kind


def test_an_overflow_is_dated() -> None:
    points = _path([(2.0**k, 0.0) for k in range(8)])
    points[5:, 2] = math.inf
    points[6:, :] = math.nan
    caption = describe_path(points, 0.3, MIN)
    assert caption.kind == "diverges" and caption.text.endswith("loss = inf at step 5")


def test_momentum_that_overshoots_is_not_heading_toward() -> None:
    path = descend(BOWL.fn, BOWL.start, 0.1, 50, "momentum")
    offsets = path[:, 0] - 3
    assert (offsets[1:] * offsets[:-1] < 0).sum() > 1  # torch's path crosses w = 3 often
    caption = describe_path(path, 0.1, BOWL.minimum)
    assert caption.kind == "oscillates" and "heading toward" not in caption.text
    assert turns(path, torch.tensor(BOWL.minimum, dtype=path.dtype)) > 1


def test_zero_loss_draws_on_a_symlog_axis() -> None:
    losses = descend(BOWL.fn, BOWL.start, 0.5, 10)[:, 2].numpy()
    assert losses[1] == 0.0  # torch lands exactly on the minimum
    axis = loss_axis(losses, loss_at_minimum("bowl"))
    assert axis.kind == "symlog" and "symlog" not in axis.title  # jargon: said in words
    assert axis.title.startswith("loss (log scale, linear within ±")
    heights = axis.height(losses)
    assert np.isfinite(heights).all() and heights[1] == 0 and heights[0] > 0
    assert (0.0, "0") in axis.ticks(-1, float(heights[0]))


def test_the_log_axis_shows_loss_above_its_minimum() -> None:
    shifted = lambda w, b: BOWL.fn(w, b) + 5.0  # noqa: E731
    losses = descend(shifted, BOWL.start, 0.1, 30)[:, 2].numpy()
    axis = loss_axis(losses, 5.0)
    assert axis.kind == "log" and axis.title == "loss − L(min) (log scale)"
    assert axis.height(np.array([5.001]))[0] == pytest.approx(-3)
    assert loss_axis(losses, None).title == "loss (log scale)"
    negative = loss_axis(np.array([3.0, -2.0, -1e6]), None)
    assert negative.kind == "symlog" and np.isfinite(negative.height(np.array([-1e6]))).all()
    assert loss_axis(losses, None, linear=True).kind == "linear"


def test_a_path_is_cut_at_the_border() -> None:
    box = (-1.0, 1.0, -1.0, 1.0)
    inside = np.array([[0.0, 0.0], [0.5, 0.5]])
    drawn, left, _ = clip_path(inside, box)
    assert np.array_equal(drawn, inside) and left is None
    gone = np.array([[0.0, 0.0], [0.5, 0.25], [4.5, 2.25], [1e155, 1e100], [np.inf, np.nan]])
    drawn, left, exit_point = clip_path(gone, box)
    assert left == 2 and np.allclose(exit_point, (1.0, 0.5))
    assert np.allclose(drawn[:3], [[0, 0], [0.5, 0.25], [1.0, 0.5]]) and np.isnan(drawn[3]).all()
    back = np.array([[0.0, 0.0], [3.0, 0.0], [0.5, 0.0]])
    drawn, left, _ = clip_path(back, box)
    assert left is None and np.allclose(drawn[[0, 1, 3, 4]], [[0, 0], [1, 0], [1, 0], [0.5, 0]])


@pytest.mark.parametrize(
    ("points", "kind"),
    [
        ([(1.0 * 0.5**k, 0.0) for k in range(40)], "converges"),  # straight in, settles
        ([(1.0 - 0.01 * k, 0.0) for k in range(20)], "wanders"),  # downhill, still moving
        ([((-0.6) ** k, 0.3 * (-0.6) ** k) for k in range(40)], "oscillates"),  # then settles
        (  # momentum's spiral, not settled yet
            [(0.97**k * math.cos(k), 0.97**k * math.sin(k)) for k in range(30)],
            "oscillates",
        ),
        ([((-1.0) ** k, 0.5) for k in range(30)], "bounces"),  # the same loss forever
        ([((-1.3) ** k, 0.0) for k in range(30)], "diverges"),  # each overshoot further
    ],
)
def test_classes_without_a_known_minimum(points, kind: str) -> None:
    """The user's own loss has no known minimum: the path's loss and turns classify it."""
    caption = describe_path(_path(points), 0.1, None)
    assert caption.kind == kind, caption.text
    if kind == "diverges":
        assert "too large" in caption.text and "falls" not in caption.text


def test_a_user_loss_that_overflows_upward_is_not_said_to_fall() -> None:
    namespace: dict = {}
    exec("def loss(w, b):\n    return (w - 1) ** 2 + 4 * (b + 0.5) ** 2\n", namespace)
    path = descend(namespace["loss"], (0.5, 1.0), 2.0, 400)
    k = overflow_step(path)
    assert k is not None and float(path[k, 2]) == math.inf  # torch's loss overflows upward
    caption = describe_path(path, 2.0, None)
    assert caption.kind == "diverges" and "falls" not in caption.text
    assert caption.text.endswith(f"loss = inf at step {k}")
    falling = descend(lambda w, b: -(w**2) - b**2, (0.5, 1.0), 0.5, 2000)
    assert "falls without bound" in describe_path(falling, 0.5, None).text
