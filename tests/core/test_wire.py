"""The trace's wire encoding: what the app decodes is the trace the kernel recorded."""

from __future__ import annotations

import math

import pytest
import zstandard

from autograd_viz.core.kernel import protocol, wire
from autograd_viz.core.kernel.protocol import PROTOCOL_VERSION, version_problem, versions
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.kernel.trace_messages import (
    TRACE_MIME,
    TRACE_PART_MIME,
    trace_from_payload,
    trace_payload,
)
from autograd_viz.core.trace import Trace
from autograd_viz.resources import EXAMPLES
from tests.core.fidelity_cases import CASES
from tests.core.fidelity_cases_models import MODEL_CASES
from tests.core.fidelity_cases_more import MORE_CASES

ALL_CASES = {**CASES, **MORE_CASES, **MODEL_CASES}
# A trace of several event and node parts.
BIG_CHAIN = (
    "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x\n"
    "for _ in range(1500):\n    y = y * x\ny.backward()\n"
)


def _wire_bytes(buffers: list[bytes]) -> int:
    return sum(len(b) for b in buffers)


@pytest.mark.parametrize("case", sorted(ALL_CASES))
def test_a_fidelity_trace_crosses_unchanged(case: str) -> None:
    # torch is the oracle in the fidelity suite; here the trace it checked must arrive
    # exactly: the same values, events, tensors and nodes as its JSON form carries.
    trace = run_source(ALL_CASES[case])
    payload, buffers = trace_payload(trace)
    back = trace_from_payload(payload, buffers)
    expected = Trace.from_json(trace.to_json())
    assert back.events == expected.events
    assert back.tensors == expected.tensors
    assert back.nodes == expected.nodes
    assert back.to_json() == trace.to_json()


def test_nan_and_infinities_cross_as_the_json_form_writes_them() -> None:
    # orjson alone would write NaN as null: the part is written the strict way instead.
    trace = run_source(
        "import torch\nx = torch.tensor([1.0, float('nan'), float('inf')], requires_grad=True)\n"
        "y = (x * 2).sum()\ny.backward()\n"
    )
    back = trace_from_payload(*trace_payload(trace))
    assert back.to_json() == trace.to_json()
    x = next(t for t in back.tensors if t.name == "x")
    assert x.value is not None and x.value.data[1:] == ["nan", "inf"]
    assert math.isnan(trace.tensor(x.id).value.data[1])  # the recorded trace kept the float


