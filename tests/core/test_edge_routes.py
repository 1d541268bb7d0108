"""Edges that skip columns go around the marks between their ends (edge_routes.py): a
residual `x + f(x)` drawn straight lay under the chain it skips and could not be seen."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from autograd_viz.core.graph import edge_routes
from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.share import picture_svg
from tests.core.fidelity_cases import CASES
from tests.core.test_folding import CNN, RNN, TRANSFORMER

RESIDUAL = """import torch
x = torch.randn(4, requires_grad=True)
a = torch.relu(x)
b = a * 2
c = torch.sin(b)
d = c + 1
y = x + d
y.sum().backward()
"""


def _path(graph, i: int) -> list[tuple[float, float]]:
    u, v = graph.edges[i]
    a, b = graph.nodes[u], graph.nodes[v]
    return [(a.x, a.y), *graph.routes.get(i, ()), (b.x, b.y)]


def _through_marks(graph) -> list[tuple[int, str]]:
    """Edges skipping a column whose drawn path crosses a mark (or box) other than its
    ends: (edge, the mark's id)."""
    obstacles = edge_routes._Obstacles(graph)
    found = []
    for i, (u, v) in enumerate(graph.edges):
        if graph.nodes[v].x - graph.nodes[u].x <= 1.01:
            continue
        others = np.array([j for j, key in enumerate(obstacles.keys) if key not in (u, v)])
        for p, q in pairwise(_path(graph, i)):
            hit = obstacles.in_the_way(p, q, others)
            if hit.any():
                found.append((i, obstacles.keys[others[int(np.argmax(hit))]]))
                break
    return found


def _edge_between(graph, source_title: str, target_title: str) -> int:
    return next(
        i
        for i, (u, v) in enumerate(graph.edges)
        if graph.nodes[u].title == source_title and graph.nodes[v].title == target_title
    )


def test_a_residual_goes_around_the_chain_it_skips() -> None:
    graph = drawn_graph(run_source(RESIDUAL))
    # x's AccumulateGrad feeds y's AddBackward0 directly and through relu, mul, sin, add:
    # both ends sit on one row with the chain between them.
    skip = _edge_between(graph, "AccumulateGrad", "AddBackward0")
    u, v = graph.edges[skip]
    assert graph.nodes[u].y == graph.nodes[v].y
    assert graph.nodes[v].x - graph.nodes[u].x > 5
    assert _through_marks(graph) == []
    route = graph.routes[skip]
    lane = route[1][1]
    # The lane runs the whole way between the two columns, off the row of the chain.
    assert abs(lane - graph.nodes[u].y) >= edge_routes.PLACE_TOP
    assert route[0][0] <= graph.nodes[u].x + 0.5 and route[-1][0] >= graph.nodes[v].x - 0.5
    # Only that edge needed it: the chain's own edges join neighbouring columns.
    assert list(graph.routes) == [skip]


def test_the_page_draws_a_routed_edge_through_its_waypoints() -> None:
    trace = run_source(RESIDUAL)
    graph = drawn_graph(trace)
    skip = _edge_between(graph, "AccumulateGrad", "AddBackward0")
    svg = picture_svg(trace)
    path = svg.split(f'data-e="{skip}" d="', 1)[1].split('"', 1)[0]
    assert path.count("L") == len(graph.routes[skip]) + 1  # ends and each waypoint


@pytest.mark.parametrize("model", ["transformer", "cnn", "rnn"])
@pytest.mark.parametrize("opened", [False, True])
def test_no_edge_of_the_models_runs_through_a_mark(model: str, opened: bool) -> None:
    source = {
        "transformer": TRANSFORMER.replace("LAYERS", "2"),
        "cnn": CNN,
        "rnn": RNN.replace("STEPS", "12"),
    }[model]
    graph = drawn_graph(run_source(source), collapsed=[] if opened else None)
    assert _through_marks(graph) == []
    # No lane runs along a frame's top, through the titles written on it.
    for points in graph.routes.values():
        (a, lane), (b, _) = points[len(points) // 2 - 1 : len(points) // 2 + 1]
        for left, _, right, top in graph.frames.values():
            if right > a and left < b:
                assert abs(lane - top) >= edge_routes.TITLE_CLEARANCE - 1e-9
    if model == "cnn" and opened:  # each block's residual `x + …` goes around the block
        assert len(graph.routes) >= 3  # (its first look folds the blocks: 48 layers wide)


@pytest.mark.parametrize("case", sorted(CASES))
def test_routes_of_every_fidelity_case_are_clear(case: str) -> None:
    graph = drawn_graph(run_source(CASES[case]), collapsed=[])
    routed = set(graph.routes)
    # Every edge given waypoints misses every mark; one left straight had no clear lane.
    assert not [i for i, _ in _through_marks(graph) if i in routed]
    for points in graph.routes.values():
        assert len(points) in (2, 4)
        (_, lane_a), (_, lane_b) = points[len(points) // 2 - 1 : len(points) // 2 + 1]
        assert lane_a == lane_b  # the long run is level
    # Two edges of other sources into other targets never run up or down one line (which
    # lane led to which target would be lost).
    runs = []
    for i in graph.routes:
        u, v = graph.edges[i]
        path = _path(graph, i)
        for (x0, y0), (x1, y1) in pairwise(path):
            if x0 == x1 and y0 != y1:
                runs.append((u, v, x0, min(y0, y1), max(y0, y1)))
    for k, (u, v, x, low, high) in enumerate(runs):
        for u2, v2, x2, low2, high2 in runs[k + 1 :]:
            if u != u2 and v != v2 and abs(x - x2) < 0.05:
                assert high <= low2 or high2 <= low, (case, graph.nodes[u].title, x)


def test_a_big_open_graph_keeps_straight_edges() -> None:
    # Past NODES_AT_MOST nodes routing is skipped (half a millisecond an edge).
    chain = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x\n"
    chain += "for i in range(1200):\n    y = y * 1.0001 + x\ny.sum().backward()\n"
    graph = drawn_graph(run_source(chain), collapsed=[])
    assert len(graph.nodes) > edge_routes.NODES_AT_MOST
    assert graph.routes == {}
