"""The memory bar and the inspector's saved tensors: what backward keeps alive, at the
player's moment, with torch's own sizes as the oracle."""

from __future__ import annotations

import pytest
import torch
from PySide6.QtGui import QColor

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, FORWARD
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.core.playback.saved_memory import bytes_text
from autograd_viz.ui.graph.graph_canvas import GraphCanvas
from autograd_viz.ui.graph.inspector import Inspector
from autograd_viz.ui.graph.memory_bar import BACKGROUND_SIZE
from autograd_viz.ui.graph.player_bar import PlayerBar

CODE = (
    "import torch\n"
    "x = torch.randn(1000, requires_grad=True)\n"
    "w = torch.randn(1000, requires_grad=True)\n"
    "y = x * w\n"
    "z = y.exp()\n"
    "loss = z.sum()\n"
    "loss.backward()\n"
)
FLOATS = torch.randn(1000).untyped_storage().nbytes()  # what torch allocates for each


def _shown(qtbot, code: str):
    trace = run_source(code)
    view = RunView()
    bar = PlayerBar()
    qtbot.addWidget(bar)
    bar.resize(1200, 60)
    bar.follow(view)
    bar.show()
    view.show(prepare_run(trace))
    return trace, view, bar


def _fill_width(bar) -> int:
    """How many pixels of the bar's middle row are filled with the bar's teal."""
    memory = bar.memory
    image = memory.grab().toImage()
    height = memory.fontMetrics().height()
    y = height + 3 + (height - 6) // 2
    teal = QColor("#0f766e")
    filled = 0
    for x in range(image.width() // 2):
        colour = image.pixelColor(x, y)
        if abs(colour.green() - teal.green()) < 40 and colour.blue() > colour.red() + 30:
            filled += 1
    return filled


def test_the_bar_grows_in_the_forward_and_empties_node_by_node_in_backward(qtbot) -> None:
    _trace, view, bar = _shown(qtbot, CODE)
    memory = bar.memory
    assert memory.isVisible()
    # At the end of the run backward has freed everything: the lesson's sentence.
    assert memory.text == "Saved for backward: 0 B" and memory.why == "freed by backward()"
    player = view.player
    player.set_mode(FORWARD)
    seen = []
    while player.step_forward():
        seen.append((player.current.event_index, memory.text))
    texts = [text for _, text in seen]
    assert f"Saved for backward: {FLOATS * 2 / 1024:.1f} KB · 2 tensors" in texts  # x, w
    assert texts[-1] == f"Saved for backward: {FLOATS * 3 / 1024:.1f} KB · 3 tensors"  # + z
    assert memory.why == f"peak {FLOATS * 3 / 1024:.1f} KB"
    full = _fill_width(bar)
    assert full > 0.9 * (memory.width() // 2 - 2)
    player.set_mode(BACKWARD)
    captions = []
    while player.step_forward():
        captions.append(memory.text)
    # ExpBackward0 lets go of z, then MulBackward0 of x and w.
    assert f"Saved for backward: {FLOATS * 2 / 1024:.1f} KB · 2 tensors" in captions
    assert captions[-1] == "Saved for backward: 0 B"
    assert _fill_width(bar) == 0


def test_retain_graph_says_the_graph_is_kept(qtbot) -> None:
    _, _view, bar = _shown(
        qtbot,
        "import torch\nx = torch.randn(10, requires_grad=True)\n"
        "y = (x * x).sum()\ny.backward(retain_graph=True)\n",
    )
    assert bar.memory.text == "Saved for backward: 40 B · 1 tensor"
    assert bar.memory.why == "kept (retain_graph)"
    assert "retain_graph=True" in bar.memory.tooltip()


def test_a_run_whose_nodes_save_nothing_shows_no_bar(qtbot) -> None:
    _, _, bar = _shown(
        qtbot, "import torch\nx = torch.ones(3, requires_grad=True)\n(x + 1).sum().backward()\n"
    )
    assert not bar.memory.isVisible()


def test_the_inspector_lists_a_nodes_saved_tensors_and_whether_they_are_held(qtbot) -> None:
    trace, view, _bar = _shown(qtbot, CODE)
    inspector = Inspector()
    qtbot.addWidget(inspector)
    inspector.follow(view)
    mul = next(n for n in trace.nodes if n.name == "MulBackward0")
    view.player.set_mode(BACKWARD)
    inspector.show_item(trace, mul.id)
    text = inspector.details.text()
    # x * w: torch saves w as `self`'s partner and x as `other`'s, each the run's tensor.
    assert f"w · 1000 float32 · {FLOATS / 1024:.1f} KB" in text
    assert f"x · 1000 float32 · {FLOATS / 1024:.1f} KB" in text
    assert "held now" in text
    while view.player.step_forward():
        pass
    inspector.show_item(trace, mul.id)
    assert "freed: backward() let go of them after running this node" in inspector.details.text()
    add = next(n for n in trace.nodes if n.name == "SumBackward0")
    inspector.show_item(trace, add.id)
    assert "nothing: its local gradient needs no tensor" in inspector.details.text()


def test_a_big_run_is_measured_on_a_worker_and_then_shown(qtbot) -> None:
    code = (
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = x\n"
        "for i in range(1100):\n    h = torch.tanh(h)\n    h = h * 1.0\n"
    )
    trace = run_source(code)
    assert len(trace.nodes) > BACKGROUND_SIZE
    canvas = GraphCanvas()
    bar = PlayerBar()
    for widget in (canvas, bar):
        qtbot.addWidget(widget)
    bar.follow(canvas.view)
    with qtbot.waitSignal(canvas.trace_drawn, timeout=30_000):
        canvas.show_trace(trace)
    # The worker that laid it out measures it after preparing the replay.
    qtbot.waitUntil(lambda: bar.memory.memory is not None, timeout=30_000)
    # No backward: every tanh's result and every wrapped 1.0 is still held at the end.
    held = bar.memory.memory.at(len(trace.events))
    assert held.tensors == 2 * 1100 and bar.memory.text.startswith(
        f"Saved for backward: {bytes_text(held.bytes)} · 2200 tensors"
    )


def test_nodes_can_be_sized_by_the_bytes_they_saved(qtbot) -> None:
    trace = run_source(CODE)
    canvas = GraphCanvas()
    qtbot.addWidget(canvas)
    canvas.show_trace(trace)
    ids = {n.name: n.id for n in trace.nodes}
    index = {key: i for i, key in enumerate(canvas.markers.data["data"])}

    def size(name: str) -> float:
        return float(canvas.markers.data["size"][index[ids[name]]])

    plain = {name: size(name) for name in ("MulBackward0", "ExpBackward0", "SumBackward0")}
    canvas.set_size_by_saved(True)
    index = {key: i for i, key in enumerate(canvas.markers.data["data"])}
    # x * w saved 8,000 bytes (the most), exp 4,000, sum nothing: area follows the bytes.
    assert size("MulBackward0") == pytest.approx(plain["MulBackward0"] * 1.8)
    assert size("ExpBackward0") == pytest.approx(plain["ExpBackward0"] * (1 + 0.8 * 0.5**0.5))
    assert size("SumBackward0") == plain["SumBackward0"]
    player = canvas.view.player or prepare_run(trace).player
    canvas.show_frame(player.frame())  # a replay step restyles: the sizes stay scaled
    assert size("MulBackward0") > plain["MulBackward0"] * 1.5
    canvas.set_size_by_saved(False)
    index = {key: i for i, key in enumerate(canvas.markers.data["data"])}
    assert size("MulBackward0") == plain["MulBackward0"]
