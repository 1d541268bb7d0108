"""Tick marks under the learning-rate slider at the rates where descent changes behaviour."""

from __future__ import annotations

import itertools
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
MIN_CHARS = 4  # an elided label keeps at least this many letters, or the labels stagger
LOOKS = {
    "one step": QColor("#15803d"),
    "bounces": QColor("#b45309"),
    "diverges": QColor("#b91c1c"),
    "band": QColor(220, 38, 38, 45),
}
# On a dark window the light theme's dark red is barely readable: lighter tones there.
DARK_LOOKS = {
    "one step": QColor("#4ade80"),
    "bounces": QColor("#fbbf24"),
    "diverges": QColor("#f87171"),
    "band": QColor(248, 113, 113, 70),
}


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
        self._looks = LOOKS
        self._layout_key: tuple | None = None
        self._layout: list[tuple[str, str, QRectF]] = []
        self.setFixedHeight(self._height(1))

    def set_dark(self, dark: bool) -> None:
        """Colours readable on the window's theme."""
        self._looks = DARK_LOOKS if dark else LOOKS
        self.update()

    def colour(self, label: str) -> QColor:
        """The colour a label ("one step", "bounces", "diverges") is drawn in."""
        return self._looks[label]

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
        return [(label, rect) for label, _, rect in self.shown_labels()]

    def shown_labels(self) -> list[tuple[str, str, QRectF]]:
        """Each label, its text as drawn and its rect: each centred on, ending at or starting
        at its tick (the band for "diverges"), whole in one row, else whole in two, else
        elided to no fewer than MIN_CHARS letters in one row; never overlapping."""
        key = (self.width(), self._groove(), tuple(self.marks), self.diverges_from)
        if self._layout_key != key:
            self._layout_key, self._layout = key, self._lay_out()
        return self._layout

    def _anchors(self) -> list[tuple[str, float, float]]:
        # (label, from x, to x): a tick is a point, the diverging band a stretch.
        spans = [(m.label, self.x_of(m.rate), self.x_of(m.rate)) for m in self.marks]
        if self.diverges_from is not None:
            spans.append(("diverges", self.x_of(self.diverges_from), self.x_of(self.rates[-1])))
        return sorted(spans, key=lambda span: span[1])

    def _lay_out(self) -> list[tuple[str, str, QRectF]]:
        # Whole labels in one row; else whole labels in two rows (a tick's label under its
        # neighbour's, never three deep); else one row elided; else the plain stagger.
        metrics = QFontMetricsF(self.font())
        line = metrics.height()
        anchors = self._anchors()
        full = [a[0] for a in anchors]
        for rows in ((0,) * len(anchors), None):
            found = self._best(anchors, full, metrics, line, rows)
            if found is not None:
                return found
        texts = [  # each label's elided forms, longest first
            [label[:k].rstrip() + "…" for k in range(len(label) - 1, MIN_CHARS - 1, -1)]
            for label in full
        ]
        for cut in range(1, max((len(t) for t in texts), default=0) + 1):
            for choice in itertools.product(*(range(min(cut, len(t))) for t in texts)):
                if max(choice, default=0) != cut - 1:
                    continue  # tried at a smaller cut
                shown = [texts[i][c] for i, c in enumerate(choice)]
                found = self._best(anchors, shown, metrics, line, (0,) * len(anchors))
                if found is not None:
                    return found
        return self._staggered([((a[1] + a[2]) / 2, a[0]) for a in anchors], metrics, line)

    def _best(
        self, anchors: list, shown: list[str], metrics: QFontMetricsF, line: float, rows
    ) -> list[tuple[str, str, QRectF]] | None:
        # The layout of these texts that moves the labels least off their anchors.
        width = float(self.width())
        sizes = [metrics.horizontalAdvance(t) + 4 for t in shown]
        row_choices = [rows] if rows is not None else itertools.product((0, 1), repeat=len(shown))
        best, best_moved = None, math.inf
        for row_of in row_choices:
            for aligns in itertools.product(range(3), repeat=len(anchors)):
                rects = self._row(anchors, sizes, aligns, row_of, width, line)
                if rects is None:
                    continue
                moved = sum(
                    abs(r.center().x() - (a[1] + a[2]) / 2)
                    for r, a in zip(rects, anchors, strict=True)
                )
                if moved < best_moved:
                    best, best_moved = rects, moved
        if best is None:
            return None
        return [(a[0], t, r) for a, t, r in zip(anchors, shown, best, strict=True)]

    @staticmethod
    def _row(
        anchors: list, sizes: list[float], aligns: tuple, rows: tuple, width: float, line: float
    ) -> list[QRectF] | None:
        # Centred on, ending at, or starting at the anchor; inside the widget; touching the
        # anchor; none overlapping another of its row. None when that cannot be.
        rects: list[QRectF] = []
        for (_, start, end), size, align, row in zip(anchors, sizes, aligns, rows, strict=True):
            left = ((start + end) / 2 - size / 2, end - size + 2, start - 2)[align]
            left = min(max(0.0, left), width - size)
            if left < 0 or left > end + 1 or left + size < start - 1:
                return None
            rect = QRectF(left, TICK + 1 + row * line, size, line)
            if any(rect.intersects(r) for r in rects):
                return None
            rects.append(rect)
        return rects

    def _staggered(
        self, items: list[tuple[float, str]], metrics: QFontMetricsF, line: float
    ) -> list[tuple[str, str, QRectF]]:
        # Too crowded to elide: whole labels, each in the first row where it is free.
        placed: list[tuple[str, str, QRectF]] = []
        width = float(self.width())
        for x, label in items:
            w = metrics.horizontalAdvance(label) + 4
            left = min(max(0.0, x - w / 2), max(0.0, width - w))
            for row in range(ROWS):
                rect = QRectF(left, TICK + 1 + row * line, w, line)
                if not any(rect.intersects(r) for _, _, r in placed):
                    placed.append((label, label, rect))
                    break
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
            painter.fillRect(QRectF(start, 0, end - start, TICK), self._looks["band"])
        for mark in self.marks:
            x = self.x_of(mark.rate)
            painter.setPen(QPen(self._looks[mark.label], 2))
            painter.drawLine(QPoint(round(x), 0), QPoint(round(x), TICK))
        for label, shown, rect in self.shown_labels():
            painter.setPen(self._looks[label])
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, shown)
        painter.end()
