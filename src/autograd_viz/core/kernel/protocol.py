"""The kernel protocol: what the app sends to the kernel and what comes back.

Requests are short Python statements (the kernel's own language) that call into this
module; each request gets its replies as display_data with our JSON MIME types, tied to
it by the message's parent id (the app never tags or filters broadcast replies). Every
reply carries the protocol and trace versions and autograd-viz's own, which the app checks
before it reads anything else (`version_problem`). User code crosses as a string literal,
never pickled; a call names a function of `autograd_viz.core` by `module:qualname`.

Runs: the editor's code runs in a fresh `__main__` namespace each time, as `python FILE`
would run it, or with `keep` in the namespace the last run left (the REPL's way). Before
every run and call torch's global settings are put back as they were at kernel setup
(`core.torch_state`). A space other than "" (the lab's) is a lasting namespace of its own.
"""

from __future__ import annotations

import functools
import gc
import importlib
import json
import os
import sys
import time
import traceback
import types
from collections.abc import Callable, Mapping
from typing import Any

from autograd_viz.core.trace import TRACE_MIME, Trace
from autograd_viz.core.trace import _model as _trace_module

# 2: calls are answered per request (no tag) and name `module:qualname`; runs choose a
# fresh or kept namespace; every reply carries the versions. 3: a run's trace crosses as
# compressed parts in the message's binary buffers (core/kernel/wire.py), not as JSON text.
# 4: the parts are MessagePack and zstd (orjson and zlib before), each sent ahead in a
# TRACE_PART_MIME message of its own. 5: a run's big tensors' numbers stay in the kernel
# until asked for (core/kernel/held.py).
PROTOCOL_VERSION = 5
KERNEL_INFO_MIME = "application/vnd.autograd-viz.kernel+json"
# One part of a run's trace, sent ahead of the TRACE_MIME payload (see publish_trace).
TRACE_PART_MIME = "application/vnd.autograd-viz.trace-part+json"
RESULT_MIME = "application/vnd.autograd-viz.result+json"
# Only functions of our own core may be called by name from the app.
_CALLABLE_PACKAGE = "autograd_viz.core."

__all__ = [
    "KERNEL_INFO_MIME",
    "PROTOCOL_VERSION",
    "RESULT_MIME",
    "TRACE_MIME",
    "TRACE_PART_MIME",
    "call_request",
    "call_target",
    "publish_data",
    "publish_trace",
    "run_request",
    "setup_request",
    "version_problem",
]

# The namespace of each space ("" the editor's, "lab", …): a `__main__` module of its own,
# which is sys.modules['__main__'] while code runs there. The editor's is replaced by a
# fresh one at each run (unless kept); calls find what the last run left in it.
_SPACES: dict[str, types.ModuleType] = {}
_DEFAULTS: Any = None  # core.torch_state.TorchDefaults, taken at kernel setup
_MODULES_FROZEN = 0  # len(sys.modules) when the collector last froze what was loaded


def namespace_for(space: str) -> dict[str, Any]:
    """The namespace `space` last ran in (an empty one when nothing has run there yet)."""
    if space not in _SPACES:
        from autograd_viz.core.kernel.script_context import main_module

        _SPACES[space] = main_module()
    return _SPACES[space].__dict__


def fresh_namespace(space: str) -> dict[str, Any]:
    """A new, empty `__main__` namespace for `space`, as `python FILE` gives a script; the
    one before it is let go, with what it held (freed now, not in the middle of a run)."""
    from autograd_viz.core.kernel.script_context import main_module

    if _SPACES.pop(space, None) is not None:
        # The old module's functions hold its dict in a cycle: only a collection frees it,
        # and with it the last run's tensors (GPU memory) and any guard it left entered.
        gc.collect()
        _freeze_new_modules()
    _SPACES[space] = main_module()
    return _SPACES[space].__dict__


def _freeze_new_modules() -> None:
    """Freeze what is alive when a run imported more modules (torch.optim brings dynamo,
    sympy, …: 800 modules, 120,000 objects): a full collection rescanned them each time,
    measured 90-150 ms per fresh run, and takes under 1 ms without them."""
    global _MODULES_FROZEN
    if len(sys.modules) > _MODULES_FROZEN:
        gc.freeze()
        _MODULES_FROZEN = len(sys.modules)


