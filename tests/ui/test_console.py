"""Tests for the output console."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFont, QFontInfo, QTextCharFormat, QTextCursor

from autograd_viz.ui.editor.console import MAX_CHUNK_CHARS, MAX_LINES, ConsolePane

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "<editor>", line 12, in <module>\n'
    "    y = f(x)\n"
    '  File "/usr/lib/python3.11/thing.py", line 7, in f\n'
    "ZeroDivisionError: division by zero\n"
)


@pytest.fixture
def console(qtbot) -> ConsolePane:
    widget = ConsolePane()
    qtbot.addWidget(widget)
    widget.resize(700, 300)
    return widget


def format_of(console: ConsolePane, needle: str) -> QTextCharFormat:
    """The character format of the first character of needle in the console."""
    position = console.plain_text().index(needle)
    cursor = QTextCursor(console.document())
    cursor.setPosition(position + 1)  # charFormat() reports the character before the cursor
    return cursor.charFormat()


def test_read_only_and_monospace(console: ConsolePane) -> None:
    assert console.isReadOnly()
    assert QFontInfo(console.font()).fixedPitch()


def test_chunks_are_joined_in_place(console: ConsolePane) -> None:
    console.append_stdout("ab")
    console.append_stdout("c\nd")
    assert console.plain_text() == "abc\nd"
    console.append_stderr("e\n")
    assert console.plain_text() == "abc\nde\n"


def test_stream_formats(console: ConsolePane) -> None:
    console.append_stdout("plain\n")
    console.append_stderr("oops\n")
    console.append_info("Kernel restarted\n")
    console.append_error("Kernel died\n")
    stderr = format_of(console, "oops")
    assert stderr.foreground().color().name() == "#c62828"
    assert format_of(console, "plain").foreground().color() != stderr.foreground().color()
    info = format_of(console, "Kernel restarted")
    assert info.fontItalic()
    assert info.foreground().color().name() == "#7a7a7a"
    error = format_of(console, "Kernel died")
    assert error.fontWeight() == QFont.Weight.Bold
    assert error.foreground().color().name() == "#c62828"


def test_huge_chunk_is_truncated_with_note(console: ConsolePane) -> None:
    console.append_stdout("x" * 200_000)
    text = console.plain_text()
    assert text.count("x") == MAX_CHUNK_CHARS
    assert text.endswith("… output truncated (100000 characters not shown)\n")
    # Later output starts on a fresh line after the note.
    console.append_stdout("next")
    assert console.plain_text().endswith("not shown)\nnext")


def test_line_count_is_capped(console: ConsolePane) -> None:
    console.append_stdout("".join(f"line {i}\n" for i in range(MAX_LINES + 1000)))
    assert console.document().blockCount() <= MAX_LINES
    assert console.plain_text().rstrip().endswith(f"line {MAX_LINES + 999}")


def test_carriage_return_rewrites_line(console: ConsolePane) -> None:
    console.append_stdout("start\n 10%\r")
    console.append_stdout(" 50%\r 100%")
    assert console.plain_text() == "start\n 100%"
    console.append_stdout("\r")
    console.append_stdout("\ndone\r\n")  # "\r" + "\n" split over chunks is one line break
    assert console.plain_text() == "start\n 100%\ndone\n"


def test_ansi_codes_are_stripped(console: ConsolePane) -> None:
    console.append_stderr("\x1b[0;31mValueError\x1b[0m: bad\n")
    assert console.plain_text() == "ValueError: bad\n"


def test_clear_console(console: ConsolePane) -> None:
    console.append_stdout("something\n")
    console.clear_console()
    assert console.plain_text() == ""


def test_autoscroll_unless_user_scrolled_up(console: ConsolePane, qtbot) -> None:
    console.show()
    qtbot.waitExposed(console)
    console.append_stdout("".join(f"{i}\n" for i in range(300)))
    bar = console.verticalScrollBar()
    assert bar.maximum() > 0
    assert bar.value() == bar.maximum()
    bar.setValue(0)
    console.append_stdout("".join(f"more {i}\n" for i in range(50)))
    assert bar.value() == 0
    bar.setValue(bar.maximum())
    console.append_stdout("".join(f"again {i}\n" for i in range(50)))
    assert bar.value() == bar.maximum()


def test_traceback_line_parsing(console: ConsolePane) -> None:
    assert console._line_number_in_text('  File "<editor>", line 12, in <module>') == 12
    assert console._line_number_in_text('  File "<editor>", line 3') == 3  # SyntaxError form
    assert console._line_number_in_text('  File "/x/y.py", line 7, in f') is None
    assert console._line_number_in_text("    y = f(x)") is None
    console.set_source_name("<cell>")
    assert console.source_name == "<cell>"
    assert console._line_number_in_text('  File "<cell>", line 5, in <module>') == 5
    assert console._line_number_in_text('  File "<editor>", line 12, in <module>') is None


def _point_on(console: ConsolePane, needle: str) -> QPoint:
    cursor = QTextCursor(console.document())
    cursor.setPosition(console.plain_text().index(needle) + len(needle) // 2)
    return console.cursorRect(cursor).center()


def test_line_at_position(console: ConsolePane, qtbot) -> None:
    console.show()
    qtbot.waitExposed(console)
    console.append_stderr(TRACEBACK)
    assert console.line_at_position(_point_on(console, 'File "<editor>"')) == 12
    assert console.line_at_position(_point_on(console, "thing.py")) is None
    assert console.line_at_position(_point_on(console, "y = f(x)")) is None
    assert console.line_at_position(QPoint(5, console.viewport().height() - 2)) is None


def test_clicking_traceback_line_emits_line_clicked(console: ConsolePane, qtbot) -> None:
    console.show()
    qtbot.waitExposed(console)
    console.append_stderr(TRACEBACK)
    point = _point_on(console, 'File "<editor>"')
    with qtbot.waitSignal(console.line_clicked, timeout=1000) as blocker:
        qtbot.mouseClick(console.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert blocker.args == [12]


def test_clicking_other_lines_emits_nothing(console: ConsolePane, qtbot) -> None:
    console.show()
    qtbot.waitExposed(console)
    console.append_stderr(TRACEBACK)
    with qtbot.assertNotEmitted(console.line_clicked):
        for needle in ("thing.py", "y = f(x)", "ZeroDivisionError"):
            point = _point_on(console, needle)
            qtbot.mouseClick(console.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_app_messages_start_on_their_own_line(qtbot) -> None:
    console = ConsolePane()
    qtbot.addWidget(console)
    console.append_stdout("half a line")
    console.append_info("▶ Running")
    console.append_stdout("next\n")
    assert console.plain_text() == "half a line\n▶ Running\nnext\n"


def test_total_size_is_capped_even_with_long_lines(console: ConsolePane, monkeypatch) -> None:
    from autograd_viz.ui.editor import console as console_module

    monkeypatch.setattr(console_module, "MAX_TOTAL_CHARS", 5_000)
    for i in range(40):
        console.append_stdout(f"{i:02d}" + "y" * 998 + "\n")  # long lines, few blocks
    text = console.plain_text()
    assert len(text) <= 5_000
    assert text.startswith(tuple(f"{i:02d}y" for i in range(40)))  # whole lines dropped
    assert text.endswith("39" + "y" * 998 + "\n")
    console.append_info("note")
    assert console.plain_text().endswith("y\nnote\n")
