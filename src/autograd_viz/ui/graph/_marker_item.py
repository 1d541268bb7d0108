"""The node markers: pyqtgraph's scatter, whose picture of a big graph is kept as an image
between paints of one view, so that a playback step repaints only the markers it restyled.

Drawing 10,000 markers (one pixmap fragment each) was more than half of a playback frame
on a 10,000-node graph, though a step restyles a handful of them. Here a paint compares
each marker's look (its rectangle in pyqtgraph's symbol atlas: one per look) with the one
in the image; the markers that changed are erased and, clipped to where they were, they
and every marker overlapping them are drawn again in their order, so the image is the
picture a full paint would make. Whatever changes a look (playback, hover, a theme) is
seen the same way; a new view, size, atlas or set of points paints the image afresh.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect, QRectF
from PySide6.QtGui import QImage, QPaintEngine, QPainter

from autograd_viz.ui.graph._images import clear_image

# Below this many markers, painting them all costs less than keeping the image.
LAYER_MIN_MARKERS = 500
# More restyled markers than this in one paint (a jump across the run): paint them all.
MAX_RESTYLED = 64


class MarkerItem(pg.ScatterPlotItem):
    """A pixel-mode scatter of node markers that repaints only the markers that changed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._image: QImage | None = None
        self._image_key: Any = None
        self._drawn: np.ndarray | None = None  # per marker, its atlas rectangle in the image
        self._drawn_visible: np.ndarray | None = None
        self.repainted = 0  # markers drawn by the last paint (the whole set, or a few)
        # Per marker, whether it never takes the hover look: a folded card's clear marker,
        # whose hover ring was a dark square drawn over the card's text.
        self.unhovered: np.ndarray | None = None
        super().__init__(*args, **kwargs)

    def hoverEvent(self, ev: Any) -> None:
        super().hoverEvent(ev)
        hovered, unhovered = self.data["hovered"], self.unhovered
        if unhovered is not None and len(unhovered) == len(hovered) and (hovered & unhovered).any():
            self.data["sourceRect"][hovered & unhovered] = 0
            hovered &= ~unhovered
            self.updateSpots()

    # Points added or removed: the image shows other markers.
    def addPoints(self, *args: Any, **kwargs: Any) -> None:
        self._image = None
        super().addPoints(*args, **kwargs)

    def clear(self) -> None:
        self._image = None
        super().clear()

    def paint(self, p: QPainter, option: Any, widget: Any) -> None:
        if (
            len(self.data) < LAYER_MIN_MARKERS
            or not (self.opts["pxMode"] and self.opts["useCache"])
            or self._exportOpts is not False
            or p.paintEngine().type() != QPaintEngine.Type.Raster
        ):
            self._image = None
            self.repainted = len(self.data)
            super().paint(p, option, widget)
            return
        atlas = self.fragmentAtlas
        if widget is not None and widget.devicePixelRatioF() != atlas.devicePixelRatio():
            # As pyqtgraph does: symbols rendered again at the screen's pixel ratio.
            atlas.setDevicePixelRatio(widget.devicePixelRatioF())
            atlas.clear()
            self.data["sourceRect"] = 0
            self.updateSpots()
        dpr = atlas.devicePixelRatio()
        t = p.transform()
        x, y = self.data["x"], self.data["y"]
        xy = np.column_stack(
            (t.m11() * x + t.m21() * y + t.dx(), t.m12() * x + t.m22() * y + t.dy())
        )
        np.clip(xy, -(2**30), 2**30, out=xy)  # as pyqtgraph does: Qt crashes past this
        rects = np.frombuffer(self.data["sourceRect"].copy(), dtype=int).reshape(-1, 4)
        # Half a marker's size on screen, with a pixel for where it lands between pixels.
        half = rects[:, 2:].max(axis=1) / (2 * dpr) + 1
        size = p.viewport().size()
        inside = self.data["visible"] & (xy[:, 0] + half >= 0) & (xy[:, 0] - half <= size.width())
        inside &= (xy[:, 1] + half >= 0) & (xy[:, 1] - half <= size.height())
        key = (
            t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy(),
            size.width(), size.height(), dpr, atlas.pixmap.cacheKey(), len(self.data),
        )  # fmt: skip
        image, drawn = self._image, self._drawn
        changed = None
        if image is not None and drawn is not None and key == self._image_key:
            changed = np.flatnonzero(
                (drawn != rects).any(axis=1) | (self._drawn_visible != self.data["visible"])
            )
            if len(changed) > MAX_RESTYLED:
                changed = None
        if changed is None:
            image = clear_image(size.width(), size.height(), dpr)
            self._draw(image, np.flatnonzero(inside), xy, rects, dpr, p.renderHints())
        elif len(changed):
            # Where each restyled marker was and now is: as wide as the wider look.
            grow = np.maximum(drawn[changed, 2:].max(axis=1) / (2 * dpr) + 1, half[changed])
            corners = np.column_stack((xy[changed] - grow[:, None], xy[changed] + grow[:, None]))
            boxes = np.column_stack((np.floor(corners[:, :2]), np.ceil(corners[:, 2:])))
            self.repainted = 0
            for x0, y0, x1, y1 in sorted(set(map(tuple, boxes.astype(int).tolist()))):
                hit = (xy[:, 0] + half > x0) & (xy[:, 0] - half < x1)
                hit &= (xy[:, 1] + half > y0) & (xy[:, 1] - half < y1)
                self._patch(image, QRect(x0, y0, x1 - x0, y1 - y0), np.flatnonzero(hit & inside),
                            xy, rects, dpr, p.renderHints())  # fmt: skip
        else:
            self.repainted = 0
        self._image, self._image_key = image, key
        self._drawn, self._drawn_visible = rects, self.data["visible"].copy()
        p.resetTransform()
        p.drawImage(QPoint(0, 0), image)

    def _fragments(
        self, painter: QPainter, chosen: np.ndarray, xy: np.ndarray, rects: np.ndarray, dpr: float
    ) -> None:
        """Draw the chosen markers, in their order, as pyqtgraph does: one native call."""
        if not len(chosen):
            return
        self._pixmapFragments.resize(len(chosen))
        fragments = self._pixmapFragments.ndarray()
        fragments[:, 0:2] = xy[chosen]
        fragments[:, 2:6] = rects[chosen]
        fragments[:, 6:10] = [1 / dpr, 1 / dpr, 0.0, 1.0]  # scale, rotation, opacity
        painter.drawPixmapFragments(*self._pixmapFragments.drawargs(), self.fragmentAtlas.pixmap)

    def _draw(
        self,
        image: QImage,
        chosen: np.ndarray,
        xy: np.ndarray,
        rects: np.ndarray,
        dpr: float,
        hints: QPainter.RenderHint,
    ) -> None:
        """Draw the chosen markers on the image."""
        self.repainted = len(chosen)
        painter = QPainter(image)
        painter.setRenderHints(hints)  # as the screen's painter draws them
        self._fragments(painter, chosen, xy, rects, dpr)
        painter.end()

    def _patch(
        self,
        image: QImage,
        box: QRect,
        chosen: np.ndarray,
        xy: np.ndarray,
        rects: np.ndarray,
        dpr: float,
        hints: QPainter.RenderHint,
    ) -> None:
        """Paint one box of the image again: the chosen markers (all that overlap it) on a
        clear patch, put in place of what was there. Not drawn through a clip: Qt blends
        clipped fragments by another path, and hundreds of stacked translucent markers
        came out visibly different from a full paint."""
        self.repainted += len(chosen)
        # Room around the box for every marker that overlaps it, so that none lands on
        # negative patch coordinates (Qt rounds those the other way at half a pixel).
        margin = int(rects[chosen, 2:].max() / dpr) + 2 if len(chosen) else 0
        outer = box.adjusted(-margin, -margin, margin, margin)
        patch = clear_image(outer.width(), outer.height(), dpr)
        painter = QPainter(patch)
        painter.setRenderHints(hints)
        painter.translate(-outer.x(), -outer.y())  # whole pixels: each marker lands as before
        self._fragments(painter, chosen, xy, rects, dpr)
        painter.end()
        painter = QPainter(image)
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
        # The source rectangle is in the patch's own pixels: the screen's, not logical.
        source = QRectF(margin, margin, box.width(), box.height())
        painter.drawImage(QRectF(box), patch, QRectF(source.topLeft() * dpr, source.size() * dpr))
        painter.end()
