"""The drawn graph: every trace tensor and node once, forward edges, a readable layout."""

from __future__ import annotations

import networkx as nx

from autograd_viz.core.graph.graph_model import (
    ACCUMULATE,
    LEAF,
    OPERATION,
    RESULT,
    build_graph,
    drawn_graph,
    format_number,
)
from autograd_viz.core.graph.layered_layout import layered_layout
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.trace import Trace
from autograd_viz.resources import DEFAULT_EXAMPLE


def _first_graph():
    return run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8"))


def test_every_trace_item_drawn_once() -> None:
    trace = _first_graph()
    drawn = drawn_graph(trace)
    assert set(drawn.nodes) == {t.id for t in trace.tensors} | {n.id for n in trace.nodes}
    assert drawn.count(LEAF) == 2 and drawn.count(RESULT) == 3
    assert drawn.count(OPERATION) == 3 and drawn.count(ACCUMULATE) == 2


def test_forward_chain_of_the_lesson() -> None:
    trace = _first_graph()
    g = build_graph(trace)
    name = {**{t.id: t.name for t in trace.tensors}, **{n.id: n.name for n in trace.nodes}}
    path = nx.shortest_path(g, trace.tensor_named("x").id, trace.tensor_named("out").id)
    assert [name[v] for v in path] == [
        "x",
        "AccumulateGrad",
        "MulBackward0",
        "z",
        "AddBackward0",
        "w",
        "PowBackward0",
        "out",
    ]
    assert nx.is_directed_acyclic_graph(g)


def test_layout_runs_left_to_right_and_has_no_overlaps() -> None:
    trace = _first_graph()
    g = build_graph(trace)
    pos = layered_layout(g)
    assert all(pos[u][0] < pos[v][0] for u, v, _ in g.edges(keys=True))
    assert len(set(pos.values())) == len(pos)


def test_layout_is_deterministic_and_cuts_crossings() -> None:
    g = nx.MultiDiGraph()
    # Two independent chains listed crosswise: a good ordering draws them without crossing.
    g.add_edges_from([("a1", "b2"), ("a2", "b1"), ("b1", "c1"), ("b2", "c2")])
    first, second = layered_layout(g), layered_layout(g.copy())
    assert first == second

    def crossings(pos) -> int:
        edges = [(pos[u], pos[v]) for u, v, _ in g.edges(keys=True)]
        count = 0
        for i, (p1, q1) in enumerate(edges):
            for p2, q2 in edges[i + 1 :]:
                if p1[0] == p2[0] and (p1[1] - p2[1]) * (q1[1] - q2[1]) < 0:
                    count += 1
        return count

    assert crossings(first) == 0


def test_labels_show_values_and_grads() -> None:
    drawn = drawn_graph(_first_graph())
    by_title = {n.title: n for n in drawn.nodes.values()}
    assert by_title["x"].detail == "2.0" and by_title["x"].grad == "grad 60.0"
    assert by_title["out"].detail == "100.0"
    assert format_number(0.000123456) == "0.0001235" and format_number(3) == "3"


def test_no_grad_ops_and_cuts_are_drawn_outside_autograd() -> None:
    from pathlib import Path

    from autograd_viz.core.graph.graph_model import UNTRACKED

    code = (Path(__file__).parent / "nograd_and_detach.py").read_text()
    trace = run_source(code)
    drawn = drawn_graph(trace)
    untracked = [n for n in drawn.nodes.values() if n.kind == UNTRACKED]
    assert sorted((n.title, n.detail) for n in untracked) == [
        ("sub (no_grad)", "line 10"),
        ("sub (no_grad)", "line 9"),
    ]
    w, b, h = (trace.tensor_named(n).id for n in ("w", "b", "h"))
    styles = drawn.edge_styles
    assert {(u, v) for (u, v), (style, _) in styles.items() if style == "untracked"} == {
        (w, untracked[0].id) if untracked[0].detail == "line 9" else (b, untracked[0].id),
        (w, untracked[1].id) if untracked[1].detail == "line 9" else (b, untracked[1].id),
    }
    ((cut, (_, text)),) = [(e, s) for e, s in styles.items() if s[0] == "cut"]
    assert cut[1] == h and text == "✂ detach()"
    assert trace.node(cut[0]).name == "MulBackward0"  # the graph h was cut from
    # Layers still run left to right, sinks right after their inputs.
    assert all(drawn.nodes[u].x < drawn.nodes[v].x for u, v in drawn.edges)


