"""The optimizers' paths on the surface and their loss curves: one look (colour, symbol)
per optimizer, a legend, and the current step marked on both plots."""

from __future__ import annotations

import re

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QGraphicsItem

from autograd_viz.core.descent.clip import clip_path
from autograd_viz.core.descent.loss_axis import LossAxis, loss_axis
from autograd_viz.core.descent.paths import loss_at_minimum
from autograd_viz.ui.descent._descent_sweep import Sweep

OUTLINE = "#0f172a"
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
        # Per optimizer: the outline, the line, its step symbols on the surface, the loss
        # curve. Bare curve and scatter items: a PlotDataItem's setData cost ~1 ms a tick.
        self.items: dict[str, tuple[pg.PlotCurveItem, pg.PlotCurveItem, pg.PlotCurveItem]] = {}
        self.symbols: dict[str, pg.ScatterPlotItem] = {}
        self.samples: dict[str, pg.PlotDataItem] = {}  # what the legend draws for each
        self.spot_pens: dict[str, object] = {}
        # "→ ∞ at step k" where a path leaves the surface and where its loss leaves the chart.
        self.marks: dict[str, tuple[pg.TextItem, pg.TextItem]] = {}
        self.axis = LossAxis("log", 0.0, 1.0, "loss (log scale)")
        self.box = (-np.inf, np.inf, -np.inf, np.inf)  # the surface's extent: paths clip to it
        self.limits = (-np.inf, np.inf)  # the heights the loss chart may follow a curve to
        self._y_range: tuple[float, float] | None = None
        self._ticks_range: tuple[float, float] | None = None  # the heights ticks are for
        self.current = pg.ScatterPlotItem(size=15, brush="#ffffff")
        self.current.setZValue(12)
        surface_plot.addItem(self.current)
        # A plot item (not a bare scatter) so that the loss plot's log axis applies to it.
        self.loss_marker = loss_plot.plot(pen=None, symbol="o", symbolSize=10)
        # The loss range is set by `draw` from the shown curves (auto-ranging would
        # re-measure every item on every tick), and only when it changes.
        loss_plot.getPlotItem().vb.disableAutoRange()
        loss_plot.getAxis("left").enableAutoSIPrefix(False)
        # The axis title takes its fullest form that fits the chart's height (a symlog
        # title was cut at "linear w…"); the whole of it is the axis's tooltip.
        loss_plot.getAxis("left").geometryChanged.connect(self._fit_title)

    def show(self, names: list[str]) -> None:
        """Have items for exactly these optimizers, in this order, and a legend for them."""
        for name in [n for n in self.items if n not in names]:
            outline, line, curve = self.items.pop(name)
            self.surface_plot.removeItem(outline)
            self.surface_plot.removeItem(line)
            self.surface_plot.removeItem(self.symbols.pop(name))
            self.loss_plot.removeItem(curve)
            del self.samples[name]
            on_surface, on_chart = self.marks.pop(name)
            self.surface_plot.removeItem(on_surface)
            self.loss_plot.removeItem(on_chart)
        for name in names:
            if name in self.items:
                continue
            colour, symbol, _ = self.looks[name]
            outline = pg.PlotCurveItem(pen=pg.mkPen(OUTLINE, width=4.5))
            line = pg.PlotCurveItem(pen=pg.mkPen(colour, width=2))
            symbols = pg.ScatterPlotItem(
                symbol=symbol, size=6, brush=pg.mkBrush(colour), pen=pg.mkPen(OUTLINE, width=0.8)
            )
            outline.setZValue(10)
            line.setZValue(11)
            symbols.setZValue(11)
            for item in (outline, line, symbols):
                self.surface_plot.addItem(item)
            curve = pg.PlotCurveItem(pen=pg.mkPen(colour, width=2.5))
            self.loss_plot.addItem(curve)
            self.items[name] = (outline, line, curve)
            self.symbols[name] = symbols
            self.samples[name] = pg.PlotDataItem(
                pen=pg.mkPen(colour, width=2),
                symbol=symbol,
                symbolSize=6,
                symbolBrush=colour,
                symbolPen=pg.mkPen(OUTLINE, width=0.8),
            )
            self.spot_pens[name] = pg.mkPen(colour, width=3)
            marks = (
                pg.TextItem(color=colour, fill=pg.mkBrush(15, 23, 42, 200), anchor=(0, 0.5)),
                pg.TextItem(color=colour, fill=pg.mkBrush(15, 23, 42, 200), anchor=(1, 0)),
            )
            marks[0].setZValue(13)
            self.surface_plot.addItem(marks[0])
            self.loss_plot.addItem(marks[1])
            for mark in marks:
                mark.hide()
            self.marks[name] = marks
        self.legend.clear()
        if len(names) > 1:
            for name in names:
                self.legend.addItem(self.samples[name], self.looks[name][2])
        self.legend.setVisible(len(names) > 1)

    def clear(self) -> None:
        """Nothing drawn (the sweep failed)."""
        for outline, line, curve in self.items.values():
            outline.setData([], [])
            line.setData([], [])
            curve.setData([], [])
        for symbols in self.symbols.values():
            symbols.setData([], [])
        for marks in self.marks.values():
            for mark in marks:
                mark.hide()
        self.current.clear()
        self.loss_marker.setData([], [])

    def draw(self, sweep: Sweep, index: int, step: int) -> None:
        """Each run's path for learning-rate row `index`, with `step` marked."""
        spots, marks_x, marks_y, brushes = [], [], [], []
        low, high = np.inf, -np.inf
        for name, run in sweep.runs.items():
            outline, line, curve = self.items[name]
            colour, symbol, _ = self.looks[name]
            path = run.paths[index]
            overflow = _first_overflow(path)
            drawn, left_at, exit_point = clip_path(path[:, :2], self.box)
            connect = "all" if left_at is None and len(drawn) == len(path) else "finite"
            outline.setData(drawn[:, 0], drawn[:, 1], connect=connect)
            line.setData(drawn[:, 0], drawn[:, 1], connect=connect)
            # Symbols on the steps inside the surface (not on the border points of a cut).
            steps = (
                path[:, :2] if len(drawn) == len(path) else path[_inside_box(path, self.box), :2]
            )
            self.symbols[name].setData(steps[:, 0], steps[:, 1])
            on_surface, on_chart = self.marks[name]
            if left_at is not None:
                k = overflow if overflow is not None else left_at
                on_surface.setText(
                    f"→ ∞ at step {k}" if overflow is not None else f"→ leaves at step {k}"
                )
                on_surface.setPos(*exit_point)
                # The text reaches into the surface from the border it left through.
                centre_w, centre_b = (
                    (self.box[0] + self.box[1]) / 2,
                    (self.box[2] + self.box[3]) / 2,
                )
                on_surface.setAnchor(
                    (float(exit_point[0] > centre_w), float(exit_point[1] < centre_b))
                )
                on_surface.show()
            else:
                on_surface.hide()
            at = min(step, len(path) - 1)
            w, b, _ = path[at]
            if _inside(w, b, self.box):
                spots.append({"pos": (w, b), "symbol": symbol, "pen": self.spot_pens[name]})
            xs, ys, cut = self._curve(path[:, 2])
            curve.setData(xs, ys)
            if ys.size:
                low, high = min(low, float(ys.min())), max(high, float(ys.max()))
            if cut is not None:
                down = ys[-1] <= self.limits[0]
                if overflow is not None:
                    text = f"→ {'−' if down else ''}∞ at step {overflow}"
                else:  # still a finite number, past the chart's cap
                    text = f"{'↓' if down else '↑'} {path[cut, 2]:.3g} at step {cut}"
                on_chart.setText(re.sub(r"e\+?0*", "e", text).replace("-", "−"))
                x = xs[-1] if xs.size else cut
                on_chart.setPos(x, ys[-1] if ys.size else high)
                # Into the chart: rightward from an early step, leftward from a late one.
                on_chart.setAnchor((float(x > len(path) / 2), float(down)))
                on_chart.show()
            else:
                on_chart.hide()
            if at < len(xs) and xs[at] == at:
                marks_x.append(at)
                marks_y.append(ys[at])
                brushes.append(pg.mkBrush(colour))
        self._stack_marks()
        self.current.setData(spots)
        self.loss_marker.setData(marks_x, marks_y, symbolBrush=brushes)
        self._follow(low, high)

    def _stack_marks(self) -> None:
        """Markers of optimizers that leave at the same place (SGD and momentum share their
        first steps) go one under the other, away from the border, instead of on top."""
        for which, plot in ((0, self.surface_plot), (1, self.loss_plot)):
            (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
            placed: list[tuple[float, float]] = []
            for marks in self.marks.values():
                mark = marks[which]
                if not mark.isVisible():
                    continue
                x, y = mark.pos().x(), mark.pos().y()
                same = sum(
                    abs(x - px) < 0.04 * (x1 - x0) and abs(y - py) < 0.04 * (y1 - y0)
                    for px, py in placed
                )
                placed.append((x, y))
                if same:
                    ax, ay = mark.anchor.x(), mark.anchor.y()
                    # anchor y 0 hangs the text below its point, 1 stands it above
                    mark.setAnchor((ax, ay - 1.1 * same if ay < 0.5 else ay + 1.1 * same))

    def _curve(self, losses: np.ndarray) -> tuple[np.ndarray, np.ndarray, int | None]:
        """The loss curve's (steps, heights) up to where it leaves the chart's limits (then
        one point on the limit), and that step."""
        heights = self.axis.height(losses)
        floor, cap = self.limits
        with np.errstate(invalid="ignore"):
            out = ~np.isfinite(heights) | (heights > cap) | (heights < floor)
        gone = np.flatnonzero(out)
        steps = np.arange(len(heights), dtype=float)
        if gone.size == 0:
            return steps, heights, None
        k = int(gone[0])
        edge = floor if heights[k] < floor else cap  # nan and +inf go up, −inf down
        return np.append(steps[:k], k), np.append(heights[:k], edge), k

    def _follow(self, low: float, high: float) -> None:
        # The chart follows the shown curves (a diverging loss up to the cap, where it is cut
        # and marked); setting the same range again would still re-lay out the axis.
        if not (np.isfinite(low) and np.isfinite(high)):
            return
        pad = max(0.05 * (high - low), 0.05)
        wanted = (low - pad, high + pad)
        shown = self._y_range
        # Re-range only when a curve would leave the chart or fill under half of it: each
        # setYRange re-lays out the axis (~1–2 ms), too much for every tick of a drag.
        if (
            shown is None
            or wanted[0] < shown[0]
            or wanted[1] > shown[1]
            or (wanted[1] - wanted[0]) < 0.5 * (shown[1] - shown[0])
        ):
            self._y_range = wanted
            self.loss_plot.setYRange(*wanted, padding=0)
            self._set_ticks(*wanted)  # ticks in what shows, never a bare axis

    def frame(self, sweep: Sweep) -> None:
        """A new sweep: choose the loss chart's scale for all its rates, cache the still
        surface, clip the paths to its extent."""
        # setLogMode turns auto-range back on: first, then the ranges that switch it off.
        self.loss_plot.setLogMode(y=False)  # the heights are already the scale's
        longest = max(run.paths.shape[1] for run in sweep.runs.values())
        self.loss_plot.setXRange(0, longest - 1, padding=0.02)
        losses = np.concatenate([run.paths[..., 2].ravel() for run in sweep.runs.values()])
        starts = np.concatenate([run.paths[:, 0, 2] for run in sweep.runs.values()])
        starts = starts[np.isfinite(starts)]
        minimum = loss_at_minimum(sweep.key[1]) if sweep.key[0] == "function" else None
        # A model's training loss moves within a decade or two: a linear axis reads better.
        first = float(np.median(starts)) if starts.size else None
        self.axis = loss_axis(losses, minimum, sweep.kind != "function", first)
        self._fit_title()
        start = float(np.abs(starts - self.axis.offset).max()) if starts.size else 1.0
        cap = self.axis.cap(start + self.axis.offset)
        heights = self.axis.height(losses)
        finite = heights[np.isfinite(heights)]
        floor = float(finite.min()) if finite.size else 0.0
        if self.axis.kind == "symlog":
            floor = max(floor, -cap)
        elif self.axis.kind == "linear":
            cap = float(finite.max()) if finite.size else 1.0
            if starts.size:  # a model's loss that blows up is cut at 3× its start
                cap = min(cap, 3 * float(starts.max()))
        self.limits = (floor, cap)
        self._y_range = None
        self._set_ticks(floor, cap)
        self.box = (
            float(sweep.ws[0]),
            float(sweep.ws[-1]),
            float(sweep.bs[0]),
            float(sweep.bs[-1]),
        )
        for item in self.surface_plot.getPlotItem().items:
            if item not in self.current_items():
                # The heatmap and contours stay put while the slider moves: drawn once
                # into a pixmap at screen resolution, then copied on every repaint.
                for part in (item, *item.childItems()):
                    part.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def _set_ticks(self, low: float, high: float) -> None:
        axis = self.loss_plot.getAxis("left")
        ticks = self.axis.ticks(low, high)
        # Labels a line apart at least: symlog's 0 and ±1e−11 sit 0.3 apart and were drawn
        # over each other. 0 is kept first (the minimum), then the largest heights.
        line = QFontMetricsF(axis.style["tickFont"] or axis.font()).height() + 2
        gap = (high - low) * line / max(axis.size().height(), 1.0)
        kept: list[tuple[float, str]] = []
        for tick in sorted(ticks, key=lambda t: (t[0] != 0, -abs(t[0]))):
            if all(abs(tick[0] - other[0]) >= gap for other in kept):
                kept.append(tick)
        self._ticks_range = (low, high)
        axis.setTicks([sorted(kept)] if kept else None)

    def _fit_title(self) -> None:
        axis = self.loss_plot.getAxis("left")
        if not shiboken6.isValid(axis):
            return  # the pane is being torn down: its axis's last resize
        if self._ticks_range is not None:  # the chart's height changed: so did the room
            self._set_ticks(*self._ticks_range)
        room = axis.size().height() - 8
        metrics = QFontMetricsF(axis.label.font())
        forms = [self.axis.title, self.axis.short_title or self.axis.title]
        title = next((t for t in forms if metrics.horizontalAdvance(t) <= room), None)
        if title is None:
            title = metrics.elidedText(forms[-1], Qt.TextElideMode.ElideRight, max(room, 0))
        if axis.labelText != title:
            axis.setLabel(title)
        axis.setToolTip(self.axis.title)

    def current_items(self) -> list:
        """The items a slider tick changes (never cached)."""
        moving = [self.current]
        for outline, line, _ in self.items.values():
            moving += [outline, line]
        moving += list(self.symbols.values())
        for on_surface, _ in self.marks.values():
            moving.append(on_surface)
        return moving

    def loss_curve(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The (step, height) points of an optimizer's loss curve as drawn."""
        xs, ys = self.items[name][2].getData()
        return (np.empty(0), np.empty(0)) if xs is None else (xs, ys)

    def mark_texts(self, name: str) -> tuple[str | None, str | None]:
        """The "→ ∞ at step k" markers shown on the surface and on the loss chart."""
        return tuple(m.toPlainText() if m.isVisible() else None for m in self.marks[name])

    def path_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The (w, b) points drawn for an optimizer: the path cut to the surface's extent
        (a border point where it leaves, NaN between pieces)."""
        xs, ys = self.items[name][1].getData()
        return (np.empty(0), np.empty(0)) if xs is None else (xs, ys)


def _first_overflow(path: np.ndarray) -> int | None:
    bad = np.flatnonzero(~np.isfinite(path).all(axis=1))
    return int(bad[0]) if bad.size else None


def _inside_box(path: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return (
            (path[:, 0] >= box[0])
            & (path[:, 0] <= box[1])
            & (path[:, 1] >= box[2])
            & (path[:, 1] <= box[3])
        )


def _inside(w: float, b: float, box: tuple[float, float, float, float]) -> bool:
    return bool(box[0] <= w <= box[1] and box[2] <= b <= box[3])
