"""The canvas's legend: one sample per kind of node, wrapped to the canvas's width."""

from __future__ import annotations

import pyqtgraph as pg
import pyqtgraph.functions as fn
from PySide6.QtCore import QRectF

from autograd_viz.ui.graph._graph_style import LEGEND_ORDER, STYLES, CanvasColours

LEGEND_MARGIN_PX = 16  # the legend's offset from the left edge, and as much on the right


def make_legend(parent: pg.ViewBox, colours: CanvasColours) -> pg.LegendItem:
    """A legend in the bottom left of `parent`, one entry per kind, in one row."""
    legend = pg.LegendItem(
        offset=(8, -6),  # bottom left: it never covers the top of the graph
        colCount=len(LEGEND_ORDER),
        labelTextColor=colours.legend_text,
        brush=pg.mkBrush(*colours.legend_fill),
        pen=pg.mkPen(colours.legend_border),
    )
    legend.setParentItem(parent)
    for kind in LEGEND_ORDER:
        style = STYLES[kind]
        sample = pg.ScatterPlotItem(
            symbol=style.symbol,
            size=12,
            brush=style.fill,
            pen=pg.mkPen(style.outline, width=1.5),
        )
        legend.addItem(sample, style.legend)
    return legend


def legend_in_layout(legend: pg.LegendItem, box: pg.ViewBox) -> list[QRectF]:
    """Where the legend covers the graph in `box`, in layout units (none while hidden):
    no label is placed there."""
    if not legend.isVisible():
        return []
    within_box = legend.mapRectToParent(legend.boundingRect())
    return [fn.invertQTransform(box.childTransform()).mapRect(within_box)]


def recolour_legend(legend: pg.LegendItem, colours: CanvasColours) -> None:
    """Give the legend the light or dark canvas's colours."""
    legend.setLabelTextColor(colours.legend_text)
    for _sample, label in legend.items:
        label.setText(label.text)  # pyqtgraph applies a new colour on the next setText
    legend.setBrush(pg.mkBrush(*colours.legend_fill))
    legend.setPen(pg.mkPen(colours.legend_border))


def wrap_legend(legend: pg.LegendItem, width_px: float) -> None:
    """As many entries per row as `width_px` shows whole."""
    room = width_px - 2 * LEGEND_MARGIN_PX
    widths = [sample.width() + label.width() + 6 for sample, label in legend.items]
    columns = legend_columns(widths, room)
    if columns != legend.columnCount:
        legend.setColumnCount(columns)


def legend_columns(widths: list[float], room: float) -> int:
    """The most legend entries per row that fit in `room` pixels. The legend is a grid:
    each column is as wide as its widest entry, so a row of short entries does not make
    room for a long one under them."""
    columns = len(widths)
    while columns > 1 and room < legend_width(widths, columns):
        columns -= 1
    return max(1, columns)


def legend_width(widths: list[float], columns: int) -> float:
    """How wide a legend of entries this wide is, laid out `columns` to a row."""
    return sum(max(widths[c::columns]) for c in range(min(columns, len(widths))))