def test_layout_keeps_its_order_when_edited_code_is_run_again() -> None:
    from autograd_viz.core.graph.graph_model import stable_keys

    first = run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8"))
    before = drawn_graph(first)
    # The same graph built in the other order, with a line added on top: every trace id
    # and every line number changes, the picture must not.
    edited = run_source(
        "import torch\n# a comment the user added\n"
        "y = torch.tensor(3.0, requires_grad=True)\nx = torch.tensor(2.0, requires_grad=True)\n"
        "z = x * y\nw = z + 4\nout = w**2\nout.backward()\n"
    )
    fresh = drawn_graph(edited)
    kept = drawn_graph(edited, previous=before.heights())
    by_key = {before.keys[k]: (n.x, n.y) for k, n in before.nodes.items()}
    assert {fresh.keys[k] for k in fresh.nodes} == set(by_key)
    assert all(by_key[kept.keys[k]] == (n.x, n.y) for k, n in kept.nodes.items())
    assert any(by_key[fresh.keys[k]] != (n.x, n.y) for k, n in fresh.nodes.items())
    assert len(set(stable_keys(build_graph(first)).values())) == len(before.nodes)


def test_an_unnamed_backward_root_still_draws_its_graph() -> None:
    """`(w * w).sum().backward()` names only w, yet backward ran through a real graph: it is
    drawn. A loop draws every iteration's graph (a training loop's steps), which its
    fold shows as one card: each backward pass then lights its own iteration."""
    once = run_source(
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n(w * w).sum().backward()\n"
    )
    names = sorted(n.title for n in drawn_graph(once).nodes.values())
    assert names == ["AccumulateGrad", "MulBackward0", "SumBackward0", "w"]
    looped = run_source(
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "for _ in range(3):\n    (w * 2).sum().backward()\n"
    )
    opened = drawn_graph(looped, collapsed=frozenset())
    titles = [n.title for n in opened.nodes.values()]
    assert titles.count("SumBackward0") == 3 and titles.count("MulBackward0") == 3
    assert titles.count("w") == 1  # one leaf: each pass made its own AccumulateGrad node
    loops = [f for f in drawn_graph(looped).folds.values() if f.kind == "loop"]
    assert [(f.title, f.detail) for f in loops] == [("for _ in range(3):", "×3")]


def test_a_modules_own_initialisation_is_not_drawn_but_a_no_grad_update_is() -> None:
    # nn.Conv2d and nn.Linear initialise their weights under no_grad (kaiming_uniform_,
    # uniform_): drawn, each ran an edge from its weight across the whole picture.
    from autograd_viz.core.graph.graph_model import UNTRACKED

    trace = run_source(
        "import torch\n"
        "from torch import nn\n"
        "net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Linear(8, 1))\n"
        "loss = net(torch.randn(1, 1, 4, 4)).sum()\n"
        "loss.backward()\n"
        "with torch.no_grad():\n"
        "    net[2].weight -= 0.1 * net[2].weight.grad\n"
    )
    assert any(
        e.get("kind") == "op" and e.get("construction") and not e["grad_enabled"]
        for e in trace.events
    ), "torch initialised the layers under no_grad while they were built"
    drawn = drawn_graph(trace)
    untracked = sorted((n.title, n.detail) for n in drawn.nodes.values() if n.kind == UNTRACKED)
    assert untracked == [("sub (no_grad)", "line 7")]


