"""How the loss-per-step chart maps torch's losses to heights: a log axis of loss − L(min)
while every value is above the minimum, a symmetric log axis (linear near 0) when some
loss reaches it exactly or falls below 0, a linear axis for a model's loss. The chart says
which in its title; the heights of inf and nan stay inf and nan (the view clips them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CAP_DECADES = 4  # the chart follows a rising loss up to 10⁴ × its start, then clips


@dataclass(frozen=True)
class LossAxis:
    """The loss chart's scale: which, what is subtracted first, and its title."""

    kind: str  # log | symlog | linear
    offset: float  # subtracted from every loss first (L at the known minimum, else 0)
    threshold: float  # symlog: linear within ±threshold
    title: str
    short_title: str = ""  # what a short chart's axis has room for (the title when empty)

    def height(self, loss: np.ndarray) -> np.ndarray:
        """Where each loss is drawn (inf and nan stay as they are)."""
        value = np.asarray(loss, dtype=float) - self.offset
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.kind == "log":
                return np.where(value > 0, np.log10(np.abs(value)), np.nan)
            if self.kind == "symlog":
                return np.sign(value) * np.log10(1 + np.abs(value) / self.threshold)
        return value

    def value(self, height: float) -> float:
        """The loss − offset drawn at `height` (the inverse of `height`)."""
        if self.kind == "log":
            return 10.0**height
        if self.kind == "symlog":
            return math.copysign(self.threshold * (10.0 ** abs(height) - 1), height)
        return height

    def ticks(self, low: float, high: float) -> list[tuple[float, str]]:
        """Tick heights and labels (the real loss − offset) between two heights: decades,
        or 1-2-5 steps when under two decades show, or evenly spaced values when the range
        is narrower still (lr 0.001's loss moves from 20 to 12.5: no decade in between)."""
        if self.kind == "linear" or not (math.isfinite(low) and math.isfinite(high)):
            return []
        ticks = self._decade_ticks(low, high)
        for more in (self._one_two_five, self._even_ticks):
            if sum(low <= at <= high for at, _ in ticks) >= 2:
                break
            ticks = more(low, high)
        return ticks

    def _one_two_five(self, low: float, high: float) -> list[tuple[float, str]]:
        ticks = []
        for at, _ in self._decade_ticks(low - 1, high + 1):
            value = self.value(at)
            for m in (1, 2, 5):
                tick = float(self.height(np.array(m * value + self.offset)))
                if low <= tick <= high:
                    ticks.append((tick, _number(m * value)))
        return ticks

    def _even_ticks(self, low: float, high: float) -> list[tuple[float, str]]:
        v0, v1 = self.value(low), self.value(high)
        span = v1 - v0
        if not (math.isfinite(span) and span > 0):
            return []
        step = 10.0 ** math.floor(math.log10(span / 4))
        for m in (1, 2, 5, 10):
            if span / (m * step) <= 6:
                step *= m
                break
        places = max(0, -math.floor(math.log10(step)))
        ticks = []
        for k in range(math.ceil(v0 / step), math.floor(v1 / step) + 1):
            value = k * step
            ticks.append(
                (float(self.height(np.array(value + self.offset))), _number(value, places))
            )
        return ticks

    def _decade_ticks(self, low: float, high: float) -> list[tuple[float, str]]:
        if self.kind == "log":
            first, last = math.floor(low), math.ceil(high)
            every = max(1, (last - first) // 8 + 1)
            return [(float(d), _decade(d)) for d in range(first, last + 1, every)]
        ticks = [(0.0, "0")]
        first = math.floor(math.log10(self.threshold))
        top = max(abs(low), abs(high))
        # Every decade's height in one numpy call: a slider tick may ask for ticks anew.
        powers = np.arange(first, 308)
        heights = self.height(10.0 ** powers.astype(float) + self.offset)
        kept = np.flatnonzero(heights <= top)
        every = max(1, len(kept) // 6 + 1)
        for i in kept[::every]:
            d, at = int(powers[i]), float(heights[i])
            if at <= high:
                ticks.append((at, _decade(d)))
            if -at >= low:
                ticks.append((-at, "−" + _decade(d)))
        return ticks

    def cap(self, start_loss: float) -> float:
        """The highest height the chart follows a rising loss to."""
        value = abs(start_loss - self.offset) * 10.0**CAP_DECADES
        return float(self.height(np.array(value + self.offset)))


def _number(value: float, places: int | None = None) -> str:
    text = f"{value:.{places}f}" if places is not None and abs(value) < 1e4 else f"{value:.3g}"
    return text.replace("e+0", "e").replace("e+", "e").replace("e-0", "e-").replace("-", "−")


def _decade(d: int) -> str:
    return f"{10.0**d:g}" if -3 <= d <= 3 else f"1e{d}".replace("-", "−")


def loss_axis(
    losses: np.ndarray,
    minimum_loss: float | None,
    linear: bool = False,
    start_loss: float | None = None,
) -> LossAxis:
    """The scale for these losses (every rate and optimizer of a sweep, so that it stays
    put while the slider moves); symlog's linear part is sized from the start's loss."""
    if linear:
        return LossAxis("linear", 0.0, 1.0, "loss")
    offset = float(minimum_loss) if minimum_loss is not None and math.isfinite(minimum_loss) else 0
    name = "loss" if offset == 0 else "loss − L(min)"
    value = np.asarray(losses, dtype=float).ravel() - offset
    value = value[np.isfinite(value)]
    if value.size == 0 or (value > 0).all():
        return LossAxis("log", offset, 1.0, f"{name} (log scale)")
    nonzero = np.abs(value[value != 0])
    # Twelve decades below the start (or the typical loss): a diverging rate's 1e48 must
    # not flatten everything else into the linear part.
    scale = abs(start_loss - offset) if start_loss is not None else None
    if not scale or not math.isfinite(scale):
        scale = float(np.median(nonzero)) if nonzero.size else 1.0
    threshold = max(float(nonzero.min()), scale * 1e-12) if nonzero.size else 1.0
    return LossAxis(
        "symlog",
        offset,
        threshold,
        # Said in a learner's words: "symlog" is matplotlib's name for it.
        f"{name} (log scale, linear within ±{_number(threshold)} to show 0)",
        f"{name} (log scale with 0)",
    )
