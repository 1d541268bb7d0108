"""Typed events read back every event the tracer writes, key for key; the trace index
finds tensors, nodes and events without scanning; a run's consumers read the events once.

`assert_events_round_trip` is also called where the fidelity and fuzz suites already
trace their scripts (test_fidelity.py, test_event_fidelity.py), so every kind round-trips
over all of them at no extra tracing cost.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
import torch

from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.freeing import freeing
from autograd_viz.core.playback.player import BACKWARD, EVERYTHING, FORWARD, Player
from autograd_viz.core.playback.source_map import SourceMap
from autograd_viz.core.playback.step_text import MADE_WITHOUT_GRAD
from autograd_viz.core.trace import TensorValue, Trace, json_safe
from autograd_viz.core.trace.events import (
    EVENT_TYPES,
    AccumulateEvent,
    NodeEvent,
    OpEvent,
    UnknownEvent,
    event_from_dict,
)

EVERY_KIND = """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
x = torch.tensor([3.0, 4.0])
opt = torch.optim.SGD([w], lr=0.1)
h = w * x
h.retain_grad()
loss = h.sum()
loss.backward()
opt.step()
w.grad.zero_()
w.grad = torch.ones(2)
n = loss.item()
raise ValueError("the end")
"""


def _wire(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events as they cross to the GUI: strict JSON, NaN as "nan" (as protocol.py)."""
    try:
        text = json.dumps(events, allow_nan=False)
    except ValueError:
        text = json.dumps(json_safe(events), allow_nan=False)
    return json.loads(text)


def assert_events_round_trip(trace: Trace) -> None:
    """Each event reads as its kind's class and writes back equal to what the tracer wrote,
    in memory (through the trace's index) and after a trip through JSON."""
    for d, typed in zip(trace.events, trace.index.events, strict=True):
        assert type(typed) is EVENT_TYPES[d["kind"]], d
        assert typed.to_dict() == d, (d, typed)
    for d in _wire(trace.events):
        typed = event_from_dict(d)
        assert type(typed) is EVENT_TYPES[d["kind"]], d
        assert typed.to_dict() == d, (d, typed)


@pytest.fixture(scope="module")
def every_kind() -> Trace:
    return run_source(EVERY_KIND)


def test_every_kind_the_tracer_writes_has_a_class_and_round_trips(every_kind: Trace) -> None:
    assert {e["kind"] for e in every_kind.events} == set(EVENT_TYPES)
    assert_events_round_trip(every_kind)


def test_an_unknown_kind_or_key_is_kept_and_does_not_break_the_views(every_kind: Trace) -> None:
    future = {"kind": "telemetry", "line": 4, "payload": [1, 2]}
    typed = event_from_dict(future)
    assert isinstance(typed, UnknownEvent) and typed.kind == "telemetry" and typed.line == 4
    assert typed.to_dict() == future and typed.caption(every_kind.index) == "line 4: telemetry"
    op = {**every_kind.events[0], "added_later": {"x": 1}}
    assert event_from_dict(op).to_dict() == op
    broken = {"kind": "node", "grads_in": 3}  # not a list: read as unknown, not a crash
    assert isinstance(event_from_dict(broken), UnknownEvent)
    trace = Trace.from_dict(every_kind.to_dict())
    trace.events.insert(3, future)
    trace.events.insert(5, broken)
    player = Player(trace, drawn_graph(trace))
    for mode in (FORWARD, BACKWARD, EVERYTHING):
        player.set_mode(mode)
        player.to_end()
        assert [s.caption for s in player.steps] and player.frame() is not None
    assert trace.index.counts["telemetry"] == 1


def test_event_values_are_tensor_values_shared_like_the_snapshots(every_kind: Trace) -> None:
    # The tracer hands one snapshot dict to each event that shows an unchanged tensor
    # (a gradient leaving one node and entering the next): it reads as one TensorValue.
    typed_of: dict[int, TensorValue] = {}
    seen = 0
    for d, e in zip(every_kind.events, every_kind.index.events, strict=True):
        if isinstance(e, NodeEvent):
            pairs = zip(d["grads_in"] + d["grads_out"], e.grads_in + e.grads_out, strict=True)
            for as_dict, value in pairs:
                if as_dict is not None:
                    assert isinstance(value, TensorValue)
                    seen += id(as_dict) in typed_of
                    assert typed_of.setdefault(id(as_dict), value) is value
    assert seen > 0
    (acc,) = [e for _, e in every_kind.index.each(AccumulateEvent)]
    (change,) = acc.changes()
    assert change.tensor == every_kind.tensor_named("w").id
    assert change.grad and change.before is None and change.after.data == [3.0, 4.0]
    # The tensor list keeps its value JSON: the event-only keys never appear there.
    for t in every_kind.to_dict()["tensors"]:
        for value in (t["value"], t["grad"]):
            if value is not None:
                assert set(value) == {"shape", "data", "min", "max", "mean", "norm", "first"}


