"""The descent pane at its edges: a loss of exactly 0 draws, a diverging path is cut at the
surface's border with a marker, the readout shows torch's inf and nan."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograd_viz.core.descent.paths import FUNCTIONS, descend
from autograd_viz.ui.descent.descent_pane import DescentPane

BOWL, ROSENBROCK = FUNCTIONS["bowl"], FUNCTIONS["rosenbrock"]


@pytest.fixture
def pane(qtbot) -> DescentPane:
    widget = DescentPane()
    widget.resize(1100, 650)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: widget.sweep is not None, timeout=60_000)
    return widget


def test_one_step_rate_draws_its_zero_loss(pane) -> None:
    pane.set_learning_rate(0.5)
    torch_losses = descend(BOWL.fn, BOWL.start, 0.5, 50)[:, 2].numpy()
    assert torch_losses[1] == 0.0
    steps, heights = pane.paths.loss_curve("sgd")
    assert np.array_equal(steps, np.arange(51))  # every step drawn, the zeros too
    assert np.array_equal(heights, pane.paths.axis.height(torch_losses))
    assert heights[1] == 0.0 and np.isfinite(heights).all()
    assert "symlog" in pane.loss_plot.getAxis("left").labelText
    low, high = pane.loss_plot.getViewBox().viewRange()[1]
    assert low < 0.0 < heights[0] < high
    assert pane.caption_texts["sgd"].endswith("in 1 step")


def test_divergence_is_cut_and_marked(pane) -> None:
    pane.set_learning_rate(2.0)
    path = descend(BOWL.fn, BOWL.start, 2.0, 50).numpy()
    xs, ys = pane.path_data("sgd")
    drawn = np.column_stack([xs, ys])
    (w0, w1), (b0, b1) = BOWL.extent
    finite = drawn[np.isfinite(drawn).all(axis=1)]
    assert (finite[:, 0] >= w0).all() and (finite[:, 0] <= w1).all()
    assert (finite[:, 1] >= b0).all() and (finite[:, 1] <= b1).all()
    inside = (path[:, 0] >= w0) & (path[:, 0] <= w1) & (path[:, 1] >= b0) & (path[:, 1] <= b1)
    k = int(np.flatnonzero(~inside)[0])
    assert np.array_equal(finite[:k], path[:k, :2])  # torch's points up to the border
    surface_mark, chart_mark = pane.paths.mark_texts("sgd")
    assert surface_mark == f"→ leaves at step {k}"
    _, heights = pane.paths.loss_curve("sgd")
    cap = pane.paths.limits[1]
    assert heights.max() == cap and chart_mark.startswith("↑")
    assert pane.loss_plot.getViewBox().viewRange()[1][1] >= cap
    x_low, x_high = pane.loss_plot.getViewBox().viewRange()[0]
    assert x_low <= 0 and x_high >= 50  # every step stays on the chart, not just the cut
    pane.set_learning_rate(0.1)
    assert pane.paths.mark_texts("sgd") == (None, None)
    assert pane.loss_plot.getViewBox().viewRange()[1][1] < cap  # follows the data back


def _readout(pane) -> str:
    """The readout as read: without the word joiner that keeps `∂L/∂w` on one line."""
    return pane.readout.text().replace("\u2060", "")


def test_overflow_shows_torchs_inf_and_nan(pane, qtbot) -> None:
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.set_function("rosenbrock")
    pane.set_learning_rate(0.005)
    path = descend(ROSENBROCK.fn, ROSENBROCK.start, 0.005, 50)
    k = int(torch.nonzero(~torch.isfinite(path).all(dim=1))[0])
    on_surface, on_chart = pane.paths.mark_texts("sgd")
    assert on_surface == f"→ ∞ at step {k}"
    assert on_chart == f"→ ∞ at step {k}" or on_chart.startswith("↑")
    assert f"loss = inf at step {k}" in pane.caption_texts["sgd"]
    pane.step_slider.setValue(k)
    assert "loss = inf" in _readout(pane) and "∂L/∂w = inf" in _readout(pane)
    pane.step_slider.setValue(k + 2)
    assert "w = nan" in _readout(pane) and "∂L/∂w = nan" in _readout(pane)
    assert "= 0," not in _readout(pane)
