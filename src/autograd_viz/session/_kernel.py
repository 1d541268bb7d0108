"""KernelSession: the GUI's handle on the kernel. Never blocks the GUI thread."""

from __future__ import annotations

from enum import Enum

from PySide6.QtCore import QObject, QThread, Signal

from autograd_viz.session._worker import KernelWorker


class KernelState(str, Enum):
    """What the status bar says about the kernel."""

    STARTING = "starting"
    IDLE = "idle"
    BUSY = "busy"
    DEAD = "dead"


class KernelSession(QObject):
    """Starts the kernel in the background, runs code in it and re-emits what comes back."""

    state_changed = Signal(str)  # a KernelState value
    kernel_info = Signal(dict)  # torch version, device, threads
    stdout = Signal(str)
    stderr = Signal(str)
    trace_ready = Signal(object)  # a core.trace.Trace
    run_finished = Signal(bool)  # True when the code ran without an error
    notice = Signal(str)  # app messages for the console ("kernel restarted")
    start_failed = Signal(str)

    _start = Signal()
    _run = Signal(str, str)
    _restart = Signal()
    _shutdown = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = KernelState.DEAD
        self.info: dict = {}
        self._thread = QThread()
        self._thread.setObjectName("autograd-viz kernel")
        self._worker = KernelWorker()
        self._worker.moveToThread(self._thread)
        self._start.connect(self._worker.start)
        self._run.connect(self._worker.run)
        self._restart.connect(self._worker.restart)
        self._shutdown.connect(self._worker.shutdown)
        self._worker.state.connect(self._set_state)
        self._worker.info.connect(self._set_info)
        self._worker.stdout.connect(self.stdout)
        self._worker.stderr.connect(self.stderr)
        self._worker.trace.connect(self.trace_ready)
        self._worker.run_done.connect(self.run_finished)
        self._worker.notice.connect(self.notice)
        self._worker.failed.connect(self.start_failed)
        self._thread.start()

    def _set_state(self, state: str) -> None:
        if self.state.value == state:
            return
        self.state = KernelState(state)
        self.state_changed.emit(state)

    def _set_info(self, info: dict) -> None:
        self.info = info
        self.kernel_info.emit(info)

    @property
    def device(self) -> str:
        """The device the kernel computes on, once it has said."""
        return str(self.info.get("device", ""))

    def start(self) -> None:
        """Start the kernel in the background; state_changed says when it is ready."""
        self._set_state(KernelState.STARTING.value)
        self._start.emit()

    def run(self, code: str, filename: str = "<editor>") -> None:
        """Run code in the kernel under capture; trace_ready and run_finished follow."""
        self._run.emit(code, filename)

    def interrupt(self) -> None:
        """Stop running code, keeping the kernel and its variables (sends SIGINT)."""
        km = self._worker.km
        if km is not None and self.state is KernelState.BUSY:
            km.interrupt_kernel()

    def restart(self) -> None:
        """Replace the kernel with a fresh one, abandoning whatever it is doing."""
        self._worker.abort.set()
        self._set_state(KernelState.STARTING.value)
        self._restart.emit()

    def shutdown(self, wait_ms: int = 5000) -> None:
        """Stop the kernel and the worker thread (used when the app closes)."""
        self._worker.abort.set()
        self._shutdown.emit()
        self._thread.quit()
        self._thread.wait(wait_ms)