def test_the_index_finds_tensors_nodes_and_events(every_kind: Trace) -> None:
    trace, index = every_kind, every_kind.index
    w = trace.tensor_named("w")
    assert trace.tensor(w.id) is w and index.tensor(w.id) is w
    assert trace.node(w.grad_fn or trace.nodes[0].id) is index.nodes[trace.nodes[0].id]
    with pytest.raises(KeyError):
        trace.tensor("t9999")
    ops = index.of_kind("op")
    assert ops == [i for i, e in enumerate(trace.events) if e["kind"] == "op"]
    assert [i for i, _ in index.each(OpEvent)] == ops
    both = index.of_kind("node", "accumulate")
    assert both == sorted(both) and len(both) == index.count("node") + index.count("accumulate")
    assert sum(index.counts.values()) == len(trace.events)
    about_w = index.of_tensor(w.id)
    assert about_w == [i for i, e in enumerate(index.events) if w.id in e.tensor_ids()]
    assert {trace.events[i]["kind"] for i in about_w} >= {"op", "accumulate", "param_update"}
    leaf_node = next(n for n in trace.nodes if n.variable == w.id)
    assert [trace.events[i]["kind"] for i in index.of_node(leaf_node.id)] == ["node", "accumulate"]


def test_the_index_is_built_once_and_again_when_the_trace_changes(every_kind: Trace) -> None:
    trace = Trace.from_dict(every_kind.to_dict())
    first = trace.index
    assert trace.index is first
    trace.events.append({"kind": "run_end", "line": None, "seconds": 0.0, "ok": True})
    assert trace.index is not first and len(trace.index.events) == len(trace.events)
    head = Trace(**{**vars(trace), "events": []})  # what protocol.py sends ahead of events
    assert head.index.events == [] and len(head.errors) == 0
    assert trace.errors == [e for e in trace.events if e["kind"] == "error"]


class _CountingList(list):
    """A list that counts the passes made over it (iterations and item reads)."""

    def __init__(self, items: list[Any]) -> None:
        super().__init__(items)
        self.passes = 0
        self.reads: Counter[int] = Counter()  # position -> item reads

    def __iter__(self):
        self.passes += 1
        return super().__iter__()

    def __getitem__(self, i):
        self.reads[i] += 1
        return super().__getitem__(i)


def test_tensor_and_node_look_ups_do_not_scan(every_kind: Trace) -> None:
    trace = Trace.from_dict(every_kind.to_dict())
    trace.tensors = _CountingList(trace.tensors)
    trace.nodes = _CountingList(trace.nodes)
    for _ in range(50):
        for t in list.__iter__(trace.tensors):
            trace.tensor(t.id)
            trace.tensor_named(t.name or "")
        for n in list.__iter__(trace.nodes):
            trace.node(n.id)
    # Once to file them by id, once more (tensors) to file them by name: not per look-up.
    assert trace.tensors.passes == 2 and trace.nodes.passes == 1


def end_of_run_passes(trace: Trace) -> int:
    """How often one run's core consumers go over `trace.events`: what the app does
    with a new trace (ui/graph/_layout_job.py, ui/main_window.py), all three modes played."""
    events = trace.events = _CountingList(trace.events)
    graph = drawn_graph(trace)
    freeing(trace)
    player = Player(trace, graph)
    SourceMap(trace)
    for mode in (FORWARD, BACKWARD, EVERYTHING):
        player.set_mode(mode)
        while player.step_forward():
            player.frame()
            player.current.caption  # noqa: B018
    return events.passes


