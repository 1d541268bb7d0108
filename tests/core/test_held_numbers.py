"""A run's big tensors' numbers stay in the kernel until the app asks (core/kernel/held.py):
what crosses is smaller, and what the app fetches is exactly what torch held."""

from __future__ import annotations

import json

import pytest
import torch

from autograd_viz.core.kernel import held, protocol, wire
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.kernel.trace_messages import trace_from_payload
from autograd_viz.core.trace import Trace, json_safe

MODEL = (
    "import torch\n"
    "torch.manual_seed(0)\n"
    "W = torch.randn(12, 10, requires_grad=True)\n"  # 120 numbers: held
    "b = torch.randn(10, requires_grad=True)\n"  # 10: travels whole
    "x = torch.randn(4, 12)\n"  # 48: travels whole
    "h = torch.relu(x @ W + b)\n"  # 40
    "big = torch.randn(101, 101)\n"  # 10,201: summarised, as ever
    "loss = (h ** 2).mean()\n"
    "loss.backward()\n"
)


def _sent(trace: Trace, monkeypatch: pytest.MonkeyPatch, hold: bool) -> tuple[Trace, int]:
    """The trace the app reads after publish_trace, and the bytes that crossed."""
    sent: list[tuple[str, dict, list]] = []
    monkeypatch.setattr(
        protocol,
        "publish_data",
        lambda mime, payload, text, buffers=None: sent.append((mime, payload, list(buffers or []))),
    )
    protocol.publish_trace(trace, hold=hold, namespace="fresh")
    *parts, (_, payload, _) = sent
    assembly = wire.TraceAssembly(parts[0][1]["parts"])
    for _, part, buffers in parts:
        assembly.add(part["format"], buffers[0])
    return trace_from_payload(payload, [], assembly), sum(len(b[0]) for _, _, b in parts)


def _through_json(result: dict) -> dict:
    """As kernel_call sends a result: strict JSON, NaN as strings."""
    return json.loads(json.dumps(json_safe(result), allow_nan=False))


def test_big_tensors_numbers_stay_behind_and_come_back_exactly(monkeypatch) -> None:
    whole = run_source(MODEL)
    arrived, small_bytes = _sent(run_source(MODEL), monkeypatch, hold=True)
    _, whole_bytes = _sent(run_source(MODEL), monkeypatch, hold=False)
    assert small_bytes < whole_bytes
    W, b = arrived.tensor_named("W"), arrived.tensor_named("b")
    # W's 120 numbers and its .grad's stayed; its summary came (the labels read that).
    assert W.value.data is None and W.grad.data is None
    assert W.value.held is not None and W.grad.held == W.value.held
    expected = whole.tensor_named("W")
    assert (W.value.min, W.value.max, W.value.norm) == (
        expected.value.min, expected.value.max, expected.value.norm,
    )  # fmt: skip
    # Small ones travel whole, as before; past 10,000 only a summary ever travels.
    assert b.value.held is None and b.value.data == whole.tensor_named("b").value.data
    assert arrived.tensor_named("x").value.held is None
    big = arrived.tensor_named("big")
    assert big.value.held is None and big.value.data is None and big.value.norm is not None
    # Asked for, the kernel hands over exactly the numbers torch held at the end.
    answer = _through_json(held.held_numbers({}, W.value.held, [W.id, b.id]))
    assert set(answer["values"]) == {W.id}
    exec_ns: dict = {}
    exec(MODEL, exec_ns)
    assert answer["values"][W.id]["value"] == exec_ns["W"].tolist()
    assert answer["values"][W.id]["grad"] == exec_ns["W"].grad.tolist()
    # The JSON form says where the numbers are (docs/trace.md, "Values").
    assert (
        arrived.to_dict()["tensors"][[t.id for t in arrived.tensors].index(W.id)]["value"]["held"]
        == W.value.held
    )


def test_only_the_last_runs_are_kept_and_a_lost_run_says_so(monkeypatch) -> None:
    runs = []
    for _ in range(held.KEEP_RUNS + 1):
        trace = run_source("import torch\nW = torch.ones(9, 9)\n")
        runs.append(held.hold_numbers(trace))
    assert len(set(runs)) == len(runs)
    with pytest.raises(LookupError, match="no longer holds"):
        held.held_numbers({}, runs[0], ["t0"])
    last = run_source("import torch\nW = torch.ones(9, 9)\n")
    W = last.tensor_named("W")
    run = held.hold_numbers(last)
    assert held.held_numbers({}, run, [W.id])["values"][W.id]["value"] == torch.ones(9, 9).tolist()
    # A run of small tensors holds nothing and has no name.
    assert held.hold_numbers(run_source("import torch\nx = torch.ones(3)\n")) is None


def test_non_finite_numbers_come_back_as_the_json_form_writes_them(monkeypatch) -> None:
    trace = run_source(
        "import torch\nW = torch.ones(8, 9)\nW[0, 0] = float('nan')\nW[1, 1] = float('inf')\n"
    )
    W = trace.tensor_named("W")
    run = held.hold_numbers(trace)
    rows = _through_json(held.held_numbers({}, run, [W.id]))["values"][W.id]["value"]
    # The trace's JSON form writes them as strings, and the inspector reads those.
    assert rows[0][0] == "nan" and rows[1][1] == "inf" and rows[0][1] == 1.0
