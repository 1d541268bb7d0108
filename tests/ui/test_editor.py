"""Tests for the code editor and its Pygments-based Python highlighter."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import (
    QColor,
    QHelpEvent,
    QTextBlock,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QApplication, QToolTip

from autograd_viz.ui.editor.editor import CodeEditor
from autograd_viz.ui.editor.highlighter import DARK_PALETTE, LIGHT_PALETTE

SAMPLE = 'x = 1\ns = """first\nmiddle line\nlast"""\ny = 2\n'


@pytest.fixture
def editor(qtbot) -> CodeEditor:
    widget = CodeEditor()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    return widget


def fmt_at(block: QTextBlock, column: int) -> QTextCharFormat | None:
    """The highlighter's format covering a column of a block, if any."""
    ranges = block.layout().formats()  # keep the list alive while copying a format out
    for rng in ranges:
        if rng.start <= column < rng.start + rng.length:
            return QTextCharFormat(rng.format)
    return None


def fg(block: QTextBlock, column: int) -> str | None:
    fmt = fmt_at(block, column)
    return None if fmt is None else fmt.foreground().color().name()


def line(editor: CodeEditor, number: int) -> QTextBlock:
    return editor.document().findBlockByNumber(number - 1)


def selections_on(editor: CodeEditor, number: int) -> list[QColor]:
    return [
        sel.format.background().color()
        for sel in editor.extraSelections()
        if sel.cursor.blockNumber() == number - 1
        and sel.format.boolProperty(QTextFormat.Property.FullWidthSelection)
    ]


# ---------------------------------------------------------------- highlighter
def test_keyword_coloured_differently_from_name(editor: CodeEditor) -> None:
    editor.set_text("def foo(x):\n    return x\n")
    first, second = line(editor, 1), line(editor, 2)
    assert fg(first, 0) == LIGHT_PALETTE["keyword"]
    assert fg(first, 4) == LIGHT_PALETTE["function"]
    name_colour = fg(second, len("    return "))  # the plain name "x"
    assert name_colour != fg(first, 0)
    assert fg(second, 4) == LIGHT_PALETTE["keyword"]


def test_other_token_categories(editor: CodeEditor) -> None:
    editor.set_text("@dec\nclass A:\n    n = len('s') + 2.5  # note\n")
    body = line(editor, 3)
    text = body.text()
    assert fg(line(editor, 1), 1) == LIGHT_PALETTE["decorator"]
    assert fg(line(editor, 2), 6) == LIGHT_PALETTE["class"]
    assert fg(body, text.index("len")) == LIGHT_PALETTE["builtin"]
    assert fg(body, text.index("'s'")) == LIGHT_PALETTE["string"]
    assert fg(body, text.index("+")) == LIGHT_PALETTE["operator"]
    assert fg(body, text.index("2.5")) == LIGHT_PALETTE["number"]
    assert fg(body, text.index("# note")) == LIGHT_PALETTE["comment"]
    assert fmt_at(body, text.index("# note")).fontItalic()


def test_triple_quoted_string_spans_blocks(editor: CodeEditor) -> None:
    editor.set_text(SAMPLE)
    middle = line(editor, 3)
    assert middle.text() == "middle line"
    for column in range(len(middle.text())):
        assert fg(middle, column) == LIGHT_PALETTE["string"]
    assert fg(line(editor, 4), 0) == LIGHT_PALETTE["string"]
    # Highlighting is back to normal after the closing quotes.
    after = line(editor, 5)
    assert fg(after, 0) != LIGHT_PALETTE["string"]
    assert fg(after, 4) == LIGHT_PALETTE["number"]


def test_editing_opening_quotes_recolours_following_lines(editor: CodeEditor) -> None:
    editor.set_text(SAMPLE)
    opening = line(editor, 2)
    cursor = QTextCursor(opening)
    cursor.setPosition(opening.position() + len("s = "))
    cursor.setPosition(opening.position() + len('s = """'), QTextCursor.MoveMode.KeepAnchor)
    cursor.insertText("1 #")
    assert fg(line(editor, 3), 0) != LIGHT_PALETTE["string"]
    cursor.setPosition(line(editor, 2).position() + len("s = "))
    cursor.setPosition(line(editor, 2).position() + len("s = 1 #"), QTextCursor.MoveMode.KeepAnchor)
    cursor.insertText("'''")
    assert fg(line(editor, 3), 0) == LIGHT_PALETTE["string"]


