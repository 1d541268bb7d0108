"""The names captions and labels give tensors no variable held at the end of a run.

A tensor the user bound is called by its variable (`TensorInfo.name`). One that was only
bound inside a function (`out = a * b` in `def f()`) is called by that local, which the
tracer read off the assignment (an op event's `assigned`). One never bound is called by
what made it: `mse_loss(…)`, `linear(…)`, numbered from the second of a kind
(`linear(…)#2`) so a learner can tell two apart. A leaf's gradient is `w.grad`. A
history break's result is named from its source (`y.detach()`). A gradient
`torch.autograd.grad()` returned that no variable held is named by the call and its place
in the tuple it returned (`grad(…)[0]`, in a penalty `grad(y, x)[0].pow(2).sum()`; it read
`t3`). Never "tensor".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from autograd_viz.core.trace._backward_events import BackwardEndEvent
from autograd_viz.core.trace._event_base import TraceEvent
from autograd_viz.core.trace._forward_events import HistoryBreakEvent, OpEvent
from autograd_viz.core.trace._records import TensorInfo

_GRAD_CALL = " grad"  # how `made` counts autograd.grad calls (no op has a space in its name)


def made_by(op: str, count: int) -> str:
    """The name of the `count`-th result of `op` that no variable held: `linear(…)#2`."""
    return f"{op}(…)" if count <= 1 else f"{op}(…)#{count}"


def cut_name(source: str, how: str) -> str:
    """What a history break's result is called: `y.detach()`, `w.data`."""
    return f"{source}{how}" if how.startswith(".") else f"{source}.{how}"


def display_names(
    tensors: Mapping[str, TensorInfo], events: Iterable[TraceEvent]
) -> dict[str, str]:
    """Tensor id -> the name captions use, for every tensor the events mention."""
    names = {tid: t.name for tid, t in tensors.items() if t.name}
    made: dict[str, int] = {}
    unbound_made: set[str] = set()  # named by what made them: a variable may bind them later
    for e in events:
        if isinstance(e, OpEvent):
            for tid, leaf in (e.grad_of or {}).items():
                names.setdefault(tid, f"{names.get(leaf, leaf)}.grad")
            for tid, local in (e.input_names or {}).items():  # `g` of `return g * b`
                if names.get(tid, tid) == tid:  # also after an id: torch.func's wrapper
                    names[tid] = local
            for tid in e.inputs:  # a tensor first seen as an input came from outside
                names.setdefault(tid, tid)
            for tid in e.outputs:
                if tid in names:
                    # `w = torch.ones(2).requires_grad_()` in a function: the in-place
                    # op's result, bound to w, is the tensor ones() made (`ones(…)`).
                    if e.assigned and tid in unbound_made and len(e.outputs) == 1:
                        names[tid] = e.assigned
                        unbound_made.discard(tid)
                    continue
                if e.assigned:  # several: a `for` loop's variable, each in its pass
                    names[tid] = e.assigned
                else:
                    made[e.op] = made.get(e.op, 0) + 1
                    names[tid] = made_by(e.op, made[e.op])
                    unbound_made.add(tid)
        elif isinstance(e, BackwardEndEvent) and e.results:
            assigned = e.assigned or ()
            unbound = []
            for i, tid in enumerate(e.results):
                if tid is None or tid in names:
                    continue
                if i < len(assigned) and assigned[i] is not None:
                    names[tid] = assigned[i]
                else:
                    unbound.append((i, tid))
            if unbound:  # the calls are numbered as ops' results are: `grad(…)[0]#2`
                count = made[_GRAD_CALL] = made.get(_GRAD_CALL, 0) + 1
                for i, tid in unbound:
                    names[tid] = f"grad(…)[{i}]" + (f"#{count}" if count > 1 else "")
        elif isinstance(e, HistoryBreakEvent) and e.result and e.result not in names:
            names[e.result] = cut_name(names.get(e.tensor or "", e.tensor or "?"), e.how)
    return names
