"""The names captions and labels give tensors no variable held at the end of a run.

A tensor the user bound is called by its variable (`TensorInfo.name`). One that was only
bound inside a function (`out = a * b` in `def f()`) is called by that local, which the
tracer read off the assignment (an op event's `assigned`). One never bound is called by
what made it: `mse_loss(…)`, `linear(…)`, numbered from the second of a kind
(`linear(…)#2`) so a learner can tell two apart. A leaf's gradient is `w.grad`. A
history break's result is named from its source (`y.detach()`). Never "tensor".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from autograd_viz.core.trace._backward_events import BackwardEndEvent
from autograd_viz.core.trace._event_base import TraceEvent
from autograd_viz.core.trace._forward_events import HistoryBreakEvent, OpEvent
from autograd_viz.core.trace._records import TensorInfo


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
    for e in events:
        if isinstance(e, OpEvent):
            for tid, leaf in (e.grad_of or {}).items():
                names.setdefault(tid, f"{names.get(leaf, leaf)}.grad")
            for tid, local in (e.input_names or {}).items():  # `g` of `return g * b`
                names.setdefault(tid, local)
            for tid in e.inputs:  # a tensor first seen as an input came from outside
                names.setdefault(tid, tid)
            for tid in e.outputs:
                if tid in names:
                    continue
                if e.assigned and len(e.outputs) == 1:
                    names[tid] = e.assigned
                else:
                    made[e.op] = made.get(e.op, 0) + 1
                    names[tid] = made_by(e.op, made[e.op])
        elif isinstance(e, BackwardEndEvent) and e.assigned:
            for tid, name in zip(e.results, e.assigned, strict=False):
                if tid is not None and name is not None:
                    names.setdefault(tid, name)
        elif isinstance(e, HistoryBreakEvent) and e.result and e.result not in names:
            names[e.result] = cut_name(names.get(e.tensor or "", e.tensor or "?"), e.how)
    return names
