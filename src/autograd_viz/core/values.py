"""Turning torch tensors into JSON-safe numbers for the trace."""

from __future__ import annotations

import math
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


def _stats(flat: torch.Tensor) -> tuple[float, float, float, float]:
    """min, max, mean, norm of a flat, non-empty tensor (magnitudes for complex)."""
    values = flat.abs() if flat.is_complex() else flat
    values = values.to(torch.float64)
    low, high = torch.aminmax(values)
    # One trip to Python for all four numbers: .item() four times costs more than the math.
    return tuple(torch.stack((low, high, values.mean(), torch.linalg.vector_norm(values))).tolist())


def _data(d: torch.Tensor) -> Any:
    """The nested values (complex numbers as [re, im]); NaN and infinities stay floats
    here and become strings when the trace is serialised (see `json_safe`)."""
    return _json_nested(d.tolist()) if d.is_complex() else d.tolist()


def tensor_value(
    t: torch.Tensor, full_limit: int = FULL_DATA_LIMIT, stats_limit: int | None = None
) -> TensorValue | None:
    """Snapshot a tensor's numbers without touching its autograd history.

    Up to `full_limit` elements the nested values travel whole; beyond `stats_limit`
    (when given) only the shape does.
    """
    try:
        d = t.detach()  # reading a detached view records nothing in the graph
        shape = list(d.shape)
        if d.is_sparse or d.device.type == "meta":
            return TensorValue(shape=shape, data=None)
        n = d.numel()
        if stats_limit is not None and n > stats_limit:
            return TensorValue(shape=shape, data=None)
        d = d.cpu()
        value = TensorValue(shape=shape, data=_data(d) if n <= full_limit else None)
        if n == 0:
            return value
        flat = d.reshape(-1)
        value.first = _data(flat[:FIRST_VALUES])
        value.min, value.max, value.mean, value.norm = _stats(flat)
        return value
    except Exception:  # an exotic tensor we cannot read must not break the trace
        return None


def event_value(t: Any) -> dict[str, Any] | None:
    """A small snapshot of a tensor for an event (None for a non-tensor).

    Small tensors carry their values (`data`), bigger ones a summary instead, so that
    recording stays cheap next to the op itself.
    """
    if not isinstance(t, torch.Tensor):
        return None
    try:
        d = t.detach()
        n = d.numel()
        if d.is_sparse or d.device.type == "meta" or n > STATS_LIMIT:
            return {"shape": list(d.shape), "data": None}
        d = d.cpu()
        if n <= EVENT_DATA_LIMIT:
            return {"shape": list(d.shape), "data": _data(d)}
        low, high, mean, norm = _stats(d.reshape(-1))
        return {
            "shape": list(d.shape),
            "data": None,
            "min": low,
            "max": high,
            "mean": mean,
            "norm": norm,
        }
    except Exception:
        return None


def json_safe(x: Any) -> Any:
    """A copy of a JSON-like structure with NaN and infinities as "nan", "inf", "-inf"."""
    if isinstance(x, float):
        return json_number(x)
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    return x


def grad_value(t: torch.Tensor) -> TensorValue | None:
    """`.grad` as PyTorch holds it, without the warning non-leaf access raises."""
    if not (t.is_leaf or t.retains_grad):
        return None  # PyTorch keeps no .grad here
    g = t.grad
    return None if g is None else tensor_value(g)
