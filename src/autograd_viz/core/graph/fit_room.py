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
# A folded box's title must begin to read at the zoom that fits the picture: a cell (a
# layer) is CELL_PX wide at the room's zoom (the canvas's least spacing that still names
# tensors), a title's letter CHAR_PX, a card pads its text by CARD_PAD_PX, and the title's
# longest word (broken once past LONG_WORD letters, as the card breaks it) must show at
# least READ_LETTERS letters (a middle card's `iteratio|ns 2–29` reads; `it…` does not).
CELL_PX, CHAR_PX, CARD_PAD_PX, LONG_WORD, READ_LETTERS = 18.0, 8.5, 12.0, 10, 4


def overflow(
    placed: Placed,
    room: tuple[float, float],
    box_text: Mapping[str, Sequence[str]] | None = None,
) -> tuple[float, float]:
    """How many times as wide and as tall as `room` (layers, rows) a placed picture is,
    its frames and boxes included: both at most 1 when it fits. With the boxes' lines
    (`box_text`), as much wider as the box that most needs it must grow, fitted across the
    room, for its title to begin to read: a loop inside each pass of a training loop drew
    its passes as 36 px cards reading `it…` in a picture that fitted the room."""
    rects = (*placed.frames.values(), *placed.boxes.values())
    xs = [x for x, _ in placed.positions.values()] + [x for r in rects for x in r[::2]]
    ys = [y for _, y in placed.positions.values()] + [y for r in rects for y in r[1::2]]
    if not xs:
        return 0.0, 0.0
    wide, tall = (max(xs) - min(xs)) / room[0], (max(ys) - min(ys)) / room[1]
    if box_text:
        # At the room's zoom, across: the picture's width is `wide` of the room's.
        squeeze = max(
            (
                _title_px(box_text[box][0]) / (max(rect[2] - rect[0], 0.1) * CELL_PX)
                for box, rect in placed.boxes.items()
                if box_text.get(box)
            ),
            default=0.0,
        )
        wide = max(wide, squeeze * wide)
    return wide, tall


def _title_px(title: str) -> float:
    """How wide a card must be for `title` to begin to read, wrapped as the card wraps it."""
    name, mark, count = title.rpartition("#")  # the card drops a call count first
    words = (name if mark and name and count.isdigit() else title).split() or [""]
    letters = max(len(w) if len(w) <= LONG_WORD else math.ceil(len(w) / 2) for w in words)
    return min(letters, READ_LETTERS) * CHAR_PX + CARD_PAD_PX


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
