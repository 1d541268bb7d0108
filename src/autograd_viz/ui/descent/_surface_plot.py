"""The descent pane's surface: the loss as a heatmap with contour lines, the known minimum,
w and b at the same scale; the paths are drawn on it by `PathLayers`."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

from autograd_viz.ui._plot_theme import DARK_PLOT, LIGHT_PLOT, style_plot
from autograd_viz.ui.descent._descent_readout import legend_corner
from autograd_viz.ui.descent._descent_sweep import Sweep, shown_surface, view_of

Extent = tuple[tuple[float, float], tuple[float, float]]


class SurfacePlot(pg.PlotWidget):
    """The heatmap, contours and minimum of one sweep's surface."""

    def __init__(self, extent: Extent) -> None:
        super().__init__(background="#ffffff")
        self.setMinimumWidth(360)
        self.setLabel("bottom", "w")
        self.setLabel("left", "b")
        # w and b in the same units: a round bowl is round, at any window size.
        self.setAspectLocked(True, ratio=1.0)
        # Before the first answer the axes already show the function's own window: an empty
        # plot's autoscale read "w (x0.001)" over ±500.
        (w0, w1), (b0, b1) = extent
        for name in ("bottom", "left"):
            self.getAxis(name).enableAutoSIPrefix(False)
        self.getViewBox().setRange(xRange=(w0, w1), yRange=(b0, b1), padding=0)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.addItem(self.image)
        self.colour_bar = pg.ColorBarItem(
            colorMap=pg.colormap.get("viridis"), interactive=False, label="log₁₀ loss"
        )
        self.colour_bar.setImageItem(self.image, insert_in=self.getPlotItem())
        self.contour_items: list[pg.PlotDataItem] = []
        self.minimum_item = pg.ScatterPlotItem(
            symbol="star", size=18, brush="#facc15", pen=pg.mkPen("#0f172a")
        )
        self.minimum_item.setZValue(9)
        self.addItem(self.minimum_item)

    def set_dark(self, dark: bool) -> None:
        """Follow the window's theme: background, axes and the colour bar's axis."""
        style_plot(self, dark)
        axis = self.colour_bar.getAxis("right")
        axis.setPen(DARK_PLOT[1] if dark else LIGHT_PLOT[1])
        axis.setTextPen(DARK_PLOT[1] if dark else LIGHT_PLOT[1])

    def clear_surface(self) -> None:
        """Nothing drawn (the sweep failed)."""
        self.image.clear()
        for item in self.contour_items:
            self.removeItem(item)
        self.contour_items = []
        self.minimum_item.clear()

    def draw_surface(self, sweep: Sweep, start: tuple[float, float]) -> None:
        """The heatmap of `sweep`'s grid, its minimum, axis names and the window to show."""
        shown = shown_surface(sweep.grid)
        self.image.setImage(shown, autoLevels=False, levels=_levels(shown))
        w0, w1, b0, b1 = sweep.ws[0], sweep.ws[-1], sweep.bs[0], sweep.bs[-1]
        self.image.setRect(pg.QtCore.QRectF(w0, b0, w1 - w0, b1 - b0))
        self.colour_bar.setLevels(_levels(shown))
        if sweep.minimum is not None:
            self.minimum_item.setData([sweep.minimum[0]], [sweep.minimum[1]])
        else:
            self.minimum_item.clear()
        self.setLabel("bottom", sweep.axes[0])
        self.setLabel("left", sweep.axes[1])
        (x0, x1), (y0, y1) = view_of(sweep, start)
        self.getViewBox().setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)

    def draw_contours(self, sweep: Sweep) -> None:
        """The sweep's contour lines, drawn once into a cache (still while the slider moves)."""
        for item in self.contour_items:
            self.removeItem(item)
        self.contour_items = [
            self.plot(c[:, 0], c[:, 1], pen=pg.mkPen(255, 255, 255, 110), connect="finite")
            for c in sweep.contours
        ]
        for item in self.contour_items:
            # The curve inside the plot item paints itself: it is the one to cache.
            for part in (item, item.curve):
                part.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def place_legend(self, legend: pg.LegendItem, sweep: Sweep, index: int) -> None:
        """The legend in the corner the shown paths cross least."""
        (x0, x1), (y0, y1) = self.getViewBox().viewRange()
        corner = legend_corner(sweep, index, (x0, x1, y0, y1))
        right, bottom = corner % 2, corner // 2
        spot = (right, bottom)
        legend.anchor(spot, spot, offset=(-8 if right else 8, -8 if bottom else 8))

    def reaches_far(self, sweep: Sweep, index: int) -> bool:
        """Some shown path at row `index` runs over ten view widths away."""
        (x0, x1), (y0, y1) = self.getViewBox().viewRange()
        span = max(x1 - x0, y1 - y0)
        points = np.concatenate([run.paths[index, :, :2] for run in sweep.runs.values()])
        points = points[np.isfinite(points).all(axis=1)]
        centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
        return bool(points.size) and float(np.abs(points - centre).max()) > 10 * span

    def repaint_whole(self) -> None:
        """Repaint the whole plot, not only the items' own regions."""
        self.viewport().update()


def _levels(shown: np.ndarray) -> tuple[float, float]:
    finite = shown[np.isfinite(shown)]
    return (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