def _main_module_of(namespace: dict[str, Any]) -> types.ModuleType | None:
    """The `__main__` module whose namespace this is, so pickle finds the classes defined
    there; None when none is."""
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__dict__", None) is namespace:
        return main
    return next((m for m in _SPACES.values() if m.__dict__ is namespace), None)


def _restore_torch_defaults() -> None:
    """Put torch's global settings back as they were at setup, before user code runs."""
    from autograd_viz.core.kernel.torch_state import TorchDefaults

    (_DEFAULTS or TorchDefaults()).restore()


def versions() -> dict[str, Any]:
    """What every reply says about the kernel's side: protocol, trace format, autograd-viz."""
    # The package was imported before this module of it; read there, not imported again:
    # the package's `load_ipython_extension` reaches this module, so an import would be a
    # cycle. (Tests change `autograd_viz.__version__` in a kernel to play another release.)
    package = sys.modules[__name__.partition(".")[0]]
    return {
        "protocol": PROTOCOL_VERSION,
        "trace_version": _trace_module.TRACE_VERSION,
        "autograd_viz": package.__version__,
    }


def version_problem(reply: Mapping[str, Any]) -> str | None:
    """None when a reply speaks this app's protocol and trace format; otherwise a sentence
    that names both sides' versions and says what to do."""
    ours = versions()
    if reply.get("protocol") == ours["protocol"] and (
        reply.get("trace_version") == ours["trace_version"]
    ):
        return None

    def said(key: str) -> str:
        value = reply.get(key)
        return "unknown" if value is None else str(value)

    theirs = reply.get("autograd_viz")
    release = ours["autograd_viz"]
    return (
        f"The kernel runs {'autograd-viz ' + str(theirs) if theirs else 'another autograd-viz'}"
        f" (kernel protocol {said('protocol')}, trace format {said('trace_version')}); this"
        f" app is autograd-viz {release} (kernel protocol {ours['protocol']}, trace format"
        f" {ours['trace_version']}), so nothing it sends is drawn. Install the app's version"
        f" in the kernel's environment (pip install autograd-viz=={release}) and restart"
        " that kernel, or go back to a kernel of this app's own (File → Use a local kernel)."
    )


def setup_request(threads: int | None = None, limits: bool = True) -> str:
    """Code that prepares a fresh kernel (torch imported, threads pinned) and reports it;
    without `limits` its memory and stack limits are left alone (a kernel not ours)."""
    # `limits` is named only when False, so a kernel with an older autograd_viz still runs
    # the plain call (and then says its version is not ours).
    extra = "" if limits else ", limits=False"
    return (
        "import autograd_viz.core.kernel.protocol as __avz\n"
        f"__avz.kernel_setup({threads!r}{extra})\ndel __avz\n"
    )


def run_request(
    code: str,
    filename: str = "<editor>",
    space: str = "",
    device: str | None = None,
    path: str | None = None,
    keep: bool = False,
) -> str:
    """Code that runs the user's `code` under capture in the kernel: in a fresh namespace of
    `space`, or with `keep` in the one its last run left; with `device` (auto, cpu, cuda:N)
    as torch's default device when given, as the file saved at `path` (its sys.argv[0] and
    sys.path[0]) when there is one."""
    tail = f", path={path!r}" if path else ""  # unsaved: the request stays as it was
    return (
        "import autograd_viz.core.kernel.protocol as __avz\n"
        f"__avz.kernel_run({code!r}, {filename!r}, {space!r}, {keep!r}, {device!r}{tail})\n"
        "del __avz\n"
    )


def call_target(function: Callable[..., Any]) -> str:
    """`module:qualname` of a function of `autograd_viz.core` (what a call request names);
    ValueError for anything else, so a moved or renamed function fails here, in the app."""
    module = getattr(function, "__module__", None) or ""
    qualname = getattr(function, "__qualname__", None) or ""
    if not callable(function) or not module.startswith(_CALLABLE_PACKAGE):
        raise ValueError(f"not a callable core function: {function!r}")
    if not qualname or "<" in qualname:  # a lambda or a nested function: no name to find
        raise ValueError(f"not a callable core function: {module}.{qualname or function!r}")
    return f"{module}:{qualname}"


