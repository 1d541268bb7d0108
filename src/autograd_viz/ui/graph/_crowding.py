"""Markers drawn smaller where a column's rows, or a row's neighbours, come closer on
screen than the markers are big.

Markers keep their size in pixels at every zoom (pyqtgraph's pxMode). Fitted into a small
window, a column of ten weights came 20 px apart with 26 px circles: one smear of purple,
no circle telling where one weight ends; a mixture of experts' rows of ops came 15 px
apart with 18 px squares, each half under the next. Past that zoom each marker is drawn
at the share of its size that leaves a gap, down to SMALLEST of it.
"""

from __future__ import annotations

import math

import numpy as np

GAP_PX = 3.0  # what is left between two markers of one column
SMALLEST = 0.45  # a marker is never drawn smaller than this share of its size
STEP = 0.05  # shares are rounded down to this: a zoom redraws the markers now and then


def column_pitch(xs: np.ndarray, ys: np.ndarray) -> float | None:
    """The least height (layout units) between two nodes of one column; None when no two
    nodes share a column."""
    if len(xs) < 2:
        return None
    order = np.lexsort((ys, np.round(xs, 6)))
    x, y = np.round(xs[order], 6), ys[order]
    same = x[1:] == x[:-1]
    if not same.any():
        return None
    gaps = np.diff(y)[same]
    gaps = gaps[gaps > 1e-9]
    return float(gaps.min()) if len(gaps) else None


def crowd_share(pitch: float | None, px_per_unit: float, tallest_px: float) -> float:
    """The share of their size markers are drawn at when a column's rows are `pitch` units
    apart and a unit is `px_per_unit` pixels tall: 1 while the tallest marker fits."""
    if pitch is None or px_per_unit <= 0 or tallest_px <= 0:
        return 1.0
    share = pitch * px_per_unit / (tallest_px + GAP_PX)
    if share >= 1:
        return 1.0
    return max(SMALLEST, math.floor(share / STEP) * STEP)


def row_room(xs: np.ndarray, ys: np.ndarray, sizes: np.ndarray) -> float | None:
    """Layout units per pixel of marker size the tightest row allows: the least, over two
    neighbours of one row, of their distance over what they need side by side (half of
    each one's size in pixels and GAP_PX). None when no two share a row."""
    if len(xs) < 2:
        return None
    order = np.lexsort((xs, np.round(ys, 6)))
    x, y, size = xs[order], np.round(ys[order], 6), sizes[order]
    pair = y[1:] == y[:-1]
    gaps = np.diff(x)[pair]
    need = ((size[1:] + size[:-1]) / 2 + GAP_PX)[pair]
    keep = gaps > 1e-9
    return float((gaps[keep] / need[keep]).min()) if keep.any() else None


def room_share(room: float | None, px_per_unit: float) -> float:
    """The share of their size markers are drawn at for a `row_room` at this zoom."""
    if room is None or px_per_unit <= 0:
        return 1.0
    share = room * px_per_unit
    if share >= 1:
        return 1.0
    return max(SMALLEST, math.floor(share / STEP) * STEP)
