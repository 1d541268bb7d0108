"""A folded box's card shows its lines whole where it has the rows for them, wrapped to its
width, and cut with "…" only where it has not."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF

from autograd_viz.ui.graph._card_text import MIN_TITLE_SCALE, card_rows, title_scale

LINES = ["multihead_attn", "MultiheadAttention", "[2, 5, 32] → [2, 5, 32]", "4.2k params"]


@pytest.fixture
def metrics(qapp) -> tuple[QFontMetricsF, QFontMetricsF]:
    title = QFont()
    title.setBold(True)
    return QFontMetricsF(title), QFontMetricsF(QFont())


def _rows_fit(rows, metrics, width: float) -> None:
    for i, text in rows:
        assert metrics[0 if i == 0 else 1].horizontalAdvance(text) <= width + 0.5, text


def test_a_tall_narrow_card_wraps_every_line_and_cuts_none(metrics) -> None:
    width = metrics[1].horizontalAdvance("MultiheadA") + 1  # "Multihea…" before
    rows = card_rows(LINES, metrics, width, 40 * metrics[1].height())
    _rows_fit(rows, metrics, width)
    assert not any(text.endswith("…") for _, text in rows)
    for i, line in enumerate(LINES):  # each line, whole, in order, over its rows
        pieces = [text for j, text in rows if j == i]
        assert len(pieces) >= 2
        assert "".join(pieces).replace(" ", "") == line.replace(" ", "")
    assert [i for i, _ in rows] == sorted(i for i, _ in rows)


def test_a_card_with_a_row_a_line_cuts_each_line_and_wraps_none(metrics) -> None:
    width = metrics[1].horizontalAdvance("Multihea") + 1
    height = metrics[0].height() + 3 * metrics[1].height()
    rows = card_rows(LINES, metrics, width, height)
    assert [i for i, _ in rows] == [0, 1, 2, 3]
    assert all(text.endswith("…") for _, text in rows[:3])
    _rows_fit(rows, metrics, width)


def test_spare_rows_go_to_cut_lines_within_the_cards_height(metrics) -> None:
    """Two rows to spare: some lines wrap whole, the rest stay cut, every line keeps a row
    and all of them fit the card."""
    width = metrics[1].horizontalAdvance("MultiheadA") + 1
    height = metrics[0].height() + 5 * metrics[1].height()
    rows = card_rows(LINES, metrics, width, height)
    _rows_fit(rows, metrics, width)
    used = sum(metrics[0 if i == 0 else 1].height() for i, _ in rows)
    assert used <= height + 1
    assert sorted({i for i, _ in rows}) == [0, 1, 2, 3]
    assert len(rows) > len(LINES)  # the spare rows were used
    assert any(text.endswith("…") for _, text in rows)  # not enough for every line


def test_the_title_is_drawn_in_a_card_too_small_for_anything(metrics) -> None:
    rows = card_rows(LINES, metrics, 30.0, 2.0)
    assert [i for i, _ in rows] == [0] and rows[0][1].endswith("…")


def test_a_long_name_breaks_where_it_reads_as_two_words(metrics) -> None:
    title = "TransformerEncoderLayer ×4"
    width = metrics[0].horizontalAdvance("TransformerEnco") + 1  # more than "Transformer"
    rows = card_rows([title, "layers.0 … layers.3"], metrics, width, 20 * metrics[1].height())
    pieces = [text for i, text in rows if i == 0]
    assert pieces[0] == "Transformer" and pieces[1].startswith("EncoderLayer")


def test_a_word_that_would_take_three_rows_is_cut_instead(metrics) -> None:
    """In a card a few letters wide, `LayerNorm` broke as `Lay|er|Nor|m`."""
    width = metrics[1].horizontalAdvance("Lay") + 1
    rows = card_rows(["norm3", "LayerNorm"], metrics, width, 40 * metrics[1].height())
    assert [text for i, text in rows if i == 1] == [
        metrics[1].elidedText("LayerNorm", Qt.TextElideMode.ElideRight, width)
    ]


def test_a_short_word_is_cut_not_broken_but_a_name_breaks_at_its_hash(metrics) -> None:
    """A GAN's D.0#1 card in a narrow window read `Line|ar` and `Re|LU`."""
    width = metrics[1].horizontalAdvance("Line") + 1
    rows = card_rows(["D.0#1", "Linear", "ReLU"], metrics, width, 40 * metrics[1].height())
    assert [t for i, t in rows if i == 1] == [
        metrics[1].elidedText("Linear", Qt.TextElideMode.ElideRight, width)
    ]
    if metrics[0].horizontalAdvance("D.0#1") > width:  # the title breaks where it reads
        assert [t for i, t in rows if i == 0] == ["D.0", "#1"]


def test_a_title_with_no_row_to_spare_drops_its_call_count_before_it_is_cut(metrics) -> None:
    """A training loop's cards in a 1000 px window read `mod…`: `model#1` in one row where
    only `model` fits. The iteration frame around the card says which pass it is."""
    width = metrics[0].horizontalAdvance("model") + 1
    one_row = metrics[0].height()
    rows = card_rows(["model#1", "Sequential"], metrics, width, one_row)
    assert rows[0] == (0, "model")
    # With a row to spare it wraps whole, as before; a title with no count is cut.
    assert [t for i, t in card_rows(["model#1"], metrics, width, 3 * one_row) if i == 0] == [
        "model",
        "#1",
    ]
    assert card_rows(["modelling"], metrics, width, one_row)[0][1].endswith("…")


def test_a_title_a_little_too_wide_is_drawn_smaller_not_cut(metrics) -> None:
    """An LSTM model's three cards read `emb`, `lstm` and `he…`: `head` was a few pixels
    wider than its card. A title that fits at MIN_TITLE_SCALE of its size is drawn so."""
    width = metrics[0].horizontalAdvance("head") * 0.9
    one_row = metrics[0].height()
    rows = card_rows(["head#1", "Linear"], metrics, width, one_row)
    assert rows[0] == (0, "head")
    scale = title_scale(metrics[0], "head", width)
    assert MIN_TITLE_SCALE <= scale < 1.0
    assert metrics[0].horizontalAdvance("head") * scale <= width + 0.01
    assert title_scale(metrics[0], "head", width * 2) == 1.0
    # Much too wide, it is cut as before.
    narrow = metrics[0].horizontalAdvance("head") * 0.6
    assert card_rows(["head#1"], metrics, narrow, one_row)[0][1].endswith("…")
