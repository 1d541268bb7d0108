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
        # Edges drawn around marks (edge_routes.py): their waypoints in order, each
        # edge's first and last waypoint's place among them.
        routed = sorted(graph.routes)
        points = [p for i in routed for p in graph.routes[i]]
        self.route_xy = np.array(points, dtype=float).reshape(-1, 2)
        self.route_edge = np.array([i for i in routed for _ in graph.routes[i]], dtype=np.intp)
        self.routed = np.array(routed, dtype=np.intp)
        counts = np.array([len(graph.routes[i]) for i in routed], dtype=np.intp)
        self.route_last = np.cumsum(counts) - 1
        self.route_first = self.route_last - counts + 1
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
    """Map every node (and every edge's waypoint) through the affine part of `transform`
    at once."""
    screen = ScreenPositions(arrays, *_mapped(transform, arrays.xy))
    screen.scale = (abs(transform.m11()), abs(transform.m22()))
    screen.route_xs, screen.route_ys = _mapped(transform, arrays.route_xy)
    return screen


def _mapped(transform: QTransform, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = xy[:, 0], xy[:, 1]
    return (
        transform.m11() * x + transform.m21() * y + transform.dx(),
        transform.m12() * x + transform.m22() * y + transform.dy(),
    )


@dataclass
class EdgeGeometry:
    """Per edge, in screen pixels: whether it is drawn (its ends do not overlap and it
    crosses the view), its line from the source's rim (or its last waypoint) to the
    arrow's tip, the two wings of its arrowhead and its midpoint; the pieces before the
    last of the edges drawn around marks, and the line a label on each edge follows."""

    drawn: np.ndarray  # bool per edge
    line: np.ndarray  # (edges, 4): x0, y0, x1 (tip), y1
    left: np.ndarray  # (edges, 2): one corner of the arrowhead
    right: np.ndarray  # (edges, 2)
    middle: np.ndarray  # (edges, 2)
    pieces: np.ndarray  # (pieces, 4): a routed edge's lines up to its last waypoint
    piece_edge: np.ndarray  # (pieces,): the edge each piece belongs to
    label_line: np.ndarray  # (edges, 4): the line, or a routed edge's longest piece

    def pieces_of(self, chosen: np.ndarray) -> np.ndarray:
        """The chosen edges' pieces before their last line: (n, 4)."""
        if not len(self.pieces):
            return self.pieces
        return self.pieces[np.isin(self.piece_edge, chosen)]


def edge_geometry(arrays: GraphArrays, screen: ScreenPositions, view: QRectF) -> EdgeGeometry:
    """Where every edge and arrowhead goes on screen; edges wholly outside `view` are not
    drawn."""
    s, t = arrays.source, arrays.target
    ax, ay, bx, by = screen.xs[s], screen.ys[s], screen.xs[t], screen.ys[t]
    routed = arrays.routed
    rx, ry = screen.route_xs, screen.route_ys
    # Where an edge's first line heads and its last comes from: the other end, or its
    # first and last waypoint when it is drawn around marks.
    fx, fy, lx, ly = bx.copy(), by.copy(), ax.copy(), ay.copy()
    if len(routed):
        fx[routed], fy[routed] = rx[arrays.route_first], ry[arrays.route_first]
        lx[routed], ly[routed] = rx[arrays.route_last], ry[arrays.route_last]
    start_gap = _gap(arrays, screen, s, fx - ax, fy - ay, arrays.size[s] / 2 + 2, 2.0)
    end_gap = _gap(arrays, screen, t, bx - lx, by - ly, arrays.size[t] / 2 + 3, 3.0)
    dx, dy = bx - ax, by - ay
    length = np.hypot(dx, dy)
    drawn = length > start_gap + end_gap
    drawn &= (np.maximum(ax, bx) >= view.left()) & (np.minimum(ax, bx) <= view.right())
    drawn &= (np.maximum(ay, by) >= view.top()) & (np.minimum(ay, by) <= view.bottom())
    middle = np.column_stack(((ax + bx) / 2, (ay + by) / 2))
    # The last line: from the source's rim, or from the last waypoint, to the tip.
    ux, uy = _unit(bx - lx, by - ly)
    tip_x, tip_y = bx - ux * end_gap, by - uy * end_gap
    sx_, sy_ = _unit(fx - ax, fy - ay)
    line = np.column_stack((ax + sx_ * start_gap, ay + sy_ * start_gap, tip_x, tip_y))
    pieces = np.zeros((0, 4))
    piece_edge = np.zeros(0, dtype=np.intp)
    label_line = line
    if len(routed):
        line[routed, 0], line[routed, 1] = lx[routed], ly[routed]
        drawn[routed] = True  # around marks: never culled (a few edges)
        # Each routed edge: source rim → first waypoint → … → last waypoint.
        starts = np.column_stack(
            (
                ax[routed] + sx_[routed] * start_gap[routed],
                ay[routed] + sy_[routed] * start_gap[routed],
            )
        )
        points = np.column_stack((rx, ry))
        after = np.ones(len(points), dtype=bool)
        after[arrays.route_first] = False  # a waypoint that follows another
        begin = np.zeros((len(points), 2))
        begin[arrays.route_first] = starts
        begin[after] = points[np.flatnonzero(after) - 1]
        pieces = np.column_stack((begin, points))
        piece_edge = arrays.route_edge
        label_line = line.copy()
        for k, i in enumerate(routed.tolist()):  # the longest piece carries its label
            own = pieces[arrays.route_first[k] : arrays.route_last[k] + 1]
            lengths = np.hypot(own[:, 2] - own[:, 0], own[:, 3] - own[:, 1])
            longest = own[int(np.argmax(lengths))]
            if np.hypot(*(line[i, 2:] - line[i, :2])) < lengths.max():
                label_line[i] = longest
            middle[i] = ((longest[0] + longest[2]) / 2, (longest[1] + longest[3]) / 2)
    half = ARROW_PX * 0.45
    base_x, base_y = tip_x - ux * ARROW_PX, tip_y - uy * ARROW_PX
    left = np.column_stack((base_x - uy * half, base_y + ux * half))
    right = np.column_stack((base_x + uy * half, base_y - ux * half))
    return EdgeGeometry(drawn, line, left, right, middle, pieces, piece_edge, label_line)


def _unit(dx: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    length = np.hypot(dx, dy)
    safe = np.where(length > 0, length, 1.0)
    return dx / safe, dy / safe


def _gap(
    arrays: GraphArrays,
    screen: ScreenPositions,
    ends: np.ndarray,
    dx: np.ndarray,
    dy: np.ndarray,
    gap: np.ndarray,
    extra: float,
) -> np.ndarray:
    """How far from its node's centre an edge leaving (or entering) in direction (dx, dy)
    starts: past the mark, or at a card's border."""
    if not arrays.card.any():
        return gap
    sx, sy = getattr(screen, "scale", (1.0, 1.0))
    ux, uy = (np.abs(u) for u in _unit(dx, dy))
    half_w, half_h = arrays.card[ends, 0] * sx, arrays.card[ends, 1] * sy
    with np.errstate(divide="ignore", invalid="ignore"):
        rim = np.minimum(
            np.where(ux > 1e-9, half_w / ux, np.inf),
            np.where(uy > 1e-9, half_h / uy, np.inf),
        )
    return np.where(arrays.card[ends, 0] > 0, rim + extra, gap)


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