def call_request(function: str, arguments: dict[str, Any] | None = None, space: str = "") -> str:
    """Code that calls `autograd_viz.core.module:qualname(namespace=..., **arguments)`.

    The arguments cross as one JSON string literal; the result comes back as RESULT_MIME.
    """
    if not function.startswith(_CALLABLE_PACKAGE) or ":" not in function:
        raise ValueError(f"not a callable core function: {function!r}")
    args = json.dumps(arguments or {})
    return (
        "import autograd_viz.core.kernel.protocol as __avz\n"
        f"__avz.kernel_call({function!r}, {args!r}, {space!r})\n"
        "del __avz\n"
    )


def publish_data(
    mime: str, payload: dict[str, Any], text: str, buffers: list[bytes] | None = None
) -> None:
    """Publish one display_data reply; `buffers` go as the message's binary buffers."""
    from IPython import get_ipython
    from IPython.display import publish_display_data

    publisher = getattr(get_ipython(), "display_pub", None)
    if not buffers or getattr(publisher, "session", None) is None:
        publish_display_data({mime: payload, "text/plain": text})
        return
    # What ipykernel's ZMQDisplayPublisher.publish does, plus buffers, which it cannot send:
    # streams flushed first (so prints arrive before the picture), its hooks honoured.
    sys.stdout.flush()
    sys.stderr.flush()
    content = {"data": {mime: payload, "text/plain": text}, "metadata": {}, "transient": {}}
    msg = publisher.session.msg("display_data", content, parent=publisher.parent_header)
    msg["buffers"] = buffers
    for hook in getattr(publisher, "_hooks", ()):
        msg = hook(msg)
        if msg is None:
            return
    publisher.session.send(publisher.pub_socket, msg, ident=publisher.topic, buffers=buffers)


def _warm_lazy_imports() -> None:
    """Import now what a first `torch.optim.SGD(...)` would import mid-run: torch's
    optimizers load torch._dynamo lazily, 1.4-1.7 s measured here, which made the first
    training-step script a learner runs 200x slower than the second."""
    import contextlib
    import importlib

    for name in ("torch.optim", "torch._dynamo"):
        with contextlib.suppress(Exception):  # a torch without it: runs import what they can
            importlib.import_module(name)


def kernel_setup(threads: int | None = None, limits: bool = True) -> dict[str, Any]:
    """Runs inside the kernel: import torch, pin its threads, apply our process limits
    (unless not `limits`: an attached kernel's stay its own), publish what it has."""
    global _DEFAULTS
    from autograd_viz.core.platform.process_tree import become_subreaper
    from autograd_viz.core.platform.shadowing import import_torch

    if limits:  # our own kernel: orphans of the user's code re-parent to it (ended with it)
        become_subreaper()
    torch = import_torch()  # a user's torch.py that hides PyTorch is named (HiddenModule)
    _warm_lazy_imports()

    from autograd_viz.core.kernel.limits import apply_process_limits
    from autograd_viz.core.kernel.runner import preferred_device, set_torch_threads
    from autograd_viz.core.kernel.torch_state import TorchDefaults

    # Before user code can allocate anything; an attached kernel's are not ours to change.
    applied = apply_process_limits() if limits else {"memory_limit_mb": None}
    # torch's import leaves several hundred thousand long-lived objects; freezing them keeps
    # every later full garbage collection (in user code or in the tracer) from rescanning them.
    gc.collect()
    _freeze_new_modules()
    _DEFAULTS = TorchDefaults.now()  # what every run starts from
    info = {
        **versions(),
        "torch": torch.__version__,
        "device": preferred_device(),
        "cuda": torch.cuda.is_available(),
        # What the device picker offers: the CPU and each GPU torch sees.
        "devices": ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())],
        "threads": set_torch_threads(threads),
        "memory_limit_mb": applied["memory_limit_mb"],
    }
    if info["cuda"]:
        info["device_name"] = torch.cuda.get_device_name(0)
    publish_data(KERNEL_INFO_MIME, info, f"autograd-viz kernel: torch {info['torch']}")
    return info


