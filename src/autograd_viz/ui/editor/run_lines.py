"""The editor follows the shown run: the line of the step being replayed is highlighted
(for a backward node, the line that made it, with its backward() call marked as the
caller), a click on a graph item moves the cursor to the line that made it, and moving
the cursor rings the items that line made."""

from __future__ import annotations

from PySide6.QtCore import QObject

from autograd_viz.core.playback.run_view import RunView
from autograd_viz.ui.editor.editor import CodeEditor


class EditorFollowsRun(QObject):
    """Connects one editor to one RunView, both ways."""

    def __init__(self, editor: CodeEditor, view: RunView) -> None:
        super().__init__(editor)
        self.editor, self.view = editor, view
        self._moving_cursor = False  # our own goto_line must not select the line's items
        view.frame_changed.connect(self._step_line)
        view.inspected_changed.connect(self._inspected_line)
        view.run_changed.connect(lambda _run: editor.clear_highlight())
        # An edit or another file makes the marked line stale: it goes with them.
        editor.textChanged.connect(editor.clear_highlight)
        editor.cursorPositionChanged.connect(self._cursor_moved)

    def _step_line(self) -> None:
        # A backward step highlights the line that made its node; its backward() line is
        # marked as the caller.
        line, caller = self.view.current_lines()
        if line:
            self.editor.highlight_lines({line})
            self.editor.mark_caller(caller)
        else:
            self.editor.clear_highlight()

    def _inspected_line(self, key: str) -> None:
        line = self.view.line_of(key) if key else None
        if not line:
            return
        self._moving_cursor = True
        try:
            self.editor.goto_line(line)
            self.editor.highlight_lines({line})
            self.editor.mark_caller(None)
        finally:
            self._moving_cursor = False

    def _cursor_moved(self) -> None:
        if self._moving_cursor or self.view.run is None:
            return
        line = self.editor.textCursor().blockNumber() + 1
        self.view.select(self.view.ids_on(line))
