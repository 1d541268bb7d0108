"""The trace as one forward-direction DAG, before any layout: tensors and autograd nodes
as marks (`DrawnNode`), what each kind of mark is, and what autograd did not record
(no_grad ops, history breaks) beside it. graph_model lays it out into a picture."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import networkx as nx

from autograd_viz.core.graph.picture_graph import PictureGraph
from autograd_viz.core.trace import NodeInfo, TensorInfo, Trace
from autograd_viz.core.trace.events import BackwardEvent, HistoryBreakEvent, OpEvent
from autograd_viz.core.trace.value_text import UNINITIALISED, format_value

LEAF = "leaf"  # a tensor the user created that requires grad
CONSTANT = "constant"  # a leaf that does not require grad
RESULT = "result"  # a non-leaf tensor produced by an operation
OPERATION = "operation"  # a grad_fn node such as MulBackward0
ACCUMULATE = "accumulate"  # AccumulateGrad: where a leaf's .grad is written
UNTRACKED = "untracked"  # an op that ran under no_grad on tensors that require grad

MAX_UNTRACKED = 50  # no_grad ops drawn (the last one per line and op)


@dataclass
class DrawnNode:
    """One mark on the canvas."""

    id: str
    kind: str
    title: str  # first label line: variable name or grad_fn name
    detail: str = ""  # second line: value, shape
    grad: str = ""  # third line: .grad, for tensors that have one
    x: float = 0.0
    y: float = 0.0


def _tensor_kind(t: TensorInfo) -> str:
    if not t.is_leaf:
        return RESULT
    return LEAF if t.requires_grad else CONSTANT


def _tensor_node(t: TensorInfo, name_of: Callable[[str], str]) -> DrawnNode:
    grad = ""
    if t.grad is not None:
        grad = "grad " + format_value(t.grad)
    elif t.is_leaf and t.requires_grad:
        grad = "grad None"
    name = ", ".join([t.name, *t.aliases]) if t.name else None  # `b, c` after c = b.mul_(3)
    if name is None and name_of(t.id) != t.id:
        name = name_of(t.id)  # what captions call it: `sub(…)`, the op that made it
    return DrawnNode(
        t.id,
        _tensor_kind(t),
        name or "(leaf)" if t.is_leaf else name or "",
        UNINITIALISED if t.uninitialised else format_value(t.value),
        grad,
    )


def _op_node(n: NodeInfo) -> DrawnNode:
    return DrawnNode(n.id, ACCUMULATE if n.name == "AccumulateGrad" else OPERATION, n.name)


def reachable_nodes(trace: Trace) -> set[str]:
    """Nodes of the graph behind the user's named tensors and behind every backward()
    call, as it stands at the end of the run."""
    index = trace.index
    nexts = {n.id: n.next for n in trace.nodes}
    stack = [t.grad_fn for t in trace.tensors if t.name is not None and t.grad_fn in nexts]
    # The graph a named tensor was cut from (h = y.detach()) stays in the picture, so the
    # cut itself can be drawn.
    named = {t.id for t in trace.tensors if t.name is not None}
    stack += [
        e.grad_fn
        for _, e in index.each(HistoryBreakEvent)
        if e.result in named and e.grad_fn in nexts
    ]
    # The graph every backward() ran through, also when its root was never named
    # (`(w * x).sum().backward()`): a training loop draws each iteration's graph, which
    # the loop's fold (fold_tree.py) shows as one card until the learner opens it, and
    # each backward pass of the player lights its own iteration.
    for _, e in index.each(BackwardEvent):
        stack += [nid for nid in e.root_nodes if nid in nexts]
    seen: set[str] = set()
    while stack:
        nid = stack.pop()
        if nid not in seen:
            seen.add(nid)
            stack.extend(nexts[nid])
    return seen


def build_graph(trace: Trace) -> nx.MultiDiGraph:
    """The forward-direction DAG the user's tensors hang on: tensor → op → tensor, and
    leaf → AccumulateGrad → op. Constants (no grad) feed the op that used them."""
    nodes = reachable_nodes(trace)
    leaves = {n.variable for n in trace.nodes if n.id in nodes and n.variable}
    # Constants (tensors without grad) feed the ops that used them; the op events say which.
    # Through ops autograd did not record (`X.unsqueeze(0).float()`, the transpose of a
    # batch_first attention's `memory`): the listed constant they came from feeds the op.
    listed = {t.id for t in trace.tensors if not t.requires_grad and not t.buffer}
    origin: dict[str, tuple[str, ...]] = {}  # an unlisted output -> the constants behind it
    pieces: set[str] = set()  # listed outputs drawn as what they came from, with their kin
    fed: list[tuple[str, str]] = []
    for _, e in trace.index.each(OpEvent):
        targets = [nid for nid in e.grad_fn if nid in nodes]
        sources = [
            origin.get(tid, (tid,)) if tid not in listed or tid in pieces else (tid,)
            for tid in dict.fromkeys(e.inputs)
        ]
        if not any(e.grad_fn):
            if e.grad_enabled:  # not an update under no_grad: a derived constant
                behind = tuple(dict.fromkeys(s for group in sources for s in group))
                # The pieces of one call (X.split(3), the rows `for row in X` walks) are
                # drawn alike: each as what it came from. The last, still held by the
                # loop's variable at the end, fed the last pass alone as `xb`, the
                # others as X.
                # (Only where that is drawn: the rows of a temporary stay the last row.)
                whole = (
                    len(e.outputs) > 1
                    and any(out not in listed for out in e.outputs)
                    and bool(behind)
                    and all(s in listed for s in behind)
                )
                for out in e.outputs:
                    if out not in listed or whole:
                        origin[out] = behind
                        if out in listed:
                            pieces.add(out)
            continue
        # A compiled call says which of its own nodes took each argument.
        feeds = e.compiled.feeds if e.compiled is not None else {}
        for tid, group in zip(dict.fromkeys(e.inputs), sources, strict=True):
            fed_nodes = [nid for nid in feeds.get(tid, ()) if nid in nodes] or targets
            fed.extend((s, nid) for s in group for nid in fed_nodes)
    feeders = {tid for tid, _ in fed}
    tensors = [
        t
        for t in trace.tensors
        if t.id in leaves
        or t.grad_fn in nodes
        or (t.name is not None and t.requires_grad)
        or (not t.requires_grad and t.id in feeders and not t.buffer)
    ]
    drawn = {t.id for t in tensors}
    g = PictureGraph()
    for t in tensors:
        g.add_node(t.id, item=_tensor_node(t, trace.index.name_of))
    for n in trace.nodes:
        if n.id in nodes:
            g.add_node(n.id, item=_op_node(n))
    # The tensor that carries output `nr` of node `id` forward, where the user kept one.
    carrier: dict[tuple[str, int], str] = {}
    edges: list[tuple[str, str]] = []  # added in one go, in this order
    for t in tensors:
        if t.grad_fn in nodes:
            carrier.setdefault((t.grad_fn, t.output_nr), t.id)
            edges.append((t.grad_fn, t.id))
    feeds: dict[tuple[str, int], str] = {}
    for n in trace.nodes:
        if n.id not in nodes:
            continue
        if n.variable in drawn:
            edges.append((n.variable, n.id))
        nrs = n.next_nr or [0] * len(n.next)
        for i, (source, nr) in enumerate(zip(n.next, nrs, strict=False)):
            start = carrier.get((source, nr), source)
            feeds[(n.id, i)] = start
            edges.append((start, n.id))
    if feeds:
        g.graph["feeds"] = feeds
    constants = {t.id for t in tensors if not t.requires_grad}
    edges.extend((tid, nid) for tid, nid in dict.fromkeys(fed) if tid in constants)
    g.add_plain_edges(edges)
    return g


def add_outside_autograd(trace: Trace, g: nx.MultiDiGraph) -> None:
    """no_grad ops on tensors that require grad, greyed beside the graph, and history
    breaks (.detach(), .data) as cut edges: what autograd did not record, drawn as such."""
    index = trace.index
    tensors = index.tensors
    styles: dict[tuple[str, str], tuple[str, str]] = {}
    untracked: dict[tuple[Any, str], tuple[int, OpEvent]] = {}
    for i, e in index.each(OpEvent):
        # An nn.Module's own initialisation (`kaiming_uniform_` on a new weight) is not
        # the learner's computation: drawn, it ran an edge from every layer's weight
        # across the whole model to the picture's edge.
        # Nor is a custom backward's or a hook's own op (`x.abs()` on a saved tensor):
        # it ran inside the backward pass, not as a no_grad step of the forward.
        if not e.grad_enabled and e.construction is None and not e.in_backward:
            inputs = [t for t in e.inputs if t in g and tensors[t].requires_grad]
            if inputs:
                untracked[(e.line, e.op)] = (i, e)
    for _, e in index.each(HistoryBreakEvent):
        if e.result in g:
            source = e.tensor if e.tensor in g else e.grad_fn
            if source in g and source != e.result:
                g.add_edge(source, e.result)
                styles[(source, e.result)] = ("cut", f"✂ {e.how}")
    event_nodes: dict[int, str] = {}
    for n, (i, e) in enumerate(sorted(untracked.values(), key=lambda p: p[0])[-MAX_UNTRACKED:]):
        uid = f"u{n}"
        g.add_node(uid, item=DrawnNode(uid, UNTRACKED, f"{e.op} (no_grad)", f"line {e.line}"))
        ins = {t for t in e.inputs if t in g}
        for t in ins:
            g.add_edge(t, uid)
            styles[(t, uid)] = ("untracked", "")
        for t in e.outputs:
            if t in g and t not in ins:  # an in-place update would close a loop
                g.add_edge(uid, t)
                styles[(uid, t)] = ("untracked", "")
        event_nodes[i] = uid
    # Never lose the autograd picture to a loop. Only the edges added here can close one
    # (with none added, the check cost a tenth of a 1,000-node layout and changed nothing).
    if (styles or event_nodes) and not nx.is_directed_acyclic_graph(g):
        g.remove_nodes_from([u for u in list(g) if str(u).startswith("u")])
        g.remove_edges_from([edge for edge, (style, _) in styles.items() if style == "cut"])
        styles, event_nodes = {}, {}
    g.graph["edge_styles"] = styles
    g.graph["event_nodes"] = event_nodes
