"""\"Why is x.grad None?\": the inspector's question about a tensor, and its answer."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from autograd_viz.core.playback.why_grad import Edit, GradAnswer, why_grad
from autograd_viz.core.trace import Trace

MAX_BUTTON_VALUE = 16  # characters of a .grad value the question button shows


class WhyPanel(QWidget):
    """A button that asks about the inspected tensor's `.grad` at the moment shown; the
    answer (the cause, its line, the fix) below it, with a button to make the fix in the
    editor when one line can."""

    fix_requested = Signal(object, str)  # the Edit, and the script it is for

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whyPanel")
        self.ask_button = QToolButton(self)
        self.ask_button.setObjectName("whyButton")
        self.ask_button.setToolTip("Ask why .grad holds what it holds at this step")
        self.ask_button.clicked.connect(self.ask)
        self.text = QLabel(self)
        self.text.setObjectName("whyText")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.fix_button = QToolButton(self)
        self.fix_button.setObjectName("applyFix")
        self.fix_button.clicked.connect(self._fix)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.ask_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.text)
        layout.addWidget(self.fix_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.answer: GradAnswer | None = None
        self._trace: Trace | None = None
        self._key = ""
        self._index: int | None = None
        self.text.hide()
        self.fix_button.hide()

    def set_tensor(self, trace: Trace, key: str, index: int | None, grad_text: str) -> None:
        """The tensor the inspector shows, at event `index` (None: the run's end); an
        answer already shown for it is asked again for the new moment."""
        same = self._trace is trace and self._key == key
        self._trace, self._key, self._index = trace, key, index
        # A long value would push the button past the pane: the answer quotes it whole.
        shown = grad_text if len(grad_text) <= MAX_BUTTON_VALUE else "what it is"
        self.ask_button.setText(f"Why is {trace.index.name_of(key)}.grad {shown}?")
        if same and self.answer is not None:
            self.ask()
        else:
            self._forget()

    def _forget(self) -> None:
        self.answer = None
        self.text.hide()
        self.fix_button.hide()

    def ask(self) -> None:
        """Answer the question for the tensor and moment set."""
        if self._trace is None or not self._key:
            return
        trace = self._trace
        answer = self.answer = why_grad(trace, self._key, self._index, trace.script)
        parts = [f"<b>{html.escape(answer.question)}</b>", html.escape(answer.answer)]
        if answer.history:
            items = "".join(f"<li>{html.escape(h)}</li>" for h in answer.history)
            parts.append(f"<ul style='margin:0'>{items}</ul>")
        if answer.fix:
            parts.append(f"<i>Fix:</i> {html.escape(answer.fix)}")
        self.text.setText("<br>".join(parts))
        self.text.show()
        edit = answer.edit
        if edit is not None and trace.script is not None:
            self.fix_button.setText(f"Apply the fix (line {edit.line})")
            self.fix_button.setToolTip(_edit_words(edit) + " — one undo step; then run again")
            self.fix_button.show()
        else:
            self.fix_button.hide()

    def _fix(self) -> None:
        if self.answer is not None and self.answer.edit is not None and self._trace is not None:
            self.fix_requested.emit(self.answer.edit, self._trace.script or "")


def _edit_words(edit: Edit) -> str:
    """What the one-line edit does, in the fix button's tooltip."""
    text = edit.text.strip()
    if edit.action == "insert":
        return f"Add `{text}` after line {edit.line}"
    if text in ("", "pass"):
        return f"Remove line {edit.line}"
    return f"Line {edit.line} becomes `{text}`"
