"""The toolbar's node search: ring the graph's nodes whose name matches."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLineEdit, QWidget

from autograd_viz.ui.graph.graph_canvas import GraphCanvas


class NodeSearch(QLineEdit):
    """Enter rings every match on the canvas, centres the first and asks to inspect it."""

    inspect = Signal(str)  # the first match's id
    message = Signal(str, int)  # status-bar text and how long to show it (0: until replaced)

    def __init__(self, canvas: GraphCanvas, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self.setObjectName("nodeSearch")
        self.setPlaceholderText("Find a node: w, loss, Mul…")
        self.setClearButtonEnabled(True)
        self.setMaximumWidth(240)
        self.returnPressed.connect(self.find)

    def focus_all(self) -> None:
        """Take the focus with the text selected (Ctrl+Shift+F)."""
        self.setFocus()
        self.selectAll()

    def find(self) -> None:
        """Ring the nodes whose name matches; centre and inspect the first."""
        hits = self.canvas.find(self.text())
        if not hits:
            self.message.emit(f"No node matches {self.text()!r}.", 4000)
            self.canvas.select([])
            return
        self.inspect.emit(hits[0])
        self.canvas.select(hits)
        self.canvas.center_on(hits[0])
        self.message.emit(f"{len(hits)} node{'s' if len(hits) != 1 else ''} match.", 0)
