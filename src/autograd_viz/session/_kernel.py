"""KernelSession: the GUI's handle on the kernel. Never blocks the GUI thread."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from enum import Enum
from typing import Any

from PySide6.QtCore import QObject, QThread, QTimer, Signal

from autograd_viz.core.kernel.notebook import notebook_trace_request
from autograd_viz.core.kernel.protocol import (
    call_request,
    call_target,
    run_request,
    version_problem,
)
from autograd_viz.session._call import VERSION_MISMATCH, KernelCall, Request, failure
from autograd_viz.session._worker import KernelWorker

# Code that catches KeyboardInterrupt (or sits in native code) ignores Stop: this long after
# an interrupt that did not end the run, the kernel is replaced instead.
INTERRUPT_GRACE_MS = 2000


# After its kernel is killed, a worker still starting one fails within a second or two
# (jupyter_client checks that the kernel lives each second while waiting for it).
STOP_AFTER_KILL_MS = 10_000


class KernelState(str, Enum):
    """What the status bar says about the kernel."""

    STARTING = "starting"
    IDLE = "idle"
    BUSY = "busy"
    DEAD = "dead"


class KernelSession(QObject):
    """Starts the kernel in the background and runs code in it. Each run or call returns
    its own KernelCall, whose `finished` carries that request's answer and nobody else's."""

    state_changed = Signal(str)  # a KernelState value
    kernel_info = Signal(dict)  # torch version, device, threads, versions
    stdout = Signal(str)
    stderr = Signal(str)
    run_finished = Signal(bool)  # after each run's own `finished`: True when it got a trace
    notice = Signal(str)  # app messages for the console ("kernel restarted")
    start_failed = Signal(str)
    # A traced cell (%%autograd_viz) that a notebook ran in the attached kernel: its Trace
    # and its announcement (run_id, cell number); fetched in the order they ran.
    notebook_run = Signal(object, dict)

    _start = Signal()
    _submit = Signal(object)  # a Request
    _restart = Signal()
    _attach = Signal(str)
    _shutdown = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = KernelState.DEAD
        self.info: dict = {}
        self.device_choice = "auto"  # see set_device
        self.keep_variables = False  # see set_keep_variables
        self._ids = itertools.count(1)
        self._pending: dict[int, KernelCall] = {}  # asked, not yet answered, in order
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
        self._submit.connect(self._worker.serve)
        self._worker.answered.connect(self._answered)
        self._worker.epoch_ended.connect(self._epoch_ended)
        self._restart.connect(self._worker.restart)
        self._attach.connect(self._worker.attach)
        self._shutdown.connect(self._worker.shutdown)
        self._worker.state.connect(self._set_state)
        self._worker.info.connect(self._set_info)
        self._worker.stdout.connect(self.stdout)
        self._worker.stderr.connect(self.stderr)
        self._worker.notice.connect(self.notice)
        self._worker.failed.connect(self.start_failed)
        self._worker.notebook_ran.connect(self._notebook_ran)
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

    def set_keep_variables(self, keep: bool) -> None:
        """Whether runs continue the namespace the last run left (the REPL's way) instead
        of starting in a fresh one, as `python FILE` does; used where run() is not told."""
        self.keep_variables = bool(keep)

    def run(
        self,
        code: str,
        filename: str = "<editor>",
        space: str = "",
        path: str = "",
        keep: bool | None = None,
    ) -> KernelCall:
        """Run code in the kernel under capture; the returned call's `finished` follows
        exactly once, with {"ok", "trace", "namespace", "error"} (see KernelCall).

        The code runs in a fresh namespace of `space` ("" the editor's; a name such as
        "lab" one of its own), or with `keep` (None: `keep_variables`) in the one the last
        run there left. `path` is the file the code was saved as ("" when unsaved): it runs
        as that file. Runs and calls queue in order.
        """
        keep = self.keep_variables if keep is None else bool(keep)
        # The editor's runs go to the chosen device; the lab and other panes keep the default.
        device = self.device_choice if not space and self.device_choice != "auto" else None
        code = run_request(code, filename, space, device, path or None, keep)
        return self._ask("run", f"The run of {filename}", code)

    def call(
        self, function: Callable[..., Any], arguments: dict[str, Any] | None = None, space: str = ""
    ) -> KernelCall:
        """Call `function(namespace=..., **arguments)` in the kernel, on what the last run of
        `space` left; the returned call's `finished` follows exactly once (see KernelCall).

        `function` is a function of `autograd_viz.core` (the kernel imports it by its
        `__module__` and `__qualname__`); anything else raises ValueError here. The
        arguments cross as JSON. Calls queue behind runs, in order.
        """
        target = call_target(function)
        return self._ask("call", target, call_request(target, arguments, space))

    def _notebook_ran(self, announcement: dict) -> None:
        """A notebook's traced cell: fetch its trace (queued behind any run of ours)."""
        problem = version_problem(announcement)
        if problem is not None:
            self.notice.emit(problem)
            return
        run_id = announcement.get("run_id")
        if not isinstance(run_id, str):
            return
        cell = announcement.get("cell")
        label = f"The notebook's cell [{cell}]" if cell is not None else "The notebook's cell"
        fetch = self._ask("fetch", label, notebook_trace_request(run_id))
        fetch.finished.connect(lambda answer: self._notebook_fetched(label, announcement, answer))

    def _notebook_fetched(self, label: str, announcement: dict, answer: dict) -> None:
        if answer.get("ok") and answer.get("trace") is not None:
            self.notebook_run.emit(answer["trace"], announcement)
        else:
            why = (answer.get("error") or {}).get("message", "no answer")
            self.notice.emit(f"{label} was traced, but its trace could not be fetched: {why}")

    def _ask(self, kind: str, label: str, code: str) -> KernelCall:
        # No parent: held here until answered, then by whoever asked, for as long as they like.
        call = KernelCall(kind, label, self._worker.epoch)
        call_id = next(self._ids)
        self._pending[call_id] = call
        self._submit.emit(Request(call_id, call.epoch, kind, code, label))
        return call

    def _answered(self, call_id: int, answer: dict) -> None:
        call = self._pending.pop(call_id, None)
        if call is None:
            return  # answered already, when its kernel went
        if (answer.get("error") or {}).get("type") == VERSION_MISMATCH:
            self.notice.emit(answer["error"]["message"])
        self._finish(call, answer)

    def _finish(self, call: KernelCall, answer: dict) -> None:
        if call.finish(answer) and call.kind == "run":
            self.run_finished.emit(bool(answer.get("ok")))

    def _epoch_ended(self, epoch: int, why: str) -> None:
        """The kernel went: every call asked of it before then is answered now."""
        for call_id, call in list(self._pending.items()):
            if call.epoch < epoch:
                del self._pending[call_id]
                self._finish(call, failure(why))

    def _abandon_pending(self, why: str) -> None:
        self._epoch_ended(self._worker.next_epoch(), why)

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
        self._abandon_pending("The app left that kernel before it answered.")
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
        """Replace the kernel with a fresh one, abandoning whatever it is doing: every run
        and call not answered yet finishes now, with ok false."""
        self._worker.abort.set()
        self._abandon_pending("The kernel was restarted before answering.")
        self._set_state(KernelState.STARTING.value)
        self._restart.emit()

    def shutdown(self, wait_ms: int = 5000) -> None:
        """Stop the kernel and the worker thread (used when the app closes)."""
        self._escalation.stop()
        self._worker.abort.set()
        self._abandon_pending("The app closed the kernel before it answered.")
        if self._thread.isFinished():
            return
        self._shutdown.emit()  # the worker stops the kernel, then ends its own thread
        if not self._thread.wait(wait_ms):
            # The worker is busy (a kernel still starting): it will shut that kernel down
            # when it gets to it; until then, leave nothing running that it started.
            self._worker.kill_leftovers()
            # Its start now fails fast (the kernel it waits on is gone), then it runs the
            # shutdown and ends its thread. Destroyed while still running, the thread took
            # the whole app down at exit ("QThread: Destroyed while thread … is still
            # running", abort): an `open --screenshot` on a loaded machine did.
            self._thread.wait(STOP_AFTER_KILL_MS)
