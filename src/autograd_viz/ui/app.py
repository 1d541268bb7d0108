"""Starting the GUI: the QApplication, the window, and screenshot mode."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from autograd_viz import __version__
from autograd_viz.resources import ICON
from autograd_viz.ui.main_window import MainWindow

SETTLE_MS = 300  # let the last paint land before grabbing the window


def _application() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("autograd-viz")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("autograd-viz")
    app.setDesktopFileName("autograd-viz")
    app.setWindowIcon(QIcon(str(ICON)))
    return app


class ScreenshotJob:
    """Runs the window's code, waits for the graph, saves a PNG and quits."""

    def __init__(self, window: MainWindow, out: Path, timeout: float) -> None:
        self.window, self.out = window, out
        self.exit_code = 1
        window.trace_shown.connect(self._on_trace)
        window.session.start_failed.connect(lambda msg: self._fail(msg))
        QTimer.singleShot(int(timeout * 1000), lambda: self._fail(f"no graph after {timeout:g} s"))

    def _on_trace(self, _trace) -> None:
        QTimer.singleShot(SETTLE_MS, self._save)

    def _save(self) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        if self.window.grab().save(str(self.out), "PNG"):
            print(f"autograd-viz: screenshot saved to {self.out}", file=sys.stderr)
            self.exit_code = 0
        else:
            print(f"autograd-viz: could not write {self.out}", file=sys.stderr)
        self.window.close()

    def _fail(self, reason: str) -> None:
        if self.exit_code != 0:
            print(f"autograd-viz: screenshot failed: {reason}", file=sys.stderr)
            self.window.close()


def launch(
    path: Path | None = None,
    text: str | None = None,
    run: bool = False,
    screenshot: Path | None = None,
    size: tuple[int, int] = (1400, 860),
    timeout: float = 120.0,
    mode: str | None = None,
    step: int | None = None,
) -> int:
    """Show the main window; returns the process exit code."""
    app = _application()
    window = MainWindow()
    if text is not None:
        window.set_document(text, path)
    window.resize(*size)
    if mode is not None or step is not None:
        window.trace_shown.connect(lambda _trace: window.show_step(mode, step))
    job = ScreenshotJob(window, screenshot, timeout) if screenshot is not None else None
    window.show()
    window.session.start()
    if run:
        window.run_code()
    code = app.exec()
    return job.exit_code if job is not None else code
