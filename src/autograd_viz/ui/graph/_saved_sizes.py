"""View → Size nodes by bytes saved: how much bigger each marker is drawn."""

from __future__ import annotations

import numpy as np

from autograd_viz.core.graph.graph_model import DrawnGraph, DrawnNode
from autograd_viz.core.playback.run_view import ShownRun
from autograd_viz.core.playback.saved_memory import bytes_by_node

MAX_SAVED_GROWTH = 0.8  # the node that saved most is drawn this much bigger (+80%)


def saved_scales(run: ShownRun, graph: DrawnGraph, nodes: list[DrawnNode]) -> np.ndarray:
    """Per drawn node, its size factor: 1 for what saved nothing, up to 1.8 for the node
    (or folded card, which holds what its members saved) that saved most; by the square
    root of the bytes, so the marker's area follows them."""
    drawn: dict[str, int] = {}
    for nid, n in bytes_by_node(run.trace).items():
        key = graph.alias.get(nid, nid)
        drawn[key] = drawn.get(key, 0) + n
    most = max(drawn.values(), default=0)
    if not most:
        return np.ones(len(nodes))
    return np.array([1 + MAX_SAVED_GROWTH * (drawn.get(n.id, 0) / most) ** 0.5 for n in nodes])
