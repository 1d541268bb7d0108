"""One runnable example of a lesson: its title, its code, Open in editor and Run."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.ui.editor.highlighter import PythonHighlighter

CODE_MARGIN = 4  # spare pixels, so the box shows every line without a vertical scrollbar


class ExampleCard(QFrame):
    """A framed code example; its buttons ask for the code in the editor, and maybe a run."""

    requested = Signal(str, bool)  # code, run

    def __init__(self, title: str, code: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.code = code
        self.setObjectName("exampleCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#exampleCard { background: #f8fafc; border: 1px solid #d0d7de; border-radius: 6px; }"
        )
        self.title = QLabel(f"<b>{_escape(title)}</b>")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.open_button = QPushButton("Open in editor")
        self.open_button.setToolTip("Put this code in the editor (it replaces the editor's text)")
        self.run_button = QPushButton("▶ Run")
        self.run_button.setToolTip("Put this code in the editor and run it (like Ctrl+Enter)")
        self.open_button.clicked.connect(lambda: self.requested.emit(self.code, False))
        self.run_button.clicked.connect(lambda: self.requested.emit(self.code, True))

        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setPlainText(code.rstrip("\n"))
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setStyleSheet("QPlainTextEdit { background: #ffffff; border: none; }")
        self.view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.highlighter = PythonHighlighter(self.view.document())
        lines = code.rstrip("\n").count("\n") + 1
        margins = 2 * (self.view.document().documentMargin() + self.view.frameWidth())
        scrollbar = self.view.horizontalScrollBar().sizeHint().height()
        height = lines * self.view.fontMetrics().lineSpacing() + margins + scrollbar
        self.view.setFixedHeight(int(height) + CODE_MARGIN)

        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.open_button)
        top.addWidget(self.run_button)
        column = QVBoxLayout(self)
        column.setContentsMargins(8, 6, 8, 8)
        column.setSpacing(4)
        column.addLayout(top)
        column.addWidget(self.view)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
