"""Starting the GUI: the QApplication, the window, and screenshot mode."""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from autograd_viz import __version__
from autograd_viz.core.platform.atomic_files import write_bytes_via
from autograd_viz.core.platform.gc_pause import freeze_loaded_objects
from autograd_viz.core.platform.user_data import startup_notes
from autograd_viz.core.trace import Trace
from autograd_viz.resources import ICON
from autograd_viz.ui.graph.export import export_png, export_svg
from autograd_viz.ui.main_window import MainWindow

SETTLE_MS = 300  # let the last paint land before grabbing the window


def _preload_torch() -> None:
    """Import torch and the descent core on a background thread once the window is up.

    The Descent tab computes with torch in this process; imported on the first click, the
    import froze the window for about a second. A click before the preload ends waits on
    Python's import lock instead, no longer than before.
    """

    def load() -> None:
        with contextlib.suppress(Exception):  # the tab reports a broken torch itself
            import autograd_viz.core.descent.paths  # noqa: F401
        # A first torch.optim step imports torch._dynamo (1.8-3 s): the descent view's
        # first path would wait for it.
        with contextlib.suppress(Exception):
            import torch._dynamo  # noqa: F401
        freeze_loaded_objects()  # full collections on the GUI thread skip torch from now on

    threading.Thread(target=load, name="autograd-viz preload", daemon=True).start()


def _application() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("autograd-viz")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("autograd-viz")
    app.setDesktopFileName("autograd-viz")
    app.setWindowIcon(QIcon(str(ICON)))
    return app


class HeadlessJob:
    """Runs the window's code, waits for the graph, writes the asked-for files and quits:
    a screenshot of the window, the graph as PNG/SVG, the replay as a GIF or as a page."""

    def __init__(
        self,
        window: MainWindow,
        timeout: float,
        screenshot: Path | None = None,
        graph: Path | None = None,
        animation: Path | None = None,
        page: Path | None = None,
    ) -> None:
        self.window = window
        self.screenshot, self.graph, self.animation = screenshot, graph, animation
        self.page = page
        self.exit_code = 1
        self._done = False
        window.trace_shown.connect(self._on_trace)
        window.session.start_failed.connect(self._fail)
        QTimer.singleShot(int(timeout * 1000), lambda: self._fail(f"no graph after {timeout:g} s"))

    def _on_trace(self, _trace) -> None:
        QTimer.singleShot(SETTLE_MS, self._write)

    def _write(self) -> None:
        try:
            if self.screenshot is not None:
                self._save(self.screenshot, lambda p: self.window.grab().save(str(p), "PNG"))
            if self.graph is not None:
                save = export_svg if self.graph.suffix.lower() == ".svg" else export_png
                self._save(self.graph, lambda p: save(self.window.canvas, p))
            if self.page is not None:
                self._save(self.page, self.window.exports.write_page)
        except Exception as exc:  # any failure must end the headless run with a message
            self._fail(str(exc))
            return
        if self.animation is None:
            self._finish(0)
            return
        exporter = self.window.export_animation(self.animation)
        if exporter is None:
            self._fail("nothing to animate")
            return
        exporter.finished.connect(self._animation_done)

    @staticmethod
    def _save(path: Path, write) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Atomic: an interrupted save leaves the old file whole, never half a PNG.
        write_bytes_via(path, lambda tmp: bool(write(tmp)))
        print(f"autograd-viz: saved {path}", file=sys.stderr)

    def _animation_done(self, ok: bool, message: str) -> None:
        if ok:
            print(f"autograd-viz: saved {message}", file=sys.stderr)
            self._finish(0)
        else:
            self._fail(message)

    def _finish(self, code: int) -> None:
        if not self._done:
            self._done = True
            self.exit_code = code
            self.window.close()

    def _fail(self, reason: str) -> None:
        if not self._done:
            print(f"autograd-viz: {reason}", file=sys.stderr)
            self._finish(1)


