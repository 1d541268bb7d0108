"""The lab's task list: each task with a live done / not-done mark."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QListWidget, QListWidgetItem

from autograd_viz.core.learning.lab_tasks import TASKS

DONE, OPEN = "✓", "○"
_DONE_COLOUR = QColor("#15803d")
_LESSONS = {2: "Lesson 2 · the w, x, b lab", 1: "Lesson 1 · graphs, leaves, no_grad, descent"}


class TaskList(QListWidget):
    """Shows TASKS grouped by lesson; `show_done` updates the marks."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("labTasks")
        self.setWordWrap(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.items: dict[str, QListWidgetItem] = {}
        self.done: dict[str, bool] = {}
        bold = QFont()
        bold.setBold(True)
        for lesson in (2, 1):
            header = QListWidgetItem(_LESSONS[lesson])
            header.setFont(bold)
            header.setFlags(Qt.ItemFlag.ItemIsEnabled)  # shown, never selected
            self.addItem(header)
            for task in (t for t in TASKS if t.lesson == lesson):
                item = QListWidgetItem()
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                self.items[task.key] = item
                self.addItem(item)
        self.show_done({})

    def show_done(self, done: dict[str, bool]) -> None:
        """Mark each task done or not (keys missing from `done` are not done)."""
        self.done = {t.key: bool(done.get(t.key)) for t in TASKS}
        for task in TASKS:
            item = self.items[task.key]
            finished = self.done[task.key]
            item.setText(f"{DONE if finished else OPEN}  {task.text}")
            if finished:
                item.setForeground(_DONE_COLOUR)
            else:  # no colour of its own: the palette's text, so it reads in dark mode too
                item.setData(Qt.ItemDataRole.ForegroundRole, None)
            item.setToolTip("done" if finished else "not done yet")
