"""What a trace lists: a tensor's numbers, its tensors and its autograd nodes.

These sit below `trace.py`, the event classes and the trace index, so that all of them
can use one `TensorValue` without importing each other in a circle. `trace.py`
re-exports them: `from autograd_viz.core.trace import TensorValue` keeps working.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


# Slots: a trace's events hold tens of thousands of these; without a __dict__ each is a
# third of the size and one object fewer for the collector to scan.
@dataclass(slots=True)
class TensorValue:
    """A tensor's numbers: whole when small, summarised when big.

    The same class carries a tensor's value in the trace's tensor list and in events;
    only their JSON differs (docs/trace.md, "Values"): `to_dict` writes the tensor form,
    `to_event_dict` the event form.
    """

    shape: list[int]
    data: Any  # nested lists / a number, or None when summarised
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    norm: float | None = None
    first: Sequence[Any] = field(default_factory=list)  # () in events, which carry none
    # Events only. A gradient batched inside the engine (`is_grads_batched=True`) has a
    # shape but no readable numbers; inside `vmap` the leading `batch_dims` are the batch.
    batched: bool = False
    batch_dims: int = 0
    # Tensor list only, in a trace the app's kernel sent: `data` stayed in the kernel, which
    # hands it over on request (core/kernel/held.py); this names the run that holds it.
    held: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form in the trace's tensor list (`value`, `grad`)."""
        out = {
            "shape": self.shape,
            "data": self.data,
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
            "norm": self.norm,
            "first": self.first,
        }
        if self.held is not None:
            out["held"] = self.held
        return out

    @classmethod
    def from_event_dict(cls, data: dict[str, Any]) -> TensorValue:
        """A value as an event carries it (`{shape, data}` or a summary; see docs/trace.md)."""
        if len(data) == 2 and "data" in data:  # the common `{shape, data}`: fewer look-ups
            return cls(data.get("shape", []), data["data"], None, None, None, None, ())
        return cls(
            data.get("shape", []),
            data.get("data"),
            data.get("min"),
            data.get("max"),
            data.get("mean"),
            data.get("norm"),
            (),
            data.get("batched", False),
            data.get("batch_dims", 0),
        )

    def to_event_dict(self) -> dict[str, Any]:
        """The JSON form inside an event: the summary keys only when summarised, no `first`."""
        out: dict[str, Any] = {"shape": self.shape, "data": self.data}
        if self.min is not None:  # the tracer writes all four or none
            out["min"], out["max"], out["mean"], out["norm"] = (
                self.min, self.max, self.mean, self.norm,
            )  # fmt: skip
        if self.batched:
            out["batched"] = True
        if self.batch_dims:
            out["batch_dims"] = self.batch_dims
        return out


