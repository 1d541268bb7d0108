"""The text a folded box's card shows, fitted to its size on screen.

A card is a column of lines: its title, then what it is, its shapes, its parameters. Each
line is first given one row, cut with "…" where it is wider than the card. Rows the card
has left over then go to the cut lines, in order: such a line is wrapped over as many rows
as it needs (at spaces, or inside a word too long for a row), when they are there. A tall
narrow card (a decoder layer's sublayers, side by side in a wide window) read "Multihea…",
"[2, 5, 32]…" over two-thirds of empty card; it now reads every line whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

MAX_PIECES = 2  # rows a word may be broken over
LONG_WORD = 10  # letters a word needs before it is broken where it does not read as two
# A title that fits no row whole but fits at this share of its font's size is drawn that
# much smaller rather than cut: a 40 px `head` card read `he…` beside `emb` and `lstm`.
MIN_TITLE_SCALE = 0.8


def card_rows(
    lines: Sequence[str],
    metrics: tuple[QFontMetricsF, QFontMetricsF],
    width: float,
    height: float,
) -> list[tuple[int, str]]:
    """The rows to draw, each as (index of the line it comes from, text): the title's
    first row always, then as many as `height` holds, each no wider than `width`, except
    a title row up to 1 / MIN_TITLE_SCALE as wide, which the painter draws smaller
    (`title_scale`)."""
    title_metrics, detail_metrics = metrics
    heights = [(title_metrics if i == 0 else detail_metrics).height() for i in range(len(lines))]
    shown = 0  # how many lines get a row at all
    used = 0.0
    for i, row_height in enumerate(heights):
        if i > 0 and used + row_height > height + 1:
            break
        used += row_height
        shown += 1
    rows: list[list[str]] = []
    for i in range(shown):
        line_metrics = title_metrics if i == 0 else detail_metrics
        pieces = list(_wrapped(line_metrics, lines[i], round(width)))
        extra = (len(pieces) - 1) * heights[i]
        if len(pieces) > 1 and used + extra <= height + 1:  # (none: it would not read)
            rows.append(pieces)
            used += extra
        else:
            text = _shorter_title(line_metrics, lines[i], width) if i == 0 else lines[i]
            squeezed = i == 0 and line_metrics.horizontalAdvance(text) * MIN_TITLE_SCALE <= width
            rows.append([text if squeezed else _elided(line_metrics, text, width)])
    return [(i, piece) for i, pieces in enumerate(rows) for piece in pieces]


def title_scale(metrics: QFontMetricsF, text: str, width: float) -> float:
    """How much smaller than its font a title row must be drawn to fit `width` (1: as it is)."""
    wide = metrics.horizontalAdvance(text)
    return 1.0 if wide <= width else max(MIN_TITLE_SCALE, width / wide)


def _shorter_title(metrics: QFontMetricsF, title: str, width: float) -> str:
    """The title without its call count (`model#2` → `model`) where the whole title fits
    neither one row nor two: the loop's iteration frame around the card says which pass it
    is. In a 1000 px window a training loop's cards read `mod…` and `loss_…`."""
    name = without_call_count(title)
    return name if name is not None and metrics.horizontalAdvance(title) > width else title


def without_call_count(title: str) -> str | None:
    """A module call's title without its call count (`model#2` → `model`); None when it
    has none."""
    name, mark, count = title.rpartition("#")
    return name if mark and name and count.isdigit() else None


def _elided(metrics: QFontMetricsF, text: str, width: float) -> str:
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(width, 8.0))


_CACHE: dict[tuple[str, int, str], tuple[str, ...]] = {}
_CACHE_SIZE = 4096


def _wrapped(metrics: QFontMetricsF, text: str, width: int) -> tuple[str, ...]:
    """`text` in rows no wider than `width` pixels: broken at spaces, and a word too long
    for a row broken inside it once (a module's name, `multihead_|attn`); none when a word
    would take more rows than that. Painted every frame, so kept by font, width and text."""
    key = (_font_key(metrics), width, text)
    found = _CACHE.get(key)
    if found is not None:
        return found
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    advance = metrics.horizontalAdvance
    rows: list[str] = []
    current = ""
    for word in text.split(" "):
        joined = f"{current} {word}" if current else word
        if advance(joined) <= width:
            current = joined
            continue
        if current:
            rows.append(current)
        pieces = 1
        while len(word) > 1 and advance(word) > width:
            cut = _cut(advance, word, width)
            if pieces == MAX_PIECES or cut is None:  # `Lay|er|Nor|m`, `Line|ar`: cut instead
                _CACHE[key] = ()
                return ()
            rows.append(word[:cut])
            word = word[cut:]
            pieces += 1
        current = word
    if current:
        rows.append(current)
    result = _CACHE[key] = tuple(rows)
    return result


def _cut(advance: Callable[[str], float], word: str, width: int) -> int | None:
    """How many of `word`'s first characters go on a row of `width`: up to the last place
    it reads as two words (`multihead_|attn`, `layers.|0`, `head|#1`; in a long word,
    `Transformer|EncoderLayer`) when that keeps over half the row; a long word anywhere
    else; a short one nowhere else (None: `Line|ar` and `Re|LU` read worse than `Lin…`)."""
    low, high = 1, len(word)
    while low < high:
        middle = (low + high + 1) // 2
        if advance(word[:middle]) <= width:
            low = middle
        else:
            high = middle - 1
    cuts = range(min(low, len(word) - 1), max(1, low // 2), -1)
    for cut in cuts:
        if word[cut - 1] in "_.-/" or word[cut] == "#":
            return cut
    if len(word) < LONG_WORD:
        return None
    for cut in cuts:
        if word[cut - 1].islower() and word[cut].isupper():
            return cut
    return low


def _font_key(metrics: QFontMetricsF) -> str:
    """Tells the card's two fonts apart: their line height or their letters' widths."""
    sample = metrics.horizontalAdvance("Mw_0")
    return f"{metrics.height():.2f}/{metrics.averageCharWidth():.3f}/{sample:.2f}"
