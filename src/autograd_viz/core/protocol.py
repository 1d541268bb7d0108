"""The kernel protocol: what the app sends to the kernel and what comes back.

Requests are short Python statements (the kernel's own language) that call into this
module; replies travel as display_data with our JSON MIME types, each carrying the
protocol version. User code crosses as a string literal, never pickled.
"""

from __future__ import annotations

import gc
from typing import Any

from autograd_viz.core.trace import TRACE_MIME

PROTOCOL_VERSION = 1
KERNEL_INFO_MIME = "application/vnd.autograd-viz.kernel+json"

__all__ = ["KERNEL_INFO_MIME", "PROTOCOL_VERSION", "TRACE_MIME", "run_request", "setup_request"]


def setup_request(threads: int | None = None) -> str:
    """Code that prepares a fresh kernel (torch imported, threads pinned) and reports it."""
    return (
        f"import autograd_viz.core.protocol as __avz\n__avz.kernel_setup({threads!r})\ndel __avz\n"
    )


def run_request(code: str, filename: str = "<editor>") -> str:
    """Code that runs the user's `code` under capture in the kernel's namespace."""
    return (
        "import autograd_viz.core.protocol as __avz\n"
        f"__avz.kernel_run({code!r}, {filename!r}, globals())\n"
        "del __avz\n"
    )


def _publish(mime: str, payload: dict[str, Any], text: str) -> None:
    from IPython.display import publish_display_data

    publish_display_data({mime: payload, "text/plain": text})


def kernel_setup(threads: int | None = None) -> dict[str, Any]:
    """Runs inside the kernel: import torch, pin its threads, publish what the kernel has."""
    import torch

    from autograd_viz.core.runner import preferred_device, set_torch_threads

    # torch's import leaves several hundred thousand long-lived objects; freezing them keeps
    # every later full garbage collection (in user code or in the tracer) from rescanning them.
    gc.collect()
    gc.freeze()
    info = {
        "protocol": PROTOCOL_VERSION,
        "torch": torch.__version__,
        "device": preferred_device(),
        "cuda": torch.cuda.is_available(),
        "threads": set_torch_threads(threads),
    }
    if info["cuda"]:
        info["device_name"] = torch.cuda.get_device_name(0)
    _publish(KERNEL_INFO_MIME, info, f"autograd-viz kernel: torch {info['torch']}")
    return info


def kernel_run(code: str, filename: str, namespace: dict[str, Any]) -> None:
    """Runs inside the kernel: execute user code under capture and publish the trace."""
    from autograd_viz.core.runner import run_source

    trace = run_source(code, filename, namespace)
    # The trace crosses as one JSON string: serialised once here, parsed once in the app.
    payload = {"protocol": PROTOCOL_VERSION, "trace": trace.to_json()}
    _publish(TRACE_MIME, payload, f"autograd-viz trace: {len(trace.nodes)} nodes")
