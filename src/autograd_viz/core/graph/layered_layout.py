"""The plain picture's layout: a graph without module calls or loops, in left-to-right
layers with crossings cut by barycentre sweeps (fold_layout.py lays out the others)."""

from __future__ import annotations

import networkx as nx

from autograd_viz.core.graph.picture_graph import topological_order


def layered_layout(
    g: nx.MultiDiGraph,
    sweeps: int = 4,
    hint: dict[str, float] | None = None,
) -> dict[str, tuple[float, float]]:
    """Left-to-right layers (each node right after its inputs, a leaf right before its
    first consumer), crossings cut
    by barycentre sweeps. Deterministic for the same graph. `hint` gives nodes the height
    they had in an earlier picture: a layer whose nodes all have one keeps that order, so
    re-running edited code does not shuffle what did not change. (A graph with module
    calls or loops is laid out by fold_layout.py instead, level by level.)"""
    if g.number_of_nodes() == 0:
        return {}
    order = topological_order(g)
    # Each node right after its latest input: statements run again (a lab's rounds, a
    # script that repeats a step without a loop) line up as parallel rows from the same
    # column, instead of being pushed right by the longest of them.
    layer: dict[str, int] = {}
    for v in order:
        layer[v] = max((layer[u] + 1 for u in g.predecessors(v)), default=0)
    # What only brings a value in (a leaf, its AccumulateGrad, a constant) sits right
    # before its first consumer, not in the first column.
    for v in reversed(order):
        preds = list(g.predecessors(v))
        if g.out_degree(v) and (not preds or (len(preds) == 1 and _brings_in(g, preds[0]))):
            layer[v] = min(layer[s] for s in g.successors(v)) - 1
    depth = max(layer.values())
    layers: list[list[str]] = [[] for _ in range(depth + 1)]
    for v in order:
        layers[layer[v]].append(v)

    index = {v: float(i) for members in layers for i, v in enumerate(members)}

    def sweep(members: list[str], neighbours) -> None:
        def barycentre(v: str) -> float:
            near = [index[u] for u in neighbours(v)]
            return sum(near) / len(near) if near else index[v]

        members.sort(key=lambda v: (barycentre(v), index[v]))
        for i, v in enumerate(members):
            index[v] = float(i)

    for _ in range(sweeps):
        for members in layers[1:]:
            sweep(members, g.predecessors)
        for members in reversed(layers[:-1]):
            sweep(members, g.successors)

    if hint:
        for members in layers:
            if members and all(v in hint for v in members):
                members.sort(key=lambda v: -hint[v])
    positions: dict[str, tuple[float, float]] = {}
    for x, members in enumerate(layers):
        offset = (len(members) - 1) / 2
        for i, v in enumerate(members):
            positions[v] = (float(x), offset - i)  # first member on top
    return positions


def _brings_in(g: nx.MultiDiGraph, v: str) -> bool:
    """`v` has no input: a leaf or a constant, whose one consumer may move with it."""
    return g.in_degree(v) == 0
