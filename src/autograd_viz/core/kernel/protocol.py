"""The kernel protocol: what the app sends to the kernel and what comes back.

Requests are short Python statements (the kernel's own language) that call into this
module; replies travel as display_data with our JSON MIME types, each carrying the
protocol version. User code crosses as a string literal, never pickled.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import traceback
import types
from typing import Any

from autograd_viz.core.trace import TRACE_MIME, Trace

PROTOCOL_VERSION = 1
KERNEL_INFO_MIME = "application/vnd.autograd-viz.kernel+json"
RESULT_MIME = "application/vnd.autograd-viz.result+json"
# Only functions of our own core may be called by name from the app.
_CALLABLE_PACKAGE = "autograd_viz.core."

__all__ = [
    "KERNEL_INFO_MIME",
    "PROTOCOL_VERSION",
    "RESULT_MIME",
    "TRACE_MIME",
    "call_request",
    "run_request",
    "setup_request",
    "trace_from_payload",
    "trace_payload",
]

# A trace crosses as its head and its events in chunks, each its own JSON string: the app
# parses them one at a time, so no single json.loads (which holds the GIL) runs long enough
# to freeze the GUI thread. 2,000 events parse in ~25 ms; 50,000 in one go took 0.6 s.
EVENTS_PER_CHUNK = 2_000

# Namespaces other than the kernel's globals (the lab keeps its w, x, b apart from the
# editor's variables), each the namespace of a `__main__` module of its own, which is
# sys.modules['__main__'] while code runs there. They live as long as the kernel process.
_SPACES: dict[str, types.ModuleType] = {}


def namespace_for(space: str, kernel_globals: dict[str, Any]) -> dict[str, Any]:
    """The namespace code runs in: "" is the kernel's globals, any other name its own."""
    if not space:
        return kernel_globals
    if space not in _SPACES:
        from autograd_viz.core.kernel.script_context import main_module

        _SPACES[space] = main_module()
    return _SPACES[space].__dict__


def _main_module_of(namespace: dict[str, Any]) -> types.ModuleType | None:
    """The `__main__` module whose namespace this is (IPython's user module holds the
    kernel's globals), so pickle finds the classes defined there; None when none is."""
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__dict__", None) is namespace:
        return main
    return next((m for m in _SPACES.values() if m.__dict__ is namespace), None)


def setup_request(threads: int | None = None) -> str:
    """Code that prepares a fresh kernel (torch imported, threads pinned) and reports it."""
    return (
        "import autograd_viz.core.kernel.protocol as __avz\n"
        f"__avz.kernel_setup({threads!r})\ndel __avz\n"
    )


def run_request(
    code: str,
    filename: str = "<editor>",
    space: str = "",
    device: str | None = None,
    path: str | None = None,
) -> str:
    """Code that runs the user's `code` under capture in the kernel (in `space`, if named),
    with `device` (auto, cpu, cuda:N) as torch's default device when given, as the file
    saved at `path` (its sys.argv[0] and sys.path[0]) when there is one."""
    tail = f", path={path!r}" if path else ""  # unsaved: the request stays as it was
    return (
        "import autograd_viz.core.kernel.protocol as __avz\n"
        f"__avz.kernel_run({code!r}, {filename!r}, __avz.namespace_for({space!r}, globals()), "
        f"{device!r}{tail})\n"
        "del __avz\n"
    )


def call_request(
    function: str, tag: str, arguments: dict[str, Any] | None = None, space: str = ""
) -> str:
    """Code that calls `autograd_viz.core.module:function(namespace=..., **arguments)`.

    The arguments cross as one JSON string literal; the result comes back as RESULT_MIME.
    """
    if not function.startswith(_CALLABLE_PACKAGE) or ":" not in function:
        raise ValueError(f"not a callable core function: {function!r}")
    args = json.dumps(arguments or {})
    return (
        "import autograd_viz.core.kernel.protocol as __avz\n"
        f"__avz.kernel_call({function!r}, {tag!r}, {args!r}, "
        f"__avz.namespace_for({space!r}, globals()))\n"
        "del __avz\n"
    )


def _publish(mime: str, payload: dict[str, Any], text: str) -> None:
    from IPython.display import publish_display_data

    publish_display_data({mime: payload, "text/plain": text})


def kernel_setup(threads: int | None = None) -> dict[str, Any]:
    """Runs inside the kernel: import torch, pin its threads, publish what the kernel has."""
    import torch

    from autograd_viz.core.kernel.limits import apply_process_limits
    from autograd_viz.core.kernel.runner import preferred_device, set_torch_threads

    limits = apply_process_limits()  # before user code can allocate anything
    # torch's import leaves several hundred thousand long-lived objects; freezing them keeps
    # every later full garbage collection (in user code or in the tracer) from rescanning them.
    gc.collect()
    gc.freeze()
    info = {
        "protocol": PROTOCOL_VERSION,
        "torch": torch.__version__,
        "device": preferred_device(),
        "cuda": torch.cuda.is_available(),
        # What the device picker offers: the CPU and each GPU torch sees.
        "devices": ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())],
        "threads": set_torch_threads(threads),
        "memory_limit_mb": limits["memory_limit_mb"],
    }
    if info["cuda"]:
        info["device_name"] = torch.cuda.get_device_name(0)
    _publish(KERNEL_INFO_MIME, info, f"autograd-viz kernel: torch {info['torch']}")
    return info


