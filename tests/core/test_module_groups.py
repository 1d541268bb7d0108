"""nn.Module calls become groups that collapse to one box and open again."""

from __future__ import annotations

import networkx as nx
import torch

from autograd_viz.core.graph.graph_model import build_graph, drawn_graph
from autograd_viz.core.graph.module_groups import MODULE
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, Player
from autograd_viz.core.trace.events import OpEvent
from autograd_viz.resources import EXAMPLES


def _trace():
    return run_source((EXAMPLES / "linear_step.py").read_text(encoding="utf-8"))


def test_each_linear_layer_is_a_group_with_its_parameters() -> None:
    trace = _trace()
    drawn = drawn_graph(trace)
    # Nested as they ran: the Sequential holds its three layers (the ReLU's too).
    assert set(drawn.groups) == {"model", "model.0", "model.1", "model.2"}
    assert {drawn.folds[k].parent for k in ("model.0", "model.1", "model.2")} == {"model"}
    names = {k: n.title for k, n in drawn.nodes.items()}
    first = sorted(names[k] for k in drawn.groups["model.0"])
    assert first == [
        "AccumulateGrad",
        "AccumulateGrad",
        "AddmmBackward0",
        "TBackward0",
        "model.0.bias",
        "model.0.weight",
    ]
    assert "X" not in first  # the input feeds the layer; it is not part of it


def test_collapse_replaces_members_and_keeps_a_dag() -> None:
    trace = _trace()
    full = drawn_graph(trace)
    folded = drawn_graph(trace, {"model.0"})
    box = folded.nodes["m:model.0"]
    assert box.kind == MODULE and box.title == "model.0" and "Linear · 6 nodes" in box.detail
    assert not set(full.groups["model.0"]) & set(folded.nodes)
    assert len(folded.nodes) == len(full.nodes) - 6 + 1
    assert set(folded.alias) == set(full.groups["model.0"])
    g = nx.MultiDiGraph(folded.edges)
    assert nx.is_directed_acyclic_graph(g)
    assert all(folded.nodes[u].x < folded.nodes[v].x for u, v in folded.edges)
    assert "model.0" not in folded.groups and "model.2" in folded.groups
    # The box says what it is: its name, class, the shapes in and out, its parameters.
    lines = folded.box_text["m:model.0"]
    assert lines[:3] == ["model.0", "Linear", "[8, 3] → [8, 4]"] and lines[3].startswith(
        "16 params"
    )
    assert build_graph(trace).number_of_nodes() == len(full.nodes)


def test_player_lights_the_box_for_its_members() -> None:
    trace = _trace()
    folded = drawn_graph(trace, {"model.0"})
    player = Player(trace, folded)
    player.set_mode(BACKWARD)
    lit = set().union(*(step.lit for step in player.steps))
    assert "m:model.0" in lit
    assert not lit & set(folded.alias)


CNN = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(4 * 3 * 3, 10),
)
loss = nn.functional.cross_entropy(model(torch.randn(2, 1, 8, 8)), torch.tensor([1, 7]))
loss.backward()
"""


def _frames(drawn) -> dict[str, tuple[float, float, float, float]]:
    """Each open module's frame in layout units: left, bottom, right, top."""
    return dict(drawn.frames)


def _inside(rect, x: float, y: float) -> bool:
    left, bottom, right, top = rect
    return left < x < right and bottom < y < top


def test_module_frames_neither_overlap_nor_cover_other_nodes() -> None:
    for trace in (_trace(), run_source(CNN)):
        drawn = drawn_graph(trace)
        frames = _frames(drawn)
        assert len(frames) >= 2
        paths = sorted(frames)
        for i, a in enumerate(paths):
            left, bottom, right, top = frames[a]
            for b in paths[i + 1 :]:
                l2, b2, r2, t2 = frames[b]
                nested = b.startswith(a + ".") or a.startswith(b + ".")
                apart = right < l2 or r2 < left or top < b2 or t2 < bottom
                assert nested or apart, (a, b)
            for key, node in drawn.nodes.items():
                assert _inside(frames[a], node.x, node.y) == (key in drawn.groups[a]), (a, key)
        positions = [(n.x, n.y) for n in drawn.nodes.values()]
        assert len(set(positions)) == len(positions)


def test_a_model_reads_from_its_first_module_on() -> None:
    frames = _frames(drawn_graph(_trace()))
    assert frames["model.0"][2] < frames["model.1"][0]  # model.0 ends before model.1 starts
    assert frames["model.1"][2] < frames["model.2"][0]


SEQUENTIAL = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
loss = model(torch.randn(5, 3)).pow(2).mean()
loss.backward()
"""


def _relu_node(trace) -> str:
    """The node of the op that ran inside model.1, as the trace recorded it."""
    ops = [e for _, e in trace.index.each(OpEvent) if e.modules and e.modules[-1] == "model.1"]
    assert [list(e.modules) for e in ops] == [["model", "model.1"]]
    (node,) = ops[0].grad_fn
    return node


def test_a_module_without_parameters_is_framed_like_the_others() -> None:
    trace = run_source(SEQUENTIAL)
    drawn = drawn_graph(trace)
    assert set(drawn.groups) == {"model", "model.0", "model.1", "model.2"}
    relu = _relu_node(trace)
    namespace: dict = {}
    exec(SEQUENTIAL, namespace)  # torch names the node nn.ReLU's op makes
    h = namespace["model"][0](torch.randn(5, 3))
    assert trace.node(relu).name == type(namespace["model"][1](h).grad_fn).__name__
    assert drawn.groups["model.1"] == [relu]
    assert not set(drawn.groups["model.1"]) & (
        set(drawn.groups["model.0"]) | set(drawn.groups["model.2"])
    )
    # The model reads from the left in the order its modules ran.
    frames = _frames(drawn)
    assert frames["model.0"][0] < frames["model.1"][0] < frames["model.2"][0]


def test_a_one_op_module_collapses_to_a_true_box_and_opens_again() -> None:
    trace = run_source(SEQUENTIAL)
    full = drawn_graph(trace)
    relu = _relu_node(trace)
    folded = drawn_graph(trace, {"model.1"})
    box = folded.nodes["m:model.1"]
    assert box.kind == MODULE and box.title == "model.1" and box.detail == "ReLU · 1 node"
    assert folded.alias == {relu: "m:model.1"} and relu not in folded.nodes
    assert len(folded.nodes) == len(full.nodes)
    # The box stands where the node stood: the same edges, with the node's name changed.
    rename = {relu: "m:model.1"}
    assert sorted(folded.edges) == sorted(
        (rename.get(u, u), rename.get(v, v)) for u, v in full.edges
    )
    assert set(folded.groups) == {"model", "model.0", "model.2"}
    player = Player(trace, folded)
    player.set_mode(BACKWARD)
    ran = [
        s for s in player.steps if s.kind == "node" and trace.events[s.event_index]["node"] == relu
    ]
    assert len(ran) == 1 and "m:model.1" in ran[0].lit
    assert drawn_graph(trace, set()).groups == full.groups
