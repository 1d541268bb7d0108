"""Build the trace's graph from live tensors by walking `grad_fn.next_functions`."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

import torch

from autograd_viz.core.trace import NodeInfo, TensorInfo, Trace
from autograd_viz.core.values import grad_value, tensor_value

# Walking a very deep graph from Python and then freeing it can crash PyTorch
# (pytorch#109948), and no picture of 100k nodes is readable anyway: cap the walk.
DEFAULT_MAX_NODES = 5_000

_HIDDEN_NAMES = {"In", "Out", "exit", "quit", "get_ipython"}


def namespace_roots(namespace: Mapping[str, Any]) -> list[tuple[str, torch.Tensor]]:
    """The (name, tensor) pairs worth drawing: tensors bound by the user, module parameters."""
    roots: list[tuple[str, torch.Tensor]] = []
    for name, obj in list(namespace.items()):
        if name.startswith("_") or name in _HIDDEN_NAMES:
            continue
        if isinstance(obj, torch.Tensor):
            roots.append((name, obj))
        elif isinstance(obj, torch.nn.Module):
            roots.extend((f"{name}.{p}", t) for p, t in obj.named_parameters())
    return roots


class _GraphBuilder:
    """Collects tensors and nodes, giving each a stable id in discovery order."""

    def __init__(self, max_nodes: int) -> None:
        self.max_nodes = max_nodes
        self.tensors: dict[int, TensorInfo] = {}
        self.tensor_objs: list[torch.Tensor] = []
        self.nodes: dict[int, NodeInfo] = {}
        # Hold the node objects so their ids stay unique while we walk.
        self.node_objs: dict[int, Any] = {}
        self.truncated = False

    def add_tensor(self, t: torch.Tensor, name: str | None) -> TensorInfo:
        key = t._cdata
        info = self.tensors.get(key)
        if info is not None:
            if info.name is None and name is not None:
                info.name = name
            return info
        info = TensorInfo(
            id=f"t{len(self.tensors)}",
            name=name,
            shape=list(t.shape),
            dtype=str(t.dtype).removeprefix("torch."),
            device=str(t.device),
            requires_grad=bool(t.requires_grad),
            is_leaf=bool(t.is_leaf),
            retains_grad=bool(t.retains_grad),
            grad_fn=None,
            output_nr=int(getattr(t, "output_nr", 0)),
            value=tensor_value(t),
            grad=grad_value(t),
        )
        self.tensors[key] = info
        self.tensor_objs.append(t)
        return info

    def node_id(self, fn: Any) -> str | None:
        """The id of `fn`, registering it if there is room under the cap."""
        key = id(fn)
        if key in self.nodes:
            return self.nodes[key].id
        if len(self.nodes) >= self.max_nodes:
            self.truncated = True
            return None
        info = NodeInfo(
            id=f"n{len(self.nodes)}", name=type(fn).__name__, tensor=None, variable=None, next=[]
        )
        self.nodes[key] = info
        self.node_objs[key] = fn
        return info.id

    def walk(self, starts: Iterable[Any]) -> None:
        """Breadth-first over next_functions from every start node, iteratively."""
        queue: deque[Any] = deque()
        for fn in starts:
            if self.node_id(fn) is not None:
                queue.append(fn)
        expanded: set[int] = set()
        while queue:
            fn = queue.popleft()
            if id(fn) in expanded:
                continue
            expanded.add(id(fn))
            info = self.nodes[id(fn)]
            variable = getattr(fn, "variable", None)
            if isinstance(variable, torch.Tensor):
                info.variable = self.add_tensor(variable, None).id
            for next_fn, nr in getattr(fn, "next_functions", ()):
                if next_fn is None:
                    continue
                next_id = self.node_id(next_fn)
                if next_id is None:
                    continue
                info.next.append(next_id)
                info.next_nr.append(int(nr))
                if id(next_fn) not in expanded:
                    queue.append(next_fn)


def capture_graph(
    namespace: Mapping[str, Any],
    trace: Trace | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> Trace:
    """Fill `trace` with every user tensor that has a grad_fn or requires grad, and its graph."""
    trace = trace if trace is not None else Trace()
    builder = _GraphBuilder(max_nodes)
    roots = [
        (n, t) for n, t in namespace_roots(namespace) if t.grad_fn is not None or t.requires_grad
    ]
    for name, t in roots:
        builder.add_tensor(t, name)
    builder.walk(t.grad_fn for _, t in roots if t.grad_fn is not None)

    # Tie each known tensor to the node that produced it.
    for t in builder.tensor_objs:
        fn = t.grad_fn
        if fn is not None and id(fn) in builder.nodes:
            node = builder.nodes[id(fn)]
            tensor = builder.tensors[t._cdata]
            tensor.grad_fn = node.id
            if node.tensor is None:
                node.tensor = tensor.id

    trace.tensors = list(builder.tensors.values())
    trace.nodes = list(builder.nodes.values())
    if builder.truncated:
        trace.truncated = True
        trace.notes.append(
            f"The graph has more than {max_nodes:,} nodes; only the {max_nodes:,} nearest "
            "the outputs are shown."
        )
    return trace
