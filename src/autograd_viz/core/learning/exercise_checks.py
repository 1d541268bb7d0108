"""What exercises are made of (`Case`, `Exercise`) and how a case compares values.

The comparisons run in the checker's own process, never next to the learner's code: they
take values as `exercise_values.encode` wrote them (typed plain data, checked by
`exercise_values.validate`), the learner's from the solution's process and torch's from a
reference process. They never raise on odd input: a learner may return anything, and the
answer to anything unexpected is a short sentence saying what was wrong.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

SHOWN_CHARS = 160  # a value's description is cut here: one line in a terminal or a table
SHOWN_ELEMENTS = 16  # larger tensors are described by shape, dtype and range

Value = dict[str, Any]  # an encoded value (see exercise_values)


def _short(value: Value) -> str:
    """The value's type name, as type(value).__name__ said it."""
    return str(value.get("class", "?")).rsplit(".", 1)[-1]


def as_array(value: Value) -> np.ndarray:
    """Numbers as a float64 array: tensors, arrays, numbers and (nested) lists of them."""
    kind = value["type"]
    if kind in ("tensor", "ndarray"):
        if value["values"] is None:
            raise TypeError(f"a {value['dtype']} {kind} that cannot be read as numbers")
        return np.asarray(value["values"], dtype=np.float64).reshape(value["shape"])
    if kind == "sequence":
        parts = [as_array(v) for v in value["items"]]
        return np.stack(parts) if parts else np.zeros(0)
    if kind in ("bool", "int", "float"):
        return np.asarray(float(value["value"]), dtype=np.float64)
    raise TypeError(f"a {_short(value)} is not a number or an array of numbers")


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _is_number(value: Value) -> bool:
    return value["type"] in ("bool", "int", "float", "tensor")


def _numbers(array: np.ndarray) -> str:
    if array.ndim == 0:
        return f"{float(array) + 0.0:.6g}"  # + 0.0: no "-0"
    return "[" + ", ".join(_numbers(row) for row in array) + "]"


def show_value(value: Value) -> str:
    """A one-line description of a value for a result table: numbers, shape, dtype."""
    try:
        kind = value["type"]
        if kind in ("tensor", "ndarray"):
            name = "tensor" if kind == "tensor" else "array"
            dtype = value["dtype"].replace("torch.", "")
            shape = tuple(value["shape"])
            if value["values"] is None:
                return _one_line(f"{name} of shape {shape}, {dtype}")
            data = as_array(value)
            if data.size > SHOWN_ELEMENTS:
                return _one_line(
                    f"{name} of shape {shape}, {dtype}, values in "
                    f"[{data.min():.4g}, {data.max():.4g}]"
                )
            return _one_line(f"{name} {_numbers(data)} ({dtype})")
        if kind == "float":
            return f"{float(value['value']) + 0.0:.6g}"
        if kind in ("none", "bool", "int", "str"):
            return _one_line(repr(value.get("value")))
        items = value.get("items")
        if kind == "sequence" and items and all(_is_number(v) for v in items):
            inner = ", ".join(show_value(v) for v in items)
            is_list = value["class"] == "builtins.list"
            return _one_line(f"[{inner}]" if is_list else f"({inner})")
        return _one_line(value["repr"])
    except Exception:  # a malformed value: say what it is, never raise
        return f"<a {_short(value)}>"


def close(expected: Value, got: Value, rtol: float = 1e-5, atol: float = 1e-6) -> str | None:
    """None when `got` holds the same numbers as `expected`; otherwise why not."""
    if got["type"] == "sequence" and {"values", "indices"} <= set(got["fields"]):
        return "got torch's (values, indices) pair: take its .values"
    try:
        got_array = as_array(got)
    except (TypeError, ValueError) as exc:
        return f"expected numbers, got {_short(got)} ({exc})"
    want = as_array(expected)
    if got_array.shape != want.shape:
        return f"shape {got_array.shape} instead of {want.shape}"
    if not np.allclose(got_array, want, rtol=rtol, atol=atol, equal_nan=True):
        worst = float(np.nanmax(np.abs(got_array - want))) if want.size else math.nan
        return f"values differ by up to {worst:.3g}"
    return None


def same_tensor(expected: Value, got: Value) -> str | None:
    """A torch tensor of the same dtype and shape, with the same values."""
    if got["type"] != "tensor":
        return f"expected a torch tensor, got {_short(got)}"
    if got["dtype"] != expected["dtype"]:
        return f"dtype {got['dtype']} instead of {expected['dtype']}"
    return close(expected, got)


