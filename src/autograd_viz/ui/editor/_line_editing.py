"""The editor's line edits: auto-indent, Tab / Shift+Tab, comment toggling, its keys."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QTextCursor

INDENT = "    "


class LineEditing:
    """Line-wise edits for a QPlainTextEdit (mixed into CodeEditor); each is one undo step."""

    def apply_line_edit(self, line: int, action: str, text: str) -> None:
        """Insert `text` as a new line after line `line` ("insert"), or make it line
        `line`'s text ("replace"); one undo step, the cursor left on the changed line."""
        block = self.document().findBlockByNumber(line - 1)
        if not block.isValid():
            return
        cursor = QTextCursor(block)
        cursor.beginEditBlock()
        if action == "insert":
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
            cursor.insertText("\n" + text)
        else:
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            cursor.insertText(text)
        cursor.endEditBlock()
        self.setTextCursor(cursor)

    def _newline_with_indent(self) -> None:
        cursor = self.textCursor()
        line = cursor.block().text()
        before = line[: cursor.positionInBlock()]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        # Never indent further than where the cursor sits inside the leading whitespace.
        indent = indent[: len(before)]
        if before.rstrip().endswith(":"):
            indent += INDENT
        cursor.insertText("\n" + indent)
        self.setTextCursor(cursor)

    def _indent(self) -> None:
        cursor = self.textCursor()
        # selectedText() marks line breaks with U+2029.
        if "\u2029" in cursor.selectedText():
            self._edit_lines(lambda text: INDENT + text if text.strip() else text)
        else:
            cursor.insertText(INDENT)
            self.setTextCursor(cursor)

    def dedent(self) -> None:
        """Remove up to four leading spaces (or one tab) from the current or selected lines."""

        def strip_indent(text: str) -> str:
            if text.startswith("\t"):
                return text[1:]
            spaces = len(text) - len(text.lstrip(" "))
            return text[min(spaces, len(INDENT)) :]

        self._edit_lines(strip_indent)

    def toggle_comment(self) -> None:
        """Comment the current or selected lines with '# ', or uncomment if all are comments."""
        first, last = self._selected_blocks()
        lines = [self.document().findBlockByNumber(n).text() for n in range(first, last + 1)]
        code = [text for text in lines if text.strip()]
        if not code:
            return
        if all(text.lstrip().startswith("#") for text in code):

            def uncomment(text: str) -> str:
                stripped = text.lstrip()
                indent = text[: len(text) - len(stripped)]
                return indent + stripped.removeprefix("#").removeprefix(" ") if stripped else text

            self._edit_lines(uncomment)
        else:
            # One column for the whole selection keeps a commented block aligned.
            column = min(len(text) - len(text.lstrip()) for text in code)
            self._edit_lines(
                lambda text: text[:column] + "# " + text[column:] if text.strip() else text
            )

    def _selected_blocks(self) -> tuple[int, int]:
        cursor = self.textCursor()
        doc = self.document()
        start = doc.findBlock(cursor.selectionStart())
        end = doc.findBlock(cursor.selectionEnd())
        # A selection that ends at the very start of a line does not include that line.
        if end != start and cursor.selectionEnd() == end.position():
            end = end.previous()
        return start.blockNumber(), end.blockNumber()

    def _edit_lines(self, transform: Callable[[str], str]) -> None:
        """Apply transform to each selected line as a single undo step."""
        first, last = self._selected_blocks()
        had_selection = self.textCursor().hasSelection()
        doc = self.document()
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        for number in range(first, last + 1):
            block = doc.findBlockByNumber(number)
            old = block.text()
            new = transform(old)
            if new == old:
                continue
            # Replace only the part that changed, so the user's cursor keeps its place.
            head = common_prefix_len(old, new)
            tail = common_prefix_len(old[head:][::-1], new[head:][::-1])
            cursor.setPosition(block.position() + head)
            cursor.setPosition(block.position() + len(old) - tail, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(new[head : len(new) - tail])
        cursor.endEditBlock()
        if had_selection:
            # Reselect whole lines so repeated Tab / Ctrl+/ keep acting on the same block.
            end = doc.findBlockByNumber(last)
            selection = QTextCursor(doc.findBlockByNumber(first))
            selection.setPosition(
                end.position() + end.length() - 1, QTextCursor.MoveMode.KeepAnchor
            )
            self.setTextCursor(selection)


def key_action(event: QKeyEvent) -> str | None:
    """Which of the editor's own key bindings an event triggers, if any."""
    key = event.key()
    # Without the keypad flag, keypad Enter acts like Return.
    mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    plain = mods == Qt.KeyboardModifier.NoModifier
    ctrl = mods == Qt.KeyboardModifier.ControlModifier
    shift = mods == Qt.KeyboardModifier.ShiftModifier
    if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
        return "run" if ctrl or shift else "newline" if plain else None
    if key == Qt.Key.Key_Tab:
        return "indent" if plain else "dedent" if shift else None
    if key == Qt.Key.Key_Backtab:
        return "dedent"
    if key == Qt.Key.Key_Slash and ctrl:
        return "comment"
    # Ctrl+0 is also "Fit graph": the editor takes it only while it has the focus.
    zoom = {Qt.Key.Key_Equal: "zoom_in", Qt.Key.Key_Plus: "zoom_in", Qt.Key.Key_Minus: "zoom_out"}
    ctrl_shift = mods == Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    if key in zoom and (ctrl or ctrl_shift):  # "+" needs Shift on many layouts
        return zoom[key]
    if key == Qt.Key.Key_0 and ctrl:
        return "zoom_reset"
    return None


def common_prefix_len(a: str, b: str) -> int:
    """Number of leading characters two strings share."""
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
