"""The bar above the editor that offers text an earlier, crashed session did not save."""

from __future__ import annotations

import html
import time

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget


def when(saved_at: float, now: float | None = None) -> str:
    """A short local time: "14:03" today, "3 May 14:03" on another day."""
    moment, today = time.localtime(saved_at), time.localtime(now)
    if moment[:3] == today[:3]:
        return time.strftime("%H:%M:%S", moment)
    return time.strftime("%d %b %H:%M", moment).lstrip("0")


class RecoveryBar(QFrame):
    """ "Recovered unsaved text from 14:03 — Restore / Discard"; it never blocks typing."""

    restore_requested = Signal()
    discard_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recoveryBar")
        # Translucent amber reads on the light and the dark theme alike.
        self.setStyleSheet(
            "#recoveryBar { background: rgba(245, 158, 11, 45);"
            " border: 1px solid rgba(245, 158, 11, 160); border-radius: 4px; }"
        )
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.restore_button = QPushButton("Restore")
        self.restore_button.setToolTip("Put the recovered text in the editor (Ctrl+Z undoes it)")
        self.discard_button = QPushButton("Discard")
        self.discard_button.setToolTip("Delete the recovered text for good")
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 6, 4)
        row.addWidget(self.label, 1)
        row.addWidget(self.restore_button)
        row.addWidget(self.discard_button)
        self.restore_button.clicked.connect(self.restore_requested)
        self.discard_button.clicked.connect(self.discard_requested)
        self.hide()

    def offer(self, name: str, saved_at: float) -> None:
        """Show the offer for a document's autosave written at `saved_at`."""
        self.label.setText(
            f"Recovered unsaved text of <b>{html.escape(name)}</b> from {when(saved_at)} "
            "(the app did not close cleanly)."
        )
        self.show()
