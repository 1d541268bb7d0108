"""A run's trace as messages: the kernel publishes it in parts (`publish_trace`), the app
reads it back (`trace_from_payload`). The parts' bytes are core/kernel/wire.py's; the
messages and their keys are described in docs/trace.md."""

from __future__ import annotations

import time
from typing import Any

from autograd_viz.core.kernel.protocol import publish_data, versions
from autograd_viz.core.kernel.wire import (
    WIRE_ENCODING,
    TraceAssembly,
    decode_trace,
    encode_parts,
    encode_trace,
)
from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.trace import TRACE_MIME, Trace

__all__ = ["TRACE_PART_MIME", "publish_trace", "trace_from_payload", "trace_payload"]

# One part of a run's trace, sent ahead of the TRACE_MIME payload (see publish_trace).
TRACE_PART_MIME = "application/vnd.autograd-viz.trace-part+json"


def publish_trace(trace: Trace, **fields: Any) -> None:
    """Publish `trace` as the app reads it: each compressed part (core/kernel/wire.py) in a
    TRACE_PART_MIME message of its own as soon as it is encoded, so the app reads one while
    the next is encoded (the 8k-node RNN's: 0.1 s each way, now side by side); then the
    TRACE_MIME payload that says what was sent, with `fields` (the run's namespace…)."""
    started, started_at = time.perf_counter(), time.time()
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
