"""Plot backgrounds and axes in the light or the dark theme."""

from __future__ import annotations

import pyqtgraph as pg

LIGHT_PLOT = ("#ffffff", "#334155")  # background, axes and their text
DARK_PLOT = ("#1e1e1e", "#c8c8c8")


def style_plot(plot: pg.PlotWidget, dark: bool) -> None:
    """Give a plot the theme's background and axis colours (the data keeps its own)."""
    background, foreground = DARK_PLOT if dark else LIGHT_PLOT
    plot.setBackground(background)
    item = plot.getPlotItem()
    for name in ("left", "bottom", "right", "top"):
        axis = item.getAxis(name)
        axis.setPen(foreground)
        axis.setTextPen(foreground)
