"""The trace's events tell the lesson's story, in order, tied to source lines."""

from __future__ import annotations

import pytest
import torch

from autograd_viz.core.kernel.runner import run_source
from tests.core.fidelity_cases import CASES


def kinds(trace, kind: str) -> list[dict]:
    return [e for e in trace.events if e["kind"] == kind]


def scalar(value: dict | None) -> float | None:
    return None if value is None else value["data"]


def test_forward_ops_in_order_with_lines_and_grad_fns() -> None:
    trace = run_source(CASES["lab_loss"])
    ops = [(e["op"], e["line"]) for e in kinds(trace, "op")]
    assert ops == [
        ("tensor", 3),
        ("tensor", 4),
        ("tensor", 5),
        ("mul", 6),
        ("add", 6),
        ("sub", 6),
        ("pow", 6),
    ]
    pow_op = kinds(trace, "op")[-1]
    loss = trace.tensor_named("loss")
    assert pow_op["outputs"] == [loss.id] and pow_op["grad_fn"] == [loss.grad_fn]
    assert pow_op["values"][0]["data"] == 4.0 and pow_op["grad_enabled"]


def test_accumulation_eight_then_sixteen() -> None:
    trace = run_source(CASES["lab_two_rounds"])
    w = trace.tensor_named("w")
    steps = [
        (scalar(e["before"]), scalar(e["after"]))
        for e in kinds(trace, "accumulate")
        if e["tensor"] == w.id
    ]
    assert steps == [(None, 8.0), (8.0, 16.0)]
    assert len(kinds(trace, "backward")) == 2


def test_resets_are_recorded() -> None:
    trace = run_source(CASES["lab_zero_between"])
    resets = [(e["how"], scalar(e["before"]), e["line"]) for e in kinds(trace, "grad_reset")]
    assert resets == [(".grad.zero_()", 8.0, 8), (".grad = None", 4.0, 9)]
    assert trace.tensor_named("w").grad.data == 8.0


def test_optimizer_zero_grad_and_step() -> None:
    trace = run_source(CASES["mlp_training"])
    resets = kinds(trace, "grad_reset")
    assert {e["line"] for e in resets} == {10} and len(resets) == 4  # second round only
    updates = kinds(trace, "param_update")
    assert len(updates) == 8 and {e["how"] for e in updates} == {"SGD.step()"}
    bias = trace.tensor_named("model.2.bias")
    first = next(e for e in updates if e["tensor"] == bias.id)
    grad = next(e for e in kinds(trace, "accumulate") if e["tensor"] == bias.id)
    # SGD: after = before - lr * grad, as torch computed it.
    expected = first["before"]["data"][0] - 0.1 * grad["after"]["data"][0]
    assert abs(first["after"]["data"][0] - expected) < 1e-6
    assert not [e for e in kinds(trace, "op") if e["line"] == 14]  # the step's own ops


def test_module_call_stack_is_tagged() -> None:
    trace = run_source(CASES["mlp_training"])
    stacks = [e["modules"] for e in kinds(trace, "op") if e["op"] in ("linear", "relu")]
    assert stacks[:3] == [["model", "model.0"], ["model", "model.1"], ["model", "model.2"]]


def test_second_backward_error_and_retain_graph() -> None:
    failing = run_source(CASES["second_backward_error"])
    assert failing.error["line"] == 6
    assert "Trying to backward through the graph a second time" in failing.error["message"]
    assert kinds(failing, "backward")[0]["graph_freed"] is True
    kept = run_source(CASES["retain_graph"])
    assert kept.error is None
    first, second = kinds(kept, "backward")
    assert first["retain_graph"] and not first["graph_freed"] and second["graph_freed"]
    assert kept.tensor_named("w").grad.data == 16.0


def test_no_grad_ops_are_marked_untracked() -> None:
    trace = run_source(CASES["no_grad_update"])
    updates = [e for e in kinds(trace, "op") if e["line"] in (13, 14)]
    assert updates and not any(e["grad_enabled"] for e in updates)
    assert all(e["grad_fn"] == [None] for e in updates)


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
def test_history_breaks() -> None:
    trace = run_source(CASES["history_breaks"])
    breaks = [(e["how"], e["line"]) for e in kinds(trace, "history_break")]
    assert breaks == [
        ("item()", 5),
        ("tolist()", 6),
        ("float()", 7),
        ("detach()", 8),
        (".data", 10),
    ]
    item = kinds(trace, "history_break")[0]
    assert item["value"] == 8.0 and item["grad_fn"] is not None
    assert kinds(trace, "history_break")[3]["result_requires_grad"] is False


def test_vector_backward_error_text_is_torchs() -> None:
    trace = run_source(CASES["vector_backward_error"])
    assert trace.error["line"] == 5
    assert trace.error["message"] == "grad can be implicitly created only for scalar outputs"


def test_autograd_grad_and_second_derivative() -> None:
    trace = run_source(CASES["autograd_grad"])
    calls = kinds(trace, "backward")
    assert [c["call"] for c in calls] == ["torch.autograd.grad()"] * 2
    assert calls[0]["create_graph"] and calls[0]["retain_graph"]
    assert trace.tensor_named("g").value.data == 12.0  # 3x² at 2
    assert trace.tensor_named("g2").value.data == 12.0  # 6x at 2
    assert not kinds(trace, "accumulate")  # autograd.grad leaves .grad alone
    assert trace.tensor_named("x").grad is None


