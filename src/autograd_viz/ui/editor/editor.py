"""The code editor: Python highlighting, a line-number gutter, error and highlight marks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from PySide6.QtCore import QEvent, QPoint, QRect, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QHelpEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QTextBlock,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from autograd_viz.ui.editor._line_editing import INDENT, LineEditing, key_action
from autograd_viz.ui.editor.highlighter import PythonHighlighter

ZOOM_RANGE = (6.0, 48.0)  # font sizes in points the zoom keys stay between

# role: (light, dark). Dark values follow VS Code's Dark+, to match the highlighter.
_COLORS: dict[str, tuple[str, str]] = {
    "base": ("#ffffff", "#1e1e1e"),
    "text": ("#1e1e1e", "#d4d4d4"),
    "selection": ("#add6ff", "#264f78"),
    "current_line": ("#f2f6fc", "#282828"),
    "highlight": ("#fff3b0", "#4b4620"),
    "caller": ("#e3f1e6", "#213a2a"),  # the backward() call of a highlighted node: paler
    "caller_mark": ("#4a8a5c", "#7cc48f"),
    "error": ("#ffd7d7", "#5a1d1d"),
    "gutter": ("#f3f3f3", "#252526"),
    "gutter_text": ("#9a9a9a", "#6e7681"),
    "gutter_current": ("#3a3a3a", "#c6c6c6"),
    "marker": ("#e0301e", "#f14c4c"),
}


def _theme(dark: bool) -> dict[str, str]:
    """The editor colours of the light or dark theme by role."""
    return {role: pair[dark] for role, pair in _COLORS.items()}


class _LineNumberArea(QWidget):
    """The gutter beside the editor; the editor does its painting and tooltips."""

    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def paintEvent(self, event: QPaintEvent) -> None:
        """Let the editor paint line numbers, which needs its block geometry."""
        self._editor._paint_line_numbers(event)

    def event(self, event: QEvent) -> bool:
        """Show the error message when hovering the marked line's number."""
        if isinstance(event, QHelpEvent) and event.type() == QEvent.Type.ToolTip:
            self._editor._show_line_tooltip(event)
            return True
        return super().event(event)