def kernel_run(
    code: str,
    filename: str,
    space: str = "",
    keep: bool = False,
    device: str | None = None,
    path: str | None = None,
) -> None:
    """Runs inside the kernel: execute user code under capture and publish the trace.

    Without `keep` the code runs in a fresh namespace, with it in the one the last run of
    `space` left; torch's global settings are put back first either way. The code sees what
    `python FILE` would show it: sys.argv is [path] ([filename] when unsaved), the saved
    file's folder is sys.path[0], `__main__` is its namespace's module; all put back
    afterwards. `sys.exit(0)` ends it cleanly; another code is an error.
    """
    from autograd_viz.core.kernel.limits import is_out_of_memory, memory_limit_words
    from autograd_viz.core.kernel.output_budget import budgeted_output
    from autograd_viz.core.kernel.runner import FRESH, KEPT, resolve_device, run_source
    from autograd_viz.core.kernel.script_context import as_python_script, script_folder
    from autograd_viz.core.platform.gc_pause import collections_postponed

    namespace = namespace_for(space) if keep else fresh_namespace(space)
    _restore_torch_defaults()  # after the old namespace went: a guard it held is gone too
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
    # The trace and its wire parts are hundreds of thousands of objects that go once the
    # trace is sent: passes over the older generations wait until then, so none rescans
    # them (50-115 ms of the 8k-node RNN's run, measured).
    with collections_postponed():
        with budgeted_output(), script:  # a flood of prints is cut before it reaches the app
            trace = run_source(code, filename, namespace, device=device, kept=keep)
            if trace.error is not None and trace.error["type"] == "SystemExit":
                # run_source printed what Python prints for sys.exit(N) (nothing, or its
                # message); the console shows the traceback of where the script stopped.
                sys.stderr.write(trace.error["traceback"])
        if is_out_of_memory(trace.error):
            sys.stderr.write(
                f"The code ran out of memory; {memory_limit_words('the kernel')}."
                " The kernel is fine.\n"
            )
        publish_trace(trace, hold=True, namespace=KEPT if keep else FRESH)
        del trace


def publish_trace(trace: Trace, hold: bool = False, **fields: Any) -> None:
    """Publish `trace` as the app reads it: each compressed part (core/kernel/wire.py) in a
    TRACE_PART_MIME message of its own as soon as it is encoded, so the app reads one while
    the next is encoded (the 8k-node RNN's: 0.1 s each way, now side by side); then the
    TRACE_MIME payload that says what was sent, with `fields` (the run's namespace…).

    With `hold`, the numbers of its big tensors stay here until the app asks for them
    (core/kernel/held.py)."""
    from autograd_viz.core.kernel.held import hold_numbers
    from autograd_viz.core.kernel.wire import WIRE_ENCODING, encode_parts

    started, started_at = time.perf_counter(), time.time()
    if hold:
        hold_numbers(trace)
    counts, parts = encode_parts(trace)
    head = {**versions(), "encoding": WIRE_ENCODING, "parts": counts}
    formats = []
    for i, (fmt, raw) in enumerate(parts):
        formats.append(fmt)
        part = {**head, "index": i, "format": fmt}
        publish_data(TRACE_PART_MIME, part, f"autograd-viz trace part {i + 1}", [raw])
    payload = {**head, "formats": "".join(formats), "streamed": True, **fields}
    # For benchmarks/bench_picture.py's split of the time (docs/trace.md): read by no view.
    payload["encode_started_at"] = started_at
    payload["encode_s"] = round(time.perf_counter() - started, 4)
    payload["sent_at"] = time.time()
    publish_data(TRACE_MIME, payload, f"autograd-viz trace: {len(trace.nodes)} nodes")


def _resolve(function: str) -> Callable[..., Any]:
    """The core function a `module:qualname` target names."""
    module_name, _, qualname = function.partition(":")
    if not module_name.startswith(_CALLABLE_PACKAGE) or not qualname:
        raise ValueError(f"not a callable core function: {function!r}")
    target = functools.reduce(getattr, qualname.split("."), importlib.import_module(module_name))
    if not callable(target):
        raise ValueError(f"not a callable core function: {function!r}")
    return target


def kernel_call(function: str, arguments: str, space: str = "") -> None:
    """Runs inside the kernel: call one core function on the namespace of `space` (what its
    last run left) and publish its JSON result, after putting torch's settings back.

    A result dict may carry a `Trace` under "trace"; it crosses as its JSON string so the app
    can draw it. Any exception becomes {"ok": false, "error": ...}, never a kernel error.
    """
    from autograd_viz.core.trace import json_safe

    try:
        target = _resolve(function)
        _restore_torch_defaults()
        result = target(namespace=namespace_for(space), **json.loads(arguments))
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
    publish_data(RESULT_MIME, {**versions(), "json": text}, f"autograd-viz result: {function}")


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