class DescentShot:
    """Waits for the descent pane's paths (of `kind`: a function's, or a model's landscape),
    saves a PNG of the window and quits."""

    def __init__(self, window: MainWindow, out: Path, timeout: float, kind: str = "function"):
        self.window, self.out, self.kind, self.exit_code = window, out, kind, 1
        self._scheduled = False
        window.descent.sweep_ready.connect(self._ready)
        if kind == "model":  # the model's landscape is the only thing to wait for
            window.descent.sweep_failed.connect(self._give_up)
        QTimer.singleShot(int(timeout * 1000), self._give_up)

    def _ready(self) -> None:
        if self.window.descent.sweep.kind == self.kind and not self._scheduled:
            self._scheduled = True
            QTimer.singleShot(SETTLE_MS, self._save)

    def _save(self) -> None:
        try:
            HeadlessJob._save(self.out, lambda p: self.window.grab().save(str(p), "PNG"))
            self.exit_code = 0
        except OSError as exc:
            print(f"autograd-viz: {exc}", file=sys.stderr)
        self.window.close()

    def _give_up(self, why: str = "the descent paths were not ready in time") -> None:
        if self.exit_code != 0:
            print(f"autograd-viz: {why}", file=sys.stderr)
            self.window.close()


def show_startup_notes(window: MainWindow) -> list[str]:
    """Say what start-up set aside (a corrupt settings file, a data folder it could not
    make): on stderr and in the status bar, so the learner knows why a setting is gone."""
    notes = startup_notes()
    for note in notes:
        print(f"autograd-viz: {note}", file=sys.stderr)
    if notes:
        more = f"[{len(notes)} notes: see the terminal] " if len(notes) > 1 else ""
        window.statusBar().showMessage(more + notes[0], 20_000)
    return notes


def launch(
    path: Path | None = None,
    text: str | None = None,
    run: bool = False,
    screenshot: Path | None = None,
    size: tuple[int, int] = (1400, 860),
    timeout: float = 120.0,
    mode: str | None = None,
    step: int | None = None,
    export_graph: Path | None = None,
    export_animation: Path | None = None,
    export_page: Path | None = None,
    view: str = "graph",
    learning_rate: float | None = None,
    existing: Path | None = None,
    device: str = "auto",
    trace: Path | None = None,
    recorded: Trace | None = None,
) -> int:
    """Show the main window; returns the process exit code."""
    app = _application()
    window = MainWindow()
    if text is not None:
        window.set_document(text, path)
    window.resize(*size)
    if mode is not None or step is not None:
        window.trace_shown.connect(lambda _trace: window.show_step(mode, step))
    job: HeadlessJob | DescentShot | None = None
    if view in ("descent", "landscape"):
        pane = window.show_descent()
        if learning_rate is not None:
            pane.set_learning_rate(learning_rate)
            pane.sweep_ready.connect(lambda: pane.set_learning_rate(learning_rate))
        if view == "landscape":  # the file's model, once it has run in the kernel
            window.session.run_finished.connect(lambda _ok: pane.set_function("model"))
        if screenshot is not None:
            kind = "model" if view == "landscape" else "function"
            job = DescentShot(window, screenshot, timeout, kind)
    elif screenshot or export_graph or export_animation or export_page:
        job = HeadlessJob(window, timeout, screenshot, export_graph, export_animation, export_page)
    window.show()
    show_startup_notes(window)
    _preload_torch()
    window.device_picker.set_device(device)
    if existing is not None:
        window.kernel_connection.attach(str(existing))
    else:
        window.session.start()
    if trace is not None and recorded is not None:  # read (and checked) by the caller
        QTimer.singleShot(0, lambda: window.traces.show(trace, recorded))
    elif trace is not None:  # a recording: shown, nothing run
        window.traces.open(trace)
    if run:
        window.run_code()
    code = app.exec()
    return job.exit_code if job is not None else code
