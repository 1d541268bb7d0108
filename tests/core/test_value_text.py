"""How labels and captions write a tensor's numbers, checked against torch's own."""

from __future__ import annotations

import torch

from autograd_viz.core.trace import TensorValue
from autograd_viz.core.trace.value_text import format_number, format_value


def test_a_matrix_from_an_event_shows_its_range_like_an_end_of_run_value() -> None:
    t = torch.tensor([[0.25, -1.5, 3.0], [2.0, float("nan"), -0.125]])
    event_value = TensorValue.from_event_dict({"shape": [2, 3], "data": t.tolist()})
    finite = t[~t.isnan()]
    low, high = format_number(finite.min().item(), 3), format_number(finite.max().item(), 3)
    assert format_value(event_value) == f"[2×3] {low}…{high}"


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