def test_a_runs_consumers_read_the_events_once(every_kind: Trace) -> None:
    # Before the index (8e2087b) the same work made 12 passes: drawn_graph 5, freeing 2
    # (the layout job's and the player's), the player's histories 1 and 1 per mode shown,
    # the source map 1; and freeing read ahead item by item to find where a pass ended.
    trace = Trace.from_dict(every_kind.to_dict())
    assert end_of_run_passes(trace) == 1
    # The index reads each event once more, by position, when its kind is first typed;
    # an error step also hands the UI its dict, once in each of the three modes; a node
    # event also gives its node id once, untyped (freeing's, kept by the index).
    (error,) = [i for i, e in enumerate(trace.events) if e["kind"] == "error"]
    assert trace.events.reads.pop(error) == 1 + 3
    nodes = [i for i, e in enumerate(trace.events) if e["kind"] == "node"]
    assert {trace.events.reads.pop(i) for i in nodes} == {2}
    assert set(trace.events.reads.values()) == {1}


# Every step of EVERY_KIND in the "all" mode, as the player wrote it before the events
# were typed (commit 8e2087b); since issue 14 a tensor no variable holds is named (w's
# .grad, what made it) and a step that lights nothing says why.
EVERY_CAPTION = [
    "line 3: tensor() → w = [1.0, 2.0]",
    "line 4: tensor() → x = [3.0, 4.0]",
    "line 6: mul(w, x) → h = [3.0, 8.0]",
    "line 8: sum(h) → loss = 11.0",
    "line 9: .backward() from loss — frees what its nodes saved",
    "SumBackward0: [1.0, 1.0] → MulBackward0",
    "MulBackward0: [3.0, 4.0] → w.grad",
    "AccumulateGrad: receives [3.0, 4.0] for w.grad",
    "w.grad: None → [3.0, 4.0]  (AccumulateGrad adds)",
    "h.grad kept by retain_grad(): None → [1.0, 1.0]",
    "line 10: SGD.step() changed w: [1.0, 2.0] → [0.7, 1.6]",
    # One call, one step: the reset, standing on the op after it (it lights w).
    "line 11: w.grad.zero_() — .grad [3.0, 4.0] → [0.0, 0.0]",
    "line 12: ones() → ones(…) = [1.0, 1.0]  · " + MADE_WITHOUT_GRAD,
    "line 12: w.grad set — .grad [0.0, 0.0] → [1.0, 1.0]",
    "line 13: loss.item() = 11.0 — the result has no autograd history",
    "line 14: ValueError: the end",
]


def test_captions_read_as_before(every_kind: Trace) -> None:
    player = Player(every_kind, drawn_graph(every_kind))
    steps = player.steps_in(EVERYTHING)
    assert [s.caption for s in steps] == EVERY_CAPTION
    edges = [sorted(s.edge_grads.values()) for s in steps if s.kind == "node"]
    assert edges == [["[1.0, 1.0]"], ["[3.0, 4.0]"], []]


def test_quick_maker_makes_what_init_makes() -> None:
    """The makers that skip a frozen __init__ (typed ops and nodes, player steps) give an
    object equal to the one __init__ gives, defaults included; a class with a field
    factory is refused (the maker would leave the field unset)."""
    from dataclasses import dataclass, field

    from autograd_viz.core.playback.player import Step
    from autograd_viz.core.trace._event_base import quick_maker

    value = TensorValue([2], [1.0, 2.0])
    args = (7, "mul", ["t0", "t1"], ["t2"], ["n0"], True, False, ["model"], (value,))
    made = quick_maker(OpEvent)(OpEvent, *args, source={"kind": "op"})
    assert made == OpEvent(*args, source={"kind": "op"})
    assert made.calls is None and made.source == {"kind": "op"}  # defaults, kw-only
    with pytest.raises(AttributeError):
        made.op = "add"  # still frozen
    step = quick_maker(Step)(Step, 3, 9, "op", 7, frozenset({"t2"}), lambda: ("mul", {}))
    assert step == Step(3, 9, "op", 7, frozenset({"t2"}), lambda: ("mul", {}))
    assert step.caption == "mul" and step.folded == ()  # its cached caption still works

    @dataclass(frozen=True)
    class WithFactory:
        items: list = field(default_factory=list)

    with pytest.raises(TypeError):
        quick_maker(WithFactory)