def test_custom_function_backward_node_runs() -> None:
    trace = run_source(CASES["custom_function"])
    names = [e["name"] for e in kinds(trace, "node")]
    assert "SquareBackward" in names
    assert trace.tensor_named("x").grad.data == [2.0, -4.0, 1.0]


def test_inplace_version_error_is_torchs() -> None:
    trace = run_source(CASES["inplace_version_error"])
    assert trace.error["line"] == 9
    assert "modified by an inplace operation" in trace.error["message"]
    assert any(e["inplace"] for e in kinds(trace, "op"))


def test_descend_by_data_assignments() -> None:
    trace = run_source(CASES["descend_by_data"])
    updates = kinds(trace, "param_update")
    assert len(updates) == 4 and all(e["how"] == ".data =" for e in updates)
    assert updates[0]["before"]["data"] == [3.0, -1.0]
    assert [round(v, 6) for v in updates[0]["after"]["data"]] == [2.4, -0.8]
    assert len(kinds(trace, "grad_reset")) == 4


def test_partial_trace_before_error() -> None:
    trace = run_source(CASES["partial_then_error"])
    assert trace.error["type"] == "AttributeError" and trace.error["line"] == 5
    assert trace.tensor_named("y").value.data == 4.0
    assert [e["op"] for e in kinds(trace, "op")] == ["tensor", "mul"]


def test_node_events_carry_the_chain_rule() -> None:
    trace = run_source(CASES["leaf_example"])
    mul = next(e for e in kinds(trace, "node") if e["name"] == "MulBackward0")
    # out = z², z = x·w + b at x=2, w=3: ∂out/∂z = 14 arrives, ×w and ×x leave.
    assert mul["grads_in"][0]["data"] == 14.0
    assert sorted(g["data"] for g in mul["grads_out"]) == [28.0, 42.0]


def test_event_cap_stops_recording_but_not_the_script() -> None:
    code = (
        "import torch\nx = torch.ones(1, requires_grad=True)\nfor i in range(50):\n"
        "    x = x * 1.0\ndone = True\n"
    )
    ns: dict = {"__name__": "__main__"}
    trace = run_source(code, namespace=ns, max_events=10)
    assert len([e for e in trace.events if e["kind"] != "run_end"]) == 10
    assert ns["done"] is True and any("recording stopped" in n for n in trace.notes)


def test_hooks_are_removed_after_the_run() -> None:
    from torch.nn.modules import module as nn_module

    ns: dict = {"__name__": "__main__"}
    code = (
        "import torch\nw = torch.tensor(3.0, requires_grad=True)\nloss = (w * 2) ** 2\n"
        "loss.backward(retain_graph=True)\n"
    )
    trace = run_source(code, namespace=ns)
    count = len(trace.events)
    ns["loss"].backward()  # outside the tracer: no hook of ours may fire or fail
    assert len(trace.events) == count and ns["w"].grad.item() == 48.0  # 24 + 24
    assert not nn_module._global_forward_hooks and not nn_module._global_forward_pre_hooks
    assert not torch._C._is_torch_function_mode_enabled()


LBFGS = """import torch
w = torch.tensor([0.0, 0.0], requires_grad=True)
frozen = torch.tensor([5.0], requires_grad=True)
opt = torch.optim.LBFGS([w, frozen], lr=1, max_iter=4)
def closure():
    opt.zero_grad()
    loss = ((w - 2) ** 2).sum()
    loss.backward()
    return loss
opt.step(closure)
"""


def test_a_closure_inside_step_is_recorded_as_the_users_code() -> None:
    """LBFGS calls the closure (forward and backward) inside step(): those ops and passes
    are the user's and are recorded; the optimizer's own arithmetic is not."""
    trace = run_source(LBFGS)
    passes = kinds(trace, "backward")
    assert passes and all(e["line"] == 8 for e in passes)
    assert {e["line"] for e in kinds(trace, "op")} >= {7}
    updates = {u["tensor"]: u for u in kinds(trace, "param_update")}
    w, frozen = trace.tensor_named("w"), trace.tensor_named("frozen")
    # LBFGS writes every parameter in place, adding zero where there was no gradient.
    assert set(updates) == {w.id, frozen.id}
    assert updates[frozen.id]["before"] == updates[frozen.id]["after"]
    assert updates[w.id]["how"] == "LBFGS.step()" and updates[w.id]["line"] == 10
    updates = [updates[w.id]]
    plain: dict = {}
    exec(LBFGS, plain)
    assert updates[0]["after"]["data"] == pytest.approx(plain["w"].tolist())
    assert w.value.data == pytest.approx(plain["w"].tolist())


def test_a_custom_optimizer_writing_p_data_is_recorded() -> None:
    """Old-style optimizers update `p.data` in place, which moves no version counter of p."""
    trace = run_source(
        "import torch\n"
        "class Plain(torch.optim.Optimizer):\n"
        "    def __init__(self, params, lr):\n"
        "        super().__init__(params, {'lr': lr})\n"
        "    def step(self, closure=None):\n"
        "        for group in self.param_groups:\n"
        "            for p in group['params']:\n"
        "                if p.grad is not None:\n"
        "                    p.data.add_(p.grad, alpha=-group['lr'])\n"
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "opt = Plain([w], lr=0.5)\n"
        "(w * w).sum().backward()\n"
        "opt.step()\n"
    )
    updates = kinds(trace, "param_update")
    assert [u["how"] for u in updates] == ["Plain.step()"]
    assert updates[0]["before"]["data"] == [1.0, 2.0]
    assert updates[0]["after"]["data"] == [0.0, 0.0]  # w − 0.5 · 2w
