"""The trace's graph against torch computed directly (torch is the oracle)."""

from __future__ import annotations

import json

import torch

from autograd_viz.core.capture.graph_capture import capture_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.trace import Trace

LAB = """
import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
"""


def _oracle_lab() -> dict[str, torch.Tensor | None]:
    w = torch.tensor(3.0, requires_grad=True)
    x = torch.tensor(2.0)
    b = torch.tensor(1.0, requires_grad=True)
    loss = (w * x + b - 5) ** 2
    loss.backward()
    return {"w": w.grad, "b": b.grad, "x": x.grad, "loss": loss.detach()}


def test_lab_loss_grads_match_torch() -> None:
    trace = run_source(LAB)
    oracle = _oracle_lab()
    assert trace.tensor_named("w").grad.data == oracle["w"].item() == 8.0
    assert trace.tensor_named("b").grad.data == oracle["b"].item() == 4.0
    assert trace.tensor_named("loss").value.data == oracle["loss"].item() == 4.0
    # x does not require grad: no AccumulateGrad for it, and its grad stays None.
    assert oracle["x"] is None
    x = trace.tensor_named("x")
    assert x.grad is None and not x.requires_grad and x.is_leaf
    assert all(n.variable != x.id for n in trace.nodes)
    assert not trace.errors


def test_lab_loss_node_names_are_pytorchs() -> None:
    trace = run_source(LAB)
    names = [n.name for n in trace.nodes]
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    loss = (w * torch.tensor(2.0) + b - 5) ** 2
    expected = []
    stack = [loss.grad_fn]
    while stack:
        fn = stack.pop(0)
        expected.append(type(fn).__name__)
        stack.extend(f for f, _ in fn.next_functions if f is not None)
    assert sorted(names) == sorted(expected)
    for name in ("PowBackward0", "SubBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"):
        assert name in names


def test_structure_links_leaves_and_nodes() -> None:
    trace = run_source(LAB)
    loss = trace.tensor_named("loss")
    root = trace.node(loss.grad_fn)
    assert root.name == "PowBackward0" and root.tensor == loss.id
    accumulators = [n for n in trace.nodes if n.name == "AccumulateGrad"]
    assert sorted(trace.tensor(n.variable).name for n in accumulators) == ["b", "w"]
    ids = {n.id for n in trace.nodes}
    assert all(nxt in ids for n in trace.nodes for nxt in n.next)
    assert all(len(n.next) == len(n.next_nr) for n in trace.nodes)


def test_leaf_flags_and_retain_grad() -> None:
    trace = run_source("""
import torch
x = torch.tensor(2.0, requires_grad=True)
z = x * 3
z.retain_grad()
out = z ** 2
out.backward()
""")
    x, z, out = (trace.tensor_named(n) for n in ("x", "z", "out"))
    assert x.is_leaf and x.requires_grad and x.grad.data == 36.0  # 2z·3 at z = 6
    assert not z.is_leaf and z.retains_grad and z.grad.data == 12.0  # 2z
    assert not out.is_leaf and out.grad is None  # non-leaf without retain_grad


def test_multi_output_node_and_shared_input() -> None:
    trace = run_source("""
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
a, b = x.unbind()
y = a * b + x.sum()
""")
    a, b = trace.tensor_named("a"), trace.tensor_named("b")
    assert a.grad_fn == b.grad_fn and (a.output_nr, b.output_nr) == (0, 1)
    assert trace.node(a.grad_fn).name == "UnbindBackward0"


def test_big_tensors_are_summarised() -> None:
    trace = run_source(
        "import torch\nw = torch.arange(20000.0, requires_grad=True)\n"
        "loss = (w * 2).sum()\nloss.backward()\n"
    )
    w = trace.tensor_named("w")
    assert w.value.data is None and w.value.shape == [20000]
    assert w.value.min == 0.0 and w.value.max == 19999.0 and w.value.first[:3] == [0.0, 1.0, 2.0]
    assert w.grad.mean == 2.0


def test_non_finite_values_stay_valid_json() -> None:
    trace = run_source(
        "import torch\nx = torch.tensor([1.0, float('nan'), float('inf')], requires_grad=True)\n"
    )
    data = json.loads(trace.to_json())  # strict JSON: no NaN tokens
    (x,) = [t for t in data["tensors"] if t["name"] == "x"]
    assert x["value"]["data"] == [1.0, "nan", "inf"]
    assert Trace.from_json(trace.to_json()).tensor_named("x").value.data[2] == "inf"


def test_module_parameters_are_named() -> None:
    trace = run_source("""
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
loss = model(torch.ones(2, 3)).pow(2).mean()
loss.backward()
""")
    names = {t.name for t in trace.tensors}
    assert {"model.weight", "model.bias", "loss"} <= names
    weight = trace.tensor_named("model.weight")
    assert weight.is_leaf and weight.grad is not None and weight.grad.shape == [1, 3]


def test_json_round_trip() -> None:
    trace = run_source(LAB)
    again = Trace.from_json(trace.to_json())
    assert again.to_dict() == trace.to_dict()


def test_walk_is_capped() -> None:
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(200):
        y = y * 1.0
    trace = capture_graph({"y": y}, max_nodes=50)
    assert len(trace.nodes) == 50 and trace.truncated
    assert "50" in trace.notes[0]


def test_a_node_no_op_event_listed_still_names_the_tensor_it_produced() -> None:
    # A custom Function's output and a create_graph gradient are made where no op event
    # lists them: their nodes' `tensor` was null although the tensors' grad_fn was set.
    code = """import torch
class MulAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b + 2
    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
out = MulAdd.apply(a, b)
(gx,) = torch.autograd.grad((a ** 3).sum(), a, create_graph=True)
"""
    trace = run_source(code)
    plain: dict = {}
    exec(code, plain)  # the oracle: which nodes torch made them with
    nodes = {n.id: n for n in trace.nodes}
    for name in ("out", "gx"):
        info = trace.tensor_named(name)
        node = nodes[info.grad_fn]
        assert node.name == type(plain[name].grad_fn).__name__
        assert node.tensor == info.id, name


def test_a_leaf_gone_by_the_end_that_an_accumulategrad_wrote_into_is_listed() -> None:
    # jacobian() makes its own leaf copy of x and lets it go: its AccumulateGrad pointed
    # at an id no tensor had, and the picture drew the node with no leaf before it.
    code = """import torch
from torch.autograd.functional import jacobian
x = torch.tensor([1.0, 2.0])
J = jacobian(lambda t: torch.stack([t[0] * t[1], t[0].sin()]), x)
"""
    trace = run_source(code)
    plain: dict = {}
    exec(code, plain)  # the oracle: the copy's value is x's
    tensors = {t.id: t for t in trace.tensors}
    leaves = {n.variable for n in trace.nodes if n.name == "AccumulateGrad"}
    assert leaves and leaves <= tensors.keys()
    for tid in leaves:
        t = tensors[tid]
        assert t.freed and t.is_leaf and t.requires_grad and t.grad is None
        assert t.value.data == plain["x"].tolist() and t.shape == [2]
