"""Corners of capture found by feeding the tracer scripts it had not seen."""

from __future__ import annotations

import sys

import pytest
import torch

from autograd_viz.core.graph.graph_model import build_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.trace import Trace


def _ops(trace: Trace) -> list[dict]:
    return [e for e in trace.events if e["kind"] == "op"]


def test_every_name_of_a_tensor_is_kept() -> None:
    trace = run_source(
        "import torch\n"
        "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = a * 2\n"
        "c = b.mul_(3)\n"  # c is b
        "c.sum().backward()\n"
    )
    b = trace.tensor_named("b")
    assert b is not None and b.name == "b" and b.aliases == ["c"]
    assert trace.tensor_named("c") is b
    assert Trace.from_json(trace.to_json()).tensor_named("c").aliases == ["c"]
    labels = {data["item"].title for _, data in build_graph(trace).nodes(data=True)}
    assert "b, c" in labels


def test_inplace_arguments_and_item_assignment_are_in_place_ops() -> None:
    trace = run_source(
        "import torch\n"
        "import torch.nn.functional as F\n"
        "h = torch.randn(4, requires_grad=True) * 1\n"
        "r = F.relu(h, inplace=True)\n"
        "q = F.relu(r, True)\n"
        "s = torch.relu(q)\n"
        "s[0] = 2.0\n"
    )
    ops = [(e["op"], e["inplace"], e["inputs"] == e["outputs"]) for e in _ops(trace)]
    assert ops[-4:] == [
        ("relu", True, True),
        ("relu", True, True),
        ("relu", False, False),
        ("setitem", True, True),
    ]
    setitem = _ops(trace)[-1]
    assert setitem["values"][0]["data"][0] == 2.0
    assert setitem["grad_fn"][0] is not None  # CopySlices: autograd saw the write


def test_values_inside_vmap_and_grad_are_the_plain_tensors_behind_them() -> None:
    trace = run_source(
        "import torch\n"
        "from torch.func import grad, vmap\n"
        "xs = torch.arange(6.0).reshape(2, 3)\n"
        "gs = vmap(grad(lambda v: (v ** 2).sum()))(xs)\n"
    )
    pow_op = next(e for e in _ops(trace) if e["op"] == "pow")
    assert pow_op["values"][0] == {
        "shape": [2, 3],
        "data": [[0.0, 1.0, 4.0], [9.0, 16.0, 25.0]],
        "batch_dims": 1,
    }
    nodes = [e for e in trace.events if e["kind"] == "node" and e["name"] == "PowBackward0"]
    assert nodes[0]["grads_out"][0]["data"] == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_batched_gradients_are_marked_not_missing() -> None:
    trace = run_source(
        "import torch\n"
        "x = torch.randn(3, requires_grad=True)\n"
        "(g,) = torch.autograd.grad(x * 2, x, torch.eye(3), is_grads_batched=True)\n"
    )
    node = next(e for e in trace.events if e["kind"] == "node")
    assert node["grads_in"] == [{"shape": [3], "data": None, "batched": True}]
    assert trace.tensor_named("g").value.data == (torch.eye(3) * 2).tolist()


def test_a_sparse_gradient_shows_its_numbers() -> None:
    trace = run_source(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "emb = torch.nn.Embedding(5, 2, sparse=True)\n"
        "emb(torch.tensor([1, 1, 3])).sum().backward()\n"
    )
    grad = trace.tensor_named("emb.weight").grad
    assert grad.data == [[0.0, 0.0], [2.0, 2.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]
    accumulate = next(e for e in trace.events if e["kind"] == "accumulate")
    assert accumulate["after"]["data"] == grad.data


def test_recording_resumes_after_a_step_that_raised() -> None:
    trace = run_source(
        "import torch\n"
        "w = torch.tensor([1.0], requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.1)\n"
        "try:\n"
        "    opt.step(closure=lambda: 1 / 0)\n"
        "except ZeroDivisionError:\n"
        "    pass\n"
        "y = w * 3\n"
        "y.backward()\n"
        "opt.step()\n"
        "z = w * 2\n"
    )
    kinds = [(e["kind"], e["line"]) for e in trace.events if e["kind"] != "node"]
    assert ("op", 8) in kinds and ("backward", 9) in kinds and ("accumulate", 9) in kinds
    assert ("param_update", 10) in kinds and ("op", 11) in kinds
    update = next(e for e in trace.events if e["kind"] == "param_update")
    assert update["before"]["data"] == [1.0]
    assert update["after"]["data"] == [torch.tensor(1.0 - 0.1 * 3).item()]


@pytest.mark.parametrize("limit", [1000, 1111, 1234, 1717, 3000])
def test_runaway_recursion_on_tensors_is_the_users_recursion_error(limit: int) -> None:
    # Wherever in the recorder the limit is hit (registering a node, hooking it, reading
    # its grad_fn), the user gets Python's RecursionError at their line, nothing of ours.
    code = "import torch\n\ndef deeper(x):\n    return deeper(x * 1.0)\n\n"
    code += "deeper(torch.ones(1, requires_grad=True))\n"
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        trace = run_source(code)
    finally:
        sys.setrecursionlimit(saved)
    assert trace.error["type"] == "RecursionError" and trace.error["line"] == 4
