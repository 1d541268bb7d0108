"""An edge drawn around marks (core/graph/edge_routes.py) is drawn along its waypoints:
the lane of a residual shows on the canvas, in the fitted view, with its gradient label
on the lane while backward carries one."""

from __future__ import annotations

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor

from autograd_viz.ui.graph._graph_style import EDGE_COLOUR
from tests.core.test_edge_routes import RESIDUAL, _edge_between
from tests.ui.test_canvas_view import _canvas, _show, _view_rect


def _widget_point(canvas, x: float, y: float) -> QPointF:
    scene = canvas.getViewBox().mapViewToScene(QPointF(x, y))
    return QPointF(canvas.mapFromScene(scene) + canvas.viewport().pos())


def _near_colour(image, point: QPointF, colour: QColor, reach: int = 2) -> bool:
    for dy in range(-reach, reach + 1):
        pixel = image.pixelColor(round(point.x()), round(point.y()) + dy)
        if all(
            abs(a - b) < 40 for a, b in zip(pixel.getRgb()[:3], colour.getRgb()[:3], strict=True)
        ):
            return True
    return False


def test_a_residuals_lane_is_drawn_in_view(qtbot) -> None:
    canvas = _canvas(qtbot, (1000, 600))
    _show(qtbot, canvas, RESIDUAL)
    graph = canvas.graph
    skip = _edge_between(graph, "AccumulateGrad", "AddBackward0")
    (x0, lane), (x1, _) = graph.routes[skip]
    image = canvas.grab().toImage()
    view = _view_rect(canvas)
    edge = QColor(EDGE_COLOUR)
    background = image.pixelColor(round(view.left()) + 3, round(view.top()) + 3)
    for share in (0.25, 0.5, 0.75):
        point = _widget_point(canvas, x0 + (x1 - x0) * share, lane)
        assert view.contains(point)  # fitted with the lane in view
        assert _near_colour(image, point, edge), share
    # Half-way between the lane and the row, nothing is drawn: it is one line, not a band.
    row = graph.nodes[graph.edges[skip][0]].y
    between = _widget_point(canvas, (x0 + x1) / 2, (lane + row) / 2 + 0.05)
    assert image.pixelColor(round(between.x()), round(between.y())) == background


def test_a_gradient_on_a_routed_edge_is_written_on_its_lane(qtbot) -> None:
    canvas = _canvas(qtbot, (1000, 600))
    _show(qtbot, canvas, RESIDUAL)
    graph = canvas.graph
    skip = _edge_between(graph, "AccumulateGrad", "AddBackward0")
    player = canvas.view.player
    player.set_mode("backward")
    step = next(i for i, s in enumerate(player.steps) if graph.edges[skip] in (s.edge_grads or {}))
    player.seek(step)
    canvas.grab()
    texts = canvas._overlay._edge_texts
    (x0, lane), (x1, _) = graph.routes[skip]
    a, b = _widget_point(canvas, x0, lane), _widget_point(canvas, x1, lane)
    lines = [line for line, text, _ in texts if text.startswith("∂")]
    # Its label follows the long level run, not the short last piece into the target.
    assert any(
        abs(line[1] - a.y()) < 3 and abs(line[3] - b.y()) < 3 and line[2] - line[0] > 100
        for line in lines
    ), lines