@dataclass
class TensorInfo:
    """One tensor as autograd sees it."""

    id: str
    name: str | None
    shape: list[int]
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    grad_fn: str | None  # id of the node that produced it
    value: TensorValue | None
    grad: TensorValue | None  # None exactly where PyTorch's .grad is None
    output_nr: int = 0  # which output of grad_fn this tensor is
    # Other variables bound to this same tensor object (`c = b.mul_(3)` makes c an alias
    # of b; so does a leftover `for p in model.parameters()` loop variable).
    aliases: list[str] = field(default_factory=list)
    # Made by `empty()` and never touched again: its memory holds whatever was there, which
    # is not a value (`value` is None). Written only when true.
    uninitialised: bool = False
    # Gone before the run ended: a tensor without grad that fed the graph, bound to a
    # local name (`eps = torch.randn_like(std)` inside forward) or cut by `.detach()`;
    # `value` is what the last event that wrote it recorded. Written only when true.
    freed: bool = False
    # A module's buffer (`bn.running_mean`), named by its path: listed only when the run
    # used it, and not drawn as an input of the graph. Written only when true.
    buffer: bool = False
    # A tensor no event met that is, at the end of the run, this leaf's `.grad` (`g =
    # w.grad`): its values are the leaf's grad's since that grad object was made.
    grad_of: str | None = None
    # For a leaf that requires grad: whether it is an `nn.Parameter` (False for
    # `self.w = torch.ones(2, requires_grad=True)`, which `m.parameters()` does not list,
    # so no optimizer built from it updates it). None for other tensors, and in traces
    # from before the key (stop 35).
    parameter: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (docs/trace.md, "Tensor"); lists are shared, not copied."""
        out = self._dict()
        if self.uninitialised:
            out["uninitialised"] = True
        if self.freed:
            out["freed"] = True
        if self.buffer:
            out["buffer"] = True
        if self.grad_of is not None:
            out["grad_of"] = self.grad_of
        if self.parameter is not None:
            out["parameter"] = self.parameter
        return out

    def _dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "shape": self.shape,
            "dtype": self.dtype,
            "device": self.device,
            "requires_grad": self.requires_grad,
            "is_leaf": self.is_leaf,
            "retains_grad": self.retains_grad,
            "grad_fn": self.grad_fn,
            "value": None if self.value is None else self.value.to_dict(),
            "grad": None if self.grad is None else self.grad.to_dict(),
            "output_nr": self.output_nr,
            "aliases": self.aliases,
        }


@dataclass
class NodeInfo:
    """One node of the autograd graph (a grad_fn such as MulBackward0)."""

    id: str
    name: str
    tensor: str | None  # id of the tensor this node produced, when known
    variable: str | None  # for AccumulateGrad: the leaf tensor it writes .grad into
    next: list[str]  # ids of the nodes it passes gradients to (next_functions)
    next_nr: list[int] = field(default_factory=list)  # output index of each `next` node
    # For each `next` entry, its position in next_functions: the index of the gradient
    # this node sends there among a node event's `grads_out`.
    next_input: list[int] = field(default_factory=list)
    # The tensors it saved for its backward, by torch's name (`grad_fn._saved_<name>`;
    # `tensors` for a custom Function's `ctx.save_for_backward`): what a backward that
    # does not retain the graph frees. None where the trace does not say (written before
    # the key existed); [] for a node that saved none (AddBackward0, ViewBackward0).
    saved: list[str] | None = None
    # Each tensor held in those slots: name, shape, dtype, bytes (of the storage the node
    # keeps alive), storage (an id shared by every saved tensor on one memory) and tensor
    # (the run's tensor it is, when the run saw it; None for one made inside torch).
    # Empty where the trace does not say.
    saved_tensors: list[dict[str, Any]] = field(default_factory=list)
    # The number of events recorded when the node got its id (the op that made it comes
    # next) and, for a node Python let go of before the run ended (a graph dropped without
    # a backward), when that happened. Recorded for nodes that saved tensors; None else.
    made_at: int | None = None
    released_at: int | None = None
    # Hooks the code put on the tensor this node's gradient arrives for (`h.register_hook`
    # on h = x * w: MulBackward0's; on a leaf: its AccumulateGrad's), as {tensor, line,
    # output}: the gradient the node receives is what they returned. Empty when none.
    hooks: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (docs/trace.md, "Node"); `saved` and the keys after it only where
        they are known."""
        # Not dataclasses.asdict, which deep-copies every list: for 8,000 nodes that was
        # 0.4 s of the time from a run's end to its trace on the wire.
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "tensor": self.tensor,
            "variable": self.variable,
            "next": self.next,
            "next_nr": self.next_nr,
            "next_input": self.next_input,
        }
        if self.saved is not None:  # an older trace's node stays as it was written
            out["saved"] = self.saved
        if self.saved_tensors:
            out["saved_tensors"] = self.saved_tensors
        if self.made_at is not None:
            out["made_at"] = self.made_at
        if self.released_at is not None:
            out["released_at"] = self.released_at
        if self.hooks:
            out["hooks"] = self.hooks
        return out
