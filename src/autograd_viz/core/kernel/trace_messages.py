"""A run's trace read back from the messages the kernel published (`trace_from_payload`;
`protocol.publish_trace` sends them), and the same trace as one payload with its parts in
its buffers (`trace_payload`). The parts' bytes are core/kernel/wire.py's; the messages and
their keys are described in docs/trace.md."""

from __future__ import annotations

from typing import Any

from autograd_viz.core.kernel.protocol import TRACE_PART_MIME, versions
from autograd_viz.core.kernel.wire import TraceAssembly, decode_trace, encode_trace
from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.trace import TRACE_MIME, Trace

__all__ = ["TRACE_MIME", "TRACE_PART_MIME", "trace_from_payload", "trace_payload"]


def trace_payload(trace: Trace) -> tuple[dict[str, Any], list[bytes]]:
    """The TRACE_MIME payload (the versions and how the trace's parts are encoded) and the
    parts themselves, the message's binary buffers."""
    meta, buffers = encode_trace(trace)
    return {**versions(), **meta}, buffers


def trace_from_payload(
    payload: dict[str, Any], buffers: list[Any], assembly: TraceAssembly | None = None
) -> Trace:
    """The trace a TRACE_MIME payload carries: in its buffers (one part parsed at a time),
    or, when it says it `streamed` them, in the parts `assembly` read as they came."""
    with collections_postponed():
        if payload.get("streamed"):
            if assembly is None:
                raise ValueError("the trace's parts did not arrive")
            return assembly.trace(payload)
        return decode_trace(payload, buffers)
