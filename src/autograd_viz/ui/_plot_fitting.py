"""Small plots that stay readable when the window is small: a title in the fullest form that
fits, and tick labels a line apart."""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFont, QFontMetricsF

TITLE_MARGIN = 12  # px kept free on each side of a title


class FittedTitle(QObject):
    """A plot's title in the fullest of its forms that fits the plot's width, elided when
    none does; the whole title is the plot's tooltip.

    pyqtgraph makes a title label as wide as its text, and the plot item at least that
    wide: a long title widened the plot past its widget, which cut the title at both ends
    and hid the right part of the data (a 20-step chart showed steps 1 to 14)."""

    def __init__(self, plot: pg.PlotWidget) -> None:
        super().__init__(plot)
        self.plot = plot
        self.forms: tuple[str, ...] = ()
        self.shown = ""
        plot.installEventFilter(self)

    def set(self, *forms: str) -> None:
        """Show the first of `forms` (the fullest) that fits; later ones are shorter."""
        self.forms = tuple(f for f in forms if f)
        self.plot.setToolTip(self.forms[0] if self.forms else "")
        self._fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.plot and event.type() == QEvent.Type.Resize:
            self._fit()
        return False

    def _fit(self) -> None:
        if not self.forms:
            return
        metrics = QFontMetricsF(_title_font(self.plot.getPlotItem().titleLabel))
        # The title sits over the data's column only, beside the vertical axes' columns.
        item = self.plot.getPlotItem()
        beside = sum(
            item.getAxis(side).width()
            for side in ("left", "right")
            if item.getAxis(side).isVisible()
        )
        room = max(self.plot.width() - beside - 2 * TITLE_MARGIN, 0)
        title = next((f for f in self.forms if metrics.horizontalAdvance(f) <= room), None)
        if title is None:
            title = metrics.elidedText(self.forms[-1], Qt.TextElideMode.ElideRight, room)
        if title != self.shown:
            self.shown = title
            self.plot.getPlotItem().setTitle(html.escape(title))


def _title_font(label: pg.LabelItem) -> QFont:
    """The font a title is drawn in: its item's, at the size its HTML asks for (a plot's
    title is 11pt in a 9pt item)."""
    font = QFont(label.item.font())
    size = str(label.opts.get("size") or "")
    if size.endswith("pt"):
        font.setPointSizeF(float(size[:-2]))
    elif size.endswith("px"):
        font.setPixelSize(round(float(size[:-2])))
    return font


class SpacedAxis(pg.AxisItem):
    """A vertical axis whose tick labels are a line apart at least, the coarser levels kept
    first. pyqtgraph limits how much of an axis its labels fill, not whether two overlap:
    a log axis 50 px high drew 4, 0.6, 0.4 and 0.2 over each other."""

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        levels = super().tickValues(minVal, maxVal, size)
        if size <= 0 or maxVal <= minVal:
            return levels
        line = QFontMetricsF(self.style["tickFont"] or self.font()).height() + 2
        gap = (maxVal - minVal) * line / size
        kept: list[float] = []
        spaced = []
        for spacing, values in levels:
            fits = []
            for value in values:
                if all(abs(value - other) >= gap for other in kept):
                    fits.append(value)
                    kept.append(value)
            spaced.append((spacing, fits))
        return spaced
