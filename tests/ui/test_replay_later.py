"""A big run's picture comes first and its replay right after: the player bar waits for
the steps the worker builds, then drives them like any other."""

from __future__ import annotations

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.ui.graph.graph_canvas import GraphCanvas
from autograd_viz.ui.graph.player_bar import PREPARING, PlayerBar

CHAIN = (
    "import torch\nx = torch.ones(3, requires_grad=True)\nh = x\n"
    "for i in range(1200):\n    h = torch.tanh(h) * 1.0\nh.sum().backward()\n"
)


def test_a_player_prepared_later_has_the_same_steps_and_frames() -> None:
    trace = run_source(CHAIN)
    now, later = prepare_run(trace), prepare_run(trace, replay_later=True)
    assert now.player.ready and not later.player.ready
    # The line map too is left for later, and is the same once made.
    assert "source_map" in now._measured and "source_map" not in later._measured
    assert later.source_map.line_of == now.source_map.line_of
    later.player.prepare()
    assert later.player.ready
    for mode in ("forward", BACKWARD):
        a, b = now.player.steps_in(mode), later.player.steps_in(mode)
        assert [(s.event_index, s.lit, s.caption) for s in a] == [
            (s.event_index, s.lit, s.caption) for s in b
        ]
    for player in (now.player, later.player):
        player.set_mode(BACKWARD)
        player.seek(len(player.steps) // 2)
    assert now.player.frame().labels == later.player.frame().labels


def test_the_bar_waits_for_the_steps_then_drives_them(qtbot) -> None:
    trace = run_source(CHAIN)
    view = RunView()
    bar = PlayerBar()
    qtbot.addWidget(bar)
    bar.follow(view)
    run = prepare_run(trace, replay_later=True)
    view.show(run)
    assert bar.caption.text() == PREPARING and not bar.step_button.isEnabled()
    run.player.prepare()
    view.replay_prepared(run)
    assert bar.player is run.player and bar.step_button.isEnabled()
    assert bar.slider.maximum() == len(run.player.steps) - 1


def test_a_big_trace_on_the_canvas_gets_its_replay_after_its_picture(qtbot) -> None:
    trace = run_source(CHAIN)
    canvas = GraphCanvas()
    bar = PlayerBar()
    for widget in (canvas, bar):
        qtbot.addWidget(widget)
    bar.follow(canvas.view)
    assert len(trace.nodes) + len(trace.tensors) > 2_000  # laid out on a worker
    with qtbot.waitSignal(canvas.trace_drawn, timeout=30_000):
        canvas.show_trace(trace)
    # (The player may be ready by the time the picture is taken in: then at once.)
    qtbot.waitUntil(lambda: bar.player is canvas.view.player, timeout=30_000)
    qtbot.waitUntil(lambda: not canvas.laying_out, timeout=30_000)
    assert canvas.view.player.ready
    assert bar.step_button.isEnabled()
    # The job made the line map on its thread: the editor's first link costs nothing.
    assert "source_map" in canvas.view.run._measured
    assert canvas.view.line_of(trace.tensor_named("h").id) == 5