class CodeEditor(LineEditing, QPlainTextEdit):
    """A plain-text Python editor with a gutter, error marks and soft line highlights."""

    run_requested = Signal()

    def __init__(self, parent: QWidget | None = None, *, dark: bool = False) -> None:
        super().__init__(parent)
        self._error_line: int | None = None
        self._error_message = ""
        self._error_revision = -1
        self._highlighted: set[int] = set()
        self._caller_line: int | None = None
        self._colors = _theme(dark)

        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._base_point_size = self.font().pointSizeF()
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * len(INDENT))
        self.highlighter = PythonHighlighter(self.document(), dark=dark)

        self._gutter = _LineNumberArea(self)
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._update_gutter)
        self.cursorPositionChanged.connect(self._refresh_selections)
        self.document().contentsChange.connect(self._on_contents_change)
        self._apply_colors()
        self._update_gutter_width()
        self._refresh_selections()

    # ----------------------------------------------------------------- text
    def text(self) -> str:
        """Return the editor's text."""
        return self.toPlainText()

    def set_text(self, text: str) -> None:
        """Replace the editor's text (this clears any error mark)."""
        self.setPlainText(text)

    # ----------------------------------------------------------------- theme
    def set_dark(self, dark: bool) -> None:
        """Switch editor and highlighter between light and dark colours."""
        self._colors = _theme(dark)
        self.highlighter.set_dark(dark)
        self._apply_colors()
        self._refresh_selections()

    def _apply_colors(self) -> None:
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Base, QColor(self._colors["base"]))
        palette.setColor(QPalette.ColorRole.Text, QColor(self._colors["text"]))
        palette.setColor(QPalette.ColorRole.Highlight, QColor(self._colors["selection"]))
        # Qt paints selected text in HighlightedText (white by default), unreadable on a pale
        # selection colour.
        palette.setColor(QPalette.ColorRole.HighlightedText, QColor(self._colors["text"]))
        self.setPalette(palette)

    # ----------------------------------------------------------------- zoom
    @property
    def font_size(self) -> float:
        """The editor's font size in points."""
        return self.font().pointSizeF()

    def zoom_in(self) -> None:
        """One point bigger (Ctrl+=)."""
        self._set_font_size(self.font_size + 1)

    def zoom_out(self) -> None:
        """One point smaller (Ctrl+-)."""
        self._set_font_size(self.font_size - 1)

    def reset_zoom(self) -> None:
        """Back to the system's fixed-width font size (Ctrl+0 in the editor)."""
        self._set_font_size(self._base_point_size)

    def _set_font_size(self, points: float) -> None:
        font = self.font()
        font.setPointSizeF(min(max(points, ZOOM_RANGE[0]), ZOOM_RANGE[1]))
        self.setFont(font)

    def changeEvent(self, event: QEvent) -> None:
        """A new font size (zoom keys, Ctrl+wheel): tab stops and the gutter follow."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "_gutter"):
            self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * len(INDENT))
            self._update_gutter_width()
            self._gutter.update()

    # ----------------------------------------------------------------- marks
    @property
    def error_line(self) -> int | None:
        """The 1-based line marked as erroneous, or None."""
        return self._error_line

    @property
    def error_message(self) -> str:
        """The message of the current error mark ("" when there is none)."""
        return self._error_message

    def mark_error(self, line: int, message: str) -> None:
        """Mark a 1-based line as the error site; its message shows as the gutter tooltip."""
        self._error_line = self._clamp_line(line)
        self._error_message = message
        self._error_revision = self.document().revision()
        self._refresh_selections()

    def clear_error(self) -> None:
        """Remove the error mark, if any."""
        if self._error_line is not None:
            self._error_line, self._error_message = None, ""
            self._refresh_selections()

    def highlight_lines(self, lines: Iterable[int]) -> None:
        """Softly highlight the given 1-based lines (replacing any earlier highlight)."""
        count = self.blockCount()
        self._highlighted = {line for line in lines if 1 <= line <= count}
        self._refresh_selections()

    def clear_highlight(self) -> None:
        """Remove the soft line highlight (and the caller's mark)."""
        self._highlighted = set()
        self._caller_line = None
        self._refresh_selections()

    def mark_caller(self, line: int | None) -> None:
        """Mark the line that called the highlighted one (the backward() that runs the
        highlighted line's node): a paler band and a ▶ in the gutter. None: no mark."""
        count = self.blockCount()
        self._caller_line = line if line is not None and 1 <= line <= count else None
        self._refresh_selections()

    @property
    def caller_line(self) -> int | None:
        """The 1-based line marked as the caller, or None."""
        return self._caller_line

    @property
    def highlighted_lines(self) -> set[int]:
        """The 1-based lines currently softly highlighted."""
        return set(self._highlighted)

    def goto_line(self, line: int) -> None:
        """Put the cursor at the start of a 1-based line and scroll it to the centre."""
        block = self.document().findBlockByNumber(self._clamp_line(line) - 1)
        self.setTextCursor(QTextCursor(block))
        self.centerCursor()

    def _clamp_line(self, line: int) -> int:
        return max(1, min(int(line), self.blockCount()))

    def _on_contents_change(self, _position: int, removed: int, added: int) -> None:
        # Re-highlighting also touches the document but never bumps the undo revision,
        # so only real edits made after the mark clear it.
        if (removed or added) and self.document().revision() != self._error_revision:
            self.clear_error()

    def _line_selection(self, line: int, color: str) -> QTextEdit.ExtraSelection:
        selection = QTextEdit.ExtraSelection()
        selection.format.setBackground(QColor(color))
        selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        selection.cursor = QTextCursor(self.document().findBlockByNumber(line - 1))
        return selection

    def _refresh_selections(self) -> None:
        # Later selections paint over earlier ones: error beats highlight beats current line.
        current = self.textCursor().blockNumber() + 1
        selections = []
        if not self.isReadOnly():
            selections.append(self._line_selection(current, self._colors["current_line"]))
        count = self.blockCount()
        if self._caller_line is not None and self._caller_line <= count:
            selections.append(self._line_selection(self._caller_line, self._colors["caller"]))
        for line in sorted(self._highlighted):
            if line <= count:
                selections.append(self._line_selection(line, self._colors["highlight"]))
        if self._error_line is not None and self._error_line <= count:
            selections.append(self._line_selection(self._error_line, self._colors["error"]))
        self.setExtraSelections(selections)
        self._gutter.update()  # for the marker and the current line's number

    # ----------------------------------------------------------------- gutter
    def line_number_area_width(self) -> int:
        """Width of the gutter: a marker column plus room for the largest line number."""
        digits = max(2, len(str(self.blockCount())))
        metrics = self.fontMetrics()
        return metrics.height() + metrics.horizontalAdvance("9") * digits + 10

    def _visible_blocks(self) -> Iterator[tuple[QTextBlock, int, int]]:
        """Yield (block, top, bottom) in viewport coordinates from the first visible block."""
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        while block.isValid() and top <= self.viewport().height():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible():
                yield block, top, bottom
            block = block.next()
            top = bottom

    def line_at_y(self, y: int) -> int | None:
        """Return the 1-based line drawn at viewport/gutter y, or None if there is none."""
        for block, top, bottom in self._visible_blocks():
            if top <= y < bottom:
                return block.blockNumber() + 1
        return None

    def _update_gutter_width(self, _count: int = 0) -> None:
        self.setViewportMargins(self.line_number_area_width(), 0, 0, 0)

    def _update_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._update_gutter_width()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the gutter the full height of the editor."""
        super().resizeEvent(event)
        contents = self.contentsRect()
        self._gutter.setGeometry(
            QRect(contents.left(), contents.top(), self.line_number_area_width(), contents.height())
        )

    def _paint_line_numbers(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), QColor(self._colors["gutter"]))
        painter.setFont(self.font())
        line_height = self.fontMetrics().height()
        marker = line_height  # the marker column is one line high and as wide
        current = self.textCursor().blockNumber()
        for block, top, bottom in self._visible_blocks():
            if bottom < event.rect().top() or top > event.rect().bottom():
                continue
            number = block.blockNumber()
            if self._error_line == number + 1:
                size = max(6, round(line_height * 0.55))
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(self._colors["marker"]))
                painter.drawEllipse(
                    (marker - size) // 2 + 1, top + (line_height - size) // 2, size, size
                )
            elif self._caller_line == number + 1:  # ▶: the call that runs the highlight
                size = max(6, round(line_height * 0.6))
                left, mid = (marker - size) // 2 + 1, top + line_height // 2
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(self._colors["caller_mark"]))
                painter.drawPolygon(
                    [
                        QPoint(left, mid - size // 2),
                        QPoint(left + size, mid),
                        QPoint(left, mid + size // 2),
                    ]
                )
            color = "gutter_current" if number == current else "gutter_text"
            painter.setPen(QColor(self._colors[color]))
            painter.drawText(
                QRect(marker, top, self._gutter.width() - marker - 6, line_height),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                str(number + 1),
            )
        painter.end()

    def tooltip_for_line(self, line: int | None) -> str:
        """The tooltip text for a 1-based line: the error message on the marked line, a
        word on the caller's mark, else ""."""
        if line is not None and line == self._error_line:
            return self._error_message
        if line is not None and line == self._caller_line:
            return "Called from here: this backward() runs the highlighted line's node."
        return ""

    def _show_line_tooltip(self, event: QHelpEvent) -> None:
        text = self.tooltip_for_line(self.line_at_y(event.pos().y()))
        if text:
            QToolTip.showText(event.globalPos(), text, self)
        else:
            QToolTip.hideText()
            event.ignore()

    def viewportEvent(self, event: QEvent) -> bool:
        """Also show the error message when hovering the marked line's text."""
        if isinstance(event, QHelpEvent) and event.type() == QEvent.Type.ToolTip:
            self._show_line_tooltip(event)
            return True
        return super().viewportEvent(event)

    # ----------------------------------------------------------------- keys
    def event(self, event: QEvent) -> bool:
        """Claim our key combinations before application-wide shortcuts can take them."""
        if (
            isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.ShortcutOverride
            and key_action(event) is not None
        ):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Run, indentation and comment shortcuts; everything else is ordinary typing."""
        handlers: dict[str, Callable[[], object]] = {
            "run": self.run_requested.emit,
            "newline": self._newline_with_indent,
            "indent": self._indent,
            "dedent": self.dedent,
            "comment": self.toggle_comment,
            "zoom_in": self.zoom_in,
            "zoom_out": self.zoom_out,
            "zoom_reset": self.reset_zoom,
        }
        action = key_action(event)
        if action is None:
            super().keyPressEvent(event)
        else:
            handlers[action]()
            event.accept()
