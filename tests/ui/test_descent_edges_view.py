"""The descent descent_pane at its edges: a loss of exactly 0 draws, a diverging path is cut at the
surface's border with a marker, the readout shows torch's inf and nan."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograd_viz.core.descent.paths import FUNCTIONS, descend

BOWL, ROSENBROCK = FUNCTIONS["bowl"], FUNCTIONS["rosenbrock"]


def test_one_step_rate_draws_its_zero_loss(descent_pane) -> None:
    descent_pane.set_learning_rate(0.5)
    torch_losses = descend(BOWL.fn, BOWL.start, 0.5, 50)[:, 2].numpy()
    assert torch_losses[1] == 0.0
    steps, heights = descent_pane.paths.loss_curve("sgd")
    assert np.array_equal(steps, np.arange(51))  # every step drawn, the zeros too
    assert np.array_equal(heights, descent_pane.paths.axis.height(torch_losses))
    assert heights[1] == 0.0 and np.isfinite(heights).all()
    assert "log scale" in descent_pane.loss_plot.getAxis("left").labelText
    assert "0" in descent_pane.loss_plot.getAxis("left").labelText  # it says 0 is drawn
    low, high = descent_pane.loss_plot.getViewBox().viewRange()[1]
    assert low < 0.0 < heights[0] < high
    assert descent_pane.caption_texts["sgd"].endswith("in 1 step")


def test_divergence_is_cut_and_marked(descent_pane) -> None:
    descent_pane.set_learning_rate(2.0)
    path = descend(BOWL.fn, BOWL.start, 2.0, 50).numpy()
    xs, ys = descent_pane.path_data("sgd")
    drawn = np.column_stack([xs, ys])
    (w0, w1), (b0, b1) = BOWL.extent
    finite = drawn[np.isfinite(drawn).all(axis=1)]
    assert (finite[:, 0] >= w0).all() and (finite[:, 0] <= w1).all()
    assert (finite[:, 1] >= b0).all() and (finite[:, 1] <= b1).all()
    inside = (path[:, 0] >= w0) & (path[:, 0] <= w1) & (path[:, 1] >= b0) & (path[:, 1] <= b1)
    k = int(np.flatnonzero(~inside)[0])
    assert np.array_equal(finite[:k], path[:k, :2])  # torch's points up to the border
    surface_mark, chart_mark = descent_pane.paths.mark_texts("sgd")
    assert surface_mark == f"→ leaves at step {k}"
    _, heights = descent_pane.paths.loss_curve("sgd")
    cap = descent_pane.paths.limits[1]
    assert heights.max() == cap and chart_mark.startswith("↑")
    assert descent_pane.loss_plot.getViewBox().viewRange()[1][1] >= cap
    x_low, x_high = descent_pane.loss_plot.getViewBox().viewRange()[0]
    assert x_low <= 0 and x_high >= 50  # every step stays on the chart, not just the cut
    descent_pane.set_learning_rate(0.1)
    assert descent_pane.paths.mark_texts("sgd") == (None, None)
    assert descent_pane.loss_plot.getViewBox().viewRange()[1][1] < cap  # follows the data back


def _readout(descent_pane) -> str:
    """The readout as read: without the word joiner that keeps `∂L/∂w` on one line."""
    return descent_pane.readout.text().replace("\u2060", "")


def test_overflow_shows_torchs_inf_and_nan(descent_pane, qtbot) -> None:
    with qtbot.waitSignal(descent_pane.sweep_ready, timeout=60_000):
        descent_pane.set_function("rosenbrock")
    descent_pane.set_learning_rate(0.005)
    path = descend(ROSENBROCK.fn, ROSENBROCK.start, 0.005, 50)
    k = int(torch.nonzero(~torch.isfinite(path).all(dim=1))[0])
    on_surface, on_chart = descent_pane.paths.mark_texts("sgd")
    assert on_surface == f"→ ∞ at step {k}"
    assert on_chart == f"→ ∞ at step {k}" or on_chart.startswith("↑")
    assert f"loss = inf at step {k}" in descent_pane.caption_texts["sgd"]
    descent_pane.step_slider.setValue(k)
    assert "loss = inf" in _readout(descent_pane) and "∂L/∂w = inf" in _readout(descent_pane)
    descent_pane.step_slider.setValue(k + 2)
    assert "w = nan" in _readout(descent_pane) and "∂L/∂w = nan" in _readout(descent_pane)
    assert "= 0," not in _readout(descent_pane)


def test_loss_axis_reads_at_every_rate_and_size(descent_pane, qtbot) -> None:
    """Two labelled ticks at least inside what shows (lr 0.001's loss moves from 15.25 to
    12.5, no decade in between), no two labels within a line of each other (symlog's 0 and
    ±1e−11), and an axis title that fits the chart's height (it was cut at "linear w")."""
    from PySide6.QtGui import QFontMetricsF

    axis = descent_pane.loss_plot.getAxis("left")
    for size in ((1400, 860), (1000, 650)):
        descent_pane.resize(*size)
        for rate in (0.001, 0.1, 0.5, 0.9, 1.05, 2.0):
            descent_pane.set_learning_rate(rate)
            qtbot.wait(10)
            low, high = descent_pane.loss_plot.getViewBox().viewRange()[1]
            heights = sorted(at for at, _ in axis._tickLevels[0])
            assert sum(low <= at <= high for at in heights) >= 2, (size, rate, heights)
            line = QFontMetricsF(axis.font()).height()
            pixels = np.diff(heights) * axis.size().height() / (high - low)
            assert (pixels >= line).all(), (size, rate, axis._tickLevels)
            title = axis.labelText
            assert title.startswith("loss") and "log scale" in title and "0" in title
            assert QFontMetricsF(axis.label.font()).horizontalAdvance(title) <= axis.size().height()
            # The tick labels are torch's losses at those heights.
            for at, label in axis._tickLevels[0]:
                value = float(label.replace("−", "-"))
                assert descent_pane.paths.axis.height(np.array(value)) == pytest.approx(at)


def test_markers_of_paths_that_leave_together_do_not_cover_each_other(descent_pane, qtbot) -> None:
    """SGD and momentum share their first steps on Rosenbrock: both overflow at step 5 and
    leave the surface at one point; each marker stays readable."""
    descent_pane.set_function("rosenbrock")
    descent_pane.set_optimizers(["sgd", "momentum", "adam"])
    qtbot.waitUntil(
        lambda: descent_pane.sweep is not None and len(descent_pane.sweep.runs) == 3,
        timeout=60_000,
    )
    descent_pane.set_learning_rate(0.0382)
    qtbot.wait(10)
    for which in (0, 1):
        shown = [m[which] for m in descent_pane.paths.marks.values() if m[which].isVisible()]
        assert len(shown) >= 2  # SGD and momentum both overflow
        rects = [m.sceneBoundingRect() for m in shown]
        for i, a in enumerate(rects):
            for b in rects[i + 1 :]:
                assert not a.intersects(b), (which, a, b)