def test_single_quoted_string_does_not_leak_to_next_line(editor: CodeEditor) -> None:
    editor.set_text('s = "unterminated\ndef f(): pass\n')
    assert fg(line(editor, 2), 0) == LIGHT_PALETTE["keyword"]


def test_multiline_fstring_expression(editor: CodeEditor) -> None:
    editor.set_text('x = f"""a {b +\n  1} tail"""\nimport os\n')
    second = line(editor, 2)
    assert fg(second, second.text().index("1")) == LIGHT_PALETTE["number"]
    assert fg(second, second.text().index("tail")) == LIGHT_PALETTE["string"]
    assert fg(line(editor, 3), 0) == LIGHT_PALETTE["keyword"]


def test_positions_account_for_astral_characters(editor: CodeEditor) -> None:
    editor.set_text('a = "🙂"  # c')
    block = line(editor, 1)
    text = block.text()
    # Qt counts the emoji as two UTF-16 units, so "#" sits one further right than in Python.
    hash_at = len(text[: text.index("#")].encode("utf-16-le")) // 2
    assert hash_at == text.index("#") + 1
    assert fg(block, hash_at) == LIGHT_PALETTE["comment"]
    assert fg(block, hash_at - 1) is None
    assert fg(block, hash_at - 3) == LIGHT_PALETTE["string"]  # the closing quote


def test_dark_palette(editor: CodeEditor) -> None:
    editor.set_text("def f():\n    pass\n")
    editor.set_dark(True)
    assert editor.highlighter.dark
    assert fg(line(editor, 1), 0) == DARK_PALETTE["keyword"]
    editor.set_dark(False)
    assert fg(line(editor, 1), 0) == LIGHT_PALETTE["keyword"]


def test_large_file_is_highlighted(editor: CodeEditor) -> None:
    body = "".join(f"def f{i}(x):\n    return x * {i}  # c\n" for i in range(1000))
    editor.set_text(body)
    assert editor.blockCount() >= 2000
    assert fg(line(editor, 2000), 4) == LIGHT_PALETTE["keyword"]


# ---------------------------------------------------------------- keys
def test_tab_inserts_four_spaces(editor: CodeEditor, qtbot) -> None:
    editor.set_text("x")
    editor.moveCursor(QTextCursor.MoveOperation.Start)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.text() == "    x"


