"""Opening a recorded trace (File → Open trace…, a dropped .json, `autograd-viz open`):
read off the GUI thread, then shown as if it had just run; nothing is executed. A traced
cell that a notebook ran in the attached kernel is shown the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtWidgets import QFileDialog

from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.trace_file import TraceFileError, read_trace


class _Signals(QObject):
    read = Signal(object, object)  # the path, the Trace
    failed = Signal(object, str)  # the path, one line


class _Read(QRunnable):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.signals = _Signals()

    def run(self) -> None:  # Qt's name
        try:
            trace = read_trace(self.path)
        except TraceFileError as exc:
            self.signals.failed.emit(self.path, str(exc))
            return
        except Exception as exc:  # whatever else: still one line, never a traceback
            self.signals.failed.emit(self.path, f"{self.path.name}: {type(exc).__name__}: {exc}")
            return
        self.signals.read.emit(self.path, trace)


class TraceOpener:
    """Reads trace files for the window and shows them; `opened` is the last one shown."""

    def __init__(self, window: Any) -> None:  # the MainWindow (which imports this module)
        self.window = window
        self._jobs: set[_Read] = set()
        self.opened: Path | None = None
        bar = window.editor_pane.recording_bar
        bar.edit_requested.connect(self.edit_here)
        # Another file, an example or New replaces the recording's script: editable again.
        window.document.path_changed.connect(lambda _path: self._leave())
        window.session.notebook_run.connect(self.show_notebook_run)

    def _leave(self) -> None:
        if self.replaying:
            self.edit_here()

    def open(self, path: Path) -> None:
        """Read `path` on a worker thread; it is shown (or why not said) when read."""
        self.window.statusBar().showMessage(f"Opening {path.name}…")
        job = _Read(Path(path))
        job.setAutoDelete(False)
        self._jobs.add(job)
        job.signals.read.connect(self.show, Qt.ConnectionType.QueuedConnection)
        job.signals.failed.connect(self._failed, Qt.ConnectionType.QueuedConnection)
        QThreadPool.globalInstance().start(job)

    def _done(self, path: Path) -> None:
        self._jobs = {j for j in self._jobs if j.path != path}

    def _failed(self, path: Path, message: str) -> None:
        self._done(path)
        self.window.console.append_error(f"Could not open the trace: {message}\n")
        self.window.statusBar().showMessage(message, 8000)

    def show(self, path: Path, trace: Trace) -> None:
        """Show `trace`, read from `path` (by `open`, or already by the command line)."""
        self._done(path)
        window = self.window
        if not window.document.open_text(trace.script or ""):
            return  # the learner kept their unsaved code (Cancel): nothing changes
        window.editor.setReadOnly(True)
        window.editor_pane.recording_bar.show_recording(trace, path.name)
        self.opened = path
        window.tabs.setCurrentWidget(window.graph_area)
        window.show_trace(trace)

    def show_notebook_run(self, trace: Trace, announcement: dict) -> None:
        """A %%autograd_viz cell the notebook ran: its script read-only, its graph drawn;
        unless the editor holds unsaved edits of the learner's, which are never replaced."""
        window = self.window
        cell = announcement.get("cell")
        name = f"cell [{cell}]" if cell is not None else "a cell"
        if window.document.is_modified and not self.replaying:
            window.console.append_info(
                f"The notebook ran {name} under autograd-viz. Your unsaved edits stay in the"
                " editor, so it is not drawn: save them and the next traced cell shows."
            )
            return
        window.document.set_text(trace.script or "", None)  # nothing unsaved is lost
        window.editor.setReadOnly(True)
        window.editor_pane.recording_bar.show_notebook_run(trace, f"The notebook's {name}")
        self.opened = None
        window.tabs.setCurrentWidget(window.graph_area)
        window.show_trace(trace)

    @property
    def replaying(self) -> bool:
        """Whether the editor holds a recording's script (read-only until Edit)."""
        return self.window.editor.isReadOnly()

    def edit_here(self) -> None:
        """Make the recording's script the editor's code; Ctrl+Enter then runs it here."""
        was = self.replaying
        self.window.editor.setReadOnly(False)
        self.window.editor_pane.recording_bar.hide()
        self.opened = None
        if was:
            self.window.statusBar().showMessage(
                "The script is yours to edit: Ctrl+Enter runs it here.", 5000
            )

    @staticmethod
    def ask_path(parent: Any, folder: str) -> Path | None:
        """File → Open trace…'s dialog (tests replace it)."""
        name, _ = QFileDialog.getOpenFileName(
            parent, "Open trace", folder, "Traces (*.json);;All files (*)"
        )
        return Path(name) if name else None

    def open_dialog(self) -> None:
        """File → Open trace…"""
        path = self.ask_path(self.window, str(Path.cwd()))
        if path is not None:
            self.open(path)


def dropped_path(mime: Any) -> Path | None:
    """The one local .json or .py file a drag carries (None for anything else)."""
    if not mime.hasUrls() or len(mime.urls()) != 1:
        return None
    url = mime.urls()[0]
    if not url.isLocalFile():
        return None
    path = Path(url.toLocalFile())
    return path if path.suffix.lower() in (".json", ".py", ".pyw") else None
