"""KernelSession: the GUI's handle on the kernel. Never blocks the GUI thread."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from PySide6.QtCore import QObject, QThread, QTimer, Signal

from autograd_viz.core.kernel.protocol import call_request
from autograd_viz.session._worker import KernelWorker

# Code that catches KeyboardInterrupt (or sits in native code) ignores Stop: this long after
# an interrupt that did not end the run, the kernel is replaced instead.
INTERRUPT_GRACE_MS = 2000


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
    _run = Signal(str, str, str, str, str)
    _call = Signal(str, str, str, str)
    _restart = Signal()
    _attach = Signal(str)
    _shutdown = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = KernelState.DEAD
        self.info: dict = {}
        self.device_choice = "auto"  # see set_device
        self._busy_count = 0  # how many times the kernel became busy: tells runs apart
        self._interrupted_run = -1
        self._escalation = QTimer(self)
        self._escalation.setSingleShot(True)
        self._escalation.setInterval(INTERRUPT_GRACE_MS)
        self._escalation.timeout.connect(self._interrupt_ignored)
        self._thread = QThread()
        self._thread.setObjectName("autograd-viz kernel")
        self._worker = KernelWorker()
        self._worker.moveToThread(self._thread)
        self._start.connect(self._worker.start)
        self._run.connect(self._worker.run)
        self._call.connect(self._worker.call)
        self._worker.result.connect(self.call_finished)
        self._restart.connect(self._worker.restart)
        self._attach.connect(self._worker.attach)
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
        if self.state is KernelState.BUSY:
            self._busy_count += 1
        else:
            self._escalation.stop()
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

    def set_device(self, device: str) -> None:
        """The device editor runs use from now on: "auto", "cpu" or "cuda:N"."""
        self.device_choice = device

    def run(self, code: str, filename: str = "<editor>", space: str = "", path: str = "") -> None:
        """Run code in the kernel under capture; trace_ready and run_finished follow.

        `space` names a namespace of its own (e.g. "lab"); "" is the editor's globals.
        `path` is the file the code was saved as ("" when unsaved): it runs as that file.
        """
        # The editor's runs go to the chosen device; the lab and other panes keep the default.
        device = self.device_choice if not space and self.device_choice != "auto" else ""
        self._run.emit(code, filename, space, device, path)

    def call(
        self, function: str, tag: str, arguments: dict[str, Any] | None = None, space: str = ""
    ) -> None:
        """Call `autograd_viz.core.module:function(namespace=..., **arguments)` in the kernel.

        call_finished(tag, payload) follows exactly once; a result that carries a trace
        also emits trace_ready first. Calls queue behind runs, in order.
        """
        call_request(function, tag, arguments, space)  # raises ValueError here, not in the worker
        self._call.emit(function, tag, json.dumps(arguments or {}), space)

    @property
    def kernel_pid(self) -> int | None:
        """The kernel process's id while one is running (its process group has the same)."""
        return self._worker.kernel_pid

    @property
    def existing(self) -> str | None:
        """The connection file of the running kernel this session is attached to, if any."""
        return self._worker.existing

    def attach(self, connection_file: str | None) -> None:
        """Attach to a running Jupyter kernel by its connection file (None: go back to a
        kernel of our own). The kernel must be able to import autograd_viz; when it cannot,
        start_failed says so."""
        self._worker.abort.set()
        self._set_state(KernelState.STARTING.value)
        self._attach.emit(str(connection_file or ""))

    def interrupt(self) -> None:
        """Stop running code, keeping the kernel and its variables (sends SIGINT).

        Code that is still running INTERRUPT_GRACE_MS later ignored the interrupt: the
        kernel is restarted (its variables are lost) and `notice` says so. An attached
        kernel gets an interrupt_request message instead of a signal, and is never restarted.
        """
        if self.state is not KernelState.BUSY:
            return
        km, kc = self._worker.km, self._worker.kc
        if km is not None or (self.existing is not None and kc is not None):
            if km is not None:
                km.interrupt_kernel()
            else:  # the control channel is the GUI's alone: the worker never uses it
                kc.control_channel.send(kc.session.msg("interrupt_request", {}))
            self._interrupted_run = self._busy_count
            if not self._escalation.isActive():
                self._escalation.start()

    def _interrupt_ignored(self) -> None:
        if self.state is not KernelState.BUSY or self._busy_count != self._interrupted_run:
            return  # that run ended; a later one was not interrupted
        if self.existing is not None:
            self.notice.emit(
                f"The code did not stop within {INTERRUPT_GRACE_MS / 1000:g} s of Stop. The "
                "attached kernel is not this app's to restart: stop it on its machine."
            )
            return
        self.notice.emit(
            f"The code did not stop within {INTERRUPT_GRACE_MS / 1000:g} s of Stop (it catches "
            "KeyboardInterrupt, or is stuck outside Python): restarting the kernel. "
            "Its variables are lost; your text is untouched."
        )
        self.restart()

    def restart(self) -> None:
        """Replace the kernel with a fresh one, abandoning whatever it is doing."""
        self._worker.abort.set()
        self._set_state(KernelState.STARTING.value)
        self._restart.emit()

    def shutdown(self, wait_ms: int = 5000) -> None:
        """Stop the kernel and the worker thread (used when the app closes)."""
        self._escalation.stop()
        self._worker.abort.set()
        if self._thread.isFinished():
            return
        self._shutdown.emit()  # the worker stops the kernel, then ends its own thread
        if not self._thread.wait(wait_ms):
            # The worker is busy (a kernel still starting): it will shut that kernel down
            # when it gets to it; until then, leave nothing running that it started.
            self._worker.kill_leftovers()
