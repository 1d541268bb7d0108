"""Recording one backward pass with hooks on the nodes the engine will run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from autograd_viz.core.capture._naming import grad_results_bound
from autograd_viz.core.capture._registry import grad_fn_of
from autograd_viz.core.trace.values import event_value

if TYPE_CHECKING:
    from autograd_viz.core.capture._hooks import NodeHooks
    from autograd_viz.core.capture._recording import Recording


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, torch.Tensor):
        return [value]
    return list(value)


class BackwardRecorder:
    """Wraps one `.backward()` / `torch.autograd.backward()` / `torch.autograd.grad()` call.

    Every node the tracer has given an id carries a hook (`Node.register_hook`) and, for
    AccumulateGrad, a pre-hook (`Node.register_prehook`), installed when the node was given
    its id (see `NodeHooks`). While this recorder runs, the engine calls them in its
    real order with the real gradients: each becomes a node event, and AccumulateGrad
    nodes an accumulate event with the leaf's `.grad` before and after.
    """

    def __init__(
        self,
        recording: Recording,
        hooks: NodeHooks,
        func: Any,
        call: str,
        args: tuple,
        kwargs: dict,
    ) -> None:
        self.recording, self.hooks = recording, hooks
        self.func, self.call = func, call
        self.args, self.kwargs = args, kwargs
        self.line = recording.user_line()
        self._before: dict[str, Any] = {}
        # AccumulateGrad nodes about to run: their leaf and what arrives (`accumulated`),
        # and those already recorded early, whose own post hook must not record again.
        self._arriving: dict[str, tuple[torch.Tensor, list[Any]]] = {}
        self._early: set[str] = set()

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
        """Record the backward event, run the real call with recording on, then finish."""
        recording = self.recording
        with recording.own_reads():
            roots, retain, create = self._options()
            tensors = [r for r in roots if isinstance(r, torch.Tensor)]
            event = {
                "kind": "backward",
                "line": self.line,
                "call": self.call,
                "roots": [recording.tid(r) for r in tensors],
                # Giving the roots ids registers (and hooks) any node not seen yet.
                "root_nodes": [recording.registry.node_id(grad_fn_of(r)) for r in tensors],
                "retain_graph": retain,
                "create_graph": create,
                "graph_freed": not retain,
                "depth": 0,
            }
            thread = recording.passes.thread_name()
            if thread is not None:
                event["thread"] = thread
            if self.call != "torch.autograd.grad()":
                recording.step_stats.backward_ran(tensors)
            self.hooks.last_in_line()
            retained = self._retained_before()
        event["depth"] = depth = recording.passes.started(self)
        recording.emit(event)
        ok = False
        end: dict[str, Any] = {"kind": "backward_end", "line": self.line, "depth": depth}
        try:
            result = self.func(*self.args, **self.kwargs)
            ok = True
            if self.func is torch.autograd.grad:
                self._results(end, result)
        except BaseException:
            event["graph_freed"] = None  # the call failed: what was freed is not known
            raise
        finally:
            recording.passes.ended()
            end["ok"] = ok
            recording.emit(end)
            # A pass that raised may have added to retained grads before it stopped.
            self._retained_after(retained)
        return result

    def _results(self, end: dict[str, Any], result: Any) -> None:
        """What `torch.autograd.grad()` returned, on its `backward_end`: the tensors (a
        gradient made with `create_graph=True` is itself in the graph) and their values."""
        recording = self.recording
        with recording.own_reads():
            tensors = _as_list(result)
            end["results"] = [
                recording.tid(t) if isinstance(t, torch.Tensor) else None for t in tensors
            ]
            end["values"] = [
                recording.value(t) if isinstance(t, torch.Tensor) else None for t in tensors
            ]
            registry, made = recording.registry, []
            for t, tid in zip(tensors, end["results"], strict=True):
                # With create_graph, the engine made the node behind each gradient, out of
                # the mode's sight: the step that returns it lights it (a gradient
                # penalty's `grad(…)[0]` lit nothing), and the node says it made it.
                nid = registry.node_id(grad_fn_of(t)) if tid is not None else None
                made.append(nid)
                if nid is not None and t.output_nr == 0 and registry.nodes[nid].tensor is None:
                    registry.nodes[nid].tensor = tid
            if any(made):
                end["grad_fn"] = made
            bound = grad_results_bound(recording.filename)
            if bound:  # `g, = torch.autograd.grad(y, x)`: each pass's g is called g
                end["assigned"] = [bound.get(i) for i in range(len(tensors))]

    def _retained_before(self) -> list[tuple[str, torch.Tensor, Any]]:
        """Non-leaf tensors that asked for retain_grad(), with their .grad now."""
        alive = [(tid, ref()) for tid, ref in list(self.recording.retained.items())]
        return [
            (tid, t, event_value(t.grad)) for tid, t in alive if t is not None and t.retains_grad
        ]

    def _retained_after(self, retained: list[tuple[str, torch.Tensor, Any]]) -> None:
        """A `retained_grad` event for each retained .grad this pass changed."""
        recording = self.recording
        with recording.own_reads():
            for tid, t, before in retained:
                after = event_value(t.grad)  # compared now, so taken now (not deferred)
                if after != before:
                    recording.emit(
                        {
                            "kind": "retained_grad",
                            "line": self.line,
                            "tensor": tid,
                            "before": before,
                            "after": after,
                        }
                    )

    def leaf_before(self, nid: str, leaf: torch.Tensor | None, grad_outputs: tuple = ()) -> None:
        """AccumulateGrad is about to run: remember the leaf's .grad as it is now, and
        what arrives (for `accumulated`)."""
        if leaf is not None:
            self._before[nid] = self.recording.recall(leaf.grad)
            hooked = self.recording.post_accumulate.get(id(leaf))
            if hooked is not None and hooked() is leaf:
                # Copied now, not held: AccumulateGrad keeps the incoming tensor itself as
                # .grad only while nothing else holds it (else it copies), and the hook may
                # then edit it in place.
                take = self.recording.snapshots.take
                self._arriving[nid] = (leaf, [take(g) for g in grad_outputs])

    def accumulated(self, leaf: torch.Tensor) -> None:
        """The leaf's .grad is written and its post-accumulate-grad hooks start: record
        its AccumulateGrad now, before what the hooks do (`p.sub_(lr * p.grad)`, `p.grad
        = None`), not after them, when the node's own post hook runs."""
        for nid, (arrived_at, arrived) in list(self._arriving.items()):
            if arrived_at is leaf:
                del self._arriving[nid]
                self.node_ran(nid, "AccumulateGrad", leaf, (), (), arrived)
                self._early.add(nid)
                return

    def node_ran(
        self,
        nid: str,
        name: str,
        leaf: torch.Tensor | None,
        grad_inputs: tuple,
        grad_outputs: tuple,
        arrived: list[Any] | None = None,
    ) -> None:
        """The engine ran a node: its gradients in and out (and, for a leaf, the .grad).
        `arrived`: the snapshots of what came in, when taken earlier (`accumulated`)."""
        if nid in self._early:  # recorded when the leaf's hooks began (`accumulated`)
            self._early.discard(nid)
            return
        self._arriving.pop(nid, None)
        recording = self.recording
        # grad_outputs arrive at the node (w.r.t. its outputs); grad_inputs leave it, one
        # per next_functions entry. A gradient leaving one node usually enters the next
        # unchanged: recall shares its snapshot (unless the engine summed into it).
        recall = recording.recall
        recording.emit(
            {
                "kind": "node",
                "line": self.line,
                "node": nid,
                "name": name,
                "grads_in": arrived if arrived is not None else [recall(g) for g in grad_outputs],
                "grads_out": [recall(g) for g in grad_inputs],
            }
        )
        if leaf is not None:
            leaf_id = recording.tid(leaf)
            grad = leaf.grad
            recording.own_grad(grad, leaf_id)
            event = {
                "kind": "accumulate",
                "line": self.line,
                "tensor": leaf_id,
                "node": nid,
                "before": self._before.pop(nid, None),
                # The first .grad is usually the incoming gradient itself: snapshot once.
                "after": recall(grad),
            }
            if grad is not None and (gid := recording.registry.known_id(grad)) is not None:
                event["grad_tensor"] = gid  # `g = w.grad` earlier: g is what changed
                # `w.grad = buf[:2]`: AccumulateGrad adds into buf's memory too.
                shared = recording.registry.sharing_memory(grad)
                if shared:
                    event["written"] = {wid: recording.value(w) for wid, w in shared}
            recording.emit(event)
