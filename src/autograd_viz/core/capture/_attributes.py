"""What reading or setting a tensor's `.grad` or `.data` means for the trace, and the
history breaks (`.detach()`, `.data`, `.item()`) that cut a tensor from its graph."""

from __future__ import annotations

from typing import Any

import torch

from autograd_viz.core.capture._naming import torch_building_a_module
from autograd_viz.core.capture._recording import Recording
from autograd_viz.core.capture._registry import grad_fn_of
from autograd_viz.core.trace import json_number


def history_break(rec: Recording, how: str, t: Any, result: Any) -> None:
    """`t` (if it requires grad) gave a result autograd cannot follow: `.detach()`,
    `.data`, `.item()`, `.numpy()`."""
    if not isinstance(t, torch.Tensor):
        return
    with rec.own_reads():
        if not t.requires_grad:  # nothing to cut: no autograd history runs through it
            if isinstance(result, torch.Tensor) and result is not t:
                rec.quiet_break(t, result, how)
            return
        if torch_building_a_module(rec.filename):
            # Part of building the module (a deep copy of a layer), not a cut of the user's:
            # each `t12.data` was a step of its own between the construction's steps.
            return
        event: dict[str, Any] = {
            "kind": "history_break",
            "line": rec.user_line(),
            "how": how,
            "tensor": rec.tid(t),
            "grad_fn": rec.registry.node_id(grad_fn_of(t)),
        }
        if isinstance(result, torch.Tensor):
            event["result"] = rec.tid(result)
            event["result_requires_grad"] = bool(result.requires_grad)
            event["result_value"] = made = rec.value(result)
            if not result.requires_grad:  # drawn cut off, where it feeds the graph
                rec.registry.kept_constant(result, event["result"], made)
        elif isinstance(result, (int, float, bool, complex)):
            event["value"] = json_number(result)
        rec.emit(event)


def attribute(rec: Recording, func: Any, name: str, args: tuple, kwargs: dict) -> Any:
    """Reading or setting a tensor's `.grad` or `.data`: whose grad a tensor is, a `.data`
    history break, a grad reset or assignment, a `.data =` update."""
    attr = getattr(getattr(func, "__self__", None), "__name__", "")
    owner = args[0] if args else None
    if not isinstance(owner, torch.Tensor) or attr not in ("grad", "data"):
        return func(*args, **kwargs)
    if name == "__get__":
        result = func(*args, **kwargs)
        if attr == "grad" and result is not None:
            rec.own_grad(result, rec.tid(owner))
        elif attr == "data":
            leaf = rec.grad_owner(owner)
            if leaf is not None:  # x.grad.data is still x's grad storage
                rec.own_grad(result, leaf)
            history_break(rec, ".data", owner, result)
        return result
    if name == "__set__" and len(args) >= 2:
        with rec.own_reads():
            if _sets_itself(attr, owner, args[1]):
                # `w.grad += 1`, `w.data -= lr * g`: the in-place op before it wrote
                # the memory (its step shows that); setting it back changes nothing.
                return func(*args, **kwargs)
            before = rec.recall(owner.grad if attr == "grad" else owner)
        result = func(*args, **kwargs)
        if attr == "data":  # the tensor now shows other memory, same version counter
            rec.snapshots.changed()
        with rec.own_reads():
            _record_assignment(rec, attr, owner, args[1], before)
        return result
    return func(*args, **kwargs)


def _record_assignment(
    rec: Recording, attr: str, owner: torch.Tensor, value: Any, before: Any
) -> None:
    line = rec.user_line()
    if attr == "grad" and value is None:
        if before is not None:
            rec.emit(
                {
                    "kind": "grad_reset",
                    "line": line,
                    "tensor": rec.tid(owner),
                    "how": ".grad = None",
                    "before": before,
                    "after": None,
                }
            )
    elif attr == "grad":
        rec.own_grad(value, rec.tid(owner))
        rec.emit(
            {
                "kind": "grad_assign",
                "line": line,
                "tensor": rec.tid(owner),
                "before": before,
                "after": rec.recall(value),
            }
        )
    else:
        leaf = rec.grad_owner(owner) if rec.grads_known else None
        if leaf is not None:  # `w.grad.data = t`, as `Module.half()` and `.to()` do too
            rec.emit(
                {
                    "kind": "grad_assign",
                    "line": line,
                    "tensor": leaf,
                    "before": before,
                    "after": rec.recall(owner),
                }
            )
            return
        event = {
            "kind": "param_update",
            "line": line,
            "tensor": rec.tid(owner),
            "how": ".data =",
            "before": before,
            "after": rec.recall(owner),
        }
        if rec.registry.unwritten_empty(owner):  # a lazy module's parameter materialised
            event["after"], event["uninitialised"] = None, True
        rec.emit(event)


def _sets_itself(attr: str, owner: torch.Tensor, value: Any) -> bool:
    """Whether `owner.<attr> = value` leaves everything as it was: `.grad` set to the very
    tensor it holds, or `.data` to a tensor on the same memory, seen the same way."""
    if attr == "grad":
        return value is not None and value is owner.grad
    if not isinstance(value, torch.Tensor):
        return False
    try:
        return (
            value.untyped_storage().data_ptr() == owner.untyped_storage().data_ptr()
            and value.storage_offset() == owner.storage_offset()
            and value.shape == owner.shape
            and value.stride() == owner.stride()
            and value.dtype == owner.dtype
        )
    except Exception:  # no storage of its own (a wrapper subclass, meta): say it changed
        return False
