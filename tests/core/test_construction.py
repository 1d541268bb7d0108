"""A module's construction is one step, and memory torch.empty() left unwritten is never
shown as a value (issue 14, item 6)."""

from __future__ import annotations

import sys

import torch

from autograd_viz.core.capture._naming import building_statement
from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import FORWARD, Player
from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.index import TraceIndex
from tests.core.test_names import MLP


def _ops(trace: Trace) -> list[dict]:
    return [e for e in trace.events if e["kind"] == "op"]


def test_the_construction_ops_stay_in_the_trace_marked_with_their_statement() -> None:
    trace = run_source(MLP)
    built = [e for e in _ops(trace) if "construction" in e]
    # nn.Linear(3, 4) and nn.Linear(4, 1), as torch builds them: empty, then init, twice each
    assert [e["op"] for e in built] == ["empty", "empty", "kaiming_uniform", "uniform"] * 2
    assert {e["construction"] for e in built} == {7}
    assert not [e for e in _ops(trace) if e["line"] != 7 and "construction" in e]


def test_one_step_per_statement_names_the_parameters_it_created() -> None:
    trace = run_source(MLP)
    steps = Player(trace, drawn_graph(trace)).steps_in(FORWARD)
    (built,) = [s for s in steps if s.folded]
    assert built.line == 7
    assert built.caption.startswith(
        "line 7: building model created 4 parameters: model.0.weight [4, 3], "
        "model.0.bias [4], model.2.weight [1, 4], model.2.bias [1]"
    )
    index = TraceIndex(trace.events, trace.tensors, trace.nodes)
    folded = [index.event(i) for i in built.folded]
    assert [e.op for e in folded] == [e["op"] for e in _ops(trace) if "construction" in e]
    assert built.event_index == built.folded[-1]
    params = {t.id for t in trace.tensors if t.name and t.name.startswith("model.")}
    assert params <= built.lit  # the four parameters light up
    assert [s.line for s in steps].count(7) == 1


def test_a_user_module_folds_on_the_statement_that_builds_it() -> None:
    code = (
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 1)\n"
        "net = Net()\n"
        "z = torch.zeros(1)\n"
    )
    trace = run_source(code)
    assert {e.get("construction") for e in _ops(trace) if e["line"] == 5} == {6}
    assert "construction" not in _ops(trace)[-1]  # torch.zeros after it: a plain op
    steps = Player(trace, drawn_graph(trace)).steps_in(FORWARD)
    assert [s.line for s in steps] == [6, 7]
    assert steps[0].caption.startswith("line 6: building net created 2 parameters")


def test_uninitialised_memory_is_never_shown() -> None:
    code = "import torch\ne = torch.empty(3)\ne.fill_(2.0)\n"
    trace = run_source(code)
    empty, fill = _ops(trace)
    assert empty["uninitialised"] is True and empty["values"] == [None]
    assert "uninitialised" not in fill and fill["values"][0]["data"] == [2.0, 2.0, 2.0]
    player = Player(trace, drawn_graph(trace))
    first, second = player.steps_in(FORWARD)
    assert "e = uninitialised" in first.caption
    assert player.value_at(empty["outputs"][0], first.event_index) is None
    assert "e = [2.0, 2.0, 2.0]" in second.caption  # torch wrote it: now it has numbers


def test_an_empty_tensor_nothing_touched_has_no_value_but_a_written_one_keeps_its_own() -> None:
    """torch.empty() hands out memory as it was: the end-of-run list must not show it as
    a value, while a tensor written after empty() (even through a view) shows torch's."""
    import torch

    from autograd_viz.core.graph.graph_model import drawn_graph
    from autograd_viz.core.kernel.runner import run_source
    from autograd_viz.core.trace import Trace

    code = (
        "import torch\n"
        "e = torch.empty(3)\n"
        "f = torch.empty(2)\n"
        "f.fill_(1.5)\n"
        "g = torch.empty(2)\n"
        "g[0] = 4.0\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "(w * e[:2]).sum()\n"
    )
    trace = run_source(code)
    e, f, g = (trace.tensor_named(n) for n in "efg")
    assert f.value.data == torch.empty(2).fill_(1.5).tolist() and not f.uninitialised
    assert not g.uninitialised and g.value.data[0] == 4.0  # written through a view
    assert not e.uninitialised  # read through a view: whatever it holds fed the sum
    untouched = run_source("import torch\nh = torch.empty(4)\n").tensor_named("h")
    assert untouched.uninitialised and untouched.value is None
    again = Trace.from_dict(run_source("import torch\nh = torch.empty(4)\n").to_dict())
    assert again.tensor_named("h").uninitialised  # the key travels in the JSON
    drawn = drawn_graph(run_source("import torch\nh = torch.empty(4, requires_grad=True)\n"))
    assert [n.detail for n in drawn.nodes.values()] == ["uninitialised"]


def test_the_search_for_a_module_being_built_stops_at_the_runs_base_frame() -> None:
    """Below the frame that runs the user's code (the kernel's stack) nothing is the
    user's: a module's `__init__` down there is not searched for (nor walked, per op)."""

    class Outer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lines = run_in_here()

    def run_in_here() -> tuple[int | None, int | None]:  # the base frame: exec's caller
        here = sys._getframe()
        return building_statement(here, __file__), building_statement(here, __file__, here)

    built_from = sys._getframe().f_lineno + 1
    unbounded, bounded = Outer().lines
    assert unbounded == built_from  # `Outer()`, found below the frame we started from
    assert bounded is None  # searched no further than the base frame


def test_an_empty_tensor_written_through_another_object_keeps_its_numbers() -> None:
    """`w.data.fill_(2)` and `e.numpy()[:] = 1` write an empty's memory through another
    tensor object (or NumPy) that no event names as the empty: still torch's numbers, not
    "uninitialised". A tensor that merely shares nothing with them stays uninitialised."""
    from autograd_viz.core.kernel.runner import run_source

    trace = run_source(
        "import torch\n"
        "w = torch.empty(3)\n"
        "w.data.fill_(2.0)\n"
        "b = torch.empty(2, requires_grad=True)\n"
        "b.data.zero_()\n"
        "e = torch.empty(3)\n"
        "e.numpy()[:] = 1.0\n"
        "o = torch.empty(2)\n"
        "torch.add(torch.ones(2), 1, out=o.data)\n"
        "h = torch.empty(4)\n"
    )
    expected = {"w": [2.0] * 3, "b": [0.0] * 2, "e": [1.0] * 3, "o": [2.0] * 2}
    for name, data in expected.items():
        t = trace.tensor_named(name)
        assert not t.uninitialised and t.value.data == data, name
    assert trace.tensor_named("h").uninitialised
