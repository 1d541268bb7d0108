"""A tensor's numbers as labels and captions write them."""

from __future__ import annotations

from math import inf, isnan, nan

from autograd_viz.core.trace._records import TensorValue

# What a label says for memory `torch.empty()` handed out and nothing set: not a value.
UNINITIALISED = "uninitialised"


def format_number(x: object, digits: int = 4) -> str:
    """A compact, readable number (4 significant digits), as a learner would write it."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return str(x)
    text = f"{x:.{digits}g}"
    if "." not in text and "e" not in text and "n" not in text:
        # No decimals left: a whole number keeps its ".0"; one the rounding cut (102.4
        # at three digits) its first decimal, never a false ".0" ("102.0").
        text = f"{x:.1f}"
    return text


def format_complex(pair: object, digits: int = 4) -> str:
    """A complex number as the trace carries it (`[re, im]`), as Python writes one:
    `1+2j`, `(1.5-0.25j)` without the brackets."""
    if not (isinstance(pair, list) and len(pair) == 2):
        return format_number(pair, digits)
    re, im = pair
    if not all(isinstance(x, (int, float)) for x in pair):  # "nan", "inf": as they came
        return f"{re}{'' if str(im).startswith('-') else '+'}{im}j"
    imag = format_number(abs(im), digits)
    return f"{format_number(re, digits)}{'-' if im < 0 else '+'}{imag}j"


def is_complex(value: TensorValue) -> bool:
    """Whether `data` nests one level deeper than `shape`: a complex tensor's pairs."""
    data, depth = value.data, 0
    while isinstance(data, list) and data:
        data, depth = data[0], depth + 1
    return depth > len(value.shape)


def _complex_value(value: TensorValue) -> str:
    if not value.shape:
        return format_complex(value.data)
    if len(value.shape) == 1 and len(value.data) <= 3:
        return "[" + ", ".join(format_complex(v, 3) for v in value.data) + "]"
    pairs: list[list[float]] = []
    stack = [value.data]
    while stack:
        item = stack.pop()
        if isinstance(item, list) and item and isinstance(item[0], list):
            stack.extend(item)
        elif isinstance(item, list) and len(item) == 2:
            pairs.append(item)
    sizes = [abs(complex(*p)) for p in pairs if all(isinstance(x, (int, float)) for x in p)]
    shape = "×".join(str(s) for s in value.shape)
    if not sizes:
        return f"[{shape}] complex"
    return f"[{shape}] complex, |z| {format_number(min(sizes), 3)}…{format_number(max(sizes), 3)}"


def format_value(value: TensorValue | None) -> str:
    """A tensor's value for a label: the number for scalars, else shape and range."""
    if value is None:
        return "?"
    if isinstance(value.data, list) and is_complex(value):
        return _complex_value(value)
    if not value.shape:
        return format_number(value.data)
    shape = "×".join(str(s) for s in value.shape)
    if isinstance(value.data, list) and len(value.data) <= 3 and len(value.shape) == 1:
        return "[" + ", ".join(format_number(v, 3) for v in value.data) + "]"
    low, high = value.min, value.max
    if low is None:  # an event's value carries its numbers but no summary of them
        numbers = _numbers(value.data)
        if not numbers:
            return f"[{shape}]"
        low, high = _range(numbers)
    return f"[{shape}] {format_number(low, 3)}…{format_number(high, 3)}"


def _numbers(data: object) -> list[float]:
    """The numbers of nested lists, NaN and infinities (which travel as strings) too; a
    bool tensor's True and False, which its range shows as such."""
    out: list[float] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, (int, float)):
            out.append(item)
        elif item in _NOT_FINITE:
            out.append(_NOT_FINITE[item])
    return out


_NOT_FINITE = {"inf": inf, "-inf": -inf, "nan": nan}


def _range(numbers: list[float]) -> tuple[float, float]:
    """min and max as torch gives them: an infinity counts, a NaN makes both NaN."""
    if any(isinstance(x, float) and isnan(x) for x in numbers):
        return nan, nan
    return min(numbers), max(numbers)


def show_value(value: TensorValue | None) -> str:
    """An event's tensor value as a caption shows it ("None" for a missing grad)."""
    return "None" if value is None else format_value(value)


def show_change(before: TensorValue | None, after: TensorValue | None) -> str:
    """`before → after`, as captions show a changed value or `.grad`."""
    return f"{show_value(before)} → {show_value(after)}"


def scalar(value: TensorValue | None) -> float | None:
    """The number of a 0-d value whose data travelled, else None."""
    if value is None or value.shape or not isinstance(value.data, (int, float)):
        return None
    return float(value.data)
