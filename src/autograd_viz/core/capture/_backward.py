"""Recording one backward pass with hooks on the nodes the engine will run."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

import torch

from autograd_viz.core.values import event_value

if TYPE_CHECKING:
    from autograd_viz.core.capture._tracer import Tracer


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, torch.Tensor):
        return [value]
    return list(value)


class BackwardRecorder:
    """Wraps one `.backward()` / `torch.autograd.backward()` / `torch.autograd.grad()` call.

    Before the call, every node reachable from the roots gets a pre-hook and a hook
    (`Node.register_prehook` / `Node.register_hook`); the engine then calls them in its
    real order with the real gradients. AccumulateGrad nodes also report the leaf's `.grad`
    before and after. All handles are removed when the call returns or raises.
    """

    def __init__(self, tracer: Tracer, func: Any, call: str, args: tuple, kwargs: dict) -> None:
        self.tracer, self.func, self.call = tracer, func, call
        self.args, self.kwargs = args, kwargs
        self.line = tracer.user_line()
        self._handles: list[Any] = []
        self._before: dict[str, Any] = {}

    def _options(self) -> tuple[list[torch.Tensor], bool, bool]:
        """The roots and the retain_graph / create_graph flags, as torch will read them."""
        a, kw = self.args, self.kwargs
        if self.func is torch.Tensor.backward:  # (self, gradient, retain_graph, create_graph)
            roots = [a[0]]
            retain = kw.get("retain_graph", a[2] if len(a) > 2 else None)
            create = kw.get("create_graph", a[3] if len(a) > 3 else False)
        elif self.func is torch.autograd.grad:  # (outputs, inputs, grad_outputs, retain, create)
            roots = _as_list(kw.get("outputs", a[0] if a else None))
            retain = kw.get("retain_graph", a[3] if len(a) > 3 else None)
            create = kw.get("create_graph", a[4] if len(a) > 4 else False)
        else:  # torch.autograd.backward(tensors, grad_tensors, retain_graph, create_graph)
            roots = _as_list(kw.get("tensors", a[0] if a else None))
            retain = kw.get("retain_graph", a[2] if len(a) > 2 else None)
            create = kw.get("create_graph", a[3] if len(a) > 3 else False)
        create = bool(create)
        return roots, bool(create if retain is None else retain), create

    def run(self) -> Any:
        """Hook the graph, run the real call, record what happened, unhook."""
        tracer = self.tracer
        tracer.quiet += 1
        try:
            roots, retain, create = self._options()
            event = {
                "kind": "backward",
                "line": self.line,
                "call": self.call,
                "roots": [tracer.tid(r) for r in roots if isinstance(r, torch.Tensor)],
                "root_nodes": [
                    tracer.registry.node_id(r.grad_fn) for r in roots if isinstance(r, torch.Tensor)
                ],
                "retain_graph": retain,
                "create_graph": create,
                "graph_freed": not retain,
            }
            tracer.emit(event)
            self._hook([r.grad_fn for r in roots if isinstance(r, torch.Tensor)])
            retained = self._retained_before()
        finally:
            tracer.quiet -= 1
        try:
            result = self.func(*self.args, **self.kwargs)
        except BaseException:
            event["graph_freed"] = None  # the call failed: what was freed is not known
            raise
        finally:
            for handle in self._handles:
                handle.remove()
            self._handles.clear()
        self._retained_after(retained)
        return result

    def _retained_before(self) -> list[tuple[str, torch.Tensor, Any]]:
        """Non-leaf tensors that asked for retain_grad(), with their .grad now."""
        alive = [(tid, ref()) for tid, ref in list(self.tracer.retained.items())]
        return [
            (tid, t, event_value(t.grad)) for tid, t in alive if t is not None and t.retains_grad
        ]

    def _retained_after(self, retained: list[tuple[str, torch.Tensor, Any]]) -> None:
        """A `retained_grad` event for each retained .grad this pass changed."""
        tracer = self.tracer
        tracer.quiet += 1
        try:
            for tid, t, before in retained:
                after = event_value(t.grad)
                if after != before:
                    tracer.emit(
                        {
                            "kind": "retained_grad",
                            "line": self.line,
                            "tensor": tid,
                            "before": before,
                            "after": after,
                        }
                    )
        finally:
            tracer.quiet -= 1

    def _hook(self, starts: list[Any]) -> None:
        registry = self.tracer.registry
        seen: set[str] = set()
        queue: deque[Any] = deque(n for n in starts if n is not None)
        while queue:
            node = queue.popleft()
            nid = registry.node_id(node)
            if nid is None or nid in seen:
                continue
            seen.add(nid)
            leaf = getattr(node, "variable", None)
            if isinstance(leaf, torch.Tensor):
                # AccumulateGrad runs once per pass, so .grad now is .grad "before".
                self._before[nid] = event_value(leaf.grad)
            self._handles.append(node.register_hook(self._post_hook(node, nid, leaf)))
            queue.extend(n for n, _ in node.next_functions if n is not None)

    def _post_hook(self, node: Any, nid: str, leaf: Any):
        name = type(node).__name__
        tracer = self.tracer
        line = self.line

        def post(grad_inputs: tuple, grad_outputs: tuple) -> None:
            # grad_outputs arrive at the node (w.r.t. its outputs); grad_inputs leave it,
            # one per next_functions entry.
            tracer.emit(
                {
                    "kind": "node",
                    "line": line,
                    "node": nid,
                    "name": name,
                    "grads_in": [event_value(g) for g in grad_outputs],
                    "grads_out": [event_value(g) for g in grad_inputs],
                }
            )
            if isinstance(leaf, torch.Tensor):
                leaf_id = tracer.tid(leaf)
                tracer.own_grad(leaf.grad, leaf_id)
                tracer.emit(
                    {
                        "kind": "accumulate",
                        "line": line,
                        "tensor": leaf_id,
                        "node": nid,
                        "before": self._before.pop(nid, None),
                        "after": event_value(leaf.grad),
                    }
                )

        return post
