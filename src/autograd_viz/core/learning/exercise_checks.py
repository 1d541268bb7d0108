"""What exercises are made of (`Case`, `Exercise`) and how a case compares values.

The comparisons run in the checker's child process, next to the learner's code, where
torch is loaded. They never raise on odd input: a learner may return anything, and the
answer to anything unexpected is a short sentence saying what was wrong.
"""

from __future__ import annotations

import copy
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

SHOWN_CHARS = 160  # a value's description is cut here: one line in a terminal or a table
SHOWN_ELEMENTS = 16  # larger tensors are described by shape, dtype and range


def _torch() -> Any:
    return sys.modules.get("torch")


def is_tensor(value: Any) -> bool:
    """A torch.Tensor (without importing torch where it is not loaded yet)."""
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def as_array(value: Any) -> np.ndarray:
    """Numbers as a float64 array: tensors, arrays, numbers and (nested) lists of them."""
    if is_tensor(value):
        return value.detach().cpu().to(dtype=_torch().float64).numpy()
    if isinstance(value, (list, tuple)):
        parts = [as_array(v) for v in value]
        return np.stack(parts) if parts else np.zeros(0)
    array = np.asarray(value)
    if array.dtype != bool and not np.issubdtype(array.dtype, np.number):
        raise TypeError(f"a {type(value).__name__} is not a number or an array of numbers")
    return array.astype(np.float64)


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) or is_tensor(value)


def _numbers(array: np.ndarray) -> str:
    if array.ndim == 0:
        return f"{float(array) + 0.0:.6g}"  # + 0.0: no "-0"
    return "[" + ", ".join(_numbers(row) for row in array) + "]"


def show_value(value: Any) -> str:
    """A one-line description of a value for a result table: numbers, shape, dtype."""
    try:
        if is_tensor(value) or isinstance(value, np.ndarray):
            kind = "tensor" if is_tensor(value) else "array"
            dtype = str(value.dtype).replace("torch.", "")
            shape = tuple(value.shape)
            count = value.size if isinstance(value, np.ndarray) else value.numel()
            if count > SHOWN_ELEMENTS:
                data = as_array(value)
                return _one_line(
                    f"{kind} of shape {shape}, {dtype}, values in "
                    f"[{data.min():.4g}, {data.max():.4g}]"
                )
            return _one_line(f"{kind} {_numbers(as_array(value))} ({dtype})")
        if isinstance(value, float):
            return f"{value + 0.0:.6g}"
        if isinstance(value, (list, tuple)) and value and all(_is_number(v) for v in value):
            inner = ", ".join(show_value(v) for v in value)
            return _one_line(f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
        return _one_line(repr(value))
    except Exception:  # a learner's object whose repr or shape raises
        return f"<a {type(value).__name__}>"


def close(expected: Any, got: Any, rtol: float = 1e-5, atol: float = 1e-6) -> str | None:
    """None when `got` holds the same numbers as `expected`; otherwise why not."""
    if isinstance(got, tuple) and hasattr(got, "values") and hasattr(got, "indices"):
        return "got torch's (values, indices) pair: take its .values"
    try:
        got_array = as_array(got)
    except (TypeError, ValueError, RuntimeError) as exc:
        return f"expected numbers, got {type(got).__name__} ({exc})"
    want = as_array(expected)
    if got_array.shape != want.shape:
        return f"shape {got_array.shape} instead of {want.shape}"
    if not np.allclose(got_array, want, rtol=rtol, atol=atol, equal_nan=True):
        worst = float(np.nanmax(np.abs(got_array - want))) if want.size else math.nan
        return f"values differ by up to {worst:.3g}"
    return None


def same_tensor(expected: Any, got: Any) -> str | None:
    """A torch tensor of the same dtype and shape, with the same values."""
    if not is_tensor(got):
        return f"expected a torch tensor, got {type(got).__name__}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} instead of {expected.dtype}"
    return close(expected, got)


def numpy_array(expected: Any, got: Any) -> str | None:
    """A NumPy array (not a tensor, not a list) with the expected values."""
    if not isinstance(got, np.ndarray):
        return f"expected a numpy.ndarray, got {type(got).__module__}.{type(got).__name__}"
    return close(expected, got)


def describe_equal(describe: Callable[[Any], str]) -> Callable[[Any, Any], str | None]:
    """A comparison of two descriptions (for structure and graph properties)."""

    def compare(expected: Any, got: Any) -> str | None:
        want, have = describe(expected), describe(got)
        return None if want == have else f"{have} instead of {want}"

    return compare


def describe_graph(value: Any) -> str:
    """What autograd attached to a tensor: requires_grad and the grad_fn."""
    if not is_tensor(value):
        return f"a {type(value).__name__}, not a tensor"
    grad_fn = type(value.grad_fn).__name__ if value.grad_fn is not None else None
    return f"requires_grad={value.requires_grad}, grad_fn={grad_fn}"


def describe_random_batch(value: Any) -> str:
    """Shape, dtype and whether the values are varied and inside [0, 1)."""
    if not is_tensor(value):
        return f"a {type(value).__name__}, not a tensor"
    data = value.detach().float()
    inside = bool(data.numel()) and bool(((data >= 0) & (data < 1)).all())
    varied = data.numel() > 1 and bool(data.std() > 0)
    spread = "random values in [0, 1)" if inside and varied else "values not uniform in [0, 1)"
    return f"shape {tuple(value.shape)}, {str(value.dtype).replace('torch.', '')}, {spread}"


def describe_linear_layers(model: Any) -> str:
    """The nn.Linear layers of a model, in order, as in→out sizes."""
    modules = getattr(model, "modules", None)
    if not callable(modules):
        return f"a {type(model).__name__}, not an nn.Module"
    torch = _torch()
    sizes = [
        f"{m.in_features}→{m.out_features}" for m in modules() if isinstance(m, torch.nn.Linear)
    ]
    return f"{len(sizes)} Linear layers ({', '.join(sizes) or 'none'})"


def positive_seconds(_expected: Any, got: Any) -> str | None:
    """Two durations, both positive numbers of seconds."""
    try:
        values = [float(v) for v in got]
    except (TypeError, ValueError):
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
    compare: Callable[[Any, Any], str | None] = close  # None, or why it differs
    function: str | None = None  # the learner's function to call (default: the exercise's)
    pick: Callable[[Any], Any] | None = None  # the part of the result this case looks at
    pick_label: str = ""  # how that part is named in a message, e.g. "result['matmul']"
    describe: Callable[[Any], str] = show_value  # expected and got, as text


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
