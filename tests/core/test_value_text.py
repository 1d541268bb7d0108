"""How labels and captions write a tensor's numbers, checked against torch's own."""

from __future__ import annotations

import math

import torch

from autograd_viz.core.trace import TensorValue
from autograd_viz.core.trace.value_text import format_number, format_value
from autograd_viz.core.trace.values import tensor_value


def test_a_matrix_from_an_event_shows_its_range_like_an_end_of_run_value() -> None:
    t = torch.tensor([[0.25, -1.5, 3.0], [2.0, 0.5, -0.125]])
    event_value = TensorValue.from_event_dict({"shape": [2, 3], "data": t.tolist()})
    low, high = format_number(t.min().item(), 3), format_number(t.max().item(), 3)
    assert format_value(event_value) == f"[2×3] {low}…{high}"
    assert format_value(tensor_value(t)) == format_value(event_value)


def test_a_range_counts_infinities_and_nan_as_torch_does() -> None:
    """A causal mask's `scores.masked_fill(mask, -inf)` read `[4×4] -24.4…12.4` at its
    step and `-inf…12.4` at the run's end; torch's min is -inf, and a NaN anywhere makes
    min and max NaN. Events carry NaN and infinities as strings in JSON, floats in process."""
    cases = [
        torch.tensor([[0.25, float("-inf")], [2.0, 12.5]]),
        torch.tensor([[0.25, float("inf")], [-2.0, 1.5]]),
        torch.tensor([[0.25, float("nan")], [-2.0, float("-inf")]]),
    ]
    for t in cases:
        expected = f"[2×2] {format_number(t.min().item(), 3)}…{format_number(t.max().item(), 3)}"
        floats = TensorValue.from_event_dict({"shape": [2, 2], "data": t.tolist()})
        strings = [[x if math.isfinite(x) else str(x) for x in row] for row in t.tolist()]
        in_json = TensorValue.from_event_dict({"shape": [2, 2], "data": strings})
        assert format_value(floats) == format_value(in_json) == expected
        assert format_value(tensor_value(t)) == expected  # the run's end says the same
    assert expected == "[2×2] nan…nan"


def test_a_value_without_numbers_shows_its_shape() -> None:
    assert format_value(TensorValue.from_event_dict({"shape": [4, 3], "data": None})) == "[4×3]"


def test_a_rounded_number_never_gets_a_false_decimal() -> None:
    """At three digits 102.4 read "102.0", 1234.5 read "1234.0": a ".0" that claimed the
    rounding was exact. torch's own numbers, printed as Python prints them, are the oracle."""
    import torch

    e = torch.tensor([10.0, 2.4]).add_(100)
    shown = [format_number(v, 3) for v in e.tolist()]
    assert shown == ["110.0", "102.4"]
    assert format_number(1234.5) == "1234.5" and format_number(99.96, 3) == "100.0"
    assert format_number(3.0) == "3.0" and format_number(-7.0, 3) == "-7.0"


def test_complex_numbers_read_as_complex_numbers() -> None:
    """`torch.tensor([1+2j, 3-1j])` was captioned `[[1.0, 2.0], [3.0, -1.0]]`, a 2×2 real
    matrix to the eye, and a bigger one by the range of its real and imaginary parts
    mixed. Each number now reads as Python writes it, a bigger tensor by |z|."""
    from autograd_viz.core.kernel.runner import run_source

    trace = run_source(
        "import torch\nz = torch.tensor([1+2j, 3-1j])\ns = z.sum()\n"
        "X = torch.tensor([[3+4j, 0j], [-1j, 1+0j]])\n"
    )
    z, s, X = (trace.tensor_named(n).value for n in ("z", "s", "X"))
    assert format_value(z) == "[1.0+2.0j, 3.0-1.0j]"
    assert format_value(s) == "4.0+1.0j"
    assert format_value(X) == "[2×2] complex, |z| 0.0…5.0"
    # Real tensors are untouched.
    assert format_value(TensorValue([2], [1.5, -2.0])) == "[1.5, -2.0]"
