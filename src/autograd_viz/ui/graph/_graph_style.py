"""How each kind of graph node looks: shape AND colour, so the picture reads without colour."""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from autograd_viz.core.graph.module_groups import MODULE

# The looks are plain data in core: the replay page draws with the same ones.
from autograd_viz.core.graph.node_look import (  # noqa: F401 (the canvas imports them here)
    BACKGROUND,
    CURRENT_COLOUR,
    CUT_COLOUR,
    DETAIL_COLOUR,
    EDGE_COLOUR,
    GRAD_COLOUR,
    GROUP_COLOUR,
    LEGEND_ORDER,
    OP_COLOUR,
    SELECTION_COLOUR,
    STYLES,
    TITLE_COLOUR,
    NodeStyle,
)


@dataclass(frozen=True)
class CanvasColours:
    """Everything on the canvas that is not a node's own fill: lines, text, rings, legend.
    Node fills and outlines stay the same in both themes, so a kind keeps its colour."""

    background: str
    edge: str
    title: str
    op: str
    detail: str
    grad: str
    cut: str
    group: str
    current: str
    selection: str
    message: str
    note: str
    legend_text: str
    legend_fill: tuple[int, int, int, int]
    legend_border: str
    label_box: tuple[int, int, int, int]  # behind the gradient written on an edge


LIGHT = CanvasColours(
    background=BACKGROUND,
    edge=EDGE_COLOUR,
    title=TITLE_COLOUR,
    op=OP_COLOUR,
    detail=DETAIL_COLOUR,
    grad=GRAD_COLOUR,
    cut=CUT_COLOUR,
    group=GROUP_COLOUR,
    current=CURRENT_COLOUR,
    selection=SELECTION_COLOUR,
    message="#64748b",
    note="#b45309",
    legend_text="#334155",
    legend_fill=(255, 255, 255, 220),
    legend_border="#e2e8f0",
    label_box=(255, 255, 255, 230),
)
# The editor's dark background (VS Code Dark+), so editor and canvas read as one window.
DARK = CanvasColours(
    background="#1e1e1e",
    edge="#7b8699",
    title="#e2e8f0",
    op="#fcd34d",
    detail="#a3b1c6",
    grad="#f472b6",
    cut="#f87171",
    group="#818cf8",
    current="#f8fafc",
    selection="#60a5fa",
    message="#94a3b8",
    note="#fbbf24",
    legend_text="#cbd5e1",
    legend_fill=(37, 37, 38, 220),
    legend_border="#3f3f46",
    label_box=(30, 30, 30, 230),
)


LIT_GROW_PX = 8  # the marker of the node a step runs is this much bigger
LIT_PEN_PX = 3.5  # and ringed with a pen this wide
FAILED_RING = "#dc2626"  # the ring of what an error step lights (red on light and dark)


def marker_look(kind: str, state: str, colours: CanvasColours, dark: bool) -> tuple:
    """The brush, pen and size (pixels) of a node kind's marker in a playback state
    ("normal", "faded", "lit", "freed", "failed"). A folded group's card is painted by the overlay:
    its marker is clear, there only to take the pointer at the card's centre."""
    style = STYLES[kind]
    if kind == MODULE:
        clear = QColor(0, 0, 0, 0)
        return pg.mkBrush(clear), pg.mkPen(clear), style.size
    fill, outline = QColor(style.fill), QColor(style.outline)
    if dark:  # deep outlines vanish on a dark background (the dashed freed one too)
        outline = outline.lighter(165)
    if state == "faded":
        fill.setAlpha(50)
        outline.setAlpha(70)
    if state in ("lit", "failed"):
        ring = colours.current if state == "lit" else FAILED_RING
        return pg.mkBrush(fill), pg.mkPen(ring, width=LIT_PEN_PX), style.size + LIT_GROW_PX
    if state == "freed":  # saved tensors gone: a dashed outline, a paler fill
        fill.setAlpha(90)
        dashed = pg.mkPen(outline, width=1.6, style=Qt.PenStyle.DashLine)
        return pg.mkBrush(fill), dashed, style.size
    return pg.mkBrush(fill), pg.mkPen(outline, width=1.6), style.size
