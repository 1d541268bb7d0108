"""Every case runs twice: under the tracer and directly under torch. They must agree."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest
import torch

from autograd_viz.core.capture.graph_capture import namespace_roots
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.trace import TensorValue, Trace
from tests.core.fidelity_cases import CASES
from tests.core.test_trace_events import assert_events_round_trip

TOLERANCE = 1e-6


def run_plain(code: str) -> tuple[dict[str, Any], BaseException | None]:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    try:
        exec(compile(code, "<plain>", "exec"), namespace)
    except Exception as exc:
        return namespace, exc
    return namespace, None


def as_tensor(value: TensorValue) -> torch.Tensor:
    def number(v: Any) -> Any:
        if isinstance(v, list):
            return [number(x) for x in v]
        return {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}.get(v, v)

    t = torch.tensor(number(value.data), dtype=torch.float64)
    if t.numel() != math.prod(value.shape):  # complex numbers travel as [re, im] pairs
        return torch.view_as_complex(t.reshape(*value.shape, 2))
    return t.reshape(value.shape)


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    a = a.detach()
    if a.is_complex() or b.is_complex():
        a, b = a.to(torch.complex128), b.to(torch.complex128)
    else:
        a = a.double()
    return torch.allclose(a, b, atol=TOLERANCE, rtol=TOLERANCE, equal_nan=True)


def agrees(t: torch.Tensor, value: TensorValue) -> bool:
    if t.layout != torch.strided:  # sparse: the trace shows its dense numbers
        t = t.to_dense()
    return close(t, as_tensor(value))


def plain_node_names(t: torch.Tensor) -> Counter:
    names: Counter = Counter()
    seen: set[int] = set()
    stack = [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names[type(fn).__name__] += 1
        stack.extend(f for f, _ in fn.next_functions)
    return names


def trace_node_names(trace: Trace, node_id: str) -> Counter:
    nodes = {n.id: n for n in trace.nodes}
    names: Counter = Counter()
    seen: set[str] = set()
    stack = [node_id]
    while stack:
        nid = stack.pop()
        if nid in seen:
            continue
        seen.add(nid)
        names[nodes[nid].name] += 1
        stack.extend(nodes[nid].next)
    return names


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
@pytest.mark.parametrize("case", sorted(CASES))
def test_trace_agrees_with_torch(case: str) -> None:
    code = CASES[case]
    plain, plain_error = run_plain(code)
    trace = run_source(code)
    assert_events_round_trip(trace)
    if plain_error is None:
        assert trace.error is None, trace.error
    else:
        assert trace.error is not None
        assert trace.error["type"] == type(plain_error).__name__
        assert trace.error["message"] == str(plain_error)
    checked = 0
    for name, t in namespace_roots(plain):
        info = trace.tensor_named(name)
        try:
            t.grad_fn  # noqa: B018
        except RuntimeError:  # a view made under no_grad, its base written in place since:
            # torch refuses to say more of it; the trace lists it without a grad_fn
            assert info is not None and info.grad_fn is None and info.is_leaf, name
            assert info.requires_grad == t.requires_grad and agrees(t, info.value), name
            checked += 1
            continue
        if t.requires_grad or t.grad_fn is not None:
            assert info is not None, f"{name} is missing from the trace"
        if info is None:
            continue
        checked += 1
        assert info.shape == list(t.shape)
        assert info.requires_grad == t.requires_grad and info.is_leaf == t.is_leaf
        assert agrees(t, info.value), name
        plain_grad = t.grad if (t.is_leaf or t.retains_grad) else None
        assert (info.grad is None) == (plain_grad is None), name
        if plain_grad is not None:
            assert agrees(plain_grad, info.grad), name
        if t.grad_fn is not None:
            assert info.grad_fn is not None
            assert trace_node_names(trace, info.grad_fn) == plain_node_names(t), name
    assert checked > 0


@pytest.mark.parametrize("case", sorted(CASES))
def test_backward_node_events_respect_dependencies(case: str) -> None:
    trace = run_source(CASES[case])
    nodes = {n.id: n for n in trace.nodes}
    passes: list[list[str]] = []
    for e in trace.events:
        if e["kind"] == "backward":
            passes.append([])
        elif e["kind"] == "node":
            passes[-1].append(e["node"])
    for order in passes:
        position = {nid: i for i, nid in enumerate(order)}
        for nid in order:  # a node runs after every node that sends it a gradient
            for nxt in nodes[nid].next:
                if nxt in position:
                    assert position[nid] < position[nxt], (case, nid, nxt)


def _structure(trace: Trace) -> tuple[list[str], list[str], list[tuple[str, bool, bool]]]:
    kinds = [e["kind"] for e in trace.events if e["kind"] != "run_end"]
    nodes = [n.name for n in trace.nodes]
    tensors = [(t.name or "", t.is_leaf, t.grad is None) for t in trace.tensors]
    return kinds, nodes, tensors


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
@pytest.mark.parametrize("case", sorted(CASES))
def test_cuda_trace_has_the_cpu_traces_structure_and_values(case: str) -> None:
    on_cpu = run_source(CASES[case], device="cpu")
    on_cuda = run_source(CASES[case], device="cuda")
    assert _structure(on_cuda) == _structure(on_cpu)
    assert (on_cuda.error or {}).get("type") == (on_cpu.error or {}).get("type")
    for a, b in zip(on_cpu.tensors, on_cuda.tensors, strict=True):
        if a.device == "cpu" and a.value is not None and a.value.data is not None:
            assert b.device.startswith("cuda") or b.device == "cpu"
            assert close(as_tensor(b.value), as_tensor(a.value))
        if a.grad is not None and a.grad.data is not None:
            assert close(as_tensor(b.grad), as_tensor(a.grad))
