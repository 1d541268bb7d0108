"""Run user code for real and record what happened: the graph it left, the error it raised."""

from __future__ import annotations

import ast
import linecache
import os
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

import torch

from autograd_viz.core.capture import DEFAULT_MAX_EVENTS, Registry, Tracer
from autograd_viz.core.capture.graph_capture import DEFAULT_MAX_NODES, EarlierTensors, capture_graph
from autograd_viz.core.kernel.script_context import (
    exit_status,
    loop_statements,
    recursion_headroom,
)
from autograd_viz.core.kernel.torch_state import default_device_set
from autograd_viz.core.trace import Trace

FRESH, KEPT = "fresh", "kept"  # run_end's `namespace`: where the run started

# Frames of ours (and torch's dispatch to our mode) that a user's traceback should not show.
_HIDDEN_FRAMES = (
    str(Path(__file__).resolve().parents[1]),  # all of core/, capture included
    str(Path(torch.__file__).parent / "overrides.py"),
)


def preferred_device() -> str:
    """The device new work should go to: the first GPU when there is one."""
    return "cuda:0" if torch.cuda.is_available() else "cpu"


def resolve_device(device: str | None) -> str | None:
    """`auto` → the preferred device; `cpu`, `cuda`, `cuda:N` are checked; None stays None."""
    if device is None:
        return None
    if device == "auto":
        return preferred_device()
    parsed = torch.device(device)  # raises RuntimeError for nonsense like "gpu"
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but torch sees no CUDA device")
    return str(parsed) if parsed.index is not None or parsed.type != "cuda" else "cuda:0"


def set_torch_threads(threads: int | None = None) -> int:
    """Pin torch's intra-op threads: its default oversubscribes small machines badly."""
    if threads is None:
        env = os.environ.get("AUTOGRAD_VIZ_THREADS", "")
        threads = int(env) if env.isdigit() and int(env) > 0 else max(1, (os.cpu_count() or 2) // 2)
    torch.set_num_threads(threads)
    return threads


def _ours(frame: traceback.FrameSummary) -> bool:
    """A frame the tracer added: our modules, torch's dispatch to our mode, and the
    `return handle_torch_function(...)` line a torch method runs only because a mode is on."""
    if frame.filename.startswith(_HIDDEN_FRAMES):
        return True
    return (frame.line or "").startswith("return handle_torch_function(")


def user_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback `tb` without the tracer's frames (the ones `_error_event` leaves out of
    its text), as a traceback object that can be raised again."""
    kept = []
    while tb is not None:
        code = tb.tb_frame.f_code
        summary = traceback.FrameSummary(code.co_filename, tb.tb_lineno, code.co_name)
        if not _ours(summary):
            kept.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for frame in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return rebuilt


def _error_event(exc: BaseException, tb: Any, filename: str) -> dict[str, Any]:
    """An error event with the user's line and a traceback that leaves out our own frames."""
    line = None
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        line = exc.lineno
    else:
        for frame, lineno in traceback.walk_tb(tb):
            if frame.f_code.co_filename == filename:
                line = lineno
    report = traceback.TracebackException(type(exc), exc, tb)
    report.stack = traceback.StackSummary.from_list([f for f in report.stack if not _ours(f)])
    text = "".join(report.format())
    message = str(exc)
    if isinstance(exc, SystemExit):  # str() is "" or the bare code: say what happened
        called = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
        message = f"{called} was called: the script stopped here, exit code {exit_status(exc)[0]}"
    return {
        "kind": "error",
        "type": type(exc).__name__,
        "message": message,
        "line": line,
        "column": getattr(exc, "offset", None) if isinstance(exc, SyntaxError) else None,
        "traceback": text,
    }


