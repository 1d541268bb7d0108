"""Nodes and tensors know the line that made them, and lines know their nodes."""

from __future__ import annotations

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.source_map import SourceMap
from tests.core.fidelity_cases import CASES


def test_lines_of_tensors_and_nodes() -> None:
    trace = run_source(CASES["lab_loss"])
    source = SourceMap(trace)
    w = trace.tensor_named("w")
    loss = trace.tensor_named("loss")
    assert source.line_of[w.id] == 3 and source.line_of[loss.id] == 6
    assert source.line_of[loss.grad_fn] == 6
    accumulate_w = next(n for n in trace.nodes if n.variable == w.id)
    assert source.line_of[accumulate_w.id] == 3  # where its leaf was made
    on_six = {trace.node(k).name for k in source.ids_on(6) if k.startswith("n")}
    assert on_six == {"MulBackward0", "AddBackward0", "SubBackward0", "PowBackward0"}
    assert source.ids_on(99) == []


def test_a_custom_functions_node_belongs_to_where_its_output_was_made() -> None:
    # SignSTEBackward is no op's grad_fn: it took the line of the first op that used its
    # output (`out = (wb * x).sum()`), and a backward step through it marked that line.
    code = """import torch
class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)
    @staticmethod
    def backward(ctx, grad_out):
        return grad_out
w = torch.tensor([0.5, -2.0], requires_grad=True)
wb = SignSTE.apply(w)
out = (wb * 3).sum()
"""
    trace = run_source(code)
    source = SourceMap(trace)
    node = next(n for n in trace.nodes if n.name == "SignSTEBackward")
    assert source.line_of[node.id] == source.line_of[trace.tensor_named("wb").id] == 5
