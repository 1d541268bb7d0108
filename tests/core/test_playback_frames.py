"""What each view shows at each step of the shipped examples, with torch as the oracle: the
Forward view has no .grad before backward(), the Backward view starts after the forward
that led to it, and a backward step names the line that made its node and its caller."""

from __future__ import annotations

import pytest
import torch

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, EVERYTHING, FORWARD
from autograd_viz.core.playback.run_view import MODE_NAMES, RunView, prepare_run
from autograd_viz.resources import EXAMPLES

FIRST_GRAPH = (EXAMPLES / "first_graph.py").read_text(encoding="utf-8")
LINEAR_STEP = (EXAMPLES / "linear_step.py").read_text(encoding="utf-8")


def _view(code: str) -> RunView:
    view = RunView()
    view.show(prepare_run(run_source(code, "<editor>", {"__name__": "__main__"})))
    return view


def _plain_and_forward(code: str):
    """What plain torch left (the oracle), the trace, and its player in the Forward view."""
    plain: dict = {}
    exec(code, plain)
    trace = run_source(code)
    player = prepare_run(trace).player
    player.set_mode(FORWARD)
    return plain, trace, player


def _line(code: str, text: str) -> int:
    """The 1-based line of the example's source that contains `text` (once)."""
    found = [n for n, line in enumerate(code.splitlines(), 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


def _first_graph_by_torch() -> tuple[dict[str, float], dict[str, float]]:
    """The example's code, run here with torch: the forward values and the leaves' grads."""
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    z = x * y
    w = z + 4
    out = w**2
    values = {"x": x.item(), "y": y.item(), "z": z.item(), "w": w.item(), "out": out.item()}
    out.backward()
    return values, {"x": x.grad.item(), "y": y.grad.item()}


def _number(value) -> float:
    return float(value.data)


def test_the_forward_view_has_no_grad_before_backward_and_the_values_torch_computed() -> None:
    values, grads = _first_graph_by_torch()
    view = _view(FIRST_GRAPH)
    player, trace = view.player, view.trace
    ids = {t.name: t.id for t in trace.tensors}
    first_backward = trace.index.of_kind("backward")[0]
    player.set_mode(FORWARD)
    made: set[str] = set()
    before_backward = [s for s in player.steps if s.event_index < first_backward]
    assert len(before_backward) == 5  # x, y, z, w, out: one step per op
    for step in before_backward:
        player.seek(step.number)
        frame = player.frame()
        made |= {t for t in step.lit if t.startswith("t")}
        for name, key in ids.items():
            value, grad = view.value_now(key), view.grad_now(key)
            assert player.grad_at(key) is None and grad[0] is None
            if name in ("x", "y"):
                assert frame.labels[key][1] == "grad None"  # the leaf shows it has none yet
            if key in made:
                assert _number(value[0]) == pytest.approx(values[name])
                assert frame.labels[key][0] != "…"
            else:
                assert value == (None, False) and frame.labels[key][0] == "…"
    # The last Forward step, out.item() on the print line, comes after backward(): torch's
    # grads are there by then, and the caption's note says where they came from.
    player.to_end()
    assert player.current.line == _line(FIRST_GRAPH, 'print("out ="')
    for leaf in ("x", "y"):
        assert _number(view.grad_now(ids[leaf])[0]) == pytest.approx(grads[leaf])
    note = player.unseen_changes()
    assert "x.grad" in note and "y.grad" in note
    assert f"line {_line(FIRST_GRAPH, 'out.backward()')}" in note
    player.seek(2)
    assert player.unseen_changes() == ""  # between two forward ops nothing else happened


def test_the_backward_view_starts_after_the_forward_and_the_all_view_before_everything() -> None:
    values, _ = _first_graph_by_torch()
    view = _view(FIRST_GRAPH)
    player, trace = view.player, view.trace
    ids = {t.name: t.id for t in trace.tensors}
    player.set_mode(BACKWARD)
    assert player.position == -1 and player.current is None
    assert player.event_index() == trace.index.of_kind("backward")[0] - 1
    frame = player.frame()
    for name, key in ids.items():
        assert _number(view.value_now(key)[0]) == pytest.approx(values[name])
        assert frame.labels[key][0] != "…"
        assert view.grad_now(key)[0] is None
    assert frame.visited == set() and frame.freed == set()  # nothing has run backwards yet
    assert view.node_grads_now(trace.tensor(ids["out"]).grad_fn) is None
    player.set_mode(EVERYTHING)
    frame = player.frame()
    assert player.event_index() == -1
    assert {frame.labels[key][0] for key in ids.values()} == {"…"}


def test_with_two_backward_passes_the_backward_view_starts_before_the_first() -> None:
    code = (
        "import torch\n"
        "x = torch.tensor(2.0, requires_grad=True)\n"
        "y = x * 3\n"
        "y.backward()\n"
        "z = x * x\n"
        "z.backward()\n"
    )
    view = _view(code)
    player = view.player
    view.player.set_mode(BACKWARD)
    x = torch.tensor(2.0, requires_grad=True)
    y = x * 3
    ids = {t.name: t.id for t in view.trace.tensors}
    assert _number(view.value_now(ids["y"])[0]) == pytest.approx(y.item())
    assert view.value_now(ids["z"]) == (None, False)  # the second forward comes later
    assert view.grad_now(ids["x"])[0] is None
    y.backward()
    z = x * x
    z.backward()  # adds dz/dx = 2x to the 3 already there
    player.to_end()
    assert _number(view.grad_now(ids["x"])[0]) == pytest.approx(x.grad.item())
    assert _number(view.value_now(ids["z"])[0]) == pytest.approx(z.item())


def test_each_backward_step_highlights_the_line_that_made_its_node_and_its_caller() -> None:
    view = _view(FIRST_GRAPH)
    player, trace = view.player, view.trace
    made_on = {
        "PowBackward0": _line(FIRST_GRAPH, "out = w**2"),
        "AddBackward0": _line(FIRST_GRAPH, "w = z + 4"),
        "MulBackward0": _line(FIRST_GRAPH, "z = x * y"),
    }
    leaf_on = {"x": _line(FIRST_GRAPH, "x = torch.tensor"), "y": _line(FIRST_GRAPH, "y = torch")}
    backward_line = _line(FIRST_GRAPH, "out.backward()")
    seen: list[str] = []
    for mode in (BACKWARD, EVERYTHING):
        player.set_mode(mode)
        for step in player.steps:
            player.seek(step.number)
            e = trace.index.event(step.event_index)
            if step.kind == "node":
                node = trace.node(e.node)
                expected = (
                    leaf_on[trace.tensor(node.variable).name]
                    if node.variable
                    else made_on[node.name]
                )
            elif step.kind == "accumulate":
                expected = leaf_on[trace.tensor(e.tensor).name]
            else:
                assert view.current_lines() == (step.line, None)  # an op, backward() itself
                continue
            seen.append(trace.node(e.node).name)
            assert view.current_lines() == (expected, backward_line)
    assert set(seen) == {"PowBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"}


def test_linear_step_backward_starts_at_torchs_loss_and_inner_nodes_have_their_line() -> None:
    view = _view(LINEAR_STEP)
    player, trace = view.player, view.trace
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    X = torch.randn(8, 3)
    y_true = torch.randn(8, 1)
    loss = torch.nn.functional.mse_loss(model(X), y_true)
    player.set_mode(BACKWARD)
    assert _number(view.value_now(trace.tensor_named("loss").id)[0]) == pytest.approx(loss.item())
    model_line = _line(LINEAR_STEP, "y_pred = model(X)")
    for step in player.steps:
        e = trace.index.event(step.event_index)
        if step.kind == "node" and e.name in ("TBackward0", "ReluBackward0", "AddmmBackward0"):
            player.seek(step.number)
            # TBackward0 is no op's grad_fn: F.linear made it inside model(X).
            assert view.current_lines() == (model_line, _line(LINEAR_STEP, "loss.backward()"))


def test_the_views_are_named_as_the_buttons_name_them() -> None:
    view = _view(FIRST_GRAPH)
    for mode, name in ((FORWARD, "Forward"), (BACKWARD, "Backward"), (EVERYTHING, "Both")):
        view.player.set_mode(mode)
        assert view.mode_name() == name == MODE_NAMES[mode]


def test_captions_give_torchs_full_node_names() -> None:
    view = _view(LINEAR_STEP)
    player = view.player
    player.set_mode(BACKWARD)
    captions = [s.caption for s in player.steps if s.kind == "node"]
    assert captions[0].startswith("MseLossBackward0: ")
    assert any(c.startswith("AccumulateGrad: ") for c in captions)
    assert any(c.startswith("AddmmBackward0: ") for c in captions)


def test_a_run_without_backward_starts_its_backward_view_at_the_forward_end() -> None:
    import torch

    from autograd_viz.core.graph.graph_model import drawn_graph
    from autograd_viz.core.kernel.runner import run_source
    from autograd_viz.core.playback.player import BACKWARD, Player

    code = "import torch\nw = torch.tensor(3.0, requires_grad=True)\nloss = (w * 2) ** 2\n"
    trace = run_source(code)
    player = Player(trace, drawn_graph(trace))
    player.set_mode(BACKWARD)
    assert player.steps == [] and player.position == -1
    loss = trace.tensor_named("loss")
    w = torch.tensor(3.0, requires_grad=True)
    assert player.value_at(loss.id).data == ((w * 2) ** 2).item()  # not "…"
    assert player.grad_at(trace.tensor_named("w").id) is None


def test_a_tensor_set_to_another_shows_its_new_value_from_that_step_on() -> None:
    """`x.set_(y)` is invisible to torch's function modes: the replay showed x's old value
    until the end. Torch, run plainly, is the oracle of each value."""
    code = (
        "import torch\n"
        "x = torch.zeros(3)\n"
        "y = torch.arange(3.0)\n"
        "x.set_(y)\n"
        "z = x * 2\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    w.set_(torch.full((2,), 5.0))\n"
        "loss = (w * z[:2]).sum()\n"
        "loss.backward()\n"
    )
    plain, trace, player = _plain_and_forward(code)
    x, w = trace.tensor_named("x").id, trace.tensor_named("w").id
    seen = {}
    while player.step_forward():
        seen[player.current.event_index] = (player.value_at(x).data, player.value_at(w))
    sets = [i for i, e in enumerate(trace.events) if e.get("op") == "set"]
    assert len(sets) == 2
    assert seen[sets[0] - 1][0] == [0.0, 0.0, 0.0]
    assert seen[sets[0]][0] == plain["x"].tolist() == [0.0, 1.0, 2.0]
    assert seen[sets[1] - 1][1].data == [1.0, 1.0]
    assert seen[sets[1]][1].data == plain["w"].tolist() == [5.0, 5.0]
    assert trace.tensor_named("w").grad.data == plain["w"].grad.tolist()
    assert "set_" not in torch.Tensor.__dict__  # torch's own method back after the run


def test_an_error_names_the_call_that_raised_and_lights_what_it_was_given() -> None:
    """torch's message says "(8x4 and 3x1)"; the error step says which tensors those were
    and lights them. Inside a module, the failing call is the module's own (F.linear with
    its weight and bias). An error no torch call raised names no op."""
    import contextlib
    import io

    def error_of(code: str):
        with contextlib.redirect_stderr(io.StringIO()):
            trace = run_source(code)
        player = prepare_run(trace).player
        player.set_mode(FORWARD)
        return trace, trace.error, player.steps[-1]

    head = "import torch\nX = torch.randn(8, 3)\nW = torch.randn(3, 1, requires_grad=True)\n"
    code = head + "V = torch.randn(3, 4, requires_grad=True)\nh = X @ V\nout = h @ W\n"
    trace, error, step = error_of(code)
    ids = [trace.tensor_named("h").id, trace.tensor_named("W").id]
    assert error["op"] == "matmul" and error["inputs"] == ids
    assert step.kind == "error" and step.lit == set(ids)
    assert step.caption == (
        "line 6: matmul(h, W) raised RuntimeError: "
        "mat1 and mat2 shapes cannot be multiplied (8x4 and 3x1)"
    )
    trace, error, step = error_of(
        "import torch\nfrom torch import nn\nlayer = nn.Linear(4, 2)\n"
        "x = torch.randn(5, 3)\ny = layer(x)\n"
    )
    names = {t.id: t.name for t in trace.tensors}
    assert error["op"] == "linear"
    assert [names.get(t) for t in error["inputs"]] == ["x", "layer.weight", "layer.bias"]
    assert step.lit == {"m:layer"}  # the layer's card, its weight and bias folded inside
    _, error, step = error_of(head + "out = X @ missing\n")
    assert "op" not in error and step.caption.startswith("line 4: NameError:")


def test_the_bar_says_a_run_that_raised_stopped_and_where() -> None:
    """Before the first step the bar described an errored run as any other ("The graph at
    the end of the run"): now it says where it stopped and how to see what raised."""
    import contextlib
    import io

    from autograd_viz.core.playback.bar_text import end_caption

    code = "import torch\nw = torch.ones(3, requires_grad=True)\ny = w @ torch.ones(2)\n"
    with contextlib.redirect_stderr(io.StringIO()):
        trace = run_source(code)
    assert trace.error["line"] == 3
    said = end_caption(prepare_run(trace).player)
    assert said.startswith("The run stopped on line 3 (RuntimeError)")
    assert "End" in said
    clean = end_caption(prepare_run(run_source("import torch\nx = torch.ones(2) * 2\n")).player)
    assert clean.startswith("The graph at the end of the run")


def test_a_data_history_break_is_captioned_with_one_dot() -> None:
    trace = run_source(
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\nd = w.data\n"
    )
    player = prepare_run(trace).player
    player.set_mode(FORWARD)
    captions = [s.caption for s in player.steps]
    assert any(
        c.startswith("line 3: w.data → d = [1.0, 2.0] — the result has no autograd history")
        for c in captions
    )
    assert not any("..data" in c for c in captions)


def test_a_detached_tensor_shows_its_value_from_the_step_that_made_it() -> None:
    """`d = w.detach()` read "…" until something wrote d, while the next step used it."""
    code = (
        "import torch\nw = torch.tensor([2.0, 3.0], requires_grad=True)\n"
        "d = w.detach()\ny = d * w\n"
    )
    plain, trace, player = _plain_and_forward(code)
    d = trace.tensor_named("d").id
    player.seek(1)  # the detach() step
    assert player.current.caption.startswith("line 3: w.detach()")
    assert player.value_at(d).data == plain["d"].tolist()
    assert player.frame().labels[d][0] == "[2.0, 3.0]"
