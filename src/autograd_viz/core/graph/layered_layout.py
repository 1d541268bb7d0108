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
    """Left-to-right layers (each node as far right as its consumers allow), crossings cut
    by barycentre sweeps. Deterministic for the same graph. `hint` gives nodes the height
    they had in an earlier picture: a layer whose nodes all have one keeps that order, so
    re-running edited code does not shuffle what did not change. (A graph with module
    calls or loops is laid out by fold_layout.py instead, level by level.)"""
    if g.number_of_nodes() == 0:
        return {}
    order = topological_order(g)
    height: dict[str, int] = {}
    for v in reversed(order):  # longest path down to a sink
        height[v] = max((height[s] + 1 for s in g.successors(v)), default=0)
    depth = max(height.values())
    layer = {v: (0 if g.degree(v) == 0 else depth - height[v]) for v in order}
    # A sink sits right after its inputs: a side result (or a no_grad op) is not pushed to
    # the far right edge with the loss.
    for v in order:
        if g.out_degree(v) == 0 and g.in_degree(v) > 0:
            layer[v] = max(layer[u] for u in g.predecessors(v)) + 1
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
