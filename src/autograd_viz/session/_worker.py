"""The kernel worker: every blocking jupyter_client call happens here, off the GUI thread."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from jupyter_client import KernelManager
from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from autograd_viz.core.kernel.protocol import KERNEL_INFO_MIME, setup_request, version_problem
from autograd_viz.core.kernel.wire import TraceAssembly
from autograd_viz.core.platform.process_tree import new_run_mark
from autograd_viz.core.platform.shadowing import HiddenModule
from autograd_viz.session._call import Request, failure
from autograd_viz.session._launch import OwnKernelSpecs, kernel_env
from autograd_viz.session._leftovers import CONNECTION, make_kernel_folder
from autograd_viz.session._processes import death_reason, descendants, kill_leftovers
from autograd_viz.session._replies import _ERROR, POLL_S, _RequestReplies

STARTUP_TIMEOUT_S = 60.0
REMOTE_TIMEOUT_S = 20.0  # an attached kernel is already running: it answers fast or not at all
LISTEN_MS = 200  # how often an idle, attached worker looks for the notebook's traced cells


class KernelWorker(QObject, _RequestReplies):
    """Lives in its own QThread. Slots are called through queued signals."""

    state = Signal(str)
    info = Signal(dict)
    stdout = Signal(str)
    stderr = Signal(str)
    answered = Signal(int, object)  # a Request's call_id, its answer (see KernelCall)
    # The kernel went (died, stopped answering): requests of earlier epochs get no answer
    # from it; (the new epoch, why, in a sentence the session gives each of them).
    epoch_ended = Signal(int, str)
    notice = Signal(str)
    failed = Signal(str)
    # Another client of an attached kernel (a notebook) ran a traced cell: its announcement
    # (NOTEBOOK_RUN_MIME: run id, cell number, versions), seen on IOPub.
    notebook_ran = Signal(dict)

    def __init__(self) -> None:
        super().__init__()
        self.km: KernelManager | None = None
        self.kc: Any = None
        self.abort = threading.Event()
        self._watchdog: QTimer | None = None
        self._listener: QTimer | None = None  # reads IOPub between requests (attached only)
        self._busy = False
        self._socket_dir: str | None = None
        self._mark: str | None = None  # in the kernel's environment: finds all it started
        self.kernel_pid: int | None = None  # read from the GUI thread on shutdown
        self._pgid: int | None = None
        self._epoch = 0
        self._epoch_lock = threading.Lock()
        # Set by _relay when the kernel went during a request: ("died" | "lost", why).
        self._loss: tuple[str, str] | None = None
        # The binary buffers that came with each of our MIME replies of the last request.
        self._buffers: dict[str, list[Any]] = {}
        # The parts of a run's trace read so far, as they arrived (see _take_part).
        self._assembly: TraceAssembly | None = None
        self._parts_postponed = contextlib.ExitStack()
        # A running Jupyter kernel's connection file to attach to instead of launching one
        # (a GPU server's kernel): never shut down, restarted or killed by the app.
        self.existing: str | None = None

    # ---- lifecycle -------------------------------------------------------------
    @Slot()
    def start(self) -> None:
        """Launch (or attach to) the kernel and prepare it; say clearly when that fails."""
        self.state.emit("starting")
        if self.existing is not None:
            self._attach(self.existing)
            return
        try:
            # ipc sockets are files named after `ip`; a private folder keeps two app
            # instances (or a test run beside the app) from ever sharing one. The connection
            # file goes there too, so that a killed app's leftovers are one folder, which
            # the next start sweeps (_leftovers).
            self._socket_dir = make_kernel_folder()
            self._mark = new_run_mark()
            self.km = KernelManager(
                kernel_name="autograd-viz",
                transport="ipc",
                ip=os.path.join(self._socket_dir, "kernel"),
                connection_file=os.path.join(self._socket_dir, CONNECTION),
                kernel_spec_manager=OwnKernelSpecs(),
            )
            self.km.start_kernel(env=kernel_env(self._mark))
            # jupyter_client starts the kernel in a session of its own: its pid is the group.
            self.kernel_pid = getattr(self.km.provisioner, "pid", None)
            self._pgid = getattr(self.km.provisioner, "pgid", None)
            self.kc = self.km.client()
            self.kc.start_channels()
            self.kc.wait_for_ready(timeout=STARTUP_TIMEOUT_S)
        except Exception as exc:  # whatever went wrong, the user gets a sentence, not a crash
            self._stop_quietly()
            self.state.emit("dead")
            self.failed.emit(f"The Python kernel could not start: {exc}")
            return
        self._prepare()

    def _prepare(self) -> None:
        if self._watchdog is None:
            # No parent: shutdown() drops it here, in this thread, where it was made.
            self._watchdog = QTimer()
            self._watchdog.setInterval(1000)
            self._watchdog.timeout.connect(self._check_alive)
        self._watchdog.start()
        if self.existing is not None and self._listener is None:
            self._listener = QTimer()  # no parent, as the watchdog
            self._listener.setInterval(LISTEN_MS)
            self._listener.timeout.connect(self._listen)
            self._listener.start()
        # An attached kernel is not ours: its memory and stack limits stay as they are.
        ok, replies = self._execute(setup_request(limits=self.existing is None))
        if ok is None:
            self._handle_loss()
            return
        info = replies.get(KERNEL_INFO_MIME)
        if not ok or info is None:
            self.state.emit("dead")
            error = replies.get(_ERROR, {})
            if error.get("ename") == HiddenModule.__name__:  # the user can fix this one
                self.failed.emit(f"The Python kernel could not start: {error.get('evalue')}.")
                return
            self.failed.emit(
                "The kernel started but could not prepare PyTorch: the console shows why."
            )
            return
        problem = version_problem(info)
        if problem is not None:  # an attached kernel with another autograd-viz: not used
            self._stop_quietly()
            self.state.emit("dead")
            self.failed.emit(problem)
            return
        self.info.emit(dict(info))
        self.state.emit("idle")

    # ---- epochs: which kernel a request was asked of ------------------------------
    @property
    def epoch(self) -> int:
        """The current kernel's epoch (read from the GUI thread to stamp requests)."""
        return self._epoch

    def next_epoch(self) -> int:
        """Start a new epoch: requests stamped earlier are never sent (either thread)."""
        with self._epoch_lock:
            self._epoch += 1
            return self._epoch

    @Slot(str)
    def attach(self, connection_file: str) -> None:
        """Leave the current kernel (stopping it if it is ours) and attach to a running one;
        an empty path goes back to a kernel of our own."""
        self._stop_quietly()
        self.existing = connection_file or None
        self.start()

    def _attach(self, connection_file: str) -> None:
        from jupyter_client import BlockingKernelClient

        where = Path(connection_file).name
        try:
            kc = BlockingKernelClient()
            kc.load_connection_file(connection_file)
            kc.start_channels()
            self.kc = kc
            kc.wait_for_ready(timeout=REMOTE_TIMEOUT_S)
        except Exception as exc:
            self._stop_quietly()
            self.state.emit("dead")
            self.failed.emit(f"Could not connect to the kernel of {where}: {exc}")
            return
        missing = self._missing_capture_module()
        if missing is not None:
            self._stop_quietly()
            self.state.emit("dead")
            self.failed.emit(
                f"The kernel of {where} runs, but cannot import autograd_viz ({missing}). "
                "Install it in that kernel's environment (pip install autograd-viz); only its "
                "capture module is used there."
            )
            return
        self.notice.emit(f"Attached to the running kernel of {where}.")
        self._prepare()

    def _missing_capture_module(self) -> str | None:
        """None when the kernel can import our capture module, else its error, in a line."""
        msg_id = self.kc.execute(
            "import autograd_viz.core.kernel.protocol", silent=True, store_history=False
        )
        deadline = time.monotonic() + REMOTE_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                reply = self.kc.get_shell_msg(timeout=POLL_S)
            except queue.Empty:
                continue
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            content = reply["content"]
            if content.get("status") == "ok":
                return None
            return f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"
        return "no answer"

    @Slot()
    def restart(self) -> None:
        """Throw the kernel away and start a fresh one (its variables are lost); an attached
        kernel is only reconnected to (it is not ours to restart)."""
        self._stop_quietly()
        if self.existing is not None:
            self.notice.emit("Reconnecting to the attached kernel (it keeps its variables)…")
        else:
            self.notice.emit("Restarting the kernel…")
        self.start()

    @Slot()
    def shutdown(self) -> None:
        """Stop the kernel process for good, then end this worker's thread."""
        for timer in (self._watchdog, self._listener):
            if timer is not None:
                timer.stop()
        self._watchdog = self._listener = None
        self._stop_quietly()
        self.state.emit("dead")
        # Only now: a quit() sent from outside could end the thread before this slot ran.
        QThread.currentThread().quit()

    def _stop_quietly(self) -> None:
        # Read before the kernel goes: once it is dead, /proc no longer lists its children.
        started = descendants(self.kernel_pid) if self.kernel_pid is not None else []
        if self.kc is not None:
            with contextlib.suppress(Exception):
                self.kc.stop_channels()
        if self.km is not None:
            with contextlib.suppress(Exception):
                self.km.shutdown_kernel(now=True)
        self.kill_leftovers(started)
        self.kc = None
        self.km = None
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    def kill_leftovers(self, started: list[tuple[int, str]] | None = None) -> None:
        """Make sure the kernel and everything it started are gone (safe to repeat)."""
        if self.kernel_pid is not None and started is None:
            started = descendants(self.kernel_pid)
        kill_leftovers(self._pgid, started or [], self._mark)
        self.kernel_pid = self._pgid = None

    @Slot()
    def _listen(self) -> None:
        """Between requests, read what other clients' cells published on IOPub: the
        announcements of traced cells are passed on, the rest is not ours."""
        if self._busy or self.kc is None or self.existing is None:
            return
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=0)
            except queue.Empty:
                return
            except Exception:  # the channel went: the watchdog says so
                return
            self._notice_notebook_run(msg)

    @Slot()
    def _check_alive(self) -> None:
        if self._busy:
            return
        if self.km is not None and not self.km.is_alive():
            self._kernel_died()
        elif self.existing is not None and self.kc is not None and not self.kc.is_alive():
            self._attached_kernel_lost()

    def _attached_kernel_lost(self) -> None:
        """An attached kernel stopped answering: it is not ours to restart, so say so."""
        if self._watchdog is not None:
            self._watchdog.stop()
        self._stop_quietly()
        self.epoch_ended.emit(
            self.next_epoch(), "The attached kernel stopped answering before this ran."
        )
        self.state.emit("dead")
        self.notice.emit(
            f"The attached kernel ({Path(self.existing or '').name}) stopped answering. "
            "Restart it on its machine and connect again (File → Connect to kernel…), or "
            "go back to a kernel of this app's own (File → Use a local kernel)."
        )

    def _death_words(self) -> str:
        code = None
        with contextlib.suppress(Exception):
            code = self.km.provisioner.process.poll()
        return death_reason(code)

    def _kernel_died(self, reason: str | None = None) -> None:
        reason = reason or self._death_words()
        self.epoch_ended.emit(
            self.next_epoch(), f"The kernel died ({reason}) before this ran; a new one is starting."
        )
        self.state.emit("dead")
        self.notice.emit(
            f"The kernel died ({reason}). Its variables are lost. "
            "Starting a new one; your text is untouched."
        )
        self.restart()

    def _handle_loss(self) -> None:
        """After a request during which the kernel went: say so and start over."""
        loss, self._loss = self._loss, None
        if loss is None:
            return
        if loss[0] == "died":
            self._kernel_died(loss[1])
        else:
            self._attached_kernel_lost()

    # ---- running code ------------------------------------------------------------
    @Slot(object)
    def serve(self, request: Request) -> None:
        """Send one run or call to the kernel; always answers it, unless its epoch is over
        (then the session has answered it already)."""
        if request.epoch != self._epoch:
            return
        if self.kc is None:
            self.answered.emit(
                request.call_id, failure("The kernel is not running; restart it and try again.")
            )
            return
        self.state.emit("busy")
        ok, replies = self._execute(request.code)
        if ok is not None:  # None: the kernel went or the wait was abandoned
            self.state.emit("idle")
        self.answered.emit(request.call_id, self._answer(request, ok, replies))
        self._handle_loss()
