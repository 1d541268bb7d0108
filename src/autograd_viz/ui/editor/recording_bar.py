"""The bar over a recorded trace's script: where it was recorded, and Edit to run it here."""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from autograd_viz.core.trace import Trace


def recorded_words(trace: Trace, name: str) -> str:
    """`run.json: recorded on cuda:0 with torch 2.13.0 on 2026-12-01 14:03 UTC`."""
    when = ""
    if trace.recorded_at:
        when = " on " + trace.recorded_at.replace("T", " ").removesuffix("Z")[:16] + " UTC"
    torch = f" with torch {trace.torch}" if trace.torch else ""
    return f"{name}: recorded on {trace.device}{torch}{when}"


class RecordingBar(QFrame):
    """Shown while the editor holds a recorded trace's script, read-only; Edit makes it
    the editor's code again (nothing ran when the trace was opened)."""

    edit_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recordingBar")
        # Translucent blue reads on the light and the dark theme alike.
        self.setStyleSheet(
            "#recordingBar { background: rgba(59, 130, 246, 40);"
            " border: 1px solid rgba(59, 130, 246, 150); border-radius: 4px; }"
        )
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.edit_button = QPushButton("Edit to run it here")
        self.edit_button.setToolTip("Make this script the editor's code; Ctrl+Enter runs it")
        self.edit_button.clicked.connect(self.edit_requested)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 6, 4)
        row.addWidget(self.label, 1)
        row.addWidget(self.edit_button)
        self.hide()

    def show_recording(self, trace: Trace, name: str) -> None:
        """Say where `trace` (opened from the file `name`) was recorded."""
        text = html.escape(recorded_words(trace, name))
        if trace.script is None:
            text += " (this trace does not carry its script)"
        self.label.setText(f"<b>Replaying a recording.</b> {text}. Opening it ran nothing.")
        self.show()

    def show_notebook_run(self, trace: Trace, cell: str) -> None:
        """Say that `trace` is a traced cell (`cell [3]`) the notebook ran in this kernel."""
        text = html.escape(recorded_words(trace, cell).replace(": recorded on ", ": ran on "))
        self.label.setText(
            f"<b>From the notebook.</b> {text}, in the kernel this app is attached to."
            " Each %%autograd_viz cell you run there shows here."
        )
        self.show()
