"""What the kernel sends back for one request: its IOPub messages relayed until it is
idle, its console output batched, and our MIME payloads read into the request's answer.
KernelWorker inherits these; they run on its thread, as every blocking call does."""

from __future__ import annotations

import contextlib
import json
import queue
import re
import threading
import time
from typing import Any

from autograd_viz.core.kernel.notebook import NOTEBOOK_RUN_MIME
from autograd_viz.core.kernel.protocol import (
    KERNEL_INFO_MIME,
    PROTOCOL_VERSION,
    RESULT_MIME,
    TRACE_MIME,
    version_problem,
)
from autograd_viz.core.kernel.trace_messages import TRACE_PART_MIME, trace_from_payload
from autograd_viz.core.kernel.wire import WIRE_ENCODING, TraceAssembly
from autograd_viz.core.platform.gc_pause import collections_postponed, freeze_big_run
from autograd_viz.core.platform.gil_sharing import gil_shared
from autograd_viz.core.trace import Trace
from autograd_viz.session._call import VERSION_MISMATCH, Request, failure

POLL_S = 0.1  # how often a waiting run checks for a dead kernel or an abort
STREAM_FLUSH_S = 0.05  # batch console output so a print loop cannot flood the GUI
STREAM_BUFFER_LIMIT = 1_000_000

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_OUR_MIMES = (KERNEL_INFO_MIME, TRACE_MIME, RESULT_MIME)
_ERROR = "error"  # beside the MIME payloads in a request's replies: the exception it raised
_TRACE_KINDS = ("run", "fetch")  # requests answered with a trace (TRACE_MIME and buffers)


