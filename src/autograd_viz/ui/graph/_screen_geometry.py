"""A drawn graph as numpy arrays, mapped to screen pixels in one step per view.

Mapping 16,000 nodes one QTransform.map call at a time costs ~15 ms of Python, most of a
60 fps frame; the same affine map on arrays costs well under a millisecond.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from pyqtgraph.Qt.internals import PrimitiveArray
from PySide6.QtCore import QLineF, QPointF, QRectF
from PySide6.QtGui import QPainter, QTransform

from autograd_viz.core.graph.graph_model import DrawnGraph
from autograd_viz.ui.graph._graph_style import STYLES

ARROW_PX = 8.0


class GraphArrays:
    """Positions, mark sizes and edge ends of a drawn graph, as arrays (built once per graph)."""

    def __init__(self, graph: DrawnGraph) -> None:
        nodes = list(graph.nodes.values())
        self.keys = list(graph.nodes)
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.xy = np.array([(n.x, n.y) for n in nodes], dtype=float).reshape(-1, 2)
        self.size = np.array([STYLES[n.kind].size for n in nodes], dtype=float)
        index = self.index
        self.source = np.array([index[s] for s, _ in graph.edges], dtype=np.intp)
        self.target = np.array([index[t] for _, t in graph.edges], dtype=np.intp)
        self.edge_index = {e: i for i, e in enumerate(graph.edges)}
        # A folded group's card: half its width and height (layout units), 0 for a mark.
        self.card = np.zeros((len(nodes), 2), dtype=float)
        for key, (left, bottom, right, top) in graph.boxes.items():
            if key in index:
                self.card[index[key]] = ((right - left) / 2, (top - bottom) / 2)

    def mask(self, keys: object) -> np.ndarray:
        """A boolean per node: whether its id is in `keys` (ids not drawn are ignored)."""
        out = np.zeros(len(self.keys), dtype=bool)
        index = self.index
        hits = [index[k] for k in keys if k in index]  # type: ignore[attr-defined]
        out[hits] = True
        return out


class ScreenPositions(Mapping[str, QPointF]):
    """Each node's position in screen pixels, read as a mapping id -> QPointF; the points
    are made only for the ids asked for."""

    def __init__(self, arrays: GraphArrays, xs: np.ndarray, ys: np.ndarray) -> None:
        self.arrays, self.xs, self.ys = arrays, xs, ys

    def __getitem__(self, key: str) -> QPointF:
        i = self.arrays.index[key]
        return QPointF(float(self.xs[i]), float(self.ys[i]))

    def __contains__(self, key: object) -> bool:
        return key in self.arrays.index

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrays.keys)

    def __len__(self) -> int:
        return len(self.arrays.keys)

    def inside(self, rect: QRectF) -> dict[str, QPointF]:
        """The nodes whose centre lies in `rect`, with their positions."""
        xs, ys = self.xs, self.ys
        hits = np.flatnonzero(
            (xs >= rect.left()) & (xs <= rect.right()) & (ys >= rect.top()) & (ys <= rect.bottom())
        )
        keys = self.arrays.keys
        return {keys[i]: QPointF(float(xs[i]), float(ys[i])) for i in hits}


def screen_positions(arrays: GraphArrays, transform: QTransform) -> ScreenPositions:
    """Map every node through the affine part of `transform` at once."""
    x, y = arrays.xy[:, 0], arrays.xy[:, 1]
    xs = transform.m11() * x + transform.m21() * y + transform.dx()
    ys = transform.m12() * x + transform.m22() * y + transform.dy()
    screen = ScreenPositions(arrays, xs, ys)
    screen.scale = (abs(transform.m11()), abs(transform.m22()))
    return screen


@dataclass
class EdgeGeometry:
    """Per edge, in screen pixels: whether it is drawn (its ends do not overlap and it
    crosses the view), its line from the source's rim to the arrow's tip, the two wings of
    its arrowhead and its midpoint."""

    drawn: np.ndarray  # bool per edge
    line: np.ndarray  # (edges, 4): x0, y0, x1 (tip), y1
    left: np.ndarray  # (edges, 2): one corner of the arrowhead
    right: np.ndarray  # (edges, 2)
    middle: np.ndarray  # (edges, 2)


def edge_geometry(arrays: GraphArrays, screen: ScreenPositions, view: QRectF) -> EdgeGeometry:
    """Where every edge and arrowhead goes on screen; edges wholly outside `view` are not
    drawn."""
    s, t = arrays.source, arrays.target
    ax, ay, bx, by = screen.xs[s], screen.ys[s], screen.xs[t], screen.ys[t]
    dx, dy = bx - ax, by - ay
    length = np.hypot(dx, dy)
    start_gap = arrays.size[s] / 2 + 2
    end_gap = arrays.size[t] / 2 + 3
    if arrays.card.any():  # an edge into or out of a card meets it at its border
        sx, sy = getattr(screen, "scale", (1.0, 1.0))
        safe = np.where(length > 0, length, 1.0)
        ux, uy = np.abs(dx / safe), np.abs(dy / safe)
        for ends, gap, extra in ((s, "start", 2.0), (t, "end", 3.0)):
            half_w, half_h = arrays.card[ends, 0] * sx, arrays.card[ends, 1] * sy
            with np.errstate(divide="ignore", invalid="ignore"):
                rim = np.minimum(
                    np.where(ux > 1e-9, half_w / ux, np.inf),
                    np.where(uy > 1e-9, half_h / uy, np.inf),
                )
            card = arrays.card[ends, 0] > 0
            if gap == "start":
                start_gap = np.where(card, rim + extra, start_gap)
            else:
                end_gap = np.where(card, rim + extra, end_gap)
    drawn = length > start_gap + end_gap
    drawn &= (np.maximum(ax, bx) >= view.left()) & (np.minimum(ax, bx) <= view.right())
    drawn &= (np.maximum(ay, by) >= view.top()) & (np.minimum(ay, by) <= view.bottom())
    safe = np.where(length > 0, length, 1.0)
    ux, uy = dx / safe, dy / safe
    tip_x, tip_y = bx - ux * end_gap, by - uy * end_gap
    line = np.column_stack((ax + ux * start_gap, ay + uy * start_gap, tip_x, tip_y))
    half = ARROW_PX * 0.45
    base_x, base_y = tip_x - ux * ARROW_PX, tip_y - uy * ARROW_PX
    left = np.column_stack((base_x - uy * half, base_y + ux * half))
    right = np.column_stack((base_x + uy * half, base_y - ux * half))
    middle = np.column_stack(((ax + bx) / 2, (ay + by) / 2))
    return EdgeGeometry(drawn, line, left, right, middle)


def draw_lines(painter: QPainter, lines: np.ndarray, dedupe: bool = False) -> None:
    """Draw (n, 4) line ends in one native call. `dedupe`: lines that land on the same
    whole pixels are drawn once (thousands of edges stacked in one pixel column at a far
    zoom paint the same pixels as one)."""
    if dedupe and len(lines) > 1:
        # Four 16-bit pixel coordinates packed in one integer: a 1-D unique is ~20x
        # faster than numpy's row-wise one. Pixels beyond ±32k are off any screen.
        pixels = np.clip(np.rint(lines), -32768, 32767).astype(np.int64) + 32768
        packed = (pixels[:, 0] << 48) | (pixels[:, 1] << 32) | (pixels[:, 2] << 16) | pixels[:, 3]
        _, first = np.unique(packed, return_index=True)
        lines = pixels[first].astype(float) - 32768
    if not len(lines):
        return
    primitives = PrimitiveArray(QLineF, 4)
    primitives.resize(len(lines))
    primitives.ndarray()[:] = lines
    painter.drawLines(*primitives.drawargs())
