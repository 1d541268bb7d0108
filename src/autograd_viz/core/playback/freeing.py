"""Which nodes' saved tensors each backward pass freed, read off the trace's events."""

from __future__ import annotations

from typing import Any

from autograd_viz.core.trace import Trace

_PASS_KINDS = {"node", "accumulate", "retained_grad"}


def freeing(trace: Trace) -> list[tuple[int, int | None, set[str]]]:
    """For each backward that freed its graph: (index of the last event of the pass, its
    line, the nodes whose saved tensors went with it). AccumulateGrad saves nothing, so it
    is never freed; a graph kept with retain_graph=True is not freed."""
    nexts = {n.id: n for n in trace.nodes}
    events = trace.events
    found: list[tuple[int, int | None, set[str]]] = []
    for i, e in enumerate(events):
        if e.get("kind") != "backward" or not e.get("graph_freed"):
            continue
        end = _pass_end(events, i)
        stack = [n for n in e.get("root_nodes", ()) if n in nexts]
        freed: set[str] = set()
        while stack:
            nid = stack.pop()
            if nid in freed:
                continue
            freed.add(nid)
            stack.extend(n for n in nexts[nid].next if n in nexts)
        found.append((end, e.get("line"), {n for n in freed if not nexts[n].variable}))
    return found


def _pass_end(events: list[dict[str, Any]], start: int) -> int:
    """The index of the last event of the backward pass that starts at `start`: the event
    before its `backward_end` (a pass may hold ops and passes of its own), or, in a trace
    without `backward_end` events, the last of the node events that follow it."""
    depth = events[start].get("depth")
    if depth is not None:
        for j in range(start + 1, len(events)):
            e = events[j]
            if e.get("kind") == "backward_end" and e.get("depth") == depth:
                return j - 1
    end = start
    while end + 1 < len(events) and events[end + 1].get("kind") in _PASS_KINDS:
        end += 1
    return end


def freed_at(freed: list[tuple[int, int | None, set[str]]], index: int) -> set[str]:
    """The nodes freed by every backward pass that had finished by event `index`."""
    out: set[str] = set()
    for end, _, nodes in freed:
        if end <= index:
            out |= nodes
    return out