def test_an_op_inside_a_custom_functions_forward_is_not_called_untracked() -> None:
    """Inside `Sq.forward` grad mode is off, and `x * x` was captioned "(no_grad: not
    tracked)" though torch gives its result, y, the SqBackward node. A plain no_grad op
    still says it is not tracked."""
    from autograd_viz.core.playback.run_view import prepare_run

    trace = run_source(
        "import torch\nclass Sq(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n"
        "        return 2 * x * g\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = Sq.apply(x)\nwith torch.no_grad():\n    q = x * 2\n"
    )
    assert trace.node(trace.tensor_named("y").grad_fn).name == "SqBackward"
    player = prepare_run(trace).player
    captions = []
    while player.step_forward():
        captions.append(player.current.caption)
    assert (
        "line 6: mul(x, x) → y = [1.0, 4.0]  (inside a custom autograd.Function: recorded as"
        " one SqBackward)" in captions
    )
    assert "line 14: mul(x) → q = [2.0, 4.0]  (no_grad: not tracked)" in captions[-1]


def test_an_op_inside_a_custom_function_whose_result_no_variable_keeps_is_not_untracked() -> None:
    """`Double.apply(x).sum()`: the Function's output is used, not kept, and its op was
    captioned "(no_grad: not tracked) · autograd recorded nothing", while the backward pass
    then ran DoubleBackward. Its node is read off the op that used it."""
    from autograd_viz.core.playback.run_view import prepare_run
    from autograd_viz.core.playback.step_text import NO_GRAD_MODE

    code = (
        "import torch\nclass Double(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        return x * 2\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n"
        "x = torch.ones(2, requires_grad=True)\ns = Double.apply(x).sum()\n"
        "act = torch.nn.Tanh()\nact.register_full_backward_hook(lambda m, gi, go: None)\n"
        "t = act(x).sum()\n"
    )
    x = torch.ones(2, requires_grad=True)
    player = prepare_run(run_source(code)).player
    captions = []
    while player.step_forward():
        captions.append(player.current.caption)
    (double,) = [c for c in captions if c.startswith("line 5: mul(x)")]
    assert "recorded as one DoubleBackward" in double
    assert NO_GRAD_MODE not in double
    hooked = [c for c in captions if c.startswith("line 13: view_as(")]
    assert len(hooked) == 2 and all("BackwardHookFunctionBackward" in c for c in hooked)
    assert not [c for c in captions if NO_GRAD_MODE in c or "not tracked" in c], captions
    # As torch has it: the sum's node sends to the Function's.
    Double = type(
        "Double",
        (torch.autograd.Function,),
        {"forward": staticmethod(lambda ctx, v: v * 2), "backward": staticmethod(lambda c, g: g)},
    )
    assert Double.apply(x).sum().grad_fn.next_functions[0][0].name() == "DoubleBackward"


def test_a_step_that_changed_nothing_does_not_say_it_changed_the_weight() -> None:
    """A zero gradient (here a loss times 0): "SGD.step() changed w: [1.0, -1.0] →
    [1.0, -1.0]" claimed a change torch did not make."""
    from autograd_viz.core.playback.run_view import prepare_run

    code = (
        "import torch\nw = torch.nn.Parameter(torch.tensor([1.0, -1.0]))\n"
        "v = torch.nn.Parameter(torch.tensor([2.0]))\n"
        "opt = torch.optim.SGD([w, v], lr=0.1)\nloss = (w.sum() * 0) + (v * 3).sum()\n"
        "loss.backward()\nopt.step()\n"
    )
    w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    v = torch.nn.Parameter(torch.tensor([2.0]))
    opt = torch.optim.SGD([w, v], lr=0.1)
    ((w.sum() * 0) + (v * 3).sum()).backward()
    opt.step()
    assert w.tolist() == [1.0, -1.0]
    player = prepare_run(run_source(code)).player
    player.set_mode("all")
    captions = []
    while player.step_forward():
        captions.append(player.current.caption)
    assert "line 7: SGD.step() left w as it was: [1.0, -1.0]" in captions
    assert f"line 7: SGD.step() changed v: [2.0] → [{v.item():.1f}]" in captions
    # `.data =` of the same numbers in another dtype (`m.double()`) is a change.
    player = prepare_run(run_source("import torch\nm = torch.nn.Linear(2, 1)\nm.double()\n")).player
    player.set_mode("all")
    doubled = []
    while player.step_forward():
        doubled.append(player.current.caption)
    assert [c for c in doubled if ".data = changed m.weight" in c], doubled
