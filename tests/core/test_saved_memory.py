"""What backward keeps alive: each node's saved tensors and the memory the graph holds,
checked against torch's own record of what it saved."""

from __future__ import annotations

import contextlib
import io
import weakref
from collections import Counter
from typing import Any

import pytest
import torch

from autograd_viz.core.capture._registry import grad_fn_of
from autograd_viz.core.capture.graph_capture import namespace_roots
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.saved_memory import by_module, bytes_text, held_memory
from autograd_viz.core.trace import Trace
from tests.core.fidelity_cases import CASES

_RAW = "_raw_saved_"
# Where torch's pack hooks cannot be the oracle of every saved tensor: functorch's
# transforms save at levels the hooks do not see, a user's own hooks take the place of
# ours, and a few saves belong to nodes the run never met (an op that raised after
# saving, a checkpoint's recomputation, the nodes a create_graph backward builds).
_NOT_ALL_PACKED = {
    "func_grad_and_jacobian",
    "func_vmap_jacrev_per_sample_grads",
    "func_jvp_vjp_grad_and_value_no_vmap",
    "saved_tensors_hooks_and_save_on_cpu",
    "checkpoint_non_reentrant",
    "checkpoint_non_reentrant_dropout_rng_replay",
    "double_backward_create_graph_backward",
    "error_mid_training_loop",
    "caught_errors_then_training_continues",
    "error_shape_mismatch_in_model_after_backward",
}


def _number_like(shape: tuple, dtype: str) -> bool:
    """A 0-dim int64/float64/bool tensor: what torch wraps a Python number in (`x * 2`'s
    `other`), which it saves without calling pack hooks; left out on both sides."""
    return shape == () and dtype in ("int64", "float64", "bool", "complex128")


def _plain_run(code: str, packed: Counter | None = None) -> dict[str, Any]:
    """Run `code` under torch alone; with `packed`, count there what torch's pack hooks
    saw saved, by (shape, dtype). (Hooks change what a backward checks: a run with them
    is not the run without.)"""

    def pack(t: torch.Tensor) -> torch.Tensor:
        key = (tuple(t.shape), str(t.dtype).removeprefix("torch."))
        if packed is not None and not _number_like(*key):
            packed[key] += 1
        return t

    namespace: dict[str, Any] = {"__name__": "__main__"}
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
        if packed is not None:
            stack.enter_context(torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t))
        with contextlib.suppress(Exception):
            exec(compile(code, "<plain>", "exec"), namespace)
    return namespace


def _still_saved(namespace: dict[str, Any]) -> tuple[Counter, int]:
    """Walking torch's graphs from the namespace's tensors: (node, slot, shape) of every
    saved tensor not yet freed, and the bytes of their distinct storages."""
    stack = [grad_fn_of(t) for _, t in namespace_roots(namespace)]
    seen: set[int] = set()
    slots: Counter = Counter()
    storages: dict[tuple[str, int], int] = {}
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for attribute in dir(node):
            if not attribute.startswith(_RAW):
                continue
            try:
                slot = getattr(node, attribute)
            except RuntimeError:  # freed by a backward
                continue
            many = isinstance(slot, (list, tuple))
            for i, saved in enumerate(slot if many else [slot]):
                data = getattr(saved, "data", None) if saved is not None else None
                if not isinstance(data, torch.Tensor):
                    continue
                name = attribute[len(_RAW) :] + (f"[{i}]" if many else "")
                slots[(type(node).__name__, name, tuple(data.shape))] += 1
                storage = data.untyped_storage()
                if storage.nbytes():
                    storages[(str(data.device), storage.data_ptr())] = storage.nbytes()
        stack.extend(next_node for next_node, _ in node.next_functions)
    return slots, sum(storages.values())


