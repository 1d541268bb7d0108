"""How a placed picture measures against the room the graph pane can name, and which of
several foldings of it to open with (graph_model's first look)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeVar

from autograd_viz.core.graph.fold_layout import Placed

# When no level of folding fits the room: a level within this factor of the best any level
# reaches, on each side, counts as fitting.
NEAR_BEST = 1.15

Layout = TypeVar("Layout")
# A folded box's title must read at the room's zoom: a cell (a layer) is this wide there
# (the canvas's least spacing that still names tensors), a title's letter this wide, and
# a card pads its text by this much. The title wraps at spaces and breaks a word longer
# than LONG_WORD once, as the card does.
CELL_PX, CHAR_PX, CARD_PAD_PX, LONG_WORD = 18.0, 8.5, 12.0, 10


def overflow(
    placed: Placed,
    room: tuple[float, float],
    box_text: Mapping[str, Sequence[str]] | None = None,
) -> tuple[float, float]:
    """How many times as wide and as tall as `room` (layers, rows) a placed picture is,
    its frames and boxes included: both at most 1 when it fits. With the boxes' lines
    (`box_text`), as wide again as the box that most needs it must grow for its title to
    read: a loop inside each pass of a training loop drew its passes as 36 px cards
    reading `it…` in a picture that fitted the room."""
    rects = (*placed.frames.values(), *placed.boxes.values())
    xs = [x for x, _ in placed.positions.values()] + [x for r in rects for x in r[::2]]
    ys = [y for _, y in placed.positions.values()] + [y for r in rects for y in r[1::2]]
    if not xs:
        return 0.0, 0.0
    wide = (max(xs) - min(xs)) / room[0]
    if box_text:
        wide *= max(
            (
                _title_px(box_text[box][0]) / (max(rect[2] - rect[0], 0.1) * CELL_PX)
                for box, rect in placed.boxes.items()
                if box_text.get(box)
            ),
            default=1.0,
        )
    return wide, (max(ys) - min(ys)) / room[1]


def _title_px(title: str) -> float:
    """How wide a card must be for `title` to read, wrapped as the card wraps it."""
    name, mark, count = title.rpartition("#")  # the card drops a call count first
    words = (name if mark and name and count.isdigit() else title).split() or [""]
    letters = max(len(w) if len(w) <= LONG_WORD else math.ceil(len(w) / 2) for w in words)
    return letters * CHAR_PX + CARD_PAD_PX


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