def numpy_array(expected: Value, got: Value) -> str | None:
    """A NumPy array (not a tensor, not a list) with the expected values."""
    if got["type"] != "ndarray":
        module, _, name = str(got["class"]).rpartition(".")
        module = {"torch._tensor": "torch"}.get(module, module)  # as torch.Tensor is named
        return f"expected a numpy.ndarray, got {module}.{name}"
    return close(expected, got)


def describe_equal(describe: Callable[[Value], str]) -> Callable[[Value, Value], str | None]:
    """A comparison of two descriptions (for structure and graph properties)."""

    def compare(expected: Value, got: Value) -> str | None:
        want, have = describe(expected), describe(got)
        return None if want == have else f"{have} instead of {want}"

    return compare


def describe_graph(value: Value) -> str:
    """What autograd attached to a tensor: requires_grad and the grad_fn."""
    if value["type"] != "tensor":
        return f"a {_short(value)}, not a tensor"
    return f"requires_grad={value['requires_grad']}, grad_fn={value['grad_fn']}"


def describe_random_batch(value: Value) -> str:
    """Shape, dtype and whether the values are varied and inside [0, 1)."""
    if value["type"] != "tensor":
        return f"a {_short(value)}, not a tensor"
    data = np.asarray(value["values"] or [], dtype=np.float64)
    inside = bool(data.size) and bool(((data >= 0) & (data < 1)).all())
    varied = data.size > 1 and bool(data.std() > 0)
    spread = "random values in [0, 1)" if inside and varied else "values not uniform in [0, 1)"
    dtype = value["dtype"].replace("torch.", "")
    return f"shape {tuple(value['shape'])}, {dtype}, {spread}"


def describe_linear_layers(model: Value) -> str:
    """The nn.Linear layers of a model, in order, as in→out sizes."""
    if model["type"] != "module":
        return f"a {_short(model)}, not an nn.Module"
    sizes = [f"{n_in}→{n_out}" for n_in, n_out in model["linear"]]
    return f"{len(sizes)} Linear layers ({', '.join(sizes) or 'none'})"


def positive_seconds(_expected: Value, got: Value) -> str | None:
    """Two durations, both positive numbers of seconds."""
    try:
        parts = got["items"] if got["type"] == "sequence" else None
        values = [float(as_array(v).item()) for v in parts] if parts is not None else None
    except (TypeError, ValueError):
        values = None
    if values is None:
        return f"expected two numbers of seconds, got {show_value(got)}"
    if len(values) != 2 or not all(0 < v < 600 for v in values):
        return f"expected two positive durations in seconds, got {show_value(got)}"
    return None


# ---- what an exercise is made of -----------------------------------------------
@dataclass(frozen=True)
class Case:
    """One hidden test: fresh arguments, torch's answer for them, and how to compare."""

    name: str
    description: str
    arguments: Callable[[], tuple]  # builds the call's arguments (torch imported inside)
    reference: Callable[..., Any]  # the expected value for those arguments, by torch
    compare: Callable[[Value, Value], str | None] = close  # None, or why: on encoded values
    function: str | None = None  # the learner's function to call (default: the exercise's)
    pick: Callable[[Any], Any] | None = None  # the part of the result looked at (in the child)
    pick_label: str = ""  # how that part is named in a message, e.g. "result['matmul']"
    describe: Callable[[Value], str] = show_value  # expected and got (encoded), as text


@dataclass(frozen=True)
class Exercise:
    """A task the learner solves in code, with the cases that check it."""

    id: str
    title: str
    summary: str  # one line: what to write
    lesson: str
    function: str
    statement: str
    starter: str
    cases: tuple[Case, ...]


def fresh(arguments: tuple) -> Callable[[], tuple]:
    """Arguments built anew for every call: a solution that appends to x0 must not change
    the next case (or the reference's copy)."""
    return lambda: copy.deepcopy(arguments)


def calls(reference: Callable[..., Any], *rows: tuple[str, str, tuple]) -> tuple[Case, ...]:
    """Cases that call the learner's function with plain arguments (name, text, args)."""
    return tuple(Case(name, text, fresh(args), reference) for name, text, args in rows)


def part(
    name: str,
    description: str,
    key: Any,
    arguments: Callable[[], tuple],
    reference: Callable[..., Any],
    compare: Callable[[Any, Any], str | None] = close,
    describe: Callable[[Any], str] = show_value,
) -> Case:
    """A case about one part of the learner's result (`result[key]`): torch's same part."""
    return Case(
        name,
        description,
        arguments,
        lambda *args: reference(*args)[key],
        compare,
        pick=lambda result: result[key],
        pick_label=f"result[{key!r}]",
        describe=describe,
    )
