"""Which nodes' saved tensors each backward pass freed, read off the trace's events.

A pass that does not retain its graph frees, node by node, the tensors each node it ran
had saved (the engine's `release_variables()` after the node's backward). A node that
saved none (`AddBackward0`, `ViewBackward0`, a custom Function that called no
`save_for_backward`) loses nothing: a second backward through it works. The trace's
node key `saved` says which saved some; a trace written before that key existed falls
back to marking every node the pass could reach, as this module did then.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from autograd_viz.core.trace import NodeInfo, Trace
from autograd_viz.core.trace.events import BackwardEndEvent, BackwardEvent, ErrorEvent
from autograd_viz.core.trace.index import TraceIndex

_PASS_KINDS = {"node", "accumulate", "retained_grad"}
# PyTorch's words when a backward reaches a node whose saved tensors are gone.
_SECOND_TIME = "backward through the graph a second time"

Freed = list[tuple[int, int | None, set[str]]]


def freeing(trace: Trace) -> Freed:
    """For each backward that did not keep its graph: (index of the last event of the
    pass, its line, the nodes whose saved tensors went with it, maybe none). A graph kept
    with retain_graph=True is not freed; a pass that raised freed what it ran before."""
    index = trace.index
    nodes = index.nodes
    passes, starts, node_events = _passes(index)
    older = any(n.saved is None for n in nodes.values())
    found: Freed = []
    for i, e, end in passes:
        if e.retain_graph or e.graph_freed is False:  # the graph was kept
            continue
        ran = _ran_in(index, node_events, passes, starts, i, end)
        freed = {n for n in ran if nodes[n].saved}
        if older and e.graph_freed:  # nodes of an older trace, which does not say what they saved
            freed |= {n for n in _reachable(nodes, e.root_nodes) if _unknown(nodes[n])}
        found.append((end, e.line, freed))
    return found


def freed_when(trace: Trace) -> dict[str, int]:
    """For each node whose saved tensors a backward freed: the index of its `node` event
    in that pass (the engine lets go of a node's saved tensors right after running it)."""
    index = trace.index
    nodes = index.nodes
    passes, starts, node_events = _passes(index)
    when: dict[str, int] = {}
    for i, e, end in passes:
        if e.retain_graph or e.graph_freed is False:
            continue
        for nid, j in _ran_in(index, node_events, passes, starts, i, end).items():
            if nodes[nid].saved:
                when.setdefault(nid, j)
    return when


def _passes(index: TraceIndex) -> tuple[list[tuple[int, BackwardEvent, int]], list[int], list[int]]:
    """Every backward pass as (its first event, its backward event, its last event), their
    first events, and the positions of all node events."""
    ends = index.of_kind("backward_end")
    passes = [(i, e, _pass_end(index, ends, i, e.depth)) for i, e in index.each(BackwardEvent)]
    # Node events are the most numerous: read their node ids raw, not typed (typing the
    # 8k-node RNN's 8,003 node events only to read one id each cost 60-80 ms).
    return passes, [i for i, _, _ in passes], index.positions("node")


def _unknown(node: NodeInfo) -> bool:
    """A node of an older trace (no `saved`) that is not AccumulateGrad (which saves
    nothing): freed with its pass, as the app drew it before `saved` existed."""
    return node.saved is None and not node.variable


def _reachable(nodes: dict[str, NodeInfo], roots: Sequence[str | None]) -> set[str]:
    """The nodes a pass from `roots` could reach, the roots included."""
    stack = [n for n in roots if n in nodes]
    seen: set[str] = set()
    while stack:
        nid = stack.pop()
        if nid not in seen:
            seen.add(nid)
            stack.extend(n for n in nodes[nid].next if n in nodes)
    return seen


def _ran_in(
    index: TraceIndex,
    node_events: list[int],
    passes: list[tuple[int, BackwardEvent, int]],
    starts: list[int],
    start: int,
    end: int,
) -> dict[str, int]:
    """The nodes the pass from `start` to `end` ran itself, each with the index of its
    first node event: its node events, less those of a pass run inside it (a reentrant
    checkpoint's), which frees or keeps its own."""
    inner = [(s, e) for s, _, e in passes[bisect_right(starts, start) : bisect_right(starts, end)]]
    ran: dict[str, int] = {}
    nodes = index.nodes
    ids = index.raw_values("node", "node")  # in node_events' order
    first, last = bisect_right(node_events, start), bisect_right(node_events, end)
    for j, node in zip(node_events[first:last], ids[first:last], strict=True):
        if any(s < j <= e_end for s, e_end in inner):
            continue
        if isinstance(node, str) and node in nodes:
            ran.setdefault(node, j)
    return ran


def _pass_end(index: TraceIndex, ends: list[int], start: int, depth: int | None) -> int:
    """The index of the last event of the backward pass that starts at `start`: the event
    before its `backward_end` (a pass may hold ops and passes of its own), or, in a trace
    without `backward_end` events, the last of the node events that follow it."""
    if depth is not None:
        for j in ends[bisect_right(ends, start) :]:
            e = index.event(j)
            if isinstance(e, BackwardEndEvent) and e.depth == depth:
                return j - 1
    end, last = start, index.size - 1
    while end < last and index.event(end + 1).kind in _PASS_KINDS:
        end += 1
    return end


def freed_at(freed: Freed, index: int) -> set[str]:
    """The nodes freed by every backward pass that had finished by event `index`."""
    out: set[str] = set()
    for end, _, nodes in freed:
        if end <= index:
            out |= nodes
    return out


def second_backward_errors(trace: Trace, freed: Freed) -> dict[int, frozenset[str]]:
    """For each error event that is PyTorch's "backward through the graph a second time":
    the freed nodes the failing pass met first (a freed node reachable from its roots
    through nodes that still had their saved tensors). The engine raised at one of them;
    where the trace cannot tell (an older trace without `saved`), none."""
    index = trace.index
    out: dict[int, frozenset[str]] = {}
    for i, e in index.each(ErrorEvent):
        if _SECOND_TIME not in e.message:
            continue
        start = _failed_pass(index, i)
        if start is None:
            continue
        failing = index.event(start)
        assert isinstance(failing, BackwardEvent)
        met = _first_freed(index.nodes, failing.root_nodes, freed_at(freed, start))
        if met:
            out[i] = met
    return out


def _failed_pass(index: TraceIndex, error: int) -> int | None:
    """The start of the innermost backward pass whose failure is the error at `error`.

    Passes that raised close (`backward_end`, ok false) one right after another,
    innermost first, before the error. None when the error did not come out of a
    backward call (or the trace, older than `backward_end`, cannot say).
    """
    ends = index.of_kind("backward_end")
    at = bisect_left(ends, error) - 1
    if at < 0 or _closed_ok(index, ends[at]):
        return None
    while at > 0 and ends[at - 1] == ends[at] - 1 and not _closed_ok(index, ends[at - 1]):
        at -= 1
    end = index.event(ends[at])
    assert isinstance(end, BackwardEndEvent)
    starts = index.of_kind("backward")
    for s in reversed(starts[: bisect_left(starts, ends[at])]):
        opened = index.event(s)
        if isinstance(opened, BackwardEvent) and opened.depth == end.depth:
            return s
    return None


def _closed_ok(index: TraceIndex, position: int) -> bool:
    """Whether the `backward_end` at `position` closed a call that returned."""
    e = index.event(position)
    return not isinstance(e, BackwardEndEvent) or e.ok


def _first_freed(
    nodes: dict[str, NodeInfo], roots: Sequence[str | None], freed: set[str]
) -> frozenset[str]:
    """The freed nodes a walk from `roots` meets before any other freed node; empty when
    a node on the way does not say what it saved (an older trace)."""
    stack = [n for n in roots if n in nodes]
    seen: set[str] = set()
    met: set[str] = set()
    while stack:
        nid = stack.pop()
        if nid in seen:
            continue
        seen.add(nid)
        if nodes[nid].saved is None:  # marked freed or not, it may not be the one
            return frozenset()
        if nid in freed:
            met.add(nid)
            continue  # the engine stops here: what lies behind was never reached
        stack.extend(n for n in nodes[nid].next if n in nodes)
    return frozenset(met)
