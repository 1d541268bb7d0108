"""The asked tensor at one moment of the run, and what the trace says about it: when it
was made, which events set its .grad, which backward passes ran since, and where its
value went."""

from __future__ import annotations

from autograd_viz.core.playback._why_edits import _ScriptEdits
from autograd_viz.core.trace import TensorInfo, Trace
from autograd_viz.core.trace.events import BackwardEvent, HistoryBreakEvent, OpEvent

_GRAD_KINDS = ("accumulate", "retained_grad", "grad_reset", "grad_assign")


class _Moment(_ScriptEdits):
    """The tensor asked about, as it stands once event `last` has happened."""

    def __init__(self, trace: Trace, tensor_id: str, index: int | None, source: str | None):
        self.trace, self.ix = trace, trace.index
        self.t: TensorInfo = self.ix.tensor(tensor_id)
        self.tid = tensor_id
        self.name = self.ix.name_of(tensor_id)
        self.last = len(trace.events) - 1 if index is None else index
        self.lines = source.split("\n") if source is not None else None
        positions = [i for i in self.ix.of_tensor(tensor_id) if i <= self.last]
        self.mine = positions
        self.made, self.made_line = self._made()
        self.grad_events = self._change_positions()  # read once: every reason asks

    # ---- the moment ---------------------------------------------------------------------
    def _grad_now(self):
        """The .grad once event `last` happened, read off the events that changed it."""
        changes = [self.ix.event(i) for i in self.grad_events]
        done = [e for i, e in zip(self.grad_events, changes, strict=True) if i <= self.last]
        if done:
            return done[-1].after
        if changes:
            return changes[0].before
        return self.t.grad

    def _change_positions(self) -> list[int]:
        """The events that set the tensor's .grad (accumulate, reset, assign)."""
        ix = self.ix
        return [
            i
            for i in ix.of_tensor(self.tid)
            if ix.event(i).kind in _GRAD_KINDS and getattr(ix.event(i), "tensor", None) == self.tid
        ]

    def _made(self) -> tuple[int | None, int | None]:
        """The op event that made the tensor, and its line."""
        for i in self.ix.of_tensor(self.tid):
            e = self.ix.event(i)
            if isinstance(e, OpEvent) and self.tid in e.outputs and not e.inplace:
                return i, e.line
        return None, None

    def _end(self) -> int:
        return len(self.trace.events) - 1

    def _backwards(self) -> list[tuple[int, BackwardEvent]]:
        start = self.made if self.made is not None else -1
        return [(i, e) for i, e in self.ix.each(BackwardEvent) if start < i <= self.last]

    # ---- what the trace says about the graph --------------------------------------------
    def _reached(self, passes: list[tuple[int, BackwardEvent]]) -> bool:
        nodes = self.ix.nodes
        mine = {n.id for n in nodes.values() if n.variable == self.tid}
        if not mine:
            return False
        stack = [n for _, e in passes for n in e.root_nodes if n in nodes]
        seen: set[str] = set()
        while stack:
            nid = stack.pop()
            if nid in seen:
                continue
            if nid in mine:
                return True
            seen.add(nid)
            stack.extend(n for n in nodes[nid].next if n in nodes)
        return False

    def _descendants(self, start: int, seeds: set[str] | None = None) -> set[str]:
        """The tensors computed from `seeds` (the asked tensor) by the ops after `start`,
        with or without autograd: where its value went."""
        found = set(seeds) if seeds is not None else {self.tid}
        for j in range(max(start, 0), self.last + 1):
            e = self.ix.event(j)
            if isinstance(e, OpEvent) and set(e.inputs) & found:
                found.update(e.outputs)
            elif isinstance(e, HistoryBreakEvent) and e.tensor in found and e.result:
                found.add(e.result)
        return found

    def _loss_after(self) -> str | None:
        """The last named scalar computed from the tensor that requires grad: what
        backward() would be called on."""
        found = self._descendants(self.made if self.made is not None else -1)
        for j in range(self._end(), -1, -1):
            e = self.ix.event(j)
            if isinstance(e, OpEvent) and e.assigned and e.grad_fn and e.grad_fn[0]:
                out = e.outputs[0] if e.outputs else None
                if out in found and out in self.ix.tensors:
                    info = self.ix.tensor(out)
                    if info.shape == [] and info.name == e.assigned:
                        return e.assigned
        return None
