"""Edges with arrowheads and node labels, painted in screen pixels over the graph."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPaintEngine,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
    QTransform,
)

from autograd_viz.core.graph.graph_model import (
    ACCUMULATE,
    OPERATION,
    DrawnGraph,
)
from autograd_viz.core.playback.player import Frame
from autograd_viz.ui.graph._edge_layer import EdgeLayer
from autograd_viz.ui.graph._fold_painting import paint_boxes, paint_frames
from autograd_viz.ui.graph._graph_style import LIGHT, LIT_GROW_PX, LIT_PEN_PX, STYLES, CanvasColours
from autograd_viz.ui.graph._label_measure import (  # noqa: F401 (tests read them here)
    _room_beside,
    short_op_name,
)
from autograd_viz.ui.graph._label_paint import LabelPainting
from autograd_viz.ui.graph._label_placing import LabelPlacer
from autograd_viz.ui.graph._screen_geometry import (
    EdgeGeometry,
    GraphArrays,
    ScreenPositions,
    draw_lines,
    edge_geometry,
    screen_positions,
)

# Labels need this much room between layers and between rows, or they would overlap;
# between COMPACT_DX_PX and LABEL_MIN_DX_PX operation names are shortened (Mul, Acc).
LABEL_MIN_DX_PX = 80.0
COMPACT_DX_PX = 36.0
# Below COMPACT_DX_PX, down to this, tensors keep their names where they collide with
# nothing and operations go unlabelled (their shapes say what they are, a hover the
# rest): a 24-layer VAE step fitted in the default window was 34 px a layer, and had
# no label at all.
SPARSE_DX_PX = 18.0
# Below SPARSE_DX_PX, down to this, the named tensors keep their names where they clear
# every mark and label and lie inside the view: a decoder layer opened in full (150 items,
# 17 px a layer in the default window) named nothing at all, not even its inputs.
THIN_DX_PX = 7.0
LABEL_MIN_DY_PX = 44.0
# Rows closer than LABEL_MIN_DY_PX still have room for one line: each node's name alone
# (its value and .grad are a hover away), down to this spacing.
NAMES_MIN_DY_PX = 28.0
# Below NAMES_MIN_DY_PX, down to this, as below SPARSE_DX_PX: the named tensors keep their
# names where they clear everything (beside a column of weights, left of it); below it,
# no labels. An MLP's training loop in a 1000×650 window came 27.5 px a row and named
# nothing, not its weights, its X or its y, with the canvas's left third empty.
THIN_DY_PX = 12.0
FULL, NAMES, BARE = "full", "names", "bare"  # how much of the labels a zoom has room for


def _mixed(colour: QColor, background: QColor, share: float) -> QColor:
    """`colour` painted at opacity `share` over `background`, as one opaque colour."""
    r, g, b = (
        round(share * a + (1 - share) * z)
        for a, z in zip(colour.getRgb()[:3], background.getRgb()[:3], strict=True)
    )
    return QColor(r, g, b)


def _with_wings(geometry: EdgeGeometry, chosen: np.ndarray) -> np.ndarray:
    """The chosen edges' lines, their arrowheads as two strokes each, then the pieces of
    those drawn around marks: (3n + pieces, 4)."""
    line = geometry.line[chosen]
    tip = line[:, 2:]
    return np.concatenate(
        (
            line,
            np.hstack((tip, geometry.left[chosen])),
            np.hstack((tip, geometry.right[chosen])),
            geometry.pieces_of(chosen),
        )
    )


class GraphOverlayItem(LabelPainting, pg.GraphicsObject):
    """Draws every edge and label in one paint call (one item, not one per edge).

    Positions live in data coordinates; arrowheads, the gap at each node and the text
    are sized in pixels, so they stay crisp at any zoom.
    """

    def __init__(self) -> None:
        super().__init__()
        self._graph = DrawnGraph()
        self._bounds = QRectF()
        self.labels_visible = True
        self.last_spacing_px = (0.0, 0.0)
        self._paint_failed = False  # an error while painting was reported (once)
        self._title_font = QFont()
        self._title_font.setBold(True)
        self._title_font.setPointSizeF(9.0)
        self._detail_font = QFont()
        self._detail_font.setPointSizeF(8.5)
        self._op_font = QFont()
        self._op_font.setPointSizeF(8.5)
        self._grad_font = QFont()
        self._grad_font.setPointSizeF(8.5)
        self._grad_font.setBold(True)
        self.frame: Frame | None = None  # the player's frame; None draws the end state
        self.selected_boxes: frozenset[str] = frozenset()  # cards drawn with the selection
        # What covers the canvas over the graph (the legend), in layout units: no label is
        # placed under it (`labels` under the last row of a training loop's fold was half
        # hidden by the legend). Set by the canvas; none by default.
        self.covered: Callable[[], list[QRectF]] = list
        # What the last edge paint left to write: (line ends, text, colour) per hot edge.
        self._edge_texts: list[tuple] = []
        self.colours = LIGHT
        self._geometry: tuple[Any, EdgeGeometry] | None = None
        self._screen: tuple[Any, ScreenPositions] | None = None
        self._arrays: GraphArrays | None = None
        self._visited: tuple[Frame, np.ndarray] | None = None
        self._edge_layer = EdgeLayer()

    def set_colours(self, colours: CanvasColours) -> None:
        """Paint lines and labels in another theme's colours."""
        self.colours = colours
        self.update()

    def set_graph(self, graph: DrawnGraph) -> None:
        """Replace what is drawn."""
        self.prepareGeometryChange()
        self._graph = graph
        self._geometry = None
        self._screen = None
        self._arrays = None
        self._visited = None
        xs = [n.x for n in graph.nodes.values()] or [0.0]
        ys = [n.y for n in graph.nodes.values()] or [0.0]
        ys += [y for points in graph.routes.values() for _, y in points]
        self._bounds = QRectF(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
        self.update()

    def set_frame(self, frame: Frame | None) -> None:
        """Draw one moment of playback (None: the state at the end of the run)."""
        self.frame = frame
        self.update()

    def boundingRect(self) -> QRectF:
        # Labels, titles and arrowheads are sized in pixels and reach past the nodes by a
        # zoom-dependent amount: the item covers the whole view as well, or text drawn
        # past its bounds would never be repainted (a stale "g" of a longer .grad line).
        bounds = self._bounds.adjusted(-1.0, -1.0, 1.0, 1.0)
        view = self.viewRect() if self.getViewBox() is not None else None
        return bounds.united(view) if view is not None else bounds

    def view_moved(self) -> None:
        """The view's range changed: the item's bounds (which hold the view) did too."""
        self.prepareGeometryChange()
        self.update()

    @staticmethod
    def spacing_px(transform: QTransform) -> tuple[float, float]:
        """Screen pixels per layout unit, across (between layers) and down (between rows)."""
        origin = transform.map(QPointF(0, 0))
        across = QLineF(origin, transform.map(QPointF(1, 0))).length()
        down = QLineF(origin, transform.map(QPointF(0, 1))).length()
        return across, down

    def labels_fit(self) -> bool:
        """Whether the last paint had room for labels (full, compact, names only, the
        tensors' names alone, or the named tensors' where they collide with nothing)."""
        dx, dy = self.last_spacing_px
        return dx >= THIN_DX_PX and dy >= THIN_DY_PX

    def names_only(self) -> bool:
        """Whether rows are too close for a tensor's value and .grad lines, or layers for
        more than names: the last paint drew each node's name alone."""
        return self.last_spacing_px[1] < LABEL_MIN_DY_PX or self.sparse()

    def sparse(self) -> bool:
        """Whether layers are too close for operation names: only tensors are named."""
        return self.last_spacing_px[0] < COMPACT_DX_PX

    def thin(self) -> bool:
        """Whether layers are closer than a name is wide: only named tensors are labelled,
        each only where it collides with nothing and is whole in the view."""
        dx, dy = self.last_spacing_px
        return dx < SPARSE_DX_PX or dy < NAMES_MIN_DY_PX

    def compact(self) -> bool:
        """Whether labels are shortened at the current zoom."""
        return self.last_spacing_px[0] < LABEL_MIN_DX_PX

    def paint(self, painter: QPainter, *args) -> None:
        if not self._graph.nodes:
            return
        # The painter's own transform maps our data to the device, also while grabbing or
        # exporting; pyqtgraph's deviceTransform() crashes under QWidget.grab().
        transform = painter.transform()
        painter.save()
        # A painter left saved by an error took the whole app down (a segfault under Qt,
        # measured with a label bug): what failed is said once, the rest still paints.
        try:
            self._paint_all(painter, transform)
        except Exception:  # a bug of ours in one picture must not end the session
            if not self._paint_failed:
                self._paint_failed = True
                traceback.print_exc()
        finally:
            painter.restore()

    def _paint_all(self, painter: QPainter, transform: QTransform) -> None:
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        screen = self._screen_positions(transform)
        self.last_spacing_px = self.spacing_px(transform)
        labelled = self.labels_visible and self.labels_fit()
        graph = self._graph
        if graph.frames:
            paint_frames(painter, transform, graph, self.colours, self._op_font)
        self._paint_edges(painter, transform, screen)
        if graph.boxes:
            fonts = (self._title_font, self._detail_font)
            paint_boxes(
                painter, transform, graph, self.colours, fonts, self.frame, self.selected_boxes
            )
        if labelled:
            self._paint_labels(painter, screen, transform)
        else:  # the plates alone, still clear of the marks the step rings
            lit = self._lit_marks(screen)
            self._paint_edge_labels(painter, LabelPlacer(lit), [rect for _, rect in lit])

    def _lit_marks(self, screen: Any) -> list[tuple[str, QRectF]]:
        """The marks the current step rings, grown as drawn, in screen pixels."""
        step = self.frame.step if self.frame is not None else None
        nodes = self._graph.nodes
        found = []
        for key in step.lit if step is not None else ():
            if key in screen and key in nodes:
                centre = screen[key]
                size = STYLES[nodes[key].kind].size + LIT_GROW_PX + LIT_PEN_PX
                found.append(
                    (key, QRectF(centre.x() - size / 2, centre.y() - size / 2, size, size))
                )
        return found

    def _view_key(self, transform: QTransform) -> tuple[Any, ...]:
        return (
            transform.m11(),
            transform.m12(),
            transform.m21(),
            transform.m22(),
            transform.dx(),
            transform.dy(),
            len(self._graph.edges),
            len(self._graph.nodes),
        )

    def _screen_positions(self, transform: QTransform) -> ScreenPositions:
        """Each node's position in screen pixels, mapped as arrays and cached until the
        view moves, so playback frames skip it."""
        key = self._view_key(transform)
        if self._screen is not None and self._screen[0] == key:
            return self._screen[1]
        if self._arrays is None:
            self._arrays = GraphArrays(self._graph)
        screen = screen_positions(self._arrays, transform)
        self._screen = (key, screen)
        return screen

    def _edge_geometry(self, transform: QTransform, screen: ScreenPositions, view: QRectF):
        """Every edge's line, arrowhead and midpoint in screen pixels, cached until the view
        moves (edges outside the view are marked not drawn)."""
        key = (*self._view_key(transform), view.getRect())
        if self._geometry is not None and self._geometry[0] == key:
            return self._geometry[1]
        assert self._arrays is not None  # made with the screen positions
        geometry = edge_geometry(self._arrays, screen, view)
        self._geometry = (key, geometry)
        return geometry

    def _visited_mask(self) -> np.ndarray | None:
        """Per node, whether the current frame has visited it (None: no frame), cached per
        frame so repaints of one moment do not rebuild it."""
        frame = self.frame
        if frame is None or self._arrays is None:
            return None
        if self._visited is None or self._visited[0] is not frame:
            self._visited = (frame, self._arrays.mask(frame.visited))
        return self._visited[1]

    def _paint_edges(
        self, painter: QPainter, transform: QTransform, screen: ScreenPositions
    ) -> None:
        """Edges grouped by look and drawn in one native call per look: thousands of
        separate drawLine calls, or a Python loop over every edge, cost more than a frame."""
        arrays = self._arrays
        if arrays is None or not self._graph.edges:
            return
        view = QRectF(painter.viewport())
        geometry = self._edge_geometry(transform, screen, view)
        frame = self.frame
        carrying = frame.step.edge_grads if frame is not None and frame.step else {}
        looks_order = ("normal", "faded", "hot", "untracked", "cut")
        code = np.zeros(len(arrays.source), dtype=np.int8)  # index into looks_order
        visited = self._visited_mask()
        if visited is not None:
            code[~visited[arrays.target]] = 1
        labels: list[tuple[QPointF, str]] = []
        cuts: list[tuple[QPointF, str]] = []
        edge_index, drawn = arrays.edge_index, geometry.drawn
        solid = code == 0  # before the hot edges: a hot edge is drawn over its own look
        for edge, grad in carrying.items() if carrying else ():
            i = edge_index.get(edge)
            if i is not None and drawn[i] and edge not in self._graph.edge_styles:
                code[i] = 2
                labels.append((geometry.label_line[i], f"∂ {grad}"))
        for edge, (look, text) in self._graph.edge_styles.items():
            i = edge_index.get(edge)
            if i is None:
                continue
            code[i] = looks_order.index(look)
            if text and drawn[i]:
                cuts.append((geometry.label_line[i], text))
        # Past a few hundred edges, filled arrowheads (one path of thousands of polygons)
        # cost more than the rest of the frame: they are drawn as two strokes instead.
        dense = len(self._graph.edges) > 300
        c = self.colours
        faded = QColor(c.edge)
        faded.setAlpha(60)
        looks = {
            "faded": (faded, 1.2, Qt.PenStyle.SolidLine),
            "normal": (QColor(c.edge), 1.4, Qt.PenStyle.SolidLine),
            "untracked": (QColor(c.edge), 1.2, Qt.PenStyle.DotLine),
            "cut": (QColor(c.cut), 1.6, Qt.PenStyle.DashLine),
            "hot": (QColor(c.grad), 2.6, Qt.PenStyle.SolidLine),
        }
        # Antialiased or fractional-width lines go through Qt's stroker, several times
        # slower than its 1-pixel path; past a few hundred edges the difference is
        # invisible and the frame rate is not.
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, not dense)
        if dense:
            # An opaque colour mixed with the background looks as the translucent one
            # does, and Qt fills opaque 1-pixel lines several times faster than it blends.
            faded = _mixed(QColor(c.edge), QColor(c.background), 60 / 255)
            looks["faded"] = (faded, 1.2, Qt.PenStyle.SolidLine)
            looks = {k: (c, 0 if w < 2 else w, d) for k, (c, w, d) in looks.items()}
        # An SVG export gets vector lines, not the layer's picture of them.
        layered = dense and painter.paintEngine().type() == QPaintEngine.Type.Raster
        if layered:
            ordinary = np.flatnonzero(drawn & (code <= 2))  # not untracked or cut
            self._edge_layer.paint(
                painter,
                (self._geometry[0] if self._geometry else None, id(c)),
                # Strokes made only for the edges the layer paints: a step paints a few.
                lambda chosen: _with_wings(geometry, ordinary[chosen]),
                solid[ordinary],
                (QPen(looks["normal"][0], 0), QPen(looks["faded"][0], 0)),
            )
        for look, (colour, width, dash) in looks.items():
            if layered and look in ("normal", "faded"):
                continue  # in the edge layer
            chosen = np.flatnonzero(drawn & (code == looks_order.index(look)))
            if not len(chosen):
                continue
            line = geometry.line[chosen]
            tip = line[:, 2:]
            painter.setPen(QPen(colour, width, dash))
            if dense:
                draw_lines(painter, _with_wings(geometry, chosen), dedupe=True)
                continue
            draw_lines(painter, np.concatenate((line, geometry.pieces_of(chosen))))
            heads = QPainterPath()
            for t, a, b in zip(tip, geometry.left[chosen], geometry.right[chosen], strict=True):
                tip_point = QPointF(*t)
                heads.addPolygon(QPolygonF([tip_point, QPointF(*a), QPointF(*b), tip_point]))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawPath(heads)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        # Written after the cards are drawn, where no label or mark is (_paint_labels).
        self._edge_texts = [(line, text, c.grad) for line, text in labels]
        self._edge_texts += [(line, text, c.cut) for line, text in cuts]

    def vertical_reach_px(self, level: str = FULL) -> tuple[float, float]:
        """How far above and below its centre any node's mark, the label lines drawn at
        `level` (FULL, NAMES or BARE) and its module frame reach, in pixels."""
        op = QFontMetricsF(self._op_font)
        title, detail = QFontMetricsF(self._title_font), QFontMetricsF(self._detail_font)
        framed = {m for members in self._graph.groups.values() for m in members}
        above = below = 0.0
        for key, node in self._graph.nodes.items():
            size = STYLES[node.kind].size
            if node.kind in (OPERATION, ACCUMULATE):
                height = op.height()
            else:
                height = title.height() + (2 * detail.height() if level == FULL else 0)
            up, down = size / 2, size / 2 + (3 + height if level != BARE else 0)
            if key in framed:  # the frame's edge and, above, its title
                up, down = up + 8 + op.height(), down + 6
            above, below = max(above, up), max(below, down)
        return above + 2, below + 2
