"""A returned value as plain, typed data: what crosses from a child process to the checker.

The solution's process and the reference process (torch's expected answers) never compare
anything: each turns its values into `encode`'s JSON-ready dicts and sends them. The parent
checks every dict with `validate` (a strict schema, size caps) and compares the two with
`exercise_checks`, in a process the learner's code never runs in. So a solution can only
hand back values: it cannot patch the comparison, read the expected answers or say "pass".

A value is one of (every dict also has "class", the value's `module.Type`):
  {"type": "none"} · {"type": "bool" | "int" | "float" | "str", "value": ...}
  {"type": "tensor" | "ndarray", "dtype", "shape", "values" (flat floats, or None when
   not numbers or too many), and for tensors "requires_grad" and "grad_fn"}
  {"type": "sequence", "items", "fields" ("values"/"indices" of torch's named pairs), "repr"}
  {"type": "module", "linear" ([in, out] of each nn.Linear), "repr"}
  {"type": "object", "repr"}
"""

from __future__ import annotations

import math
import sys
from typing import Any

MAX_NUMBERS = 200_000  # numbers in one value (an (8, 1, 28, 28) batch is 6,272)
MAX_ITEMS = 1_000  # items of one sequence
MAX_DEPTH = 8  # nesting of sequences
MAX_TEXT = 2_000  # characters of a repr or a string
MAX_MESSAGE_BYTES = 8 * MAX_NUMBERS + 1_000_000  # one JSON line from a child, at most

_SCALARS = {"bool": bool, "int": int, "float": float, "str": str}
_KEYS = {
    "none": {"type", "class"},
    "bool": {"type", "class", "value"},
    "int": {"type", "class", "value"},
    "float": {"type", "class", "value"},
    "str": {"type", "class", "value"},
    "tensor": {"type", "class", "dtype", "shape", "values", "requires_grad", "grad_fn"},
    "ndarray": {"type", "class", "dtype", "shape", "values"},
    "sequence": {"type", "class", "items", "fields", "repr"},
    "module": {"type", "class", "linear", "repr"},
    "object": {"type", "class", "repr"},
}


