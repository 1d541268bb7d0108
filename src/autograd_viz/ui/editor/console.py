"""The output console: streamed stdout/stderr of the user's code plus app messages."""

from __future__ import annotations

import re

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QMouseEvent,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QPlainTextEdit, QWidget

MAX_LINES = 5_000
MAX_CHUNK_CHARS = 100_000
# Long lines make few blocks, so the line cap alone does not bound the text: this does.
MAX_TOTAL_CHARS = 1_000_000

_STDERR_COLOR = "#c62828"
_INFO_COLOR = "#7a7a7a"

# Tracebacks from a terminal-minded kernel may carry colour codes; they would show as junk.
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
# A traceback frame line, e.g. '  File "<editor>", line 12, in <module>'.
_FRAME_LINE = re.compile(r'^\s*File "(?P<name>[^"]+)", line (?P<line>\d+)')


class ConsolePane(QPlainTextEdit):
    """A read-only, monospace, size-capped output pane that links traceback lines to code."""

    line_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source_name = "<editor>"
        self._pending_cr = False
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setMaximumBlockCount(MAX_LINES)
        self.setPlaceholderText("Output: what your code prints, its errors and the kernel's news")
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.viewport().setMouseTracking(True)

        self._stdout_format = QTextCharFormat()
        self._stderr_format = QTextCharFormat()
        self._stderr_format.setForeground(QColor(_STDERR_COLOR))
        self._info_format = QTextCharFormat()
        self._info_format.setForeground(QColor(_INFO_COLOR))
        self._info_format.setFontItalic(True)
        self._error_format = QTextCharFormat()
        self._error_format.setForeground(QColor(_STDERR_COLOR))
        self._error_format.setFontWeight(QFont.Weight.Bold)

    # ----------------------------------------------------------------- output
    def append_stdout(self, text: str) -> None:
        """Append a chunk of the program's standard output."""
        self._append(text, self._stdout_format)

    def append_stderr(self, text: str) -> None:
        """Append a chunk of the program's standard error, in red."""
        self._append(text, self._stderr_format)

    def append_info(self, text: str) -> None:
        """Append an app message (e.g. "Kernel restarted") in grey italics, on its own line."""
        self._append(self._own_line(text), self._info_format)

    def append_error(self, text: str) -> None:
        """Append an app-level error message in bold red, on its own line."""
        self._append(self._own_line(text), self._error_format)

    def _own_line(self, text: str) -> str:
        # App messages never continue the program's half-written line.
        text = text if text.endswith("\n") else text + "\n"
        document = self.document()
        count = document.characterCount()  # counts the final block's separator
        last = document.characterAt(count - 2) if count > 1 else "\u2029"
        return text if last == "\u2029" else "\n" + text  # U+2029: a block ends there

    def clear_console(self) -> None:
        """Remove all output."""
        self._pending_cr = False
        self.clear()

    def plain_text(self) -> str:
        """Return the console's text."""
        return self.toPlainText()

    def _append(self, text: str, fmt: QTextCharFormat) -> None:
        if not text:
            return
        text = _ANSI_ESCAPE.sub("", text)
        note = ""
        if len(text) > MAX_CHUNK_CHARS:
            hidden = len(text) - MAX_CHUNK_CHARS
            text = text[:MAX_CHUNK_CHARS]
            lead = "" if text.endswith("\n") else "\n"
            note = f"{lead}… output truncated ({hidden} characters not shown)\n"

        scrollbar = self.verticalScrollBar()
        # Follow the output only if the user was already at the bottom; otherwise they
        # are reading something further up and must not be yanked away from it.
        follow = scrollbar.value() >= scrollbar.maximum() - 2

        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        self._insert(cursor, text, fmt)
        if note:
            self._insert(cursor, note, self._info_format)
        cursor.endEditBlock()
        self._trim()

        if follow:
            scrollbar.setValue(scrollbar.maximum())

    def _trim(self) -> None:
        """Drop the oldest output past MAX_TOTAL_CHARS (a quarter more, so it runs rarely)."""
        document = self.document()
        excess = document.characterCount() - MAX_TOTAL_CHARS
        if excess <= 0:
            return
        target = excess + MAX_TOTAL_CHARS // 4
        start_of_line = document.findBlock(target).position()  # cut whole lines if it can
        end = start_of_line if start_of_line >= excess else target
        cursor = QTextCursor(document)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def _insert(self, cursor: QTextCursor, text: str, fmt: QTextCharFormat) -> None:
        # A lone "\r" (progress bars) rewrites the current line, as a terminal would. A chunk
        # may end between "\r" and "\n", so a trailing "\r" waits for the next chunk.
        if self._pending_cr:
            text = "\r" + text
            self._pending_cr = False
        if text.endswith("\r"):
            self._pending_cr = True
            text = text[:-1]
        parts = text.replace("\r\n", "\n").split("\r")
        for index, part in enumerate(parts):
            if index:
                cursor.movePosition(
                    QTextCursor.MoveOperation.StartOfBlock, QTextCursor.MoveMode.KeepAnchor
                )
                cursor.removeSelectedText()
            if part:
                cursor.insertText(part, fmt)

    # ----------------------------------------------------------------- traceback links
    @property
    def source_name(self) -> str:
        """The file name whose traceback lines are clickable (default "<editor>")."""
        return self._source_name

    def set_source_name(self, name: str) -> None:
        """Set the file name whose traceback lines link back to the editor."""
        self._source_name = name

    def _line_number_in_text(self, text: str) -> int | None:
        """Return N for a traceback line 'File "<source>", line N…', else None."""
        match = _FRAME_LINE.match(text)
        if match is None or match.group("name") != self._source_name:
            return None
        return int(match.group("line"))

    def line_at_position(self, pos: QPoint) -> int | None:
        """Return the source line a traceback line at viewport position pos refers to."""
        cursor = self.cursorForPosition(pos)
        block = cursor.block()
        if not block.isValid():
            return None
        # cursorForPosition snaps to the nearest line, so check pos really is on it.
        rect = self.blockBoundingGeometry(block).translated(self.contentOffset())
        if not rect.top() <= pos.y() < rect.bottom():
            return None
        return self._line_number_in_text(block.text())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """Show a pointing-hand cursor over clickable traceback lines."""
        super().mouseMoveEvent(event)
        linked = self.line_at_position(event.position().toPoint()) is not None
        shape = Qt.CursorShape.PointingHandCursor if linked else Qt.CursorShape.IBeamCursor
        self.viewport().setCursor(shape)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """Emit line_clicked for a plain click (not a drag-selection) on a traceback line."""
        super().mouseReleaseEvent(event)
        if event.button() != Qt.MouseButton.LeftButton or self.textCursor().hasSelection():
            return
        line = self.line_at_position(event.position().toPoint())
        if line is not None:
            self.line_clicked.emit(line)
