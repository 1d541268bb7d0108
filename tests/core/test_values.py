"""Values in the trace, taken fast (batched, deferred) and checked against torch itself."""

from __future__ import annotations

import math

import pytest
import torch

from autograd_viz.core.trace.values import FULL_DATA_LIMIT, Snapshots, TensorValues

CASES = [
    torch.tensor(3.5),
    torch.randn(7, dtype=torch.float64),
    torch.randn(3, 4),
    torch.randn(64, 32),
    torch.randn(5, 3, 2),  # same size as the next one, another shape: one batch, two shapes
    torch.randn(2, 15),
    torch.arange(12).reshape(3, 4),
    torch.tensor([True, False, True]),
    torch.randn(200) * 1e3,
    torch.randn(FULL_DATA_LIMIT + 5),
    torch.empty(0, 3),
]


def _expected(t: torch.Tensor) -> tuple[float, float, float, float]:
    v = t.detach().to(torch.float64).reshape(-1)
    return (v.min().item(), v.max().item(), v.mean().item(), v.norm().item())


@pytest.mark.parametrize("t", CASES, ids=lambda t: f"{t.dtype}-{list(t.shape)}")
def test_end_of_run_values_equal_torchs(t: torch.Tensor) -> None:
    values = TensorValues()
    value = values.take(t)
    before = t.clone()
    values.finish()
    assert value.shape == list(before.shape)
    if before.numel() <= FULL_DATA_LIMIT:
        assert value.data == before.tolist()
    else:
        assert value.data is None
    if before.numel():
        got = (value.min, value.max, value.mean, value.norm)
        assert got == pytest.approx(_expected(before), rel=1e-6, abs=1e-9)
        assert value.first == before.reshape(-1)[:8].tolist()


@pytest.mark.parametrize("t", CASES, ids=lambda t: f"{t.dtype}-{list(t.shape)}")
def test_event_snapshots_equal_torchs(t: torch.Tensor) -> None:
    snapshots = Snapshots()
    value = snapshots.take(t)
    before = t.clone()
    if t.is_floating_point():
        t.mul_(-2)
    snapshots.finish()
    assert value["shape"] == list(before.shape)
    if before.numel() <= 64:
        assert value["data"] == before.tolist()
    elif before.numel():
        got = (value["min"], value["max"], value["mean"], value["norm"])
        assert got == pytest.approx(_expected(before), rel=1e-6, abs=1e-9)


def test_nan_propagates_like_torch() -> None:
    values = TensorValues()
    small = values.take(torch.tensor([1.0, math.nan, 3.0]))
    big = values.take(torch.full((100,), math.nan))
    values.finish()
    for v in (small, big):
        assert all(math.isnan(x) for x in (v.min, v.max, v.mean, v.norm))


def test_deferred_data_serialises_like_plain_data() -> None:
    from dataclasses import asdict

    values = TensorValues()
    t = torch.randn(10, 10)
    value = values.take(t)
    values.finish()
    assert asdict(value)["data"] == t.tolist()


def _summary(t: torch.Tensor) -> tuple[float, float, float, float]:
    v = (t.abs() if t.is_complex() else t).detach().to(torch.float64).reshape(-1)
    return (v.min().item(), v.max().item(), v.mean().item(), v.norm().item())


def _check(value: dict, t: torch.Tensor) -> None:
    assert value["shape"] == list(t.shape)
    got = (value["min"], value["max"], value["mean"], value["norm"])
    assert got == pytest.approx(_summary(t), rel=1e-6, abs=1e-9)


def test_snapshots_across_many_slabs_keep_each_moment() -> None:
    snapshots = Snapshots()
    t = torch.randn(10, 10)
    taken = []
    for k in range(300):  # rows for one shape: slabs of 4, 16, 64, 128 (1 MB) rows …
        taken.append((snapshots.take(t), t.clone()))
        t.add_(k)  # changed after each snapshot: each must show its own moment
    snapshots.finish()
    for value, then in taken:
        _check(value, then)


def test_snapshots_past_the_budget_are_summarised_at_once() -> None:
    snapshots = Snapshots(budget_bytes=4 * 100 * 4 + 1)  # room for the first slab only
    t = torch.randn(100)
    taken = []
    for _ in range(10):
        taken.append((snapshots.take(t), t.clone()))
        t.mul_(-2)
    assert "min" in taken[-1][0]  # past the budget: summarised on the spot
    snapshots.finish()
    for value, then in taken:
        _check(value, then)


@pytest.mark.parametrize(
    "t",
    [
        torch.arange(100).reshape(10, 10),
        torch.rand(80) > 0.5,
        torch.randn(70, dtype=torch.complex64),
        torch.randn(9, 9, dtype=torch.float64),
        torch.randn(20, 1).expand(20, 5),  # stride 0
        torch.randn(12, 8).t(),  # not contiguous
        torch.randn(66).conj(),
    ],
    ids=["int", "bool", "complex", "float64", "expanded", "transposed", "conj"],
)
def test_snapshots_of_any_layout_and_dtype(t: torch.Tensor) -> None:
    snapshots = Snapshots()
    value = snapshots.take(t)
    then = t.clone()
    snapshots.finish()
    _check(value, then)


def test_an_integer_or_bool_tensors_range_is_in_its_own_kind() -> None:
    """A mask read `[100] 0.0…1.0` and an index `0.0…69.0`: the bounds went through
    float64. They are now what torch holds: False and True, 0 and 69, and an int64 past
    2**53 keeps its last digits; labels say so."""
    from autograd_viz.core.kernel.runner import run_source
    from autograd_viz.core.trace.value_text import format_value

    trace = run_source(
        "import torch\ntorch.manual_seed(0)\nx = torch.randn(100)\nm = x > 0\n"
        "i = torch.arange(70)\nbig = torch.full((70,), 2**60 + 1)\ny = (x * m).sum()\n"
    )
    m, i, big = (trace.tensor_named(n).value for n in ("m", "i", "big"))
    assert (m.min, m.max) == (False, True) and type(m.min) is bool
    assert (i.min, i.max) == (0, 69) and type(i.max) is int
    assert big.max == 2**60 + 1
    assert format_value(m) == "[100] False…True" and format_value(i) == "[70] 0…69"
    # Events summarise the same way: `x > 0` made 100 bools, more than an event carries.
    made = next(e for e in trace.events if e["kind"] == "op" and e["op"] == "gt")
    assert (made["values"][0]["min"], made["values"][0]["max"]) == (False, True)
    # A small bool tensor's own numbers are whole, and its label reads them as such.
    small = run_source("import torch\nk = torch.tensor([True, False, True, True])\n")
    assert format_value(small.tensor_named("k").value) == "[4] False…True"
