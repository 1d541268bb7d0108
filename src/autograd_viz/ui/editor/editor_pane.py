"""The editor column: the recovery bar above the code, the find/replace bar below it,
and the Edit menu's actions that drive them."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QVBoxLayout, QWidget

from autograd_viz.ui.editor.editor import CodeEditor
from autograd_viz.ui.editor.find_bar import FindBar
from autograd_viz.ui.editor.recording_bar import RecordingBar
from autograd_viz.ui.editor.recovery_bar import RecoveryBar


class EditorPane(QWidget):
    """A CodeEditor with its two bars; `fill_edit_menu` and `fill_zoom_menu` give the
    window its Edit and zoom actions."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("editorPane")
        self.editor = CodeEditor()
        self.recovery_bar = RecoveryBar()
        self.recording_bar = RecordingBar()  # over a recorded trace's script
        self.find_bar = FindBar(self.editor)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.recovery_bar)
        column.addWidget(self.recording_bar)
        column.addWidget(self.editor, 1)
        column.addWidget(self.find_bar)

    def _action(self, text: str, slot, *keys: str | QKeySequence.StandardKey) -> QAction:
        action = QAction(text, self)
        shortcuts = []
        for key in keys:  # a standard key may have several bindings (Redo: Ctrl+Shift+Z, Ctrl+Y)
            is_standard = isinstance(key, QKeySequence.StandardKey)
            shortcuts += QKeySequence.keyBindings(key) if is_standard else [QKeySequence(key)]
        action.setShortcuts(shortcuts)
        action.triggered.connect(lambda _=False: slot())
        return action

    def fill_edit_menu(self, menu: QMenu) -> None:
        """Undo, Redo, Find, Replace, Find next/previous, Toggle comment."""
        editor, find = self.editor, self.find_bar
        self.undo_action = self._action("&Undo", editor.undo, QKeySequence.StandardKey.Undo)
        self.redo_action = self._action("&Redo", editor.redo, QKeySequence.StandardKey.Redo)
        self.undo_action.setEnabled(False)
        self.redo_action.setEnabled(False)
        editor.undoAvailable.connect(self.undo_action.setEnabled)
        editor.redoAvailable.connect(self.redo_action.setEnabled)
        self.find_action = self._action("&Find…", find.open_find, "Ctrl+F")
        self.replace_action = self._action("R&eplace…", find.open_replace, "Ctrl+H")
        self.comment_action = self._action("Toggle &comment", editor.toggle_comment, "Ctrl+/")
        menu.addActions([self.undo_action, self.redo_action])
        menu.addSeparator()
        menu.addActions([self.find_action, self.replace_action])
        menu.addAction(self._action("Find &next", find.find_next, "F3"))
        menu.addAction(self._action("Find &previous", find.find_previous, "Shift+F3"))
        menu.addSeparator()
        menu.addAction(self.comment_action)

    def fill_zoom_menu(self, menu: QMenu) -> None:
        """Editor font bigger, smaller, back to normal."""
        menu.addAction(self._action("Zoom editor &in", self.editor.zoom_in, "Ctrl+=", "Ctrl++"))
        menu.addAction(self._action("Zoom editor &out", self.editor.zoom_out, "Ctrl+-"))
        # Ctrl+0 is "Fit graph" for the window; the editor takes it while it has the focus,
        # so the menu only names it (text after a tab shows in the shortcut column).
        menu.addAction(
            self._action("Reset editor zoom\tCtrl+0 in the editor", self.editor.reset_zoom)
        )
