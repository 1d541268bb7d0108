"""The nodes drawn as freed are the ones torch freed, as torch itself says.

Each script below is traced, then run again here without the tracer; every node of that
second run's graph is asked by torch whether its saved tensors are gone (the node's own
backward is called again: it raises PyTorch's "backward through the graph a second time"
exactly when they are). No script carries a list of what it should free.
"""

from __future__ import annotations

import re
import warnings
from collections import deque
from typing import Any

import pytest
import torch

from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.freeing import freed_at, freeing, second_backward_errors
from autograd_viz.core.playback.player import BACKWARD, Player
from autograd_viz.core.trace import Trace

_HEAD = """
import torch
torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
W = torch.randn(2, 3, requires_grad=True)
"""
_FUNCTIONS = """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 2 * a * g


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.k = 3.0  # a number on ctx, not save_for_backward: nothing to free
        return a * ctx.k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k
"""

# Each builds `out` and runs one backward from it.
SCRIPTS = {
    "add": "out = (x + b).sum()\nout.backward()",
    "mul": "out = (x * b).sum()\nout.backward()",
    "mul_by_number": "out = (x * 2).sum()\nout.backward()",
    "pow": "out = (x**2).sum()\nout.backward()",
    "exp": "out = x.exp().sum()\nout.backward()",
    "sigmoid": "out = torch.sigmoid(x).sum()\nout.backward()",
    "matmul": "out = (W @ x).sum()\nout.backward()",
    "relu": "out = torch.relu(x - b).sum()\nout.backward()",
    "mean": "out = (x * b).mean()\nout.backward()",
    "linear": "lin = torch.nn.Linear(3, 2)\nout = lin(x).sum()\nout.backward()",
    "custom_saves": "out = Square.apply(x).sum()\nout.backward()",
    "custom_saves_nothing": "out = Scale.apply(x + b).sum()\nout.backward()",
    "view_reshape": "out = (x.view(3, 1) + b.reshape(3, 1)).view(-1).sum()\nout.backward()",
    "mix": (
        "h = torch.tanh(W @ x + 1)\n"
        "y = torch.relu(h.view(2, 1) * 2).reshape(2)\n"
        "out = ((y - Square.apply(h)) ** 2).mean() + b.sum()\n"
        "out.backward()"
    ),
    # Only the branch towards x runs: b * W[0]'s node keeps its saved tensors.
    "grad_of_one_input": "out = (x * b + b * W[0]).sum()\ntorch.autograd.grad(out, [x])",
    "retain_graph": "out = (x * b).exp().sum()\nout.backward(retain_graph=True)",
    # The second pass runs ExpBackward0 (freeing it too), then fails at MulBackward0.
    "a_failed_pass_frees_what_it_ran": (
        "y = x * b\n"
        "y.sum().backward()\n"
        "out = y.exp().sum()\n"
        "try:\n"
        "    out.backward()\n"
        "except RuntimeError:\n"
        "    pass"
    ),
}


def _source(body: str) -> str:
    return _HEAD + _FUNCTIONS + body + "\n"


def _torch_says_freed(node: Any) -> bool:
    """Run the node's backward again, as a second pass would: torch raises when its saved
    tensors were freed."""
    grads = [torch.ones(m.shape, dtype=m.dtype, device=m.device) for m in node._input_metadata]
    call = node.apply if isinstance(node, torch.autograd.function.BackwardCFunction) else node
    try:
        with torch.no_grad():
            call(*grads)
    except RuntimeError as error:
        if "a second time" in str(error):
            return True
        raise
    return False


def _pairs(trace: Trace, root: Any) -> dict[str, Any]:
    """Each trace node with the live node of the second run at the same place in the graph
    (both walked breadth first from `out`'s grad_fn, next_functions in order)."""
    pairs: dict[str, Any] = {}
    queue = deque([(trace.tensor_named("out").grad_fn, root)])
    while queue:
        nid, node = queue.popleft()
        if nid in pairs:
            continue
        pairs[nid] = node
        info = trace.node(nid)
        assert info.name == type(node).__name__
        live = [n for n, _ in node.next_functions if n is not None]
        assert len(live) == len(info.next)
        queue.extend(zip(info.next, live, strict=True))
    return pairs


@pytest.mark.parametrize("case", sorted(SCRIPTS))
def test_freed_nodes_are_the_ones_torch_freed(case: str) -> None:
    source = _source(SCRIPTS[case])
    trace = run_source(source)
    assert trace.error is None
    namespace: dict[str, Any] = {}
    exec(compile(source, "<oracle>", "exec"), namespace)  # the same script, untraced
    pairs = _pairs(trace, namespace["out"].grad_fn)
    expected = {nid for nid, node in pairs.items() if _torch_says_freed(node)}
    shown = freed_at(freeing(trace), len(trace.events))
    assert shown & pairs.keys() == expected
    player = Player(trace, drawn_graph(trace))
    player.set_mode(BACKWARD)
    player.to_end()
    assert player.frame().freed & pairs.keys() == expected