def test_a_freed_local_or_a_detached_input_is_drawn_where_it_fed_the_graph() -> None:
    """`eps = torch.randn_like(std)` inside forward is gone by the end of the run, and so
    is the unnamed `fake.detach()` a GAN's discriminator step takes: both fed the graph,
    so both are drawn there (the Mul had one input drawn, D's first layer none, and the
    ✂ of the detach was missing), with torch's numbers."""
    import torch

    code = (
        "import torch\n"
        "torch.manual_seed(0)\n"
        "seen = []\n"
        "class Noisy(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(3, 2)\n"
        "    def forward(self, x):\n"
        "        std = self.lin(x).exp()\n"
        "        eps = torch.randn_like(std)\n"
        "        seen.append(eps.clone())\n"
        "        return eps * std\n"
        "g = torch.nn.Linear(2, 3)\n"
        "fake = g(torch.ones(1, 2))\n"
        "model = Noisy()\n"
        "loss = model(fake.detach()).sum()\n"
        "loss.backward()\n"
    )
    plain: dict = {}
    exec(code, plain)  # the oracle: the same script without the tracer
    trace = run_source(code)
    eps = [t for t in trace.tensors if t.freed and trace.index.name_of(t.id) == "eps"]
    assert len(eps) == 1 and eps[0].name is None and eps[0].dtype == "float32"
    assert eps[0].value.data == plain["seen"][0].tolist()
    again = Trace.from_dict(trace.to_dict())
    assert [t.id for t in again.tensors if t.freed] == [t.id for t in trace.tensors if t.freed]
    graph = drawn_graph(trace, collapsed=frozenset())
    (mul,) = [k for k, n in graph.nodes.items() if n.title == "MulBackward0"]
    fed = {graph.nodes[s].title for s, d in graph.edges if d == mul}
    assert "eps" in fed
    (cut,) = [(s, d) for (s, d), style in graph.edge_styles.items() if style[0] == "cut"]
    assert graph.nodes[cut[0]].title == "fake" and graph.nodes[cut[1]].title == "fake.detach()"
    assert any(s == cut[1] and graph.nodes[d].title == "AddmmBackward0" for s, d in graph.edges)
    assert torch.equal(
        torch.tensor(trace.tensor_named("fake").value.data),
        plain["fake"].detach(),
    )


def test_a_tensor_hook_that_changes_a_gradient_is_named_where_it_arrives() -> None:
    """`h.register_hook(lambda g: g * 2)`: the node after h gets twice what the one before
    sent; its caption says the hook handed it that, so 2.72 → 5.44 is not a mystery."""
    import torch

    from autograd_viz.core.playback.player import BACKWARD, Player

    code = (
        "import torch\n"
        "x = torch.tensor([0.5, 1.0, 4.0], requires_grad=True)\n"
        "w = torch.tensor([2.0, -1.0, 0.5], requires_grad=True)\n"
        "h = x * w\n"
        "h.register_hook(lambda g: g * 2)\n"
        "w.register_hook(lambda g: g + 1)\n"
        "h.exp().sum().backward()\n"
    )
    plain: dict = {}
    exec(code, plain)
    trace = run_source(code)
    assert trace.tensor_named("x").grad.data == plain["x"].grad.tolist()
    hooked = {n.name: n.hooks for n in trace.nodes if n.hooks}
    h, w = trace.tensor_named("h").id, trace.tensor_named("w").id
    assert hooked == {
        "MulBackward0": [{"tensor": h, "line": 5, "output": 0}],
        "AccumulateGrad": [{"tensor": w, "line": 6}],
    }
    again = Trace.from_dict(trace.to_dict())
    assert {n.name: n.hooks for n in again.nodes if n.hooks} == hooked
    captions = [s.caption for s in Player(trace, drawn_graph(trace)).steps_in(BACKWARD)]
    doubled = "[" + ", ".join(f"{v:.3g}" for v in (2 * plain["h"].detach().exp()).tolist()) + "]"
    (mul,) = [c for c in captions if c.startswith("MulBackward0")]
    assert mul.startswith(f"MulBackward0 got {doubled} from the hook on h (line 5): ")
    assert "AccumulateGrad got [" in "".join(captions)
    assert any(c.endswith("from the hook on w (line 6)") for c in captions)
    assert not torch.equal(plain["x"].grad, (plain["h"].detach().exp() * plain["w"]).detach())


def test_a_named_input_reaching_the_graph_through_untracked_ops_feeds_it() -> None:
    """`model(X.unsqueeze(0).float())`: X fed a view and a cast autograd never recorded,
    then the linear layer; X was not drawn at all (nor a decoder's batch_first `memory`,
    transposed inside the attention). It feeds the op its derived tensor reached. A
    tensor updated under no_grad (`w -= lr * w.grad`) passes nothing on."""
    trace = run_source(
        "import torch\n"
        "X = torch.randn(4, 3)\n"
        "lr = torch.tensor(0.1)\n"
        "model = torch.nn.Linear(3, 1)\n"
        "loss = model(X.unsqueeze(0).float()).sum()\n"
        "loss.backward()\n"
        "with torch.no_grad():\n"
        "    model.weight -= lr * model.weight.grad\n"
        "again = (model.weight * 2).sum()\n"
    )
    graph = drawn_graph(trace, collapsed=frozenset())
    by_title = {n.title: k for k, n in graph.nodes.items()}
    into = {graph.nodes[d].title for s, d in graph.edges if s == by_title["X"]}
    assert into == {"ViewBackward0"}, into  # the 3-d linear's output node
    assert "lr" not in by_title or not any(
        graph.nodes[d].title == "MulBackward0" for s, d in graph.edges if s == by_title["lr"]
    )


