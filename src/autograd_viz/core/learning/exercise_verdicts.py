"""The checker's verdicts, made in the parent from what the children sent.

Every message from a child is read as untrusted: `expected_values`, `load_reply` and
`judge` accept only the exact shapes the children write (exercise_child) and raise
ProtocolError for anything else. A case passes only when `judge` finds the returned value
equal to torch's, here, with comparisons the learner's code never ran next to.
"""

from __future__ import annotations

import math
from typing import Any

from autograd_viz.core.learning.exercise_checks import Case, Exercise, show_value
from autograd_viz.core.learning.exercise_values import validate
from autograd_viz.core.learning.gradcheck import ATOL, EPS, RTOL, GradientCheck, GradientEntry

TEXT_LIMIT = 6_000  # characters of a message or traceback kept from a child


class ProtocolError(ValueError):
    """A child's message is not one the protocol allows."""


def _keys(message: Any, kind: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(message, dict) or message.get("kind") != kind:
        raise ProtocolError(f"expected a {kind!r} message")
    if not set(message) <= allowed | {"kind"}:
        raise ProtocolError(f"a {kind!r} message with keys {sorted(message)}")
    return message


def _text(value: Any, name: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"{name} is not text")
    return value[-TEXT_LIMIT:]


def _line(value: Any) -> int | None:
    if value is not None and (type(value) is not int or value < 0):
        raise ProtocolError("a line that is not a line number")
    return value


def _value(data: Any) -> dict[str, Any]:
    try:
        return validate(data)
    except ValueError as exc:
        raise ProtocolError(f"a malformed value: {exc}") from None


def expected_values(message: Any, count: int) -> list[dict[str, Any] | None]:
    """The reference child's encoded values, one per case (None: its reference failed)."""
    values = _keys(message, "expected", {"values"}).get("values")
    if not isinstance(values, list) or len(values) != count:
        raise ProtocolError(f"expected {count} values")
    return [None if v is None else _value(v) for v in values]


def load_reply(message: Any) -> dict[str, Any] | None:
    """None when the solution loaded; its error (message, error, line) when it did not."""
    if isinstance(message, dict) and message.get("kind") == "loaded":
        _keys(message, "loaded", set())
        return None
    _keys(message, "load_error", {"message", "error", "line"})
    return {
        "message": _text(message.get("message"), "message"),
        "error": _text(message.get("error"), "error", optional=True),
        "line": _line(message.get("line")),
    }


def judge(
    exercise: Exercise, case: Case, expected: dict[str, Any] | None, index: int, message: Any
) -> dict[str, Any]:
    """The CaseResult fields for case `index` from the solution child's report of it."""
    allowed = {"index", "outcome", "value", "message", "error", "line", "seconds", "function"}
    report = _keys(message, "case", allowed)
    if report.get("index") != index:
        raise ProtocolError(f"a report for case {report.get('index')!r} where {index} was due")
    seconds = report.get("seconds")
    if seconds is not None and (type(seconds) not in (int, float) or not math.isfinite(seconds)):
        raise ProtocolError("seconds that are not a number")
    outcome = report.get("outcome")
    name = case.function or exercise.function
    if outcome == "raised":
        return {
            "passed": False,
            "message": _text(report.get("message"), "message"),
            "error": _text(report.get("error"), "error", optional=True),
            "line": _line(report.get("line")),
        }
    if outcome == "missing":
        return {"passed": False, "message": f"your code defines no function {name}()"}
    if outcome not in ("returned", "unpicked"):
        raise ProtocolError(f"an outcome {outcome!r}")
    got = _value(report.get("value"))
    base = {"passed": False, "got": shown(case, got), "seconds": seconds}
    if outcome == "unpicked":
        why = _text(report.get("message"), "message")[:200]
        message = f"cannot take {case.pick_label} of the result ({why})"
        return {**base, "got": show_value(got), "message": message}
    if got["type"] == "none":
        message = f"{name}() returned None: is it finished? (the starter's body is only `pass`)"
        return {**base, "got": "None", "message": message}
    if expected is None:
        message = "the checker's own reference failed (a bug in autograd-viz: see the output)"
        return {**base, "message": message}
    try:
        message = case.compare(expected, got)
    except Exception as exc:
        message = f"cannot compare: {type(exc).__name__}: {exc}"
    return {**base, "passed": message is None, "message": message or ""}


def shown(case: Case, value: dict[str, Any]) -> str:
    """An encoded value as the case describes it (show_value if that fails)."""
    try:
        return case.describe(value)
    except Exception:
        return show_value(value)


def verified_gradient_check(data: Any, tolerances: dict[str, float]) -> GradientCheck:
    """The child's gradient check with every verdict worked out again here, from its two
    numbers per entry and the tolerances asked for (never the child's own `ok`)."""
    eps = float(tolerances.get("eps", EPS))
    atol, rtol = float(tolerances.get("atol", ATOL)), float(tolerances.get("rtol", RTOL))
    try:
        check = GradientCheck.from_dict(data)
        entries = []
        for e in check.entries:
            numerical, analytical = float(e.numerical), float(e.analytical)
            error = abs(analytical - numerical)
            rel = error / abs(numerical) if numerical != 0 else (0.0 if error == 0 else None)
            entries.append(
                GradientEntry(
                    str(e.input)[:200],
                    [int(i) for i in e.index],
                    [int(i) for i in e.output_index],
                    numerical,
                    analytical,
                    error,
                    rel,
                    bool(error <= atol + rtol * abs(numerical)),  # NaN never passes
                )
            )
        notes = [str(n)[:TEXT_LIMIT] for n in check.notes]
        shape = [int(n) for n in check.output_shape]
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ProtocolError(f"a malformed gradient check: {type(exc).__name__}") from None
    return GradientCheck(entries, shape, eps, atol, rtol, notes)