def test_the_scripts_free_some_nodes_and_keep_others() -> None:
    """The set above is not trivial: torch frees some nodes and leaves others whole."""
    freed_names: set[str] = set()
    kept_names: set[str] = set()
    for case in ("add", "mul", "mix", "custom_saves", "custom_saves_nothing"):
        source = _source(SCRIPTS[case])
        namespace: dict[str, Any] = {}
        exec(compile(source, "<oracle>", "exec"), namespace)
        trace = run_source(source)
        for node in _pairs(trace, namespace["out"].grad_fn).values():
            (freed_names if _torch_says_freed(node) else kept_names).add(type(node).__name__)
    assert {"MulBackward0", "SquareBackward", "TanhBackward0"} <= freed_names
    assert {"AddBackward0", "SumBackward0", "ScaleBackward", "ViewBackward0"} <= kept_names


def test_saved_names_the_tensors_torch_saved() -> None:
    trace = run_source(_source(SCRIPTS["mix"]))
    namespace: dict[str, Any] = {}
    exec(compile(_source(SCRIPTS["mix"]), "<oracle>", "exec"), namespace)
    for nid, node in _pairs(trace, namespace["out"].grad_fn).items():
        raw = [n for n in dir(node) if n.startswith("_raw_saved_")]
        # Each name is a real saved slot of that node's class (`_saved_<name>` reads it).
        assert {f"_raw_saved_{n}" for n in trace.node(nid).saved} <= set(raw)
    by_name = {n.name: n.saved for n in trace.nodes}
    assert by_name["MulBackward0"] == ["other"]  # h * 2: only the number is needed
    assert by_name["SquareBackward"] == ["tensors"]
    assert by_name["AddBackward0"] == [] and by_name["AccumulateGrad"] == []
    assert by_name["TanhBackward0"] == ["result"]


def _double(expr: str) -> str:
    return f"""
import torch
x = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
y = {expr}
y.backward()
y.backward()
"""


def test_a_second_backward_through_an_add_is_fine() -> None:
    source = _double("x + b")
    trace = run_source(source)
    assert trace.error is None
    assert freed_at(freeing(trace), len(trace.events)) == set()
    namespace: dict[str, Any] = {}
    exec(compile(source, "<oracle>", "exec"), namespace)
    assert trace.tensor_named("x").grad.data == namespace["x"].grad.item() == 2.0


def _node_torch_blames(source: str) -> str:
    """The node a failing second backward raised in, as torch's anomaly mode names it."""
    second = source.rstrip().rsplit("\n", 1)
    namespace: dict[str, Any] = {}
    exec(compile(second[0], "<oracle>", "exec"), namespace)
    with warnings.catch_warnings(record=True) as seen, torch.autograd.detect_anomaly():
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="a second time"):
            exec(compile(second[1], "<oracle>", "exec"), namespace)
    found = [re.search(r"Error detected in (\w+)", str(w.message)) for w in seen]
    return next(m.group(1) for m in found if m)


@pytest.mark.parametrize("expr", ["x * b", "(x * b).exp() + b", "torch.sigmoid(x) + x * b"])
def test_a_second_backward_error_lights_the_freed_node_torch_raised_in(expr: str) -> None:
    source = _double(expr)
    trace = run_source(source)
    assert trace.error is not None and "a second time" in trace.error["message"]
    player = Player(trace, drawn_graph(trace))
    player.set_mode(BACKWARD)
    step = next(s for s in player.steps if s.kind == "error")
    names = {n.id: n.name for n in trace.nodes}
    lit_ops = {names[k] for k in step.lit if k in names}
    freed_before = {names[n] for n in freed_at(player.freeing, step.event_index)}
    assert lit_ops <= freed_before
    if expr == "torch.sigmoid(x) + x * b":
        # Two freed nodes behind one AddBackward0: the engine met one of them first.
        assert lit_ops == {"SigmoidBackward0", "MulBackward0"}
        assert _node_torch_blames(source) in lit_ops
    else:
        assert lit_ops == {_node_torch_blames(source)}
    assert expr != "x * b" or lit_ops == {"MulBackward0"}


def test_an_older_trace_without_saved_keeps_the_old_marks_and_lights_nothing() -> None:
    trace = run_source(_double("(x * b).exp() + b"))
    data = trace.to_dict()
    assert all("saved" in n for n in data["nodes"])
    for n in data["nodes"]:
        del n["saved"]
    old = Trace.from_dict(data)
    assert all("saved" not in n.to_dict() for n in old.nodes)
    _, _, nodes = freeing(old)[0]
    # Every node the first pass reached but AccumulateGrad, as the app drew it then.
    assert {old.node(n).name for n in nodes} == {"AddBackward0", "ExpBackward0", "MulBackward0"}
    assert second_backward_errors(old, freeing(old)) == {}
    again = Trace.from_dict(trace.to_dict())
    assert [n.saved for n in again.nodes] == [n.saved for n in trace.nodes]
