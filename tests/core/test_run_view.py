"""The RunView: one evented model of what the graph tab shows, checked without a display."""

from __future__ import annotations

import pytest
import torch

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.run_text import NO_GRAPH_MESSAGE, nothing_ran
from autograd_viz.core.playback.run_view import RunView, prepare_run

CODE = """\
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x * 3
z = y * y
z.backward()
"""

MODEL = """\
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))
loss = model(torch.ones(1, 2)).sum()
loss.backward()
"""


def _trace(code: str):
    return run_source(code, "<editor>", {"__name__": "__main__"})


def _record(view: RunView) -> list[tuple[str, object]]:
    seen: list[tuple[str, object]] = []
    view.run_changed.connect(lambda run: seen.append(("run", run)))
    view.frame_changed.connect(lambda: seen.append(("frame", None)))
    view.selection_changed.connect(lambda keys: seen.append(("selection", keys)))
    view.message_changed.connect(lambda text: seen.append(("message", text)))
    return seen


def test_a_new_run_replaces_everything_shown() -> None:
    view = RunView()
    first = prepare_run(_trace(CODE))
    view.show(first)
    leaf = next(t.id for t in first.trace.tensors if t.name == "x")
    view.inspect(leaf)
    assert view.selection == (leaf,) and view.inspected == leaf
    seen = _record(view)
    second = prepare_run(_trace("import torch\na = torch.ones(2, requires_grad=True)\n"))
    view.show(second)
    assert view.run is second and view.selection == () and view.inspected == ""
    assert ("run", second) in seen and ("selection", ()) in seen
    names = {t.name for t in view.trace.tensors}
    assert names == {"a"}  # nothing of the first program
    # The old player no longer drives the view.
    seen.clear()
    first.player.to_end()
    assert seen == []


def test_the_frame_is_the_end_state_until_the_player_moves() -> None:
    view = RunView()
    view.show(prepare_run(_trace(CODE)))
    assert view.frame() is None and view.current_line() is None
    seen = _record(view)
    view.player.seek(0)
    assert seen == [("frame", None)]
    frame = view.frame()
    assert frame is not None and frame.step is view.player.current
    assert view.current_line() == 2  # x = torch.tensor(...)


def test_values_at_a_step_are_the_values_then() -> None:
    view = RunView()
    view.show(prepare_run(_trace(CODE)))
    trace, player = view.trace, view.player
    x, y, z = (next(t.id for t in trace.tensors if t.name == n) for n in "xyz")
    player.seek(0)  # x made; y and z not yet
    assert view.value_now(x)[0].data == pytest.approx(2.0)
    assert view.value_now(z) == (None, False)
    assert view.grad_now(x) == (None, True)  # torch's x.grad is None before backward
    player.set_mode("all")
    player.to_end()
    value, exists = view.grad_now(x)
    expected = torch.tensor(2.0, requires_grad=True)
    ((expected * 3) ** 2).backward()
    assert exists and value.data == pytest.approx(expected.grad.item())
    assert view.value_now(y)[0].data == pytest.approx(6.0)


def test_a_node_shows_the_gradients_of_its_latest_run_by_then() -> None:
    view = RunView()
    view.show(prepare_run(_trace(CODE)))
    trace, player = view.trace, view.player
    z = next(t for t in trace.tensors if t.name == "z")
    player.set_mode("backward")
    player.seek(0)  # the backward call itself: no node has run yet
    assert view.node_grads_now(z.grad_fn) is None
    player.to_end()
    ran = view.node_grads_now(z.grad_fn)
    assert ran is not None and ran["name"] == "MulBackward0"
    assert ran["grads_in"][0]["data"] == pytest.approx(1.0)
    assert [g["data"] for g in ran["grads_out"]] == pytest.approx([6.0, 6.0])


def test_collapsing_a_module_keeps_the_player_and_its_step() -> None:
    view = RunView()
    view.show(prepare_run(_trace(MODEL)))
    player = view.player
    player.set_mode("backward")
    player.seek(2)
    seen = _record(view)
    before = set(view.graph.nodes)
    view.toggle_module("model.0")
    assert view.player is player and player.position == 2 and player.mode == "backward"
    assert "m:model.0" in view.graph.nodes and set(view.graph.nodes) != before
    assert not any(kind == "run" for kind, _ in seen)
    view.toggle_module("model.0")
    assert set(view.graph.nodes) == before


def test_syntax_error_says_nothing_ran() -> None:
    trace = _trace("import torch\nx = torch.ones(2\ny = 3\n")
    said = nothing_ran(trace)
    assert said is not None and said.startswith("Nothing ran: SyntaxError on line 2")
    view = RunView()
    view.show(prepare_run(trace))
    assert view.message == said and not view.graph.nodes


def test_an_error_at_run_time_is_not_a_compile_error() -> None:
    trace = _trace("import torch\nx = torch.ones(2, requires_grad=True)\nexec('1 +')\n")
    assert trace.errors and trace.errors[0]["type"] == "SyntaxError"
    assert nothing_ran(trace) is None
    view = RunView()
    view.show(prepare_run(trace))
    assert view.message == ""


def test_no_tensor_that_requires_grad_is_said() -> None:
    view = RunView()
    view.show(prepare_run(_trace("x = 1 + 1\n")))
    assert view.message == NO_GRAPH_MESSAGE


def test_clear_shows_no_run_and_says_why() -> None:
    view = RunView()
    view.show(prepare_run(_trace(CODE)))
    seen = _record(view)
    view.clear("The kernel stopped.")
    assert view.run is None and view.trace is None and not view.graph.nodes
    assert ("run", None) in seen and view.message == "The kernel stopped."


def test_a_run_that_raised_before_any_graph_says_where() -> None:
    view = RunView()
    view.show(prepare_run(_trace("import torch\nq = x * 10\n")))
    assert view.message.startswith("Nothing to draw: the run stopped with NameError on line 2")