def _class(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"[:200]


def _repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a learner's object whose repr raises
        text = f"<a {type(value).__name__}>"
    return " ".join(str(text).split())[:MAX_TEXT]


def _flat(array: Any, count: int, budget: list[int]) -> list[float] | None:
    """The numbers of a float64 numpy array, or None when they would pass the budget."""
    if count > budget[0]:
        return None
    budget[0] -= count
    return [float(v) for v in array.reshape(-1).tolist()]


def encode(value: Any, _depth: int = 0, _budget: list[int] | None = None) -> dict[str, Any]:
    """`value` as typed plain data (runs in a child; never raises on odd values)."""
    budget = [MAX_NUMBERS] if _budget is None else _budget
    torch, numpy = sys.modules.get("torch"), sys.modules.get("numpy")
    head = {"class": _class(value)}
    try:
        if value is None:
            return {"type": "none", **head}
        if isinstance(value, bool):
            return {"type": "bool", "value": bool(value), **head}
        if isinstance(value, int) and abs(value) < 2**63:
            return {"type": "int", "value": int(value), **head}
        if isinstance(value, float):
            return {"type": "float", "value": float(value), **head}
        if isinstance(value, str):
            return {"type": "str", "value": str(value)[:MAX_TEXT], **head}
        if numpy is not None and isinstance(value, numpy.number):  # numpy.float32(1.5)…
            return {"type": "float", "value": float(value), **head}
        if torch is not None and isinstance(value, torch.Tensor):
            return _encode_tensor(value, head, budget, torch)
        if numpy is not None and isinstance(value, numpy.ndarray):
            shape = [int(n) for n in value.shape]
            try:
                values = _flat(value.astype(numpy.float64), int(value.size), budget)
            except (TypeError, ValueError):
                values = None
            return {"type": "ndarray", "dtype": str(value.dtype), "shape": shape,
                    "values": values, **head}  # fmt: skip
        if isinstance(value, (list, tuple)) and _depth < MAX_DEPTH:
            items = [encode(v, _depth + 1, budget) for v in list(value)[:MAX_ITEMS]]
            fields = [n for n in ("values", "indices") if hasattr(value, n)]
            return {"type": "sequence", "items": items, "fields": fields, "repr": _repr(value),
                    **head}  # fmt: skip
        if torch is not None and isinstance(value, torch.nn.Module):
            linear = [
                [int(m.in_features), int(m.out_features)]
                for m in list(value.modules())[:MAX_ITEMS]
                if isinstance(m, torch.nn.Linear)
            ]
            return {"type": "module", "linear": linear, "repr": _repr(value), **head}
    except Exception:  # a learner's subclass whose attributes raise: describe it only
        pass
    return {"type": "object", "repr": _repr(value), **head}


def _encode_tensor(value: Any, head: dict, budget: list[int], torch: Any) -> dict[str, Any]:
    shape = [int(n) for n in value.shape]
    try:
        data = value.detach().cpu().resolve_conj().to(dtype=torch.float64).numpy()
        values = _flat(data, int(value.numel()), budget)
    except (TypeError, RuntimeError, ValueError):  # complex, meta, sparse…
        values = None
    grad_fn = type(value.grad_fn).__name__ if value.grad_fn is not None else None
    return {
        "type": "tensor",
        "dtype": str(value.dtype),
        "shape": shape,
        "values": values,
        "requires_grad": bool(value.requires_grad),
        "grad_fn": grad_fn,
        **head,
    }


def _text(data: Any, what: str) -> None:
    if not isinstance(data, str) or len(data) > MAX_TEXT:
        raise ValueError(f"{what} is not a string of at most {MAX_TEXT} characters")


def validate(data: Any, _depth: int = 0, _budget: list[int] | None = None) -> dict[str, Any]:
    """`data` itself when it is a well-formed encoded value; ValueError otherwise."""
    budget = [MAX_NUMBERS] if _budget is None else _budget
    if not isinstance(data, dict) or data.get("type") not in _KEYS:
        raise ValueError("not an encoded value")
    kind = data["type"]
    if set(data) != _KEYS[kind]:
        raise ValueError(f"a {kind} value with keys {sorted(data)}")
    _text(data["class"], "class")
    if kind in _SCALARS:
        value = data["value"]
        if type(value) is not _SCALARS[kind] and not (kind == "float" and type(value) is int):
            raise ValueError(f"a {kind} value holding a {type(value).__name__}")
        if kind == "str":
            _text(value, "a string")
    elif kind in ("tensor", "ndarray"):
        _validate_array(data, budget)
    elif kind == "sequence":
        items = data["items"]
        if _depth >= MAX_DEPTH or not isinstance(items, list) or len(items) > MAX_ITEMS:
            raise ValueError("a sequence too long or too deep")
        for item in items:
            validate(item, _depth + 1, budget)
        fields = data["fields"]
        if not isinstance(fields, list) or not set(fields) <= {"values", "indices"}:
            raise ValueError("a sequence's fields")
    elif kind == "module":
        linear = data["linear"]
        if not isinstance(linear, list) or len(linear) > MAX_ITEMS:
            raise ValueError("a module's layers")
        for pair in linear:
            if not (isinstance(pair, list) and len(pair) == 2 and all(_count(n) for n in pair)):
                raise ValueError("a module's layer sizes")
    if "repr" in data:
        _text(data["repr"], "repr")
    return data


def _count(n: Any) -> bool:
    return type(n) is int and 0 <= n < 2**62


def _validate_array(data: dict[str, Any], budget: list[int]) -> None:
    _text(data["dtype"], "dtype")
    shape = data["shape"]
    if not isinstance(shape, list) or len(shape) > 32 or not all(_count(n) for n in shape):
        raise ValueError("a shape")
    values = data["values"]
    if values is not None:
        if not isinstance(values, list) or len(values) != math.prod(shape):
            raise ValueError("values that do not fill the shape")
        budget[0] -= len(values)
        if budget[0] < 0:
            raise ValueError(f"more than {MAX_NUMBERS} numbers")
        if not all(type(v) in (float, int) for v in values):
            raise ValueError("values that are not numbers")
    if data["type"] == "tensor":
        if type(data["requires_grad"]) is not bool:
            raise ValueError("requires_grad")
        if data["grad_fn"] is not None:
            _text(data["grad_fn"], "grad_fn")
