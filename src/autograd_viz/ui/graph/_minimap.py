"""A small overview of a big graph in a corner of the canvas: every node a dot, the view a
rectangle; a click or a drag in it moves the view there."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import QLabel, QWidget

MINIMAP_MIN_NODES = 500  # below this, the whole graph reads in the canvas itself
MINIMAP_SIZE = (180, 110)  # pixels
MARGIN_PX = 6


class Minimap(QLabel):
    """The whole graph as dots and the canvas's view as a rectangle, in data coordinates
    scaled to fit the widget."""

    pan_requested = Signal(float, float)  # the data point the view should centre on

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphMinimap")
        self.setFixedSize(*MINIMAP_SIZE)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        self._xy = np.zeros((0, 2))
        self._bounds = QRectF(0, 0, 1, 1)  # the graph's extent, in data coordinates
        self.view_rect = QRectF()  # the canvas's view, in data coordinates
        self._dots: QImage | None = None  # the dots, drawn once per graph
        self.colours = ("#ffffff", "#8a8a8a", "#e8590c")  # fill, dots, view rectangle
        self.hide()

    def set_points(self, xy: np.ndarray) -> None:
        """Show these node positions ((n, 2), data coordinates); hidden below
        MINIMAP_MIN_NODES nodes."""
        self._xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        self._dots = None
        if len(self._xy):
            low, high = self._xy.min(axis=0), self._xy.max(axis=0)
            # A graph one row high still sits in the middle, not along the bottom edge.
            span = np.maximum(high - low, 1.0)
            low = (low + high) / 2 - span / 2
            self._bounds = QRectF(low[0], low[1], span[0], span[1])
        self.setVisible(len(self._xy) >= MINIMAP_MIN_NODES)
        self._refresh()

    def set_colours(self, fill: str, dots: str, frame: str) -> None:
        """Paint in another theme's colours."""
        self.colours = (fill, dots, frame)
        self._dots = None
        self._refresh()

    def set_view(self, rect: QRectF) -> None:
        """Follow the canvas's view (data coordinates)."""
        self.view_rect = QRectF(rect)
        self._refresh()

    def _inner(self) -> QRectF:
        return QRectF(self.rect()).adjusted(MARGIN_PX, MARGIN_PX, -MARGIN_PX, -MARGIN_PX)

    def to_widget(self, x: float, y: float) -> QPointF:
        """Where data point (x, y) is in this widget (data y grows upwards, as on the canvas)."""
        inner, b = self._inner(), self._bounds
        return QPointF(
            inner.left() + (x - b.left()) / b.width() * inner.width(),
            inner.bottom() - (y - b.top()) / b.height() * inner.height(),
        )

    def to_data(self, point: QPointF) -> tuple[float, float]:
        """The data point at widget position `point`."""
        inner, b = self._inner(), self._bounds
        return (
            b.left() + (point.x() - inner.left()) / inner.width() * b.width(),
            b.top() + (inner.bottom() - point.y()) / inner.height() * b.height(),
        )

    def view_rect_px(self) -> QRectF:
        """The view's rectangle as drawn here, clipped to the widget."""
        r = self.view_rect
        a, b = self.to_widget(r.left(), r.top()), self.to_widget(r.right(), r.bottom())
        rect = QRectF(a, b).normalized()
        # Zoomed far in, the view is a sliver of the graph: still a rectangle one can see.
        grow_x, grow_y = max(0.0, 4 - rect.width()) / 2, max(0.0, 4 - rect.height()) / 2
        rect.adjust(-grow_x, -grow_y, grow_x, grow_y)
        return rect.intersected(QRectF(self.rect()))

    def _dot_image(self) -> QImage:
        if self._dots is None or self._dots.size() != self.size():
            image = QImage(self.width(), self.height(), QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(QColor(self.colours[0]))
            inner, b = self._inner(), self._bounds
            xs = inner.left() + (self._xy[:, 0] - b.left()) / b.width() * inner.width()
            ys = inner.bottom() - (self._xy[:, 1] - b.top()) / b.height() * inner.height()
            # One dot per pixel is all a 180-pixel overview can show of 10,000 nodes.
            pixels = np.unique(np.column_stack((np.rint(xs), np.rint(ys))).astype(int), axis=0)
            painter = QPainter(image)
            painter.setPen(QPen(QColor(self.colours[1]), 2))
            painter.drawPoints(QPolygonF([QPointF(float(x), float(y)) for x, y in pixels]))
            painter.end()
            self._dots = image
        return self._dots

    def _refresh(self) -> None:
        """Compose the picture: the dots, the view's rectangle, a border. Drawn into a
        pixmap the label shows, not in a paintEvent override: a Python paint override on a
        child of a canvas being torn down is called after its wrapper is gone."""
        if not self.isVisibleTo(self.parentWidget() or self):
            return
        image = QImage(self._dot_image())
        painter = QPainter(image)
        painter.setPen(QPen(QColor(self.colours[2]), 1.5))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(self.view_rect_px())
        painter.setPen(QPen(QColor(self.colours[1]), 1))
        painter.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        painter.end()
        self.setPixmap(QPixmap.fromImage(image))

    def mousePressEvent(self, event: QMouseEvent) -> None:  # Qt's name
        self.pan_requested.emit(*self.to_data(event.position()))
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # Qt's name
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.pan_requested.emit(*self.to_data(event.position()))
        event.accept()