def test_a_big_trace_crosses_in_parts_and_in_order() -> None:
    trace = run_source(BIG_CHAIN)
    payload, buffers = trace_payload(trace)
    assert payload["parts"]["events"] == -(-len(trace.events) // wire.EVENTS_PER_PART) > 1
    assert payload["parts"]["nodes"] == -(-len(trace.nodes) // wire.NODES_PER_PART)
    back = trace_from_payload(payload, buffers)
    assert back.to_json() == trace.to_json()


def test_a_mid_size_loop_trace_costs_under_200_bytes_per_event() -> None:
    # A 16-wide RNN unrolled 300 steps: sizes are deterministic, so this is a plain test.
    trace = run_source(
        "import torch\ntorch.manual_seed(0)\nx = torch.randn(300, 1, 16)\n"
        "W = torch.randn(16, 16, requires_grad=True)\nU = torch.randn(16, 16, requires_grad=True)\n"
        "h = torch.zeros(1, 16)\nfor t in range(300):\n    h = torch.tanh(x[t] @ W + h @ U)\n"
        "h.sum().backward()\n"
    )
    assert len(trace.nodes) > 1_000
    _, buffers = trace_payload(trace)
    per_event = _wire_bytes(buffers) / len(trace.events)
    assert per_event < 200, per_event
    # What it replaced: the trace's JSON text, about 600 bytes per event.
    assert len(trace.to_json().encode()) / len(trace.events) > 3 * per_event


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_lesson_costs_under_200_bytes_per_event(example: str) -> None:
    # loss_landscape's events carry whole the 64 numbers its tensors carry: the parts are
    # one zstd stream, so the events' part points back at the tensors' (227 bytes per
    # event with a frame per part, 192 as one stream).
    trace = run_source((EXAMPLES / example).read_text())
    _, buffers = trace_payload(trace)
    assert _wire_bytes(buffers) / len(trace.events) < 200


def test_each_part_inflates_as_it_arrives_and_not_out_of_order() -> None:
    trace = run_source(BIG_CHAIN)
    payload, buffers = trace_payload(trace)
    stream = zstandard.ZstdDecompressor().decompressobj()
    sizes = [len(stream.decompress(b)) for b in buffers]
    assert all(n > 0 for n in sizes)  # nothing of a part waits for the next one
    with pytest.raises(ValueError, match="could not be read"):
        trace_from_payload(payload, [buffers[0], *buffers[2:], buffers[1]])


def test_the_payload_names_its_encoding_and_an_unknown_one_is_refused() -> None:
    payload, buffers = trace_payload(Trace())
    assert payload["encoding"] == wire.WIRE_ENCODING
    assert payload["protocol"] == PROTOCOL_VERSION and version_problem(payload) is None
    with pytest.raises(ValueError, match="unknown trace encoding"):
        trace_from_payload({**payload, "encoding": "json/0"}, buffers)
    with pytest.raises(ValueError, match="parts arrived"):
        trace_from_payload(payload, buffers + buffers)
    with pytest.raises(ValueError, match="could not be read"):
        trace_from_payload(payload, [zstandard.ZstdCompressor().compress(b"\xc1 not msgpack")])


def test_a_kernel_of_the_previous_protocol_is_refused_by_name() -> None:
    # A protocol-2 kernel sent the trace as JSON text: its reply is refused before anything
    # in it is read, and the sentence says which versions met.
    old = {**versions(), "protocol": 2, "trace": "{}", "event_chunks": []}
    problem = version_problem(old)
    assert problem is not None
    assert "kernel protocol 2" in problem and f"kernel protocol {PROTOCOL_VERSION}" in problem


def test_what_messagepack_would_carry_differently_arrives_as_the_json_form() -> None:
    # Each odd event sits in a part of its own: the others stay MessagePack.
    odd = [
        {"kind": "note", "counts": {1: "one", None: "none", 2.5: "half"}},  # keys not str
        {"kind": "note", "big": 2**70, "small": -(2**64)},  # past 64 bits
        {"kind": "note", "text": "a lone surrogate \ud800 in a name"},
        {"kind": "note", "values": [float("nan"), float("-inf"), 1e308 * 10]},
    ]
    plain = [{"kind": "note", "i": i, "x": i / 3} for i in range(wire.EVENTS_PER_PART - 1)]
    events: list[dict] = []
    for event in odd:
        events.extend([event, *plain])
    trace = Trace(events=events)
    payload, buffers = trace_payload(trace)
    back = trace_from_payload(payload, buffers)
    assert back.to_json() == trace.to_json()
    assert back.events == Trace.from_json(trace.to_json()).events
    firsts = [back.events[i * wire.EVENTS_PER_PART] for i in range(len(odd))]
    assert firsts[0]["counts"] == {"1": "one", "null": "none", "2.5": "half"}
    assert firsts[1]["big"] == 2**70 and firsts[1]["small"] == -(2**64)
    assert firsts[2]["text"] == "a lone surrogate \ud800 in a name"
    assert firsts[3]["values"] == ["nan", "-inf", "inf"]
    # The head, the (empty) tensor and node parts and the plain events: MessagePack.
    formats = payload["formats"]
    assert formats.count("j") == 3 and set(formats) == {"m", "j"}, formats


def test_floats_cross_exactly_in_every_dtype() -> None:
    trace = run_source(
        "import torch\nx = torch.tensor([0.1, 1/3, 1e-40, -0.0], dtype=torch.float64,"
        " requires_grad=True)\ny = x.float().half().sum()\ny.backward()\n"
    )
    back = trace_from_payload(*trace_payload(trace))
    assert back.to_json() == trace.to_json()
    x = next(t for t in back.tensors if t.name == "x")
    assert x.value is not None and x.value.data == [0.1, 1 / 3, 1e-40, -0.0]
    assert math.copysign(1.0, x.value.data[3]) == -1.0


def _published(trace: Trace, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict, list]]:
    """What publish_trace sends, message by message: (MIME type, payload, buffers)."""
    sent: list[tuple[str, dict, list]] = []
    monkeypatch.setattr(
        protocol,
        "publish_data",
        lambda mime, payload, text, buffers=None: sent.append((mime, payload, list(buffers or []))),
    )
    protocol.publish_trace(trace, namespace="fresh")
    return sent


def test_a_run_sends_each_part_ahead_and_the_app_reads_them_as_they_come(monkeypatch) -> None:
    trace = run_source(BIG_CHAIN)
    sent = _published(trace, monkeypatch)
    *parts, (mime, payload, buffers) = sent
    assert mime == TRACE_MIME and buffers == [] and payload["streamed"] is True
    assert payload["namespace"] == "fresh" and version_problem(payload) is None
    assert {m for m, _, _ in parts} == {TRACE_PART_MIME}
    assert [p["index"] for _, p, _ in parts] == list(range(len(parts)))
    assert all(len(b) == 1 for _, _, b in parts)
    assert "".join(p["format"] for _, p, _ in parts) == payload["formats"]
    assert len(parts) == 1 + sum(payload["parts"].values()) > 3
    assembly = wire.TraceAssembly(parts[0][1]["parts"])
    for _, part, part_buffers in parts:
        assembly.add(part["format"], part_buffers[0])
    back = trace_from_payload(payload, [], assembly)
    assert back.to_json() == trace.to_json()


def test_parts_missing_or_too_many_are_refused_by_name(monkeypatch) -> None:
    trace = run_source("import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum()\n")
    *parts, (_, payload, _) = _published(trace, monkeypatch)
    with pytest.raises(ValueError, match="did not arrive"):
        trace_from_payload(payload, [], None)
    short = wire.TraceAssembly(payload["parts"])
    for _, part, buffers in parts[:-1]:
        short.add(part["format"], buffers[0])
    with pytest.raises(ValueError, match="parts arrived"):
        trace_from_payload(payload, [], short)
    extra = wire.TraceAssembly(payload["parts"])
    for _, part, buffers in [*parts, parts[-1]]:
        extra.add(part["format"], buffers[0])
    with pytest.raises(ValueError, match="parts arrived"):
        trace_from_payload(payload, [], extra)