def test_tab_and_shift_tab_on_selection(editor: CodeEditor, qtbot) -> None:
    editor.set_text("a\nb\nc")
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.text() == "    a\n    b\n    c"
    assert editor.textCursor().hasSelection()
    qtbot.keyClick(editor, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert editor.text() == "a\nb\nc"


def test_shift_tab_dedents_current_line(editor: CodeEditor, qtbot) -> None:
    editor.set_text("      x")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClick(editor, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert editor.text() == "  x"
    assert editor.textCursor().positionInBlock() == 3


def test_enter_after_colon_indents(editor: CodeEditor, qtbot) -> None:
    editor.set_text("def f():")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.text() == "def f():\n    "
    qtbot.keyClicks(editor, "x = 1")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.text() == "def f():\n    x = 1\n    "


def test_ctrl_enter_requests_run_without_newline(editor: CodeEditor, qtbot) -> None:
    editor.set_text("x = 1")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    combos = [
        (Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier),
        (Qt.Key.Key_Enter, Qt.KeyboardModifier.ControlModifier),
        (Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier),
        (Qt.Key.Key_Enter, Qt.KeyboardModifier.ShiftModifier),
    ]
    for key, modifier in combos:
        with qtbot.waitSignal(editor.run_requested, timeout=1000):
            qtbot.keyClick(editor, key, modifier)
    assert editor.text() == "x = 1"


def test_comment_toggle_round_trips(editor: CodeEditor, qtbot) -> None:
    original = "x = 1\n    y = 2\n\nz = 3"
    editor.set_text(original)
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert editor.text() == "# x = 1\n#     y = 2\n\n# z = 3"
    qtbot.keyClick(editor, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert editor.text() == original


def test_comment_toggle_current_line_keeps_indent(editor: CodeEditor, qtbot) -> None:
    editor.set_text("if a:\n    b()")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClick(editor, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert editor.text() == "if a:\n    # b()"
    editor.toggle_comment()
    assert editor.text() == "if a:\n    b()"


# ---------------------------------------------------------------- marks
def test_mark_error_sets_line_selection_and_tooltip(editor: CodeEditor) -> None:
    editor.set_text("a = 1\nb = a / 0\nc = 3\n")
    editor.mark_error(2, "ZeroDivisionError: division by zero")
    assert editor.error_line == 2
    assert editor.error_message == "ZeroDivisionError: division by zero"
    colours = selections_on(editor, 2)
    assert colours and colours[-1].red() > colours[-1].blue()  # a red/pink background
    assert editor.tooltip_for_line(2) == "ZeroDivisionError: division by zero"
    assert editor.tooltip_for_line(1) == ""
    # The gutter maps a y position on line 2 back to line 2 for its tooltip.
    rect = editor.blockBoundingGeometry(line(editor, 2)).translated(editor.contentOffset())
    assert editor.line_at_y(int(rect.center().y())) == 2


def test_gutter_tooltip_shows_error_message(editor: CodeEditor, qtbot) -> None:
    editor.show()
    qtbot.waitExposed(editor)
    editor.set_text("a = 1\nb = a / 0\nc = 3\n")
    editor.mark_error(2, "ZeroDivisionError: division by zero")
    gutter = editor._gutter
    rect = editor.blockBoundingGeometry(line(editor, 2)).translated(editor.contentOffset())
    point = QPoint(gutter.width() // 2, int(rect.center().y()))
    QApplication.sendEvent(
        gutter, QHelpEvent(QEvent.Type.ToolTip, point, gutter.mapToGlobal(point))
    )
    assert QToolTip.isVisible()
    assert QToolTip.text() == "ZeroDivisionError: division by zero"
    QToolTip.hideText()


def test_rehighlight_keeps_error_but_editing_clears_it(editor: CodeEditor, qtbot) -> None:
    editor.set_text("a = 1\nb = a / 0\n")
    editor.mark_error(2, "boom")
    editor.highlighter.rehighlight()
    editor.set_dark(True)
    assert editor.error_line == 2
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor, "x")
    assert editor.error_line is None
    assert editor.error_message == ""
    error_colour = QColor("#ffd7d7")
    assert all(c != error_colour for sel in range(1, 3) for c in selections_on(editor, sel))


def test_clear_error_and_set_text(editor: CodeEditor) -> None:
    editor.set_text("a\nb\n")
    editor.mark_error(1, "x")
    editor.clear_error()
    assert editor.error_line is None
    editor.mark_error(99, "past the end")
    assert editor.error_line == editor.blockCount()
    editor.set_text("new")
    assert editor.error_line is None


def test_highlight_lines(editor: CodeEditor) -> None:
    editor.set_text("a\nb\nc\nd\n")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    editor.highlight_lines({1, 3, 42})
    assert editor.highlighted_lines == {1, 3}
    assert selections_on(editor, 1) and selections_on(editor, 3)
    assert not selections_on(editor, 2)
    editor.clear_highlight()
    assert not selections_on(editor, 1) and not selections_on(editor, 3)


def test_goto_line_moves_and_scrolls(editor: CodeEditor, qtbot) -> None:
    editor.show()
    qtbot.waitExposed(editor)
    editor.set_text("\n".join(f"x{i} = {i}" for i in range(200)))
    editor.goto_line(150)
    assert editor.textCursor().blockNumber() == 149
    assert editor.textCursor().positionInBlock() == 0
    assert editor.viewport().rect().contains(editor.cursorRect().center())
    editor.goto_line(10_000)
    assert editor.textCursor().blockNumber() == 199


def test_gutter_reserves_space(editor: CodeEditor) -> None:
    editor.set_text("\n".join(["x"] * 12_000))
    assert editor.viewportMargins().left() == editor.line_number_area_width()
    digits_width = editor.fontMetrics().horizontalAdvance("9") * 5
    assert editor.line_number_area_width() > digits_width
    assert editor.line_at_y(-5) is None
    first = editor.blockBoundingGeometry(line(editor, 1)).translated(editor.contentOffset())
    assert editor.line_at_y(int(first.center().y())) == 1
    assert editor.line_at_y(10**6) is None
