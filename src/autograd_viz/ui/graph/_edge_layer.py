"""The ordinary edges of a dense graph, painted once per view into an image.

A playback step turns a few edges of thousands from faded to solid. Repainting every edge
each frame costs most of a 60 fps frame on a 10,000-node graph; painting only the edges
that turned solid over the kept image costs almost nothing. Stepping back (edges fading
again), a moved view or a new look paints the image afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QPoint
from PySide6.QtGui import QImage, QPainter, QPen

from autograd_viz.ui.graph._images import clear_image
from autograd_viz.ui.graph._screen_geometry import draw_lines


class EdgeLayer:
    """Solid and faded 1-pixel edges, kept as an image between frames of one view."""

    def __init__(self) -> None:
        self._key: Any = None
        self._image: QImage | None = None
        self._solid: np.ndarray | None = None

    def paint(
        self,
        painter: QPainter,
        key: Any,
        lines: Callable[[np.ndarray], np.ndarray],
        solid: np.ndarray,
        pens: tuple[QPen, QPen],
    ) -> None:
        """Paint the edges: where `solid`, with the first pen, the rest with the second
        (faded) one. `lines(mask)` gives the chosen edges' strokes ((k, 4), screen pixels),
        made only for the edges painted. `key` names the view and looks: a new key paints
        everything again."""
        device = painter.device()
        ratio = device.devicePixelRatioF() if device is not None else 1.0
        size = painter.viewport().size()
        key = (key, size.width(), size.height(), ratio, len(solid))
        image, previous = self._image, self._solid
        if key != self._key or image is None or previous is None or bool((previous & ~solid).any()):
            image = clear_image(size.width(), size.height(), ratio)
            self._paint(image, pens[1], lines(~solid))
            self._paint(image, pens[0], lines(solid))
        else:
            # Only more edges turned solid: the solid pen covers their faded pixels exactly.
            self._paint(image, pens[0], lines(solid & ~previous))
        self._key, self._image, self._solid = key, image, solid.copy()
        painter.drawImage(QPoint(0, 0), image)

    @staticmethod
    def _paint(image: QImage, pen: QPen, lines: np.ndarray) -> None:
        if not len(lines):
            return
        painter = QPainter(image)
        painter.setPen(pen)
        draw_lines(painter, lines, dedupe=True)
        painter.end()
