"""The optimizers' paths on the surface and their loss curves: one look (colour, symbol)
per optimizer, a legend, and the current step marked on both plots."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

from autograd_viz.ui.descent._descent_sweep import Sweep

OUTLINE = "#0f172a"
FAR = 1000  # a path is drawn up to where it is this many surface widths away
# Colour, symbol and name of each optimizer's path: the symbols tell them apart without
# colour, the dark outline keeps them readable on every part of the heatmap.
LOOKS = {
    "sgd": ("#ff2d78", "o", "SGD"),
    "momentum": ("#ff9f1c", "s", "Momentum"),
    "nesterov": ("#2ec4ff", "t", "Nesterov"),
    "rmsprop": ("#b388ff", "d", "RMSprop"),
    "adam": ("#7cfc00", "h", "Adam"),
}


class PathLayers:
    """Keeps one outline + path item and one loss curve per shown optimizer; a slider tick
    only calls `draw`, which sets data on existing items."""

    def __init__(
        self,
        surface_plot: pg.PlotWidget,
        loss_plot: pg.PlotWidget,
        looks: dict[str, tuple[str, str, str]],
    ) -> None:
        self.surface_plot, self.loss_plot, self.looks = surface_plot, loss_plot, looks
        self.legend = pg.LegendItem(
            offset=(8, 8), brush=pg.mkBrush(255, 255, 255, 215), labelTextColor=OUTLINE
        )
        self.legend.setParentItem(surface_plot.getPlotItem().vb)
        self.items: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem, pg.PlotDataItem]] = {}
        self.current = pg.ScatterPlotItem(size=15, brush="#ffffff")
        self.current.setZValue(12)
        surface_plot.addItem(self.current)
        # A plot item (not a bare scatter) so that the loss plot's log axis applies to it.
        self.loss_marker = loss_plot.plot(pen=None, symbol="o", symbolSize=10)
        # One loss range per sweep, for every learning rate: the axes stay still while the
        # slider moves (auto-ranging would re-measure the curves and rebuild the axes on
        # every tick), and a diverging loss visibly leaves the top of the plot.
        loss_plot.getPlotItem().vb.disableAutoRange()
        loss_plot.getAxis("left").enableAutoSIPrefix(False)

    def show(self, names: list[str]) -> None:
        """Have items for exactly these optimizers, in this order, and a legend for them."""
        for name in [n for n in self.items if n not in names]:
            outline, line, curve = self.items.pop(name)
            self.surface_plot.removeItem(outline)
            self.surface_plot.removeItem(line)
            self.loss_plot.removeItem(curve)
        for name in names:
            if name in self.items:
                continue
            colour, symbol, _ = self.looks[name]
            outline = pg.PlotDataItem(pen=pg.mkPen(OUTLINE, width=4.5))
            line = pg.PlotDataItem(
                pen=pg.mkPen(colour, width=2),
                symbol=symbol,
                symbolSize=6,
                symbolBrush=colour,
                symbolPen=pg.mkPen(OUTLINE, width=0.8),
            )
            outline.setZValue(10)
            line.setZValue(11)
            self.surface_plot.addItem(outline)
            self.surface_plot.addItem(line)
            curve = self.loss_plot.plot(pen=pg.mkPen(colour, width=2.5))
            self.items[name] = (outline, line, curve)
        self.legend.clear()
        if len(names) > 1:
            for name in names:
                self.legend.addItem(self.items[name][1], self.looks[name][2])
        self.legend.setVisible(len(names) > 1)

    def clear(self) -> None:
        """Nothing drawn (the sweep failed)."""
        for outline, line, curve in self.items.values():
            outline.setData([], [])
            line.setData([], [])
            curve.setData([], [])
        self.current.clear()
        self.loss_marker.setData([], [])

    def draw(self, sweep: Sweep, index: int, step: int) -> None:
        """Each run's path for learning-rate row `index`, with `step` marked."""
        spots, marks_x, marks_y, brushes = [], [], [], []
        for name, run in sweep.runs.items():
            outline, line, curve = self.items[name]
            colour, symbol, _ = self.looks[name]
            path = run.paths[index]
            finite = np.isfinite(path).all(axis=1)
            # Qt's raster engine crashes on lines 1e40 pixels long: stop where it runs away.
            far = FAR * max(1.0, float(np.abs(sweep.ws).max()), float(np.abs(sweep.bs).max()))
            finite &= np.cumprod(np.abs(path[:, :2]).max(axis=1) < far).astype(bool)
            outline.setData(path[finite, 0], path[finite, 1])
            line.setData(path[finite, 0], path[finite, 1])
            at = min(step, len(path) - 1)
            w, b, loss = path[at]
            if np.isfinite(w) and np.isfinite(b):
                spots.append({"pos": (w, b), "symbol": symbol, "pen": pg.mkPen(colour, width=3)})
            steps = np.arange(len(path))
            positive = finite & (path[:, 2] > 0)
            curve.setData(steps[positive], path[positive, 2])
            if np.isfinite(loss) and loss > 0:
                marks_x.append(at)
                marks_y.append(loss)
                brushes.append(pg.mkBrush(colour))
        self.current.setData(spots)
        self.loss_marker.setData(marks_x, marks_y, symbolBrush=brushes)

    def frame(self, sweep: Sweep) -> None:
        """A new sweep: fix the loss plot's range for all its rates, cache the still surface."""
        longest = max(run.paths.shape[1] for run in sweep.runs.values())
        self.loss_plot.setXRange(0, longest - 1, padding=0.02)
        losses = np.concatenate([run.paths[..., 2].ravel() for run in sweep.runs.values()])
        losses = losses[np.isfinite(losses) & (losses > 0)]
        starts = np.concatenate([run.paths[:, 0, 2] for run in sweep.runs.values()])
        starts = starts[np.isfinite(starts) & (starts > 0)]
        # A model's training loss moves within a decade or two: a linear axis reads better.
        log = sweep.kind == "function"
        self.loss_plot.setLogMode(y=log)
        if not log and losses.size:
            top = float(losses.max())
            if starts.size:  # a loss that blows up leaves the top of the plot
                top = min(top, 3 * float(starts.max()))
            self.loss_plot.setYRange(0, top * 1.08, padding=0)
        elif losses.size and starts.size:
            low = max(-12, math.floor(math.log10(losses.min())))
            high = math.ceil(math.log10(starts.max())) + 1
            self.loss_plot.setYRange(low, max(high, low + 1), padding=0.02)
        for item in self.surface_plot.getPlotItem().items:
            if item not in self.current_items():
                # The heatmap and contours stay put while the slider moves: drawn once
                # into a pixmap at screen resolution, then copied on every repaint.
                item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def current_items(self) -> list:
        """The items a slider tick changes (never cached)."""
        moving = [self.current]
        for outline, line, _ in self.items.values():
            moving += [outline, line]
        return moving

    def path_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The (w, b) points drawn for an optimizer."""
        xs, ys = self.items[name][1].getData()
        return (np.empty(0), np.empty(0)) if xs is None else (xs, ys)
