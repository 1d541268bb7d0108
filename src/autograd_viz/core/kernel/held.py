"""Big tensors' numbers stay in the kernel until the app asks for them.

A run's trace lists every tensor with its end-of-run value and `.grad`: whole up to 10,000
numbers, which the inspector's heatmap and table draw. Sent whole, they were most of a
model's trace on the wire (ResNet-18's step: 220 KB of its 240 KB, 830 bytes per event).
The picture needs none of them: its labels show a shape and a range. So a run's trace
leaves the numbers of every tensor with more than `WIRE_DATA_LIMIT` of them here, and
says so (`TensorValue.held`, the run's name); the app fetches one tensor's when the
inspector shows it (`held_numbers`), or a whole run's when it compares two runs.

The kernel keeps the numbers of its last `KEEP_RUNS` runs, so a run still shown while
the next one arrives can be asked about. A restarted kernel holds none: the app then
shows the summaries the trace carries (min, max, mean, norm, first values).
"""

from __future__ import annotations

import itertools
import math
import os
import secrets
from collections import OrderedDict
from typing import Any

from autograd_viz.core.trace import TensorValue, Trace
from autograd_viz.core.trace.values import EVENT_DATA_LIMIT

__all__ = ["KEEP_RUNS", "WIRE_DATA_LIMIT", "held_numbers", "hold_numbers"]

# As in events: a tensor up to this many numbers travels whole, its numbers in its labels.
WIRE_DATA_LIMIT = EVENT_DATA_LIMIT
KEEP_RUNS = 4

# A run's name: this kernel process's (its pid and a random part, so a restarted kernel
# never answers for its predecessor's runs) and a count.
_KERNEL = f"{os.getpid():x}{secrets.token_hex(3)}"
_COUNT = itertools.count(1)
# run name -> tensor id -> (value's data, grad's data), None where that one travelled.
_RUNS: OrderedDict[str, dict[str, tuple[Any, Any]]] = OrderedDict()


def _take(value: TensorValue | None, run: str) -> Any:
    """The numbers of `value` if they are to stay here (`value` then says where), else None."""
    if value is None or math.prod(value.shape) <= WIRE_DATA_LIMIT:
        return None
    data = value.data
    if not isinstance(data, list):  # summarised already (past 10,000), or unreadable
        return None
    value.data, value.held = None, run
    return data


def hold_numbers(trace: Trace) -> str | None:
    """Keep the numbers of `trace`'s big tensors here, out of what is sent; the run's name,
    or None when every tensor is small enough to travel whole."""
    run = f"{_KERNEL}-{next(_COUNT)}"
    kept: dict[str, tuple[Any, Any]] = {}
    for t in trace.tensors:
        value, grad = _take(t.value, run), _take(t.grad, run)
        if value is not None or grad is not None:
            kept[t.id] = (value, grad)
    if not kept:
        return None
    _RUNS[run] = kept
    while len(_RUNS) > KEEP_RUNS:
        _RUNS.popitem(last=False)
    return run


def held_numbers(namespace: dict[str, Any], run: str, tensors: list[str]) -> dict[str, Any]:
    """A kernel call: the numbers run `run` kept of `tensors`, as {"values": {id: {"value":
    data or None, "grad": data or None}}}; LookupError when this kernel no longer holds that
    run (it ran `KEEP_RUNS` more since, or is not the kernel that ran it)."""
    del namespace  # a call is handed the space's namespace; the numbers are not in it
    kept = _RUNS.get(run)
    if kept is None:
        raise LookupError(
            f"this kernel no longer holds the numbers of run {run} (it keeps its last {KEEP_RUNS})"
        )
    values = {}
    for tensor in tensors:
        if tensor in kept:
            value, grad = kept[tensor]
            values[tensor] = {"value": value, "grad": grad}
    return {"values": values}
