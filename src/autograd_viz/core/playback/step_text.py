"""What the player says for steps that are not one plain event: a module's construction
folded into one step, and a step whose event lights nothing on the canvas.

Building `nn.Linear(3, 4)` runs `empty()`, `kaiming_uniform_()`, `uniform_()` for each
parameter: torch's bookkeeping, not the learner's arithmetic. The tracer marks those ops
(`construction`, the statement's line); the player shows one step per statement that says
which parameters it created. A step that lights nothing says why, from the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from autograd_viz.core.trace._event_base import Lookup, tensor_name
from autograd_viz.core.trace.events import (
    GradResetEvent,
    HistoryBreakEvent,
    OpEvent,
    ParamUpdateEvent,
    TraceEvent,
)

# Why a step lights nothing. Each is the end of a caption; tests look for them.
NO_GRAD_MODE = "nothing drawn: it ran under no_grad, so autograd recorded nothing"
INSIDE_FUNCTION = (
    "nothing drawn: it ran inside a custom autograd.Function, which autograd records as one node"
)
NEEDS_NO_GRAD = "nothing drawn: it ran on tensors that need no grad, so it is not part of the graph"
MADE_WITHOUT_GRAD = (
    "nothing drawn: it made a tensor that needs no grad, so it is not part of the graph"
)
NO_GRADIENT = "nothing drawn: its result cannot carry a gradient, so it is not part of the graph"
NOT_KEPT = "nothing drawn: its result was not kept, so it is not in the picture"
# A copy that is a leaf of its own (`copy.deepcopy` of a tensor that requires grad).
NEW_LEAF = "nothing drawn: its result is a new leaf, with no history back to what it copied"
# Ops that make a new tensor shaped like their input, without its numbers or history.
_NEW_TENSOR_LIKE = frozenset(
    {f"{kind}_like" for kind in ("zeros", "ones", "empty", "full", "rand", "randn", "randint")}
    | {f"new_{kind}" for kind in ("zeros", "ones", "empty", "full", "tensor")}
)
NOT_BUILT = "nothing drawn: none of the tensors it made is in the picture"
NOT_SHOWN = "nothing drawn: what it touched is not in the picture"
# A cut's result a variable holds (vjp's `out`, `mul(…).detach()`), used by nothing drawn.
CUT_OFF = "nothing drawn: nothing in the picture uses its result"
REASONS = (
    CUT_OFF,
    NO_GRAD_MODE,
    NEEDS_NO_GRAD,
    MADE_WITHOUT_GRAD,
    NO_GRADIENT,
    NOT_KEPT,
    NEW_LEAF,
    NOT_BUILT,
    NOT_SHOWN,
)

_ZEROING = ("zero", "foreach_zero")  # the ops `.grad.zero_()` and zero_grad() run
_SHOWN_PARAMETERS = 6  # parameters a folded caption names before "and N more"


def folds(positions: Sequence[int], event: Callable[[int], TraceEvent]) -> list[list[int]]:
    """The positions grouped into steps: consecutive ops of one module-building statement
    make one group, with the `.data =` writes made on that line meanwhile (a lazy module's
    first call gives each parameter its memory so: four steps of "building a module ran
    empty()" and "lazy.weight: [] → uninitialised" before the one that said it had built
    lazy's parameters); a `.grad.zero_()` op joins the resets it made (one call, one step:
    "w.grad.zero_() — .grad [3.0] → [0.0]" was followed by "zero(w.grad) → w.grad");
    every other event is a group of its own."""
    groups: list[list[int]] = []
    building: int | None = None  # the statement line of the group being folded
    resets: int | None = None  # the line of the zero_ resets the last group holds
    for i in positions:
        e = event(i)
        line = e.construction if isinstance(e, OpEvent) else None
        if line is not None and line == building:
            groups[-1].append(i)
            continue
        if building is not None and isinstance(e, ParamUpdateEvent) and e.line == building:
            groups[-1].append(i)
            continue
        if isinstance(e, GradResetEvent) and e.how == ".grad.zero_()":
            if resets == e.line:  # `_foreach_zero_` over every grad: one call
                groups[-1].append(i)
                continue
            groups.append([i])
            building, resets = None, e.line
            continue
        if isinstance(e, OpEvent) and e.grad_of and e.op in _ZEROING and resets == e.line:
            groups[-1].append(i)
            resets = None
            continue
        groups.append([i])
        building, resets = line, None
    return groups


def _shape(lookup: Lookup, tid: str, fallback: Sequence[int] | None) -> str:
    info = lookup.tensors.get(tid)
    shape = info.shape if info is not None else fallback
    return "[" + ", ".join(str(s) for s in shape or ()) + "]"


def construction_caption(lookup: Lookup, ops: Sequence[OpEvent]) -> str:
    """`line 7: building model created 4 parameters: model.0.weight [4, 3], …`."""
    made: dict[str, Sequence[int] | None] = {}
    for e in ops:
        for tid, value in zip(e.outputs, e.values, strict=False):
            info = lookup.tensors.get(tid)
            if info is not None and info.is_leaf and info.requires_grad:
                made.setdefault(tid, value.shape if value is not None else None)
    names = [tensor_name(lookup, tid) for tid in made]
    owners = {n.split(".", 1)[0] for n in names if "." in n}
    what = f"building {owners.pop()}" if len(owners) == 1 else "building a module"
    # `self.w = torch.ones(2, requires_grad=True)`: a leaf, but no parameter (None: a trace
    # from before the key, whose leaves were all counted as parameters).
    plain = {tid: made.pop(tid) for tid in list(made) if lookup.tensors[tid].parameter is False}
    said = []
    if made:
        plural = "s" if len(made) != 1 else ""
        said.append(f"created {len(made)} parameter{plural}: {_listed(lookup, made)}")
    if plain:
        one = len(plain) == 1
        said.append(
            f"{'and ' if made else 'created '}{len(plain)} tensor{'' if one else 's'} that"
            f" require{'s' if one else ''} grad but {'is' if one else 'are'} no nn.Parameter:"
            f" {_listed(lookup, plain)} (parameters() leaves {'it' if one else 'them'} out,"
            f" so an optimizer made from them never updates {'it' if one else 'them'})"
        )
    line = ops[0].construction if ops else None
    where = f"line {line}: " if line else ""
    count = len(ops)
    folded = f"  ({count} torch op{'s' if count != 1 else ''} folded into this step)"
    if not names:  # `nn.Parameter(torch.randn(3))`: the parameter wraps what the op made
        ran = ", ".join(dict.fromkeys(f"{e.op}()" for e in ops))
        return f"{where}{what} ran {ran}{folded}"
    return f"{where}{what} {'; '.join(said)}{folded}"


def _listed(lookup: Lookup, made: Mapping[str, Sequence[int] | None]) -> str:
    """`model.0.weight [4, 3], model.0.bias [4]`, the first few of them."""
    listed = [
        f"{tensor_name(lookup, tid)} {_shape(lookup, tid, shape)}" for tid, shape in made.items()
    ]
    if len(listed) > _SHOWN_PARAMETERS:
        more = len(listed) - _SHOWN_PARAMETERS
        return ", ".join(listed[:_SHOWN_PARAMETERS]) + f", and {more} more"
    return ", ".join(listed)


def why_nothing_drawn(e: TraceEvent, lookup: Lookup, folded: bool = False) -> str | None:
    """Why a step on this event lights nothing (None: an error, which says so itself)."""
    if e.kind == "error":
        return None
    if folded:
        return NOT_BUILT
    if isinstance(e, OpEvent):
        if not e.grad_enabled:
            return INSIDE_FUNCTION if e.function_node(lookup) else NO_GRAD_MODE
        if not e.made:
            if e.op == "requires_grad":  # `b.requires_grad_()`: a leaf now, used by nothing
                return NEEDS_NO_GRAD if "False" in (e.constants or ()) else CUT_OFF
            if e.op in _NEW_TENSOR_LIKE:  # zeros_like(w): w gave only its shape
                return MADE_WITHOUT_GRAD
            needed = e.inputs_need_grad
            if needed is None:  # a trace from before stop 35: the flags at the run's end
                tensors = lookup.tensors
                needed = any(t in tensors and tensors[t].requires_grad for t in e.inputs)
            if needed:
                return NEW_LEAF if e.op == "deepcopy" else NO_GRADIENT
            return NEEDS_NO_GRAD if e.inputs else MADE_WITHOUT_GRAD  # empty(), randn()
        return NOT_KEPT
    if isinstance(e, HistoryBreakEvent):
        kept = e.result is not None and e.result in lookup.tensors  # alive at the end
        return CUT_OFF if kept else NOT_KEPT
    return NOT_SHOWN
