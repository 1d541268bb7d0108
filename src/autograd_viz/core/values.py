"""Turning torch tensors into JSON-safe numbers for the trace."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import torch

from autograd_viz.core.trace import TensorValue

FULL_DATA_LIMIT = 10_000  # in the trace's tensor list, tensors up to this size travel whole
EVENT_DATA_LIMIT = 64  # in events (one per op, per node, …) only small tensors travel whole
STATS_LIMIT = 1_000_000  # above this many elements an event carries the shape alone
FIRST_VALUES = 8  # how many leading values a summary keeps


def json_number(x: Any) -> Any:
    """A Python number JSON can carry; NaN and infinities become strings."""
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, complex):
        return [json_number(x.real), json_number(x.imag)]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _json_nested(x: Any) -> Any:
    if isinstance(x, list):
        return [_json_nested(v) for v in x]
    return json_number(x)


def tensor_value(
    t: torch.Tensor, full_limit: int = FULL_DATA_LIMIT, stats_limit: int | None = None
) -> TensorValue | None:
    """Snapshot a tensor's numbers without touching its autograd history.

    Up to `full_limit` elements the nested values travel whole; beyond `stats_limit`
    (when given) only the shape does.
    """
    try:
        with torch.no_grad():
            d = t.detach()
            if d.is_sparse or d.device.type == "meta":
                return TensorValue(shape=list(d.shape), data=None)
            n = d.numel()
            if stats_limit is not None and n > stats_limit:
                return TensorValue(shape=list(d.shape), data=None)
            d = d.cpu()
            data = _json_nested(d.tolist()) if n <= full_limit else None
            value = TensorValue(shape=list(d.shape), data=data)
            if n == 0:
                return value
            flat = d.reshape(-1)
            value.first = [json_number(v) for v in flat[:FIRST_VALUES].tolist()]
            stats = flat.abs().double() if d.is_complex() else flat.double()
            value.min = json_number(stats.min().item())
            value.max = json_number(stats.max().item())
            value.mean = json_number(stats.mean().item())
            value.norm = json_number(stats.norm().item())
            return value
    except Exception:  # an exotic tensor we cannot read must not break the trace
        return None


def event_value(t: Any) -> dict[str, Any] | None:
    """A small JSON snapshot of a tensor for an event (None for a non-tensor)."""
    if not isinstance(t, torch.Tensor):
        return None
    value = tensor_value(t, EVENT_DATA_LIMIT, STATS_LIMIT)
    return None if value is None else asdict(value)


def grad_value(t: torch.Tensor) -> TensorValue | None:
    """`.grad` as PyTorch holds it, without the warning non-leaf access raises."""
    if not (t.is_leaf or t.retains_grad):
        return None  # PyTorch keeps no .grad here
    g = t.grad
    return None if g is None else tensor_value(g)