def test_a_custom_backwards_own_ops_are_not_drawn_as_forward_no_grad_ops() -> None:
    # `x.abs()` on the saved input, inside backward: it was drawn as a grey "abs (no_grad)"
    # consumer of w from the first frame of the replay, as if the forward had run it.
    code = """import torch
class Clip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-1, 1)
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1).float()
w = torch.tensor([0.5, -2.0], requires_grad=True)
loss = Clip.apply(w).sum()
loss.backward()
"""
    trace = run_source(code)
    assert any(
        e["kind"] == "op" and e["op"] == "abs" and e.get("in_backward") for e in trace.events
    )
    titles = {n.title for n in drawn_graph(trace).nodes.values()}
    assert not any(t.startswith("abs") for t in titles), titles
    assert "ClipBackward" in titles


def test_statements_run_again_line_up_as_rows_from_the_same_column() -> None:
    """A lab's rounds (or a step repeated without a loop) start in one column, each round
    a row, and a leaf sits right before its first consumer: before, the rounds were pushed
    right by the longest of them, interleaved, and the leaves' edges ran around them."""
    rounds = "z = w * x\nloss = (z + b - 5) ** 2\n"
    trace = run_source(
        "import torch\n"
        "w = torch.tensor(3.0, requires_grad=True)\n"
        "x = torch.tensor(2.0)\n"
        "b = torch.tensor(1.0, requires_grad=True)\n" + (rounds + "loss.backward()\n") * 2 + rounds
    )
    g = build_graph(trace)
    pos = layered_layout(g)
    names = {n.id: n.name for n in trace.nodes}
    column = {}
    for nid, name in names.items():
        column.setdefault(name, []).append(pos[nid][0])
    assert len(column["MulBackward0"]) == 3 and len(set(column["MulBackward0"])) == 1
    # The freed rounds (no tensor kept between their nodes) run one node a column.
    assert sorted(column["AddBackward0"])[:2] == [column["MulBackward0"][0] + 1] * 2
    first_mul = column["MulBackward0"][0]
    accumulate = {v: pos[v][0] for v in names if names[v] == "AccumulateGrad"}
    w_acc = next(v for v in accumulate if trace.tensor_named("w").id in g.predecessors(v))
    b_acc = next(v for v in accumulate if trace.tensor_named("b").id in g.predecessors(v))
    assert accumulate[w_acc] == first_mul - 1  # w's AccumulateGrad feeds every Mul
    assert accumulate[b_acc] == min(column["AddBackward0"]) - 1  # b's, right before the Adds
    assert pos[trace.tensor_named("b").id][0] == accumulate[b_acc] - 1
    # Three rows: no two nodes of one column share a height.
    assert len(set(pos.values())) == len(pos)


def test_the_pieces_a_loop_walks_are_drawn_alike_as_what_they_came_from() -> None:
    """`for xb, yb in zip(X.split(3), y.split(3))`: the last pieces, still held by xb and
    yb at the end, fed the last pass alone as nodes of their own, while X and y fed the
    others. Every pass now takes X and y alike; pieces held apart stay drawn apart."""
    trace = run_source(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "w = torch.randn(3, 1, requires_grad=True)\n"
        "X = torch.randn(12, 3)\n"
        "y = X.sum(dim=1, keepdim=True)\n"
        "for xb, yb in zip(X.split(3), y.split(3)):\n"
        "    loss = ((xb @ w - yb) ** 2).mean()\n"
        "    loss.backward()\n"
        "a, b = X.chunk(2)\n"
        "(a @ w + b @ w).sum().backward()\n"
    )
    g = build_graph(trace)
    titles = {v: g.nodes[v]["item"].title for v in g}
    by_title = {title: v for v, title in titles.items()}
    assert "xb" not in by_title and "yb" not in by_title
    took = {name: sorted(titles[v] for _, v in g.out_edges(by_title[name])) for name in "Xy"}
    # X: each pass's matmul; y: each pass's subtraction.
    assert took["y"] == ["SubBackward0"] * 4
    assert took["X"] == ["MmBackward0"] * 4
    # Both pieces of the chunk are held: each is drawn as itself, feeding its matmul.
    for name in "ab":
        assert [titles[v] for _, v in g.out_edges(by_title[name])] == ["MmBackward0"]