def _trace(code: str) -> Trace:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return run_source(code)


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_tensors_and_held_bytes_agree_with_torch(name: str) -> None:
    code = CASES[name]
    packed: Counter = Counter()
    _plain_run(code, packed)
    still_saved, still_bytes = _still_saved(_plain_run(code))
    trace = _trace(code)
    ours = Counter(
        (tuple(e["shape"]), e["dtype"])
        for n in trace.nodes
        for e in n.saved_tensors
        if not _number_like(tuple(e["shape"]), e["dtype"])
    )
    if name not in _NOT_ALL_PACKED:
        assert ours == packed  # every tensor torch saved at forward time, none more
    # At the end of the run: the nodes still holding, their slots and the bytes.
    nodes = {n.id: n for n in trace.nodes}
    memory = held_memory(trace)
    held = memory.at(len(trace.events))
    slots = Counter(
        (nodes[nid].name, e["name"], tuple(e["shape"]))
        for nid in memory.holding(len(trace.events))
        for e in nodes[nid].saved_tensors
    )
    assert slots == still_saved
    assert held.bytes == still_bytes


STEPS = """import torch
x = torch.randn(1000, requires_grad=True)
w = torch.randn(1000, requires_grad=True)
y = x * w
z = y.exp()
for i in range(2):
    q = (z * 2).sum()
loss = z.sum()
loss.backward()
"""


def _op_index(trace: Trace, op: str, nth: int = 0) -> int:
    found = [i for i, e in enumerate(trace.events) if e.get("op") == op]
    return found[nth]


def test_memory_grows_with_the_forward_and_each_node_frees_its_own_in_backward() -> None:
    trace = _trace(STEPS)
    memory = held_memory(trace)
    nodes = {n.name: n for n in trace.nodes}
    mul = next(n for n in trace.nodes if n.name == "MulBackward0")
    # x * w saves both: x as `other`... torch's names, each the run's own tensor.
    saved = {e["name"]: e for e in mul.saved_tensors}
    assert set(saved) == {"self", "other"}
    tensors = {t.name: t.id for t in trace.tensors if t.name}
    assert {saved["self"]["tensor"], saved["other"]["tensor"]} == {tensors["x"], tensors["w"]}
    assert saved["self"]["bytes"] == torch.randn(1000).untyped_storage().nbytes() == 4000
    exp = nodes["ExpBackward0"].saved_tensors
    assert [(e["name"], e["tensor"]) for e in exp] == [("result", tensors["z"])]

    before_mul, after_mul = _op_index(trace, "mul") - 1, _op_index(trace, "mul")
    assert memory.at(before_mul).bytes == 0
    assert memory.at(after_mul).bytes == 8000  # x and w
    assert memory.at(_op_index(trace, "exp")).bytes == 12000  # and z, exp's result
    # `z * 2` saves the wrapped 2 (8 bytes); the first q's graph is dropped when q is
    # bound again, after the second iteration's sum.
    first, second = _op_index(trace, "mul", 1), _op_index(trace, "mul", 2)
    assert memory.at(first).bytes == 12008
    assert memory.at(second).bytes == 12016
    assert memory.at(_op_index(trace, "sum", 1)).bytes == 12008
    # Backward: each node lets go right after it ran.
    node_at = {e["node"]: i for i, e in enumerate(trace.events) if e["kind"] == "node"}
    exp_id = nodes["ExpBackward0"].id
    assert memory.at(node_at[exp_id] - 1).bytes == 12008
    assert memory.at(node_at[exp_id]).bytes == 8008
    assert memory.at(node_at[mul.id]).bytes == 8  # only the second q's graph is left
    assert memory.at(len(trace.events)).tensors == 1
    assert memory.peak.bytes == 12016
    assert not memory.kept


def test_retain_graph_keeps_what_the_nodes_saved() -> None:
    trace = _trace(
        "import torch\nx = torch.randn(10, requires_grad=True)\ny = (x * x).sum()\n"
        "y.backward(retain_graph=True)\n"
    )
    memory = held_memory(trace)
    mul = next(n for n in trace.nodes if n.name == "MulBackward0")
    # x * x saves x twice: one storage, counted once.
    assert [e["storage"] for e in mul.saved_tensors] == [mul.saved_tensors[0]["storage"]] * 2
    assert memory.at(len(trace.events)).bytes == 40
    assert memory.kept == {mul.id}


