"""The app as a child process for the crash-recovery test: `autograd-viz FILE.py`, with
the learner's typing replayed once the window shows. The test then kills it with SIGKILL.

    python tests/ui/crash_child.py FILE.py "text to type"
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtTest import QTest

import autograd_viz.ui.app as app
from autograd_viz.cli import main
from autograd_viz.session import KernelSession

KernelSession.start = lambda self: None  # the editor is under test, not the kernel


class TypingWindow(app.MainWindow):
    """The real window; once shown, it types argv[2] into the editor as keystrokes."""

    _typed = False

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._typed:
            self._typed = True
            QTimer.singleShot(0, self._type)

    def _type(self) -> None:
        self.editor.setFocus()
        QTest.keyClicks(self.editor, sys.argv[2])
        print("typed", flush=True)


app.MainWindow = TypingWindow
sys.exit(main([sys.argv[1]]))
