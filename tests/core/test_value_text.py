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