def test_a_module_step_counts_bytes_by_module_and_text_is_readable() -> None:
    trace = _trace(
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
        "loss = model(torch.randn(16, 4)).pow(2).mean()\n"
    )
    memory = held_memory(trace)
    held = memory.at(len(trace.events))
    modules = by_module(trace, memory.holding(len(trace.events)))
    assert sum(modules.values()) == held.bytes
    # The second Linear saved the ReLU's output (16×8 floats); the ReLU its own result,
    # the same memory: one storage, counted where it was first saved.
    assert modules["model.1"] == 16 * 8 * 4
    assert "model.2" in modules and "" in modules  # pow's input, outside any module
    assert [bytes_text(n) for n in (12, 3200, 48 * 2**20, 300 * 2**20)] == [
        "12 B",
        "3.1 KB",
        "48.0 MB",
        "300 MB",
    ]


CUDA_CHAIN = """import torch
x = torch.randn(1024, 1024, device="cuda", requires_grad=True)
def forward(t):
    y = t.exp()
    z = y.sin()
    return z.sum()
loss = forward(x)
"""


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_held_bytes_match_cuda_memory_allocated() -> None:
    # torch alone: what building the graph left allocated (x existed before).
    namespace: dict[str, Any] = {}
    exec(CUDA_CHAIN.split("def forward")[0], namespace)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    exec("def forward" + CUDA_CHAIN.split("def forward")[1], namespace)
    torch.cuda.synchronize()
    grown = torch.cuda.memory_allocated() - before
    trace = run_source(CUDA_CHAIN, device="cuda")
    held = held_memory(trace).at(len(trace.events))
    # exp's result (saved by exp and by sin: one storage) stays; so does the loss (one
    # 512-byte block of the caching allocator); z went with the function's frame.
    assert held.tensors == 1 and held.bytes == 1024 * 1024 * 4
    assert abs(grown - held.bytes) <= 512


def test_a_saved_tensor_first_seen_in_its_own_op_is_named() -> None:
    # `x * g` with g = x.grad met for the first time there, and sort's indices (an output
    # of no grad): the node described what it saved before either had an id, and the
    # trace said null where torch says the node holds that very tensor.
    code = """import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
(x * x).sum().backward()
g = x.grad
m = x * g
vals, idxs = x.sort()
"""
    trace = run_source(code)
    plain: dict = {}
    exec(code, plain)  # the oracle: what torch's nodes hold
    assert plain["m"].grad_fn._saved_other is plain["g"]
    assert torch.equal(plain["vals"].grad_fn._saved_indices, plain["idxs"])
    nodes = {n.id: n for n in trace.nodes}
    held = {
        name: {
            s["name"]: s["tensor"] for s in nodes[trace.tensor_named(name).grad_fn].saved_tensors
        }
        for name in ("m", "vals")
    }
    assert held["m"]["other"] == trace.tensor_named("g").id
    assert held["vals"]["indices"] == trace.tensor_named("idxs").id


def test_a_graph_the_user_keeps_holds_nothing_of_the_trace_once_the_run_ended() -> None:
    """A node freed during the run is stamped with when; the stamps leave the nodes the
    user still holds at the end, so the trace's node records die with the trace, not with
    the user's graph (an RNN's last `h` kept 220,000 of them in every collection's way)."""
    namespace: dict[str, Any] = {}
    trace = run_source(
        "import torch\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "h = w\n"
        "for _ in range(50):\n"
        "    h = torch.tanh(h * w)\n"
        "tmp = (w * 3).exp()\n"
        "del tmp\n"
        "h.sum().backward()\n",
        namespace=namespace,
    )
    # The freed `exp`'s node was stamped while the run went on; the kept ones were not.
    exp = next(n for n in trace.nodes if n.name == "ExpBackward0")
    assert exp.released_at is not None and exp.made_at is not None
    node, seen = namespace["h"].grad_fn, 0
    while node is not None:
        stamps = [v for k, v in node.metadata.items() if str(k).endswith(".release")]
        assert all(stamp.info is None for stamp in stamps), node
        seen += 1
        node = next((fn for fn, _ in node.next_functions if fn is not None), None)
    assert seen > 100
    # Torch's own answer: nothing of ours survives the trace in the graph the user kept.
    records = [weakref.ref(n) for n in trace.nodes]
    del trace, exp
    assert [r for r in records if r() is not None] == []