def kernel_run(
    code: str,
    filename: str,
    namespace: dict[str, Any],
    device: str | None = None,
    path: str | None = None,
) -> None:
    """Runs inside the kernel: execute user code under capture and publish the trace.

    The code sees what `python FILE` would show it: sys.argv is [path] ([filename] when
    unsaved), the saved file's folder is sys.path[0], `__main__` is its namespace's module;
    all put back afterwards. `sys.exit(0)` ends it cleanly; another code is an error.
    """
    from autograd_viz.core.kernel.limits import is_out_of_memory, memory_limit_words
    from autograd_viz.core.kernel.output_budget import budgeted_output
    from autograd_viz.core.kernel.runner import resolve_device, run_source
    from autograd_viz.core.kernel.script_context import as_python_script, script_folder

    try:
        device = resolve_device(device)
    except (RuntimeError, ValueError) as exc:  # a device this kernel does not have
        sys.stderr.write(f"Device {device!r}: {exc}. Running on the default device.\n")
        device = None
    if path:  # as `python FILE` sets it; an unsaved buffer has none
        namespace["__file__"] = os.path.abspath(path)
    else:
        namespace.pop("__file__", None)
    script = as_python_script(
        [path or filename], _main_module_of(namespace), script_folder(path) if path else None
    )
    with budgeted_output(), script:  # a flood of prints is cut before it crosses to the app
        trace = run_source(code, filename, namespace, device=device)
        if trace.error is not None and trace.error["type"] == "SystemExit":
            # run_source printed what Python prints for sys.exit(N) (nothing, or its
            # message); the console shows the traceback of where the script stopped.
            sys.stderr.write(trace.error["traceback"])
    if is_out_of_memory(trace.error):
        sys.stderr.write(
            f"The code ran out of memory; {memory_limit_words('the kernel')}. "
            "The kernel and its variables are fine.\n"
        )
    # The trace crosses as one JSON string: serialised once here, parsed once in the app.
    _publish(TRACE_MIME, trace_payload(trace), f"autograd-viz trace: {len(trace.nodes)} nodes")


def _dumps(data: Any) -> str:
    try:
        return json.dumps(data, allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere: the rare, slower path
        from autograd_viz.core.trace import json_safe

        return json.dumps(json_safe(data), allow_nan=False)


def trace_payload(trace: Trace, events_per_chunk: int = EVENTS_PER_CHUNK) -> dict[str, Any]:
    """The TRACE_MIME payload: the trace without its events, then the events in chunks."""
    events = trace.events
    head = Trace(**{**vars(trace), "events": []}).to_json()
    chunks = [
        _dumps(events[i : i + events_per_chunk]) for i in range(0, len(events), events_per_chunk)
    ]
    return {"protocol": PROTOCOL_VERSION, "trace": head, "event_chunks": chunks}


def trace_from_payload(payload: dict[str, Any]) -> Trace:
    """The trace a TRACE_MIME payload carries (one chunk parsed at a time)."""
    from autograd_viz.core.platform.gc_pause import collections_postponed

    with collections_postponed():
        trace = Trace.from_json(payload["trace"])
        for chunk in payload.get("event_chunks", ()):
            trace.events.extend(json.loads(chunk))
    return trace


def kernel_call(function: str, tag: str, arguments: str, namespace: dict[str, Any]) -> None:
    """Runs inside the kernel: call one core function and publish its JSON result.

    A result dict may carry a `Trace` under "trace"; it crosses as its JSON string so the app
    can draw it. Any exception becomes {"ok": false, "error": ...}, never a kernel error.
    """
    from autograd_viz.core.trace import Trace, json_safe

    module_name, _, name = function.partition(":")
    try:
        if not module_name.startswith(_CALLABLE_PACKAGE):
            raise ValueError(f"not a callable core function: {function!r}")
        target = getattr(importlib.import_module(module_name), name)
        result = target(namespace=namespace, **json.loads(arguments))
        trace = None
        if isinstance(result, dict) and isinstance(result.get("trace"), Trace):
            result = dict(result)
            trace = result.pop("trace").to_json()
        payload: dict[str, Any] = {"ok": True, "result": result, "trace": trace}
    except Exception as exc:  # the app shows it; the kernel stays clean
        payload = {
            "ok": False,
            "error": {
                "type": type(exc).__name__,
                "message": str(exc),
                "traceback": "".join(traceback.format_exception(exc)),
            },
        }
    text = json.dumps(json_safe(payload), allow_nan=False)
    _publish(
        RESULT_MIME,
        {"protocol": PROTOCOL_VERSION, "tag": tag, "json": text},
        f"autograd-viz result: {tag}",
    )


def namespace_summary(namespace: dict[str, Any]) -> dict[str, Any]:
    """What the user's code left behind: its functions (with parameter names) and tensors."""
    import inspect

    import torch

    functions: dict[str, list[str]] = {}
    tensors: dict[str, list[int]] = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, torch.Tensor):
            tensors[name] = list(value.shape)
        elif inspect.isfunction(value) and value.__module__ in (None, "__main__"):
            functions[name] = list(inspect.signature(value).parameters)
    return {"functions": functions, "tensors": tensors}
