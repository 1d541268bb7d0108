"""The status bar's one line about a drawn graph, counted from what is drawn."""

from __future__ import annotations

from autograd_viz.core.graph.graph_model import (
    ACCUMULATE,
    CONSTANT,
    LEAF,
    OPERATION,
    RESULT,
    UNTRACKED,
    DrawnGraph,
)
from autograd_viz.core.graph.module_groups import MODULE


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def graph_summary(graph: DrawnGraph) -> str:
    """`graph: 4 boxes (4 tensors, 0 autograd nodes)`: every box on the canvas is counted,
    so the line never says "0" beside a drawn picture."""
    parts = [
        _count(graph.count(LEAF, CONSTANT, RESULT), "tensor"),
        _count(graph.count(OPERATION, ACCUMULATE), "autograd node"),
    ]
    untracked = graph.count(UNTRACKED)
    if untracked:
        parts.append(_count(untracked, "no_grad op"))
    modules = graph.count(MODULE)
    if modules:
        parts.append(_count(modules, "folded group"))
    return f"graph: {_count(len(graph.nodes), 'box', 'boxes')} ({', '.join(parts)})"
