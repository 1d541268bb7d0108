"""The Training view: the heat strip and plots of a real training loop, its flags, and a
click that puts the graph's player at that step with the parameter inspected."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFontMetricsF

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import EVERYTHING
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.ui.training.training_pane import NOTHING, TrainingPane
from tests.core.test_training_health import DEAD_UNITS, HEALTHY
from tests.ui.test_main_window import _run_typed


def _pane(qtbot, code: str):
    trace = run_source(code)
    view = RunView()
    pane = TrainingPane()
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    pane.follow(view)
    pane.show()
    view.show(prepare_run(trace))
    return trace, view, pane


def _cell_pixel(pane: TrainingPane, step: int, parameter: int) -> QColor:
    """The colour drawn at the middle of a cell of the heat strip."""
    strip = pane.strip
    scene = strip.getPlotItem().vb.mapViewToScene(QPointF(step + 1, parameter))
    point = strip.mapFromScene(scene)
    return strip.grab().toImage().pixelColor(point.x(), point.y())


def test_a_dead_unit_is_flagged_ringed_and_its_flag_chooses_its_step(qtbot) -> None:
    trace, _, pane = _pane(qtbot, DEAD_UNITS)
    health = pane.health
    assert health.steps == 3 and pane.strip.isVisible()
    assert pane.flags.count() == 1 and "3 of 8 units" in pane.flags.item(0).text()
    # The strip's colours follow the norms: the largest cell is the brightest.
    p, s = np.unravel_index(np.nanargmax(health.grad_norm), health.grad_norm.shape)
    q, t = np.unravel_index(np.nanargmin(health.grad_norm), health.grad_norm.shape)
    bright, dark = _cell_pixel(pane, int(s), int(p)), _cell_pixel(pane, int(t), int(q))
    assert bright.lightness() > dark.lightness() + 40
    with qtbot.waitSignal(pane.step_chosen) as chosen:
        pane.flags.itemClicked.emit(pane.flags.item(0))
    event, tensor = chosen.args
    assert event == trace.steps[0]["event"] and tensor == trace.tensor_named("model.0.weight").id


def test_a_run_without_optimizer_steps_says_how_to_get_a_chart(qtbot) -> None:
    _, _, pane = _pane(qtbot, "import torch\nx = torch.ones(2, requires_grad=True)\n")
    assert pane.summary.text() == NOTHING and not pane.charts.isVisible()


def test_a_healthy_run_lists_no_flags(qtbot) -> None:
    _, _, pane = _pane(qtbot, HEALTHY)
    assert pane.flags.count() == 1 and pane.flags.item(0).text().startswith("✓")
    assert "20 Adam steps × 4 parameters" in pane.summary.text()


@pytest.mark.kernel
def test_clicking_a_cell_shows_that_step_in_the_graph(qtbot, running_window) -> None:
    window = running_window
    trace = _run_typed(qtbot, window, DEAD_UNITS)
    window.tabs.setCurrentWidget(window.training)
    pane = window.training
    qtbot.waitUntil(lambda: pane.health.steps == 3, timeout=5_000)
    strip = pane.strip
    scene = strip.getPlotItem().vb.mapViewToScene(QPointF(2, 0))  # step 2, model.0.weight
    qtbot.mouseClick(strip.viewport(), Qt.MouseButton.LeftButton, pos=strip.mapFromScene(scene))
    assert window.tabs.currentWidget() is window.graph_area
    player = window.run_view.player
    weight = trace.tensor_named("model.0.weight").id
    assert player.mode == EVERYTHING
    assert player.current.event_index == trace.steps[1]["event"]
    assert trace.events[player.current.event_index]["kind"] == "param_update"
    assert window.inspector.key == weight and window.run_view.selection == (weight,)


def test_a_narrow_pane_shows_every_step_and_fits_its_titles(qtbot) -> None:
    # A title as wide as its text made the plot item wider than its widget: the title was
    # cut at both ends and the strip showed steps 1 to 14 of 20 (a walk at 1000×650).
    _, _, pane = _pane(qtbot, HEALTHY)
    for width in (620, 880):  # the Training tab of a 1000×650 and a 1400×860 window
        pane.resize(width, 700)
        qtbot.waitUntil(lambda width=width: pane.strip.width() < width)
        for plot in (pane.strip, pane.loss, pane.ratio):
            item = plot.getPlotItem()
            assert item.sceneBoundingRect().width() <= plot.width() + 1
            assert item.titleLabel.item.boundingRect().width() <= plot.width()
        if width == 620:  # the strip's whole title is its tooltip, a shorter form shows
            assert pane.strip.toolTip().startswith("‖grad‖ per parameter and step")
            assert len(pane.strip.getPlotItem().titleLabel.text) < len(pane.strip.toolTip())
    steps = pane.health.steps
    left, right = pane.strip.getPlotItem().vb.viewRange()[0]
    assert left <= 0.5 + 1e-6 and right >= steps + 0.5 - 1e-6


def test_tick_labels_of_a_short_log_axis_are_a_line_apart(qtbot) -> None:
    _, _, pane = _pane(qtbot, HEALTHY)
    axis = pane.loss.getPlotItem().getAxis("left")
    axis.setLogMode(True)
    size = 50.0  # px: a loss chart in a small window
    low, high = np.log10(0.15), np.log10(4.0)
    levels = axis.tickValues(low, high, size)
    values = sorted(v for _, vs in levels for v in vs)
    assert values, "an axis keeps at least one label"
    line = QFontMetricsF(axis.style["tickFont"] or axis.font()).height()
    gap = (high - low) * line / size
    assert all(b - a >= gap * 0.99 for a, b in itertools.pairwise(values))


def test_the_strips_colour_range_never_reads_minus_zero(qtbot) -> None:
    """A top level that rounds to zero from below read "to -0.0 (yellow)"."""
    _, _, pane = _pane(qtbot, HEALTHY)
    assert "(dark) to" in pane.strip.getPlotItem().titleLabel.text
    # The levels the strip found for a run whose largest ‖grad‖ is just under 1.
    pane.strip.show_health = lambda health: setattr(pane.strip, "levels", (-2.04, -0.04))
    pane.show_health(pane.health)  # the title is written from the strip's levels
    title = pane.strip.getPlotItem().titleLabel.text
    assert "from -2.0 (dark) to 0.0 (yellow)" in title and "-0.0" not in title
