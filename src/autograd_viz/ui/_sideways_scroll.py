"""A page that scrolls sideways only."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


class SidewaysScroll(QScrollArea):
    """A tab page that scrolls sideways when the window is narrower than it: a hidden
    tab's width must not hold the Graph tab (and its inspector) wider than a small window.
    It never scrolls up and down: it asks for the page's own minimum height."""

    def __init__(self, pane: QWidget) -> None:
        super().__init__()
        self.setWidget(pane)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        pane.installEventFilter(self)

    def minimumSizeHint(self) -> QSize:
        """Narrow, but as tall as the page needs (and its scroll bar, when it shows)."""
        bar = self.horizontalScrollBar().sizeHint().height()
        return QSize(120, self.widget().minimumSizeHint().height() + bar)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The page's layout changed (a question appeared): its minimum height may have."""
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)
