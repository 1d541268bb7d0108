"""The inspector's picture of a tensor: a heatmap with a colour scale, or bars."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QWidget

# Diverging: negative blue, zero white, positive red.
HEATMAP_COLOURS = pg.colormap.get("CET-D1")
MAX_TICKS = 12  # more index labels than this run into each other on a 240-px pane


def index_ticks(count: int) -> list[tuple[float, str]]:
    """Integer ticks 0…count-1 for an axis of rows or columns, thinned to stay legible."""
    step = max(1, int(np.ceil(count / MAX_TICKS)))
    return [(float(i), str(i)) for i in range(0, count, step)]


def range_colours(low: float, high: float) -> pg.ColorMap:
    """The part of the diverging map that [low, high] covers, zero staying white.

    The colour bar then reads the tensor's own min…max, while a value keeps the colour it
    would have on a scale symmetric about zero (a positive-only gradient is all reds).
    """
    limit = max(abs(low), abs(high)) or 1.0
    stops = np.linspace(0.0, 1.0, 64)
    values = low + stops * (high - low)
    colours = HEATMAP_COLOURS.map((values / limit + 1.0) / 2.0, mode="byte")
    return pg.ColorMap(pos=stops, color=colours)


class ValuePlot(pg.PlotWidget):
    """A matrix as a heatmap (row 0 on top, integer row/column ticks, a colour bar with the
    tensor's min…max), a vector as bars (integer ticks)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="#ffffff")
        self.setMinimumHeight(140)
        self.setMenuEnabled(False)
        self.hideButtons()
        self.invertY(True)  # row 0 of a matrix on top, as it prints
        self.setMouseEnabled(x=False, y=False)  # a fixed picture: indices stay aligned
        self.image: pg.ImageItem | None = None
        self.colour_bar = pg.ColorBarItem(
            values=(0.0, 1.0),
            width=12,
            colorMap=HEATMAP_COLOURS,
            interactive=False,
        )
        # Inserted once, beside the right axis; shown only with a heatmap.
        self.getPlotItem().layout.addItem(self.colour_bar, 2, 5)
        self.colour_bar.setVisible(False)

    def show_values(self, array: np.ndarray, title: str, low: float, high: float) -> None:
        """Draw `array` (1-D: bars; more: rows × the rest flattened); low/high: its range."""
        plot = self.getPlotItem()
        plot.clear()
        self.image = None
        plot.setTitle(title, size="9pt")
        if array.ndim == 1:
            self.colour_bar.setVisible(False)
            plot.addItem(
                pg.BarGraphItem(x=np.arange(array.size), height=array, width=0.8, brush="#a78bfa")
            )
            plot.getAxis("bottom").setTicks([index_ticks(array.size)])
            plot.getAxis("left").setTicks(None)  # values: pyqtgraph's own ticks
            self.invertY(False)
            plot.enableAutoRange()
            return
        matrix = array.reshape(array.shape[0], -1)
        rows, columns = matrix.shape
        self.invertY(True)
        image = pg.ImageItem(matrix.T)  # pyqtgraph indexes images [x, y]: [column, row]
        image.setRect(QRectF(-0.5, -0.5, columns, rows))  # cell (r, c) centred on (c, r)
        plot.addItem(image)
        if high <= low:  # a constant tensor: any level pair around it paints one colour
            low, high = low - 0.5, high + 0.5
        self.colour_bar.setImageItem(image)
        self.colour_bar.setColorMap(range_colours(low, high))
        self.colour_bar.setLevels((low, high))
        self.colour_bar.setVisible(True)
        plot.getAxis("bottom").setTicks([index_ticks(columns)])
        plot.getAxis("left").setTicks([index_ticks(rows)])
        plot.setRange(xRange=(-0.5, columns - 0.5), yRange=(-0.5, rows - 0.5), padding=0)
        self.image = image

    def tick_labels(self, axis: str) -> list[str]:
        """The labels an axis ("bottom", "left") was given, as drawn."""
        ticks = self.getPlotItem().getAxis(axis)._tickLevels
        return [label for level in ticks or () for _pos, label in level]
