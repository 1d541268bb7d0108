"""Inputs an op is the first of the run to meet: made where no mode sees (`nn.Parameter(t)`,
`copy.deepcopy`, a gradient handed to a hook, `torch.from_numpy`), so no event has said
what they hold, what the user calls them, or whether NumPy shares their memory."""

from __future__ import annotations

from types import FrameType
from typing import Any

import torch

from autograd_viz.core.capture._calls import tensors_in
from autograd_viz.core.capture._naming import local_names
from autograd_viz.core.capture._recording import Recording
from autograd_viz.core.trace.naming import cut_name


def first_met(
    rec: Recording,
    args: tuple,
    kwargs: dict,
    outputs: list[torch.Tensor],
    seen_before: int,
    caller: FrameType,
) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
    """The values of inputs this op is the first to meet (ids from `seen_before` on):
    tensors made where no mode sees, such as `nn.Parameter(t)`, a `copy.deepcopy`'d
    model's weights or a grad a hook was handed, had no value until something wrote
    them (an output is left out: an in-place op's value is its own); and the user's
    local variables in `caller` that hold them (`g` in a custom backward's `return g * b`)."""
    known = rec.registry.known_id
    found: dict[str, Any] = {}
    fresh: dict[str, torch.Tensor] = {}
    for t in tensors_in(args) + tensors_in(list(kwargs.values())):
        tid = known(t)
        if tid is not None and int(tid[1:]) >= seen_before:
            fresh[tid] = t
            if not any(t is o for o in outputs):
                found[tid] = rec.value(t)
    names = local_names(caller, rec.filename, fresh) if fresh else {}
    for tid, t in fresh.items():
        quiet = None if tid in names else rec.quiet_source(t)
        if quiet is not None:  # `a.detach() * 2`, a needing no grad: `a.detach()`, not t1
            source, how = quiet
            source_name = _local_of(caller, rec.filename, source)
            if source_name is not None:
                names[tid] = cut_name(source_name, how)
    return found or None, names or None


def _local_of(frame: FrameType | None, filename: str, t: torch.Tensor) -> str | None:
    """The user's local holding `t`: in the frame that made the call, else in the user's
    innermost frame under it (`vjp(f, x, v)` detaches x inside torch: `x.detach()`)."""
    while frame is not None:
        found = local_names(frame, filename, {"": t}).get("")
        if found is not None or frame.f_code.co_filename == filename:
            return found
        frame = frame.f_back
    return None


def foreign_inputs(rec: Recording, args: tuple) -> None:
    """A tensor seen for the first time as an input may hold memory torch did not
    allocate (`torch.from_numpy`, `frombuffer`: calls no mode sees), which NumPy can
    write without a version counter noticing: then no snapshot may be shared."""
    for t in tensors_in(args):
        try:
            foreign = not t.untyped_storage().resizable()
        except Exception:  # a tensor without a storage of its own (a wrapper, meta)
            continue
        if foreign:
            rec.snapshots.escaped()
            return


_wrapped = torch._C._functorch.is_functorch_wrapped_tensor


def named_in_transform(
    rec: Recording, args: tuple, kwargs: dict, caller: FrameType, named: dict[str, str] | None
) -> dict[str, str] | None:
    """`named` with the user's locals holding the transform's wrappers this op takes
    (`x` inside `def f(x)` of `grad(f)(x)`): torch.func made them in its own code, where
    no variable held them, and captions read `sin(t1)`. Each is looked for until found."""
    found = rec.registry.transform_names
    wrapped = {
        tid: t
        for t in tensors_in(args) + tensors_in(list(kwargs.values()))
        if _wrapped(t) and (tid := rec.tid(t)) not in found
    }
    locals_ = local_names(caller, rec.filename, wrapped) if wrapped else {}
    if not locals_:
        return named
    found.update(locals_)
    return {**(named or {}), **locals_}