class _RequestReplies:
    """Reads the replies to one request. The attributes (and `_death_words`) are
    KernelWorker's, which has the signals this emits."""

    kc: Any
    km: Any
    abort: threading.Event
    existing: str | None
    _busy: bool
    _loss: tuple[str, str] | None
    _buffers: dict[str, list[Any]]
    _assembly: TraceAssembly | None
    _parts_postponed: contextlib.ExitStack
    stdout: Any  # the worker's Signal(str)
    stderr: Any
    notebook_ran: Any

    def _notice_notebook_run(self, msg: dict[str, Any]) -> None:
        if msg.get("msg_type") != "display_data":
            return
        data = msg.get("content", {}).get("data", {})
        if isinstance(data.get(NOTEBOOK_RUN_MIME), dict):
            self.notebook_ran.emit(dict(data[NOTEBOOK_RUN_MIME]))

    def _answer(
        self, request: Request, ok: bool | None, replies: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """The KernelCall answer made of what the kernel sent for `request`."""
        try:
            return self._answer_of(request, ok, replies)
        finally:
            self._end_parts()

    def _answer_of(
        self, request: Request, ok: bool | None, replies: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        if ok is None:
            if self._loss is not None and self._loss[0] == "died":
                return failure(
                    f"The kernel died ({self._loss[1]}) before answering; a new one is starting."
                )
            if self._loss is not None:
                return failure("The attached kernel stopped answering before it answered.")
            return failure("The kernel was restarted before answering.")
        payload = replies.get(TRACE_MIME if request.kind in _TRACE_KINDS else RESULT_MIME)
        if payload is None:
            return failure(f"{request.label}: no answer came back (the console shows why).")
        problem = version_problem(payload)
        if problem is not None:  # another autograd-viz: its payload is not read, let alone drawn
            return failure(problem, VERSION_MISMATCH)
        try:
            if request.kind in _TRACE_KINDS:
                with collections_postponed(), gil_shared():
                    # Inflated and parsed here, on this thread, one part at a time (a run's
                    # parts as they arrived, while the kernel encoded the next: _take_part).
                    assembly, self._assembly = self._assembly, None
                    trace = trace_from_payload(payload, self._buffers.get(TRACE_MIME, []), assembly)
                    # A big one lives as long as it is shown: out of the collector's sight
                    # before any pass rescans it while the GUI thread waits (gc_pause.py).
                    freeze_big_run(len(trace.events) + len(trace.tensors) + len(trace.nodes))
                return {
                    "ok": True,
                    "trace": trace,
                    "namespace": str(payload.get("namespace", "fresh")),
                    "error": None,
                }
            answer = json.loads(payload["json"])
            trace = answer.get("trace")
            answer["trace"] = Trace.from_json(trace) if trace else None
            return answer
        except (KeyError, TypeError, ValueError) as exc:
            return failure(f"{request.label}: the kernel's answer could not be read ({exc}).")

    def _execute(self, code: str) -> tuple[bool | None, dict[str, dict[str, Any]]]:
        """Send one execute_request and relay its iopub messages until the kernel is idle.

        (True: ran cleanly; False: raised; None: the kernel went or the wait was
        aborted — `_loss` says which), and our MIME payloads it published, by type.
        """
        self._busy = True
        self._loss = None
        self.abort.clear()
        replies: dict[str, dict[str, Any]] = {}
        self._buffers = {}
        self._end_parts()
        try:
            msg_id = self.kc.execute(code, silent=False, store_history=False, allow_stdin=False)
            return self._relay(msg_id, replies), replies
        finally:
            self._busy = False

    def _relay(self, msg_id: str, replies: dict[str, dict[str, Any]]) -> bool | None:
        ok = True
        pending: list[tuple[str, str]] = []
        last_flush = time.monotonic()
        while True:
            if self.abort.is_set():
                self._flush(pending)
                return None
            try:
                msg = self.kc.get_iopub_msg(timeout=POLL_S)
            except queue.Empty:
                self._flush(pending)
                last_flush = time.monotonic()
                if self.km is not None and not self.km.is_alive():
                    self._loss = ("died", self._death_words())
                    return None
                if self.existing is not None and self.kc is not None and not self.kc.is_alive():
                    self._loss = ("lost", "")
                    return None
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                self._notice_notebook_run(msg)  # a notebook's cell ran meanwhile
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                self._buffer(pending, content.get("name", "stdout"), content.get("text", ""))
            elif kind in ("display_data", "execute_result"):
                self._flush(pending)
                self._display(content.get("data", {}), replies, msg.get("buffers") or [])
            elif kind == "error":
                ok = False
                replies[_ERROR] = {k: content.get(k) for k in ("ename", "evalue")}
                text = _ANSI.sub("", "\n".join(content.get("traceback", [])))
                self._buffer(pending, "stderr", text + "\n")
            elif kind == "status" and content.get("execution_state") == "idle":
                self._flush(pending)
                return ok
            if time.monotonic() - last_flush > STREAM_FLUSH_S:
                self._flush(pending)
                last_flush = time.monotonic()

    @staticmethod
    def _buffer(pending: list[tuple[str, str]], name: str, text: str) -> None:
        if pending and pending[-1][0] == name:
            text = pending[-1][1] + text
            pending.pop()
        if len(text) > STREAM_BUFFER_LIMIT:
            dropped = len(text) - STREAM_BUFFER_LIMIT
            text = text[:STREAM_BUFFER_LIMIT] + f"\n… {dropped:,} characters of output not shown\n"
        pending.append((name, text))

    def _flush(self, pending: list[tuple[str, str]]) -> None:
        for name, text in pending:
            (self.stderr if name == "stderr" else self.stdout).emit(text)
        pending.clear()

    def _take_part(self, part: Any, buffers: list[Any]) -> None:
        """Read one part of the trace a run is sending, now, while the kernel encodes the
        next. A part of another protocol is left unread: the trace's own payload comes next
        and names the versions that met."""
        if not isinstance(part, dict) or len(buffers) != 1:
            return
        if part.get("protocol") != PROTOCOL_VERSION or part.get("encoding") != WIRE_ENCODING:
            return
        if self._assembly is None:
            self._assembly = TraceAssembly(part.get("parts") or {})
            # One block from the first part until the trace is frozen (_answer): between
            # blocks the collector's first young pass took the older generations along and
            # rescanned the parts read so far, a 40-60 ms stall of the GUI thread (measured).
            self._parts_postponed.enter_context(collections_postponed())
        with gil_shared():
            self._assembly.add(str(part.get("format", "")), buffers[0])

    def _end_parts(self) -> None:
        """Let go of the parts read for the last request, and of their collector block."""
        self._assembly = None
        self._parts_postponed.close()

    def _display(
        self, data: dict[str, Any], replies: dict[str, dict[str, Any]], buffers: list[Any]
    ) -> None:
        if TRACE_PART_MIME in data:
            self._take_part(data[TRACE_PART_MIME], buffers)
            return
        mime = next((m for m in _OUR_MIMES if m in data), None)
        if mime is not None:  # read once the request is over, by the one who asked
            replies[mime] = data[mime]
            self._buffers[mime] = list(buffers)
        elif "text/plain" in data:
            self.stdout.emit(str(data["text/plain"]) + "\n")
