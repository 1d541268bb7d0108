"""The graph class the picture is built in: networkx's, without its reference cycles."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import networkx as nx

__all__ = ["PictureGraph"]


def _fresh_view(name: str) -> property:
    made = getattr(nx.MultiDiGraph, name).func  # the cached_property's own function
    return property(made, doc=f"The graph's `{name}` view, made afresh at each use.")


class PictureGraph(nx.MultiDiGraph):
    """networkx's MultiDiGraph, but its edge and degree views are not cached on it.

    A cached view points back at its graph: a reference cycle, so a graph that had one
    read (and every node and edge dict it holds) waits for the cyclic collector instead of
    going with its last reference. The app moves a big run's objects out of the
    collector's sight for good (core/platform/gc_pause.py), where a cycle would never be
    freed; without one, reference counting frees the whole picture."""

    edges = _fresh_view("edges")
    out_edges = _fresh_view("out_edges")
    in_edges = _fresh_view("in_edges")
    degree = _fresh_view("degree")
    in_degree = _fresh_view("in_degree")
    out_degree = _fresh_view("out_degree")

    def add_plain_edges(self, pairs: Iterable[tuple[Hashable, Hashable]]) -> None:
        """`add_edge(u, v)` for each pair in order, as networkx does it (the same keys,
        adjacency dicts and new nodes), without its per-edge checks and cache clearing:
        the 8k-node RNN's 20,000 edges in a third of the time."""
        succ, pred = self._succ, self._pred
        for u, v in pairs:
            if u not in succ:
                self.add_node(u)
            if v not in succ:
                self.add_node(v)
            keydict = succ[u].get(v)
            if keydict is None:
                succ[u][v] = pred[v][u] = {0: {}}
            else:
                key = len(keydict)  # networkx's new_edge_key
                while key in keydict:
                    key += 1
                keydict[key] = {}
        nx._clear_cache(self)


def topological_order(g: nx.MultiDiGraph) -> list:
    """The nodes of the DAG `g` in the order `nx.topological_sort` gives (generation by
    generation, each in insertion order); NetworkXUnfeasible on a cycle.

    The same walk over the graph's own adjacency dicts, without networkx's views and
    per-node degree look-ups: 15 ms instead of 80-100 for the 8k-node RNN's 16,000 nodes,
    and a picture sorts its graph two or three times (measured).
    """
    succ, pred = g._succ, g._pred  # networkx's adjacency dicts: read, never changed here
    waiting = {v: len(ins) for v, ins in pred.items() if ins}  # distinct predecessors
    generation = [v for v in succ if v not in waiting]
    order: list = []
    while generation:
        order.extend(generation)
        ready = []
        for v in generation:
            for child in succ[v]:
                left = waiting[child] - 1
                if left:
                    waiting[child] = left
                else:
                    del waiting[child]
                    ready.append(child)
        generation = ready
    if waiting:
        raise nx.NetworkXUnfeasible("Graph contains a cycle or graph changed during iteration")
    return order
