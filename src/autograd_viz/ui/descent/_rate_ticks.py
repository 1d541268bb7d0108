"""Tick marks under the learning-rate slider at the rates where descent changes behaviour."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QSlider, QStyle, QStyleOptionSlider, QWidget

if TYPE_CHECKING:
    from autograd_viz.core.descent.paths import Thresholds

TICK = 5  # pixels of tick line below the slider
ROWS = 3  # label rows at most
LOOKS = {
    "one step": QColor("#15803d"),
    "bounces": QColor("#b45309"),
    "diverges": QColor("#b91c1c"),
}
BAND = QColor(220, 38, 38, 45)


@dataclass(frozen=True)
class RateMark:
    """A threshold the slider marks: its learning rate and what happens there."""

    rate: float
    label: str


class RateTicks(QWidget):
    """Drawn under a log-scale QSlider whose positions index `rates`; follows its geometry."""

    def __init__(self, slider: QSlider, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.slider = slider
        self.rates: list[float] = []
        self.marks: list[RateMark] = []
        self.diverges_from: float | None = None  # the red band starts here
        font = QFont(self.font())
        font.setPointSizeF(max(6.5, font.pointSizeF() * 0.8))
        self.setFont(font)
        self._rows = 1
        self.setFixedHeight(self._height(1))

    def _height(self, rows: int) -> int:
        return TICK + 2 + math.ceil(rows * QFontMetricsF(self.font()).height())

    def set_thresholds(self, rates: list[float], thresholds: Thresholds | None) -> None:
        """Mark 1/λmax ("one step") and 2/λmax ("bounces"), and shade what diverges above."""
        self.rates = list(rates)
        self.marks, self.diverges_from = [], None
        tip = "No thresholds for this surface."
        if thresholds is not None:
            tip = thresholds.note
            low, high = self.rates[0], self.rates[-1]
            outside = []
            for rate, label in ((thresholds.one_step, "one step"), (thresholds.bounce, "bounces")):
                if rate is None:
                    continue
                if low <= rate <= high:
                    self.marks.append(RateMark(rate, label))
                else:
                    outside.append(f"{label} at lr = {rate:.3g}")
            if thresholds.bounce is not None and thresholds.bounce < high:
                self.diverges_from = max(thresholds.bounce, low)
            if outside:
                tip += f" Off the slider ({low:g} … {high:g}): {', '.join(outside)}."
        self.setToolTip(tip)
        self.slider.setToolTip(tip)
        self._relayout()
        self.update()

    # ---- geometry ----------------------------------------------------------------
    def x_of(self, rate: float) -> float:
        """Where the slider's handle centre sits for `rate`, in this widget's coordinates."""
        logs = [math.log(r) for r in self.rates]
        target = math.log(rate)
        index = float(len(logs) - 1)
        for i in range(len(logs) - 1):
            if logs[i] <= target <= logs[i + 1]:
                index = i + (target - logs[i]) / (logs[i + 1] - logs[i])
                break
        else:
            if target <= logs[0]:
                index = 0.0
        left, span = self._groove()
        fraction = index / max(1, self.slider.maximum() - self.slider.minimum())
        return left + fraction * span

    def _groove(self) -> tuple[float, float]:
        option = QStyleOptionSlider()
        self.slider.initStyleOption(option)
        style = self.slider.style()
        groove = style.subControlRect(
            QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderGroove, self.slider
        )
        handle = style.subControlRect(
            QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, self.slider
        )
        window = self.window()
        origin = self.mapFrom(window, self.slider.mapTo(window, QPoint(0, 0))).x()
        left = origin + groove.left() + handle.width() / 2
        return left, max(1.0, groove.width() - handle.width())

    def label_rects(self) -> list[tuple[str, QRectF]]:
        """Each label and where it is drawn: no two overlap, all inside the widget."""
        metrics = QFontMetricsF(self.font())
        line = metrics.height()
        items = [(self.x_of(m.rate), m.label) for m in self.marks]
        if self.diverges_from is not None:
            start = self.x_of(self.diverges_from)
            end = self.x_of(self.rates[-1])
            items.append(((start + end) / 2, "diverges"))
        # Labels are centred on their tick, or end or start there; try each preference
        # and keep the layout with the fewest rows (ticks close together share one).
        layouts = [
            self._place(items, metrics, line, prefer)
            for prefer in ((0, 1, 2), (1, 0, 2), (2, 0, 1))
        ]
        return min(
            layouts,
            key=lambda placed: (-len(placed), max((r.bottom() for _, r in placed), default=0)),
        )

    def _place(
        self, items: list[tuple[float, str]], metrics: QFontMetricsF, line: float, prefer: tuple
    ) -> list[tuple[str, QRectF]]:
        placed: list[tuple[str, QRectF]] = []
        width = float(self.width())
        for x, text in items:
            w = metrics.horizontalAdvance(text) + 4
            lefts = (x - w / 2, x - w + 2, x - 2)  # centred, ending at x, starting at x
            spot = None
            # The band's label stays under the band when it can.
            order = (0, 2, 1) if text == "diverges" else prefer
            for row in range(ROWS):
                top = TICK + 1 + row * line
                for choice in order:
                    left = min(max(0.0, lefts[choice]), max(0.0, width - w))
                    rect = QRectF(left, top, w, line)
                    if not any(rect.intersects(r) for _, r in placed):
                        spot = rect
                        break
                if spot is not None:
                    break
            if spot is not None:  # nowhere free: the tooltip still says it
                placed.append((text, spot))
        return placed

    def _relayout(self) -> None:
        rows = 1
        line = QFontMetricsF(self.font()).height()
        for _, rect in self.label_rects():
            rows = max(rows, round((rect.top() - TICK - 1) / line) + 1)
        if rows != self._rows:
            self._rows = rows
            self.setFixedHeight(self._height(rows))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._relayout()

    # ---- drawing -----------------------------------------------------------------
    def paintEvent(self, _event) -> None:
        if not self.rates:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.diverges_from is not None:
            start = self.x_of(self.diverges_from)
            end = self.x_of(self.rates[-1])
            painter.fillRect(QRectF(start, 0, end - start, TICK), BAND)
        for mark in self.marks:
            x = self.x_of(mark.rate)
            painter.setPen(QPen(LOOKS[mark.label], 2))
            painter.drawLine(QPoint(round(x), 0), QPoint(round(x), TICK))
        for text, rect in self.label_rects():
            painter.setPen(LOOKS[text])
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.end()
