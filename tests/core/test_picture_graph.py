"""The picture's graph class and its topological order: networkx's, faster."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from autograd_viz.core.graph.picture_graph import PictureGraph, topological_order


def _random_dag(seed: int, n: int = 300) -> PictureGraph:
    rng = random.Random(seed)
    g = PictureGraph()
    names = [f"v{rng.randrange(10**6)}_{i}" for i in range(n)]
    rng.shuffle(names)  # insertion order is not the topological one
    g.add_nodes_from(names)
    rank = {v: i for i, v in enumerate(sorted(names))}
    for _ in range(3 * n):
        a, b = rng.sample(names, 2)
        if rank[a] > rank[b]:
            a, b = b, a
        g.add_edge(a, b)
        if rng.random() < 0.2:  # parallel edges, as a node fed twice by one tensor
            g.add_edge(a, b)
    return g


@pytest.mark.parametrize("seed", range(8))
def test_the_order_is_networkx_s_own(seed: int) -> None:
    g = _random_dag(seed)
    assert topological_order(g) == list(nx.topological_sort(g))


def test_a_cycle_is_refused_as_networkx_refuses_it() -> None:
    g = PictureGraph([("a", "b"), ("b", "c"), ("c", "a"), ("x", "a")])
    with pytest.raises(nx.NetworkXUnfeasible):
        topological_order(g)


def test_its_views_work_and_leave_no_cycle() -> None:
    import gc
    import weakref

    g = PictureGraph([("a", "b"), ("a", "b"), ("b", "c")])
    assert list(g.edges()) == [("a", "b"), ("a", "b"), ("b", "c")]
    assert dict(g.in_degree) == {"a": 0, "b": 2, "c": 1}
    assert g.out_degree("a") == 2 and g.degree("b") == 3
    assert list(g.in_edges("c")) == [("b", "c")] and list(g.out_edges("b")) == [("b", "c")]
    gc.disable()
    try:
        watched = weakref.ref(g)
        del g
        assert watched() is None  # freed by reference counting: no view points back
    finally:
        gc.enable()


@pytest.mark.parametrize("seed", range(4))
def test_plain_edges_are_added_as_networkx_adds_them(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"v{i}" for i in range(60)]
    pairs = [tuple(rng.sample(names, 2)) for _ in range(400)]
    pairs += [(a, a) for a in names[:3]] + pairs[:50]  # self-loops and parallel edges
    slow, quick = PictureGraph(), PictureGraph()
    for g in (slow, quick):
        g.add_nodes_from(names[::2])  # some nodes there before, the rest new with an edge
        g.add_edge(*pairs[0], key=1)  # a key taken out of turn: the next one skips it
    for u, v in pairs:
        slow.add_edge(u, v)
    quick.add_plain_edges(pairs)
    assert list(quick.nodes) == list(slow.nodes)
    assert list(quick.edges(keys=True, data=True)) == list(slow.edges(keys=True, data=True))
    assert quick._pred == slow._pred
    assert all(quick._succ[u][v] is quick._pred[v][u] for u, v, _ in quick.edges(keys=True))
