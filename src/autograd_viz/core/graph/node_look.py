"""How each kind of graph node looks, as plain data: shape AND colour, so the picture reads
without colour. The canvas (ui/graph/_graph_style.py) and the replay page draw from it."""

from __future__ import annotations

from dataclasses import dataclass

from autograd_viz.core.graph.graph_model import (
    ACCUMULATE,
    CONSTANT,
    LEAF,
    OPERATION,
    RESULT,
    UNTRACKED,
)
from autograd_viz.core.graph.module_groups import MODULE


@dataclass(frozen=True)
class NodeStyle:
    """Marker symbol (pyqtgraph name), size in pixels, fill, outline and legend text."""

    symbol: str
    size: int
    fill: str
    outline: str
    legend: str


STYLES: dict[str, NodeStyle] = {
    LEAF: NodeStyle("o", 26, "#a78bfa", "#6d28d9", "leaf, requires grad"),
    CONSTANT: NodeStyle("o", 22, "#f8fafc", "#94a3b8", "leaf, no grad"),
    RESULT: NodeStyle("h", 26, "#5eead4", "#0f766e", "result (non-leaf)"),
    OPERATION: NodeStyle("s", 18, "#fcd34d", "#b45309", "grad_fn node"),
    ACCUMULATE: NodeStyle("t1", 16, "#cbd5e1", "#475569", "AccumulateGrad → .grad"),
    UNTRACKED: NodeStyle("s", 13, "#f1f5f9", "#94a3b8", "no_grad op (not recorded)"),
    MODULE: NodeStyle("s", 30, "#e0e7ff", "#4338ca", "nn.Module (collapsed)"),
}
LEGEND_ORDER = [LEAF, CONSTANT, RESULT, OPERATION, ACCUMULATE]  # no_grad ops: when drawn

GROUP_COLOUR = "#6366f1"  # the frame around an nn.Module's nodes
LOOP_COLOUR = "#0d9488"  # loops and their iterations; modules keep the group colour
EDGE_COLOUR = "#94a3b8"
TITLE_COLOUR = "#0f172a"
OP_COLOUR = "#78350f"
DETAIL_COLOUR = "#334155"
GRAD_COLOUR = "#be185d"
CUT_COLOUR = "#dc2626"  # a history break: autograd cannot follow this edge
BACKGROUND = "#ffffff"
CURRENT_COLOUR = "#0f172a"  # the ring around what the current step touches
SELECTION_COLOUR = "#2563eb"  # the ring around what the user selected
