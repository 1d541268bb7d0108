"""JSON for trace data: NaN and infinities travel as strings. No torch here, so the trace
model and the value summaries both build on it without importing each other."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["json_number", "json_safe"]


def json_number(x: Any) -> Any:
    """A Python number JSON can carry; NaN and infinities become strings."""
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, complex):
        return [json_number(x.real), json_number(x.imag)]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def json_safe(x: Any) -> Any:
    """A copy of a JSON-like structure with NaN and infinities as "nan", "inf", "-inf"."""
    if isinstance(x, float):
        return json_number(x)
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    return x