def run_source(
    code: str,
    filename: str = "<editor>",
    namespace: dict[str, Any] | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    max_events: int = DEFAULT_MAX_EVENTS,
    device: str | None = None,
    kept: bool = False,
    raised: list[BaseException] | None = None,
) -> Trace:
    """Execute `code` in `namespace` and return the trace of what it left behind.

    With `device` (`cpu`, `cuda:N` or `auto`), that is torch's default device while the
    code runs, so `torch.tensor(...)` lands there; otherwise torch's default is untouched.
    `kept` says the namespace holds an earlier run's variables: the trace then lists only
    the tensors this run created or touched, and its run_end says `namespace: "kept"`.

    A syntax error runs nothing, and its trace holds no tensors or nodes. An exception
    (KeyboardInterrupt included) stops the code where it happened; its traceback is
    printed to stderr and recorded as an error event, and the graph of whatever exists by
    then is still captured.
    `sys.exit()` is Python's: 0 or None is a clean end (no error event); another code is
    an error event, and stderr gets what Python prints for it (a message, not a traceback).
    `run_end` carries the exit code `python FILE` would have ended with.
    With `raised` (a notebook cell's run), the exception that stopped the code is appended
    to it, its traceback left as `user_traceback` gives it, instead of being printed: the
    caller raises it again once the graph is captured.
    """
    namespace = namespace if namespace is not None else {"__name__": "__main__"}
    device = resolve_device(device)
    trace = Trace(
        source=filename, torch=torch.__version__, device=device or preferred_device(), script=code
    )
    trace.recorded_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    # Lets tracebacks and the inspector show the user's lines.
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    started = time.perf_counter()
    try:
        compiled_tree = ast.parse(code, filename)
        compiled = compile(compiled_tree, filename, "exec")
    except SyntaxError as exc:
        event = _error_event(exc, None, filename)
        event["traceback"] = "".join(traceback.format_exception_only(type(exc), exc))
        trace.events.append(event)
        if raised is not None:
            raised.append(exc.with_traceback(None))
        else:
            sys.stderr.write(event["traceback"])
        trace.error = event
        return trace  # nothing ran: whatever the namespace holds is not this program's
    earlier = EarlierTensors(namespace) if kept else None
    registry = Registry(max_nodes)
    tracer = Tracer(trace.events, filename, registry, namespace, max_events)
    # Put back afterwards as it was: a default device set (its device) or none (None);
    # setting "cpu" where none was set would slow every later torch call.
    previous_device = default_device_set()
    if device is not None and torch.device(device) == torch.get_default_device():
        # Already the default: setting it anyway would route every torch call through
        # torch's device mode, measured 3-4x slower on small ops.
        device = None
    try:
        if device is not None:
            torch.set_default_device(device)
        with tracer, recursion_headroom(sys._getframe()):
            exec(compiled, namespace)
        exit_code = 0
    except BaseException as exc:  # the user's error, whatever it is, belongs in the trace
        exit_code, said = exit_status(exc) if isinstance(exc, SystemExit) else (1, None)
        if exit_code != 0:
            tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # drop this frame
            event = _error_event(exc, tb, filename)
            failed = tracer.recording.failed
            if failed is not None and failed[0] is exc:  # a torch call raised it
                event["op"], event["inputs"] = failed[1], failed[2]
            trace.events.append(event)
            if raised is not None:
                raised.append(exc.with_traceback(user_traceback(tb)))
            else:
                sys.stderr.write(event["traceback"] if said is None else said)
    finally:
        tracer.recording.failed = None  # its traceback holds the user's frames
        if device is not None:
            torch.set_default_device(previous_device)
    seconds = round(time.perf_counter() - started, 6)
    trace.events.append(
        {
            "kind": "run_end",
            "line": None,
            "seconds": seconds,
            "ok": not trace.errors,
            "exit_code": exit_code,
            "namespace": KEPT if kept else FRESH,
        }
    )
    if tracer.events_capped:
        trace.notes.append(
            f"The run produced more than {max_events:,} events; recording stopped there "
            "and the script ran on to the end."
        )
    trace.error = trace.errors[0] if trace.errors else None
    stats = tracer.recording.step_stats
    trace.steps = stats.steps
    if stats.capped:
        trace.notes.append(
            f"The run took more than {len(stats.steps):,} optimizer steps; the Training view"
            " charts the first of them."
        )
    trace.modules = dict(tracer.context.modules)
    trace.loops = loop_statements(compiled_tree, code)
    try:
        return capture_graph(namespace, trace, max_nodes, registry, earlier)
    finally:
        tracer.release()
