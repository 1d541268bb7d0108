"""The canvas's view box: the wheel zooms toward the pointer, and toward readable labels."""

from __future__ import annotations

import pyqtgraph as pg

from autograd_viz.ui.graph._edges_item import LABEL_MIN_DX_PX, LABEL_MIN_DY_PX


class GraphViewBox(pg.ViewBox):
    """A ViewBox whose wheel, zooming in, stretches only the axis that still lacks room for
    labels: a 1,500-layer, 3-row graph fitted has rows hundreds of pixels apart and layers
    a fraction of a pixel; zooming both alike would push the rows off screen long before
    the layers were far enough apart to label (no label at any zoom)."""

    def wheelEvent(self, ev, axis=None) -> None:  # pyqtgraph's name
        if axis is None and ev.delta() > 0:  # in: pyqtgraph's wheelScaleFactor is negative
            units_x, units_y = self.viewPixelSize()  # data units per pixel
            across, down = 1 / max(units_x, 1e-12), 1 / max(units_y, 1e-12)
            if down >= LABEL_MIN_DY_PX and across < LABEL_MIN_DX_PX:
                axis = 0
            elif across >= LABEL_MIN_DX_PX and down < LABEL_MIN_DY_PX:
                axis = 1
        super().wheelEvent(ev, axis)
