"""What a torch call means for the trace, read from its name and arguments: whether it
writes into a tensor, breaks the history, lets memory escape, or starts a backward pass."""

from __future__ import annotations

import inspect
from typing import Any

import torch

# Calls that turn a tensor into something autograd cannot follow.
HISTORY_BREAKS = {
    "item": "item()",
    "tolist": "tolist()",
    "numpy": "numpy()",
    "__float__": "float()",
    "__int__": "int()",
    "__bool__": "bool()",
    "__index__": "index",
    "__complex__": "complex()",
    "__array__": "numpy array",
    "detach": "detach()",
    "detach_": "detach_()",
}
BACKWARD_CALLS = {
    torch.Tensor.backward: ".backward()",
    torch.autograd.backward: "torch.autograd.backward()",
    torch.autograd.grad: "torch.autograd.grad()",
}
SKIP = {"_record_function_enter_new", "_record_function_exit"}
# In-place operators among the dunders (the other `__x__` names do not write).
INPLACE_DUNDERS = {
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
    "__imod__", "__ipow__", "__imatmul__", "__iand__", "__ior__", "__ixor__",
    "__ilshift__", "__irshift__",
}  # fmt: skip
# In-place by name, yet they change a tensor's flags or its view of memory, never the
# numbers in it: no other tensor on that memory changes (`d.requires_grad_()` of `d =
# x.detach()` leaves x as it was), and after `set_` the memory is another's.
METADATA_ONLY = {
    "requires_grad_", "set_", "share_memory_", "rename_", "detach_", "as_strided_",
    "resize_", "resize_as_", "squeeze_", "unsqueeze_", "t_", "transpose_", "swapdims_",
    "swapaxes_", "retain_grad",
}  # fmt: skip
# Calls that write into inputs they do not return, without an in-place name: a training
# batch norm's running statistics (`F.batch_norm(x, running_mean, running_var, ...)`),
# name -> (the argument that makes it write them, the arguments it writes).
# Torch bumps no version counter there: `written_inputs` says which they are.
WRITES_INPUTS = {
    "batch_norm": ("training", ("running_mean", "running_var")),
    "instance_norm": ("use_input_stats", ("running_mean", "running_var")),
    # With max_norm, the rows looked up are renormalised in the weight itself
    # (`torch.embedding_renorm_`, run inside with every mode off).
    "embedding": ("max_norm", ("weight",)),
    "embedding_bag": ("max_norm", ("weight",)),
}
# Calls after which a tensor's memory can be written from outside torch.
ESCAPES = {
    "numpy", "__array__", "__dlpack__", "untyped_storage", "storage", "_typed_storage",
    "data_ptr", "as_tensor", "asarray",  # the last two may share a NumPy array's memory
    "from_numpy", "frombuffer", "from_dlpack",  # so do these, always
}  # fmt: skip


_INPLACE_ARGUMENT: dict[Any, int | None] = {}  # func -> position of its `inplace` parameter


def _inplace_position(func: Any) -> int | None:
    """Where `func` takes an `inplace` flag positionally (`F.relu(x, True)`), if it does."""
    try:
        return _INPLACE_ARGUMENT[func]
    except KeyError:
        pass
    except TypeError:  # an unhashable callable
        return None
    try:
        names = list(inspect.signature(func).parameters)
        position = names.index("inplace") if "inplace" in names else None
    except (TypeError, ValueError):  # a builtin without a signature
        position = None
    _INPLACE_ARGUMENT[func] = position
    return position


def in_place(func: Any, name: str, args: tuple, kwargs: dict) -> bool:
    """Whether a torch call writes into one of its inputs: `add_`, `x[i] = …`, `x += …`,
    or a function asked to with `inplace=True` (`F.relu(x, inplace=True)`)."""
    if name.endswith("_"):
        return not name.endswith("__") or name in INPLACE_DUNDERS
    if kwargs.get("inplace") is True:
        return True
    position = _inplace_position(func)
    return position is not None and len(args) > position and args[position] is True


def flatten(values: Any) -> list[Any]:
    """Tensors and other values from args/results, one level into lists, tuples, dicts."""
    out: list[Any] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(v)
        elif isinstance(v, dict):
            out.extend(v.values())
        else:
            out.append(v)
    return out


def tensors_in(values: Any) -> list[torch.Tensor]:
    return [v for v in flatten(values) if isinstance(v, torch.Tensor)]


def written_inputs(func: Any, args: tuple, kwargs: dict) -> list[torch.Tensor] | None:
    """The inputs a WRITES_INPUTS call wrote in place: a batch or instance norm's running
    mean and variance when it normalised with the batch's own statistics (and a momentum
    that moves them), an embedding's weight when it renormalised rows to `max_norm`."""
    flag, written = WRITES_INPUTS[getattr(func, "__name__", "")]
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):  # not the functional form (a builtin without one)
        return None
    bound.apply_defaults()
    given = bound.arguments
    on = given.get(flag) is not None if flag == "max_norm" else bool(given.get(flag))
    if not on or given.get("momentum") == 0:  # momentum 0: the statistics stay put
        return None
    found = [given.get(k) for k in written]
    return [t for t in found if isinstance(t, torch.Tensor)] or None
