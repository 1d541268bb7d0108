"""KernelSession: the GUI's handle on the kernel. Never blocks the GUI thread."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from autograd_viz.core.protocol import call_request
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
    call_finished = Signal(str, dict)  # tag, {"ok": bool, "result" | "error"}
    notice = Signal(str)  # app messages for the console ("kernel restarted")
    start_failed = Signal(str)

    _start = Signal()
    _run = Signal(str, str, str)
    _call = Signal(str, str, str, str)
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
        self._call.connect(self._worker.call)
        self._worker.result.connect(self.call_finished)
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

    def run(self, code: str, filename: str = "<editor>", space: str = "") -> None:
        """Run code in the kernel under capture; trace_ready and run_finished follow.

        `space` names a namespace of its own (e.g. "lab"); "" is the editor's globals.
        """
        self._run.emit(code, filename, space)

    def call(
        self, function: str, tag: str, arguments: dict[str, Any] | None = None, space: str = ""
    ) -> None:
        """Call `autograd_viz.core.module:function(namespace=..., **arguments)` in the kernel.

        call_finished(tag, payload) follows exactly once; a result that carries a trace
        also emits trace_ready first. Calls queue behind runs, in order.
        """
        call_request(function, tag, arguments, space)  # raises ValueError here, not in the worker
        self._call.emit(function, tag, json.dumps(arguments or {}), space)

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
