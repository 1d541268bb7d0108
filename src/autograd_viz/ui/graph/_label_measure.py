"""How much room a label takes and has: text widths and elisions per font (remembered
across paints), the room beside a mark on its row, an op's short name, and a label moved
into its frame (the label painting's measurements)."""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF


def _room_beside(points: dict[str, QPointF], half: dict[str, float]) -> dict[str, float]:
    """For each point, the half width its label may take before it runs into the label of
    the next point on its row (whose own half width is `half`), with a small gap; at least
    half the distance between them."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for key, p in points.items():
        rows.setdefault(round(p.y()), []).append((p.x(), key))
    room: dict[str, float] = {}
    for members in rows.values():
        members.sort()
        for i, (x, key) in enumerate(members):
            room[key] = math.inf
            for j in (i - 1, i + 1):
                if 0 <= j < len(members):
                    other_x, other = members[j]
                    gap = abs(other_x - x)
                    # What the neighbour's full label leaves, and never less than half
                    # the gap (the neighbour shortens its own past that half).
                    room[key] = min(room[key], max(gap - half[other] - 4, gap / 2 - 2))
    return room


def short_op_name(name: str) -> str:
    """MulBackward0 → Mul, AccumulateGrad → Acc: for labels when the zoom leaves little room."""
    if name == "AccumulateGrad":
        return "Acc"
    return name.rstrip("0123456789").removesuffix("Backward") or name


_ELIDE = Qt.TextElideMode.ElideRight  # enum members looked up once (each lookup is slow)


class _Measure:
    """Text widths and elisions per font, remembered across paints: a frame of playback
    asks for the same names hundreds of times (measuring them was half its time)."""

    def __init__(self) -> None:
        self._metrics: dict[int, QFontMetricsF] = {}
        self._widths: dict[tuple[int, str], float] = {}
        self._elided: dict[tuple[int, str, float], str] = {}

    def metrics(self, font) -> QFontMetricsF:
        m = self._metrics.get(id(font))
        if m is None:
            m = self._metrics[id(font)] = QFontMetricsF(font)
        return m

    def width(self, font, text: str) -> float:
        key = (id(font), text)
        w = self._widths.get(key)
        if w is None:
            if len(self._widths) > 100_000:  # values change every run: keep it bounded
                self._widths.clear()
            w = self._widths[key] = self.metrics(font).horizontalAdvance(text)
        return w

    def elided(self, font, text: str, width: float) -> str:
        key = (id(font), text, width)
        e = self._elided.get(key)
        if e is None:
            if len(self._elided) > 20_000:
                self._elided.clear()
            e = self._elided[key] = self.metrics(font).elidedText(text, _ELIDE, width)
        return e


def _keep_inside(rect: QRectF, frame: QRectF) -> None:
    """Move `rect` along its row into `frame` (2 px in from its border) when it hangs over
    a side by less than half its width and fits; else leave it where it is."""
    left, right = frame.left() + 2, frame.right() - 2
    if rect.width() > right - left:
        return
    shift = left - rect.left() if rect.left() < left else min(0.0, right - rect.right())
    if abs(shift) < rect.width() / 2:
        rect.translate(shift, 0)
