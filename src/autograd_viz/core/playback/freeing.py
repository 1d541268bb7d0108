"""Which nodes' saved tensors each backward pass freed, read off the trace's events."""

from __future__ import annotations

from bisect import bisect_right

from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.events import BackwardEndEvent, BackwardEvent
from autograd_viz.core.trace.index import TraceIndex

_PASS_KINDS = {"node", "accumulate", "retained_grad"}


def freeing(trace: Trace) -> list[tuple[int, int | None, set[str]]]:
    """For each backward that freed its graph: (index of the last event of the pass, its
    line, the nodes whose saved tensors went with it). AccumulateGrad saves nothing, so it
    is never freed; a graph kept with retain_graph=True is not freed."""
    index = trace.index
    nexts = index.nodes
    ends = index.of_kind("backward_end")
    found: list[tuple[int, int | None, set[str]]] = []
    for i, e in index.each(BackwardEvent):
        if not e.graph_freed:
            continue
        end = _pass_end(index, ends, i, e.depth)
        stack = [n for n in e.root_nodes if n in nexts]
        freed: set[str] = set()
        while stack:
            nid = stack.pop()
            if nid in freed:
                continue
            freed.add(nid)
            stack.extend(n for n in nexts[nid].next if n in nexts)
        found.append((end, e.line, {n for n in freed if not nexts[n].variable}))
    return found


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


def freed_at(freed: list[tuple[int, int | None, set[str]]], index: int) -> set[str]:
    """The nodes freed by every backward pass that had finished by event `index`."""
    out: set[str] = set()
    for end, _, nodes in freed:
        if end <= index:
            out |= nodes
    return out
