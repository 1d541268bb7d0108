"""Clicks on the graph canvas: a click rings an item and, once no second click follows,
inspects it; a double-click opens a folded group's card or folds the group a node is in.
A card takes clicks anywhere on it, not only on its centre's marker."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMenu


class CanvasClicks:
    """Routes the canvas's marker and scene clicks (the canvas connects the signals)."""

    def __init__(self, canvas: Any) -> None:  # the GraphCanvas (which imports this)
        self.canvas = canvas
        self._pending = ""  # clicked, inspected unless a double-click follows
        self._timer = QTimer(canvas)
        self._timer.setSingleShot(True)
        self._timer.setInterval(QApplication.styleHints().mouseDoubleClickInterval())
        self._timer.timeout.connect(self._settled)
        self.menu: QMenu | None = None  # the last right-click's menu (kept while it shows)

    def on_marker(self, _item, points, event) -> None:
        """A click on a node's marker (or a card's centre)."""
        if not len(points):
            return
        key = str(points[0].data())
        if event is not None and event.double():
            self._timer.stop()  # the first click's inspector is not wanted now
            path = key[2:] if key.startswith("m:") else self.canvas.module_of(key)
            if path is not None:
                self.canvas.toggle_module(path)
                return
        self._clicked(key)

    def on_scene(self, event) -> None:
        """A click anywhere on the canvas: one on a card (anywhere on it) selects it, a
        double-click opens it."""
        # Items see a click first: one a marker took (it may have just drawn a box where
        # it was clicked) is not a click on a box.
        if event.button() == Qt.MouseButton.RightButton and not event.isAccepted():
            self._context_menu(event)
            return
        if event.isAccepted() or event.button() != Qt.MouseButton.LeftButton:
            return
        canvas = self.canvas
        if not canvas.graph.boxes:
            return
        key = canvas.box_at(canvas.getViewBox().mapSceneToView(event.scenePos()))
        if key is None:
            return
        event.accept()
        if event.double():
            self._timer.stop()
            canvas.toggle_module(key[2:])
        else:
            self._clicked(key)

    def _context_menu(self, event) -> None:
        """A right-click on a tensor: ask why its .grad is what it is, or inspect it."""
        canvas = self.canvas
        markers = canvas.markers
        points = markers.pointsAt(markers.mapFromScene(event.scenePos()))
        keys = [str(p.data()) for p in points]
        tensor = next((k for k in keys if k.startswith("t")), None)
        if tensor is None or canvas.trace is None:
            return
        event.accept()
        name = canvas.trace.index.name_of(tensor)
        menu = self.menu = QMenu(canvas)
        menu.addAction(f"Why is {name}.grad what it is?", lambda: canvas.why_asked.emit(tensor))
        menu.addAction(f"Inspect {name}", lambda: canvas.node_clicked.emit(tensor))
        menu.popup(event.screenPos().toPoint())

    def _clicked(self, key: str) -> None:
        """A single click: ring the item now, inspect it once no second click follows (the
        inspector opening narrows the canvas, which would move a double-click's target)."""
        self.canvas.view.select((key,))
        self._pending = key
        self._timer.start()

    def _settled(self) -> None:
        if self._pending:
            key, self._pending = self._pending, ""
            self.canvas.node_clicked.emit(key)
