"""How a placed picture measures against the room the graph pane can name, and which of
several foldings of it to open with (graph_model's first look)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from autograd_viz.core.graph.fold_layout import Placed

# When no level of folding fits the room: a level within this factor of the best any level
# reaches, on each side, counts as fitting.
NEAR_BEST = 1.15

Layout = TypeVar("Layout")


def overflow(placed: Placed, room: tuple[float, float]) -> tuple[float, float]:
    """How many times as wide and as tall as `room` (layers, rows) a placed picture is,
    its frames and boxes included: both at most 1 when it fits."""
    rects = (*placed.frames.values(), *placed.boxes.values())
    xs = [x for x, _ in placed.positions.values()] + [x for r in rects for x in r[::2]]
    ys = [y for _, y in placed.positions.values()] + [y for r in rects for y in r[1::2]]
    if not xs:
        return 0.0, 0.0
    return (max(xs) - min(xs)) / room[0], (max(ys) - min(ys)) / room[1]


def nearest_fit(tried: Sequence[tuple[Layout, tuple[float, float]]]) -> Layout:
    """Of layouts tried from the most open to the most folded, each with its `overflow`:
    the first that comes within NEAR_BEST of the best any reaches on each side (a column
    of ten weights is as tall folded or not, and folding everything for one row less hid
    the model), else the one that overflows least."""
    near = [max(1.0, NEAR_BEST * min(fit[side] for _, fit in tried)) for side in (0, 1)]
    return next(
        (layout for layout, fit in tried if fit[0] <= near[0] and fit[1] <= near[1]),
        min(tried, key=lambda pair: max(pair[1]))[0],
    )
