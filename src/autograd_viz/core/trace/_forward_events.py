"""The typed events of the forward side of a run: ops and history breaks (how a run ends,
its error or its end, is in _run_events.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from autograd_viz.core.trace._event_base import (
    Lookup,
    TraceEvent,
    ValueChange,
    ValueMemo,
    names_of,
    quick_maker,
    read_values,
    read_written,
    tensor_name,
    write_values,
    write_written,
)
from autograd_viz.core.trace._records import TensorValue
from autograd_viz.core.trace.value_text import UNINITIALISED, format_number, show_value

# Tensor attributes that are views (`m.T`, `z.real`): the tracer records reading one as an
# op of that name, captioned as the attribute it was (`m.T`, not `T(m)`).
VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})


@dataclass(frozen=True, slots=True)
class CompiledCall:
    """What one call of `torch.compile`d code ran (an op event's `compiled`)."""

    ops: int  # ops the call ran that torch's function dispatch saw
    nodes: tuple[str, ...]  # the autograd nodes those ops made
    feeds: Mapping[str, tuple[str, ...]]  # input tensor id -> the nodes that took it

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompiledCall:
        """From the JSON `compiled` object."""
        feeds = data.get("feeds") or {}
        return cls(
            data.get("ops", 0),
            tuple(data.get("nodes", ())),
            {tid: tuple(nodes) for tid, nodes in feeds.items()},
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON `compiled` object."""
        return {
            "ops": self.ops,
            "nodes": list(self.nodes),
            "feeds": {tid: list(nodes) for tid, nodes in self.feeds.items()},
        }


_PASSES_SHOWN = 4  # a `for` loop's pieces a caption shows before "… (N in all)"


@dataclass(frozen=True, slots=True)
class OpEvent(TraceEvent):
    """A torch function, tensor method or operator returned a tensor.

    Its id lists are the event dict's own, shared rather than copied (a trace holds tens
    of thousands of ops, and a copy per list was most of what typing one cost): read
    them, never change them.
    """

    kind: ClassVar[str] = "op"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {
        "op", "inputs", "outputs", "grad_fn", "grad_enabled", "inplace", "modules", "values",
        "constants", "in_backward", "compiled", "assigned", "construction", "uninitialised",
        "grad_of", "calls", "written", "updated", "seen", "input_names", "inputs_need_grad",
    }  # fmt: skip

    op: str
    inputs: Sequence[str]
    outputs: Sequence[str]
    grad_fn: Sequence[str | None]  # the node each output got (None: untracked)
    grad_enabled: bool
    inplace: bool
    modules: Sequence[str]  # the nn.Module call stack, outermost first
    values: tuple[TensorValue | None, ...]  # one per output
    constants: Sequence[str] | None = None  # numbers passed in (absent when none)
    in_backward: bool | None = None  # True inside a backward pass (absent otherwise)
    compiled: CompiledCall | None = None  # on a call of compiled code
    assigned: str | None = None  # the variable the user's line bound the result to
    construction: int | None = None  # the statement building an nn.Module it ran in
    uninitialised: bool | None = None  # True: `empty()` memory, its numbers not recorded
    grad_of: Mapping[str, str] | None = None  # input id -> the leaf whose .grad it is
    calls: Sequence[int] | None = None  # per `modules` entry, which call of it this is
    # An in-place write's other tensors on the same memory (its base, the base's other
    # views): id -> value after the write.
    written: Mapping[str, TensorValue] | None = None
    # Inputs the call wrote without returning them (`F.batch_norm`'s running statistics):
    # id -> value after the call.
    updated: Mapping[str, TensorValue] | None = None
    # Inputs first met here, made where no mode sees (`nn.Parameter(t)`, `copy.deepcopy`):
    # id -> value as the call found it.
    seen: Mapping[str, TensorValue] | None = None
    # The user's locals holding inputs first met here (`g` in `return g * b`): id -> name.
    input_names: Mapping[str, str] | None = None
    # On an op that ran with grad enabled and made no node: whether any tensor input
    # required grad then (a later `requires_grad_()` does not change what it was).
    inputs_need_grad: bool | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> OpEvent:
        """From the JSON form."""
        compiled = data.get("compiled")
        return _make_op(
            cls,
            data.get("line"),
            data.get("op", ""),
            data.get("inputs", ()),
            data.get("outputs", ()),
            data.get("grad_fn", ()),
            data.get("grad_enabled", True),
            data.get("inplace", False),
            data.get("modules", ()),
            # No memo: the tracer takes each op's snapshots afresh, never shared ones.
            read_values(data.get("values")),
            data.get("constants"),
            data.get("in_backward"),
            None if compiled is None else CompiledCall.from_dict(compiled),
            data.get("assigned"),
            data.get("construction"),
            data.get("uninitialised"),
            data.get("grad_of"),
            data.get("calls"),
            read_written(data.get("written")),
            read_written(data.get("updated")),
            read_written(data.get("seen")),
            data.get("input_names"),
            data.get("inputs_need_grad"),
            source=data,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {
            "kind": "op",
            "line": self.line,
            "op": self.op,
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "grad_fn": list(self.grad_fn),
            "grad_enabled": self.grad_enabled,
            "inplace": self.inplace,
            "modules": list(self.modules),
            "values": write_values(self.values),
        }
        if self.constants is not None:
            out["constants"] = list(self.constants)
        if self.in_backward is not None:
            out["in_backward"] = self.in_backward
        if self.compiled is not None:
            out["compiled"] = self.compiled.to_dict()
        if self.assigned is not None:
            out["assigned"] = self.assigned
        if self.construction is not None:
            out["construction"] = self.construction
        if self.uninitialised is not None:
            out["uninitialised"] = self.uninitialised
        if self.grad_of is not None:
            out["grad_of"] = dict(self.grad_of)
        if self.written is not None:
            out["written"] = write_written(self.written)
        if self.updated is not None:
            out["updated"] = write_written(self.updated)
        if self.seen is not None:
            out["seen"] = write_written(self.seen)
        if self.input_names is not None:
            out["input_names"] = dict(self.input_names)
        if self.calls is not None:
            out["calls"] = list(self.calls)
        if self.inputs_need_grad is not None:
            out["inputs_need_grad"] = self.inputs_need_grad
        return self._finish(out)

    @property
    def made(self) -> tuple[str, ...]:
        """The nodes the op made for its outputs."""
        return tuple(n for n in self.grad_fn if n)

    def tensor_ids(self) -> tuple[str, ...]:
        """Its inputs, then its outputs."""
        return (*self.inputs, *self.outputs)

    def node_ids(self) -> tuple[str, ...]:
        """The nodes it made (a compiled call's own nodes too)."""
        inside = self.compiled.nodes if self.compiled is not None else ()
        return (*self.made, *inside)

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """Its outputs and the nodes it made; a leaf's AccumulateGrad joins the picture
        with the first op that uses the leaf, so it lights up then too."""
        nodes = lookup.nodes
        made = self.made
        joined = [
            nxt
            for n in made
            if n in nodes
            for nxt in nodes[n].next
            if nxt in nodes and nodes[nxt].variable
        ]
        inside = self.compiled.nodes if self.compiled is not None else ()
        # An in-place op on a leaf's .grad (`w.grad.clamp_(-2, 2)`) changes that leaf's .grad.
        owners = (
            [self.grad_of[t] for t in self.outputs if t in self.grad_of]
            if (self.inplace and self.grad_of)
            else []
        )
        written, updated = self.written or (), self.updated or ()
        return (*self.outputs, *made, *inside, *joined, *owners, *written, *updated)

    def caption(self, lookup: Lookup) -> str:
        """`line 6: mul(w, x) → y = 6.0`; `unbind(X) → row, pass by pass: [1.0, 2.0],
        [3.0, 4.0]` for what a `for` loop walks."""
        shown = [
            (tensor_name(lookup, t), UNINITIALISED if self.uninitialised else show_value(v))
            for t, v in zip(self.outputs, self.values, strict=False)
        ]
        if len(shown) > 1 and self.assigned and {n for n, _ in shown} == {self.assigned}:
            more = f", … ({len(shown)} in all)" if len(shown) > _PASSES_SHOWN else ""
            outs = f"{self.assigned}, pass by pass: " + ", ".join(
                v for _, v in shown[:_PASSES_SHOWN]
            )
            outs += more
        else:
            outs = ", ".join(f"{n} = {v}" for n, v in shown)
        args = ", ".join(tensor_name(lookup, t) for t in self.inputs)
        if self.op == "requires_grad" and self.constants:  # which way: on or off
            args += f", {self.constants[0]}"
        untracked = ""
        if not self.grad_enabled:
            node = self.function_node(lookup)
            untracked = (
                f"  (inside a custom autograd.Function: recorded as one {node})"
                if node
                else "  (no_grad: not tracked)"
            )
        call = f"{args}.{self.op}" if self.op in VIEW_ATTRIBUTES else f"{self.op}({args})"
        return f"{self.where}{call} → {outs}{untracked}{self._also(lookup)}"

    def function_node(self, lookup: Lookup) -> str | None:
        """For an op run with grad off inside a custom `autograd.Function`'s forward (or
        torch's own: a reentrant checkpoint, a full backward hook's), the Function's node
        that torch attached to its output afterwards (`SqBackward`); else None. Torch's
        built-in nodes end in a number (`MulBackward0`), a Function's do not."""
        tensors, nodes = lookup.tensors, lookup.nodes
        for t in self.outputs:
            info = tensors.get(t)
            if info is not None:
                node = nodes.get(info.grad_fn) if info.grad_fn else None
            else:  # used, not kept (`Double.apply(x).sum()`): the node its user was sent to
                node = nodes.get(_node_behind(lookup, t) or "")
            if node is not None and node.name.endswith("Backward"):
                return node.name
        return None

    def _also(self, lookup: Lookup) -> str:
        """`  · also changes w (same memory)`: what an in-place write wrote besides its
        output (a view's base, `w` under `w.detach()` or `w.data`); `  · updates
        bn.running_mean, bn.running_var`: inputs the call wrote."""
        said = ""
        if self.updated:
            said += f"  · updates {names_of(lookup, self.updated)}"
        if self.written:
            said += f"  · also changes {names_of(lookup, self.written)} (same memory)"
        return said

    def changes(self) -> tuple[ValueChange, ...]:
        """Each output's value, computed now; an in-place op on a leaf's `.grad`
        (`w.grad.clamp_(-1, 1)`, clip_grad_norm_'s `_foreach_mul_`) changes that `.grad`."""
        values = tuple(
            ValueChange(t, False, None, v) for t, v in zip(self.outputs, self.values, strict=False)
        )
        for extra in (self.seen, self.written, self.updated):
            # Inputs first met here; what `r[0].add_(1)` wrote of r's base q and q's other
            # view r; a batch norm's running statistics.
            if extra:
                values += tuple(ValueChange(t, False, None, v) for t, v in extra.items())
        if not (self.inplace and self.grad_of):
            return values
        grads = tuple(
            ValueChange(self.grad_of[t], True, None, v)
            for t, v in zip(self.outputs, self.values, strict=False)
            if t in self.grad_of
        )
        return values + grads


_make_op = quick_maker(OpEvent)


@dataclass(frozen=True, slots=True)
class HistoryBreakEvent(TraceEvent):
    """A tensor that requires grad became something autograd cannot follow."""

    kind: ClassVar[str] = "history_break"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {
        "how", "tensor", "grad_fn", "result", "result_requires_grad", "value", "result_value",
    }  # fmt: skip

    how: str  # item(), detach(), .data, …
    tensor: str | None
    grad_fn: str | None
    result: str | None = None  # a tensor result's id (absent for a Python number)
    result_requires_grad: bool | None = None
    value: Any = None  # a Python number result (absent for a tensor)
    result_value: TensorValue | None = None  # a tensor result's value when it was made

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> HistoryBreakEvent:
        """From the JSON form."""
        made = data.get("result_value")
        return cls(
            data.get("line"),
            data.get("how", ""),
            data.get("tensor"),
            data.get("grad_fn"),
            data.get("result"),
            data.get("result_requires_grad"),
            data.get("value"),
            TensorValue.from_event_dict(made) if made is not None else None,
            source=data,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {
            "kind": "history_break",
            "line": self.line,
            "how": self.how,
            "tensor": self.tensor,
            "grad_fn": self.grad_fn,
        }
        if self.result is not None:
            out["result"] = self.result
        if self.result_requires_grad is not None:
            out["result_requires_grad"] = self.result_requires_grad
        if self.value is not None:
            out["value"] = self.value
        if self.result_value is not None:
            out["result_value"] = self.result_value.to_event_dict()
        return self._finish(out)

    def changes(self) -> tuple[ValueChange, ...]:
        """The tensor result's value from this step on (`d = w.detach()`: d is w's)."""
        if self.result is None or self.result_value is None:
            return ()
        return (ValueChange(self.result, False, None, self.result_value),)

    def tensor_ids(self) -> tuple[str, ...]:
        """The tensor cut from its history and the tensor result, if any."""
        return tuple(t for t in (self.tensor, self.result) if t)

    def node_ids(self) -> tuple[str, ...]:
        """The node behind the tensor that was cut."""
        return (self.grad_fn,) if self.grad_fn else ()

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The tensor and its result."""
        return (self.tensor, self.result)

    def caption(self, lookup: Lookup) -> str:
        """`line 4: y.item() = 6.0 — the result has no autograd history`; a tensor result
        a variable holds is named with its value (`y.detach() → z = [2.0, 4.0]`: z was
        first met in the next step's `mul(z, x)`)."""
        result = f" = {format_number(self.value)}" if self.value is not None else ""
        how = self.how if self.how.startswith(".") else f".{self.how}"  # ".data" has its dot
        cut = f"{tensor_name(lookup, self.tensor)}{how}"
        if self.result and self.result_value is not None:
            name = tensor_name(lookup, self.result)
            if name not in (cut, self.result):
                result = f" → {name} = {show_value(self.result_value)}"
        return f"{self.where}{cut}{result} — the result has no autograd history"


def _node_behind(lookup: Lookup, tensor_id: str) -> str | None:
    """The node autograd put behind a tensor no variable kept, read off the first op that
    used it with grad on: that op's node sends the gradient for each tensor input to the
    node in the same slot of its `next` (None for a bare lookup, which has no events)."""
    of_tensor = getattr(lookup, "of_tensor", None)
    if of_tensor is None:
        return None
    for position in of_tensor(tensor_id):
        e = lookup.event(position)  # type: ignore[attr-defined]
        if not isinstance(e, OpEvent) or tensor_id not in e.inputs or not any(e.grad_fn):
            continue
        node = lookup.nodes.get(e.grad_fn[0] or "")
        if node is None:
            continue
        slot = e.inputs.index(tensor_id)
        for target, at in zip(node.next, node.next_input or range(len(node.next)), strict=False):
            if at == slot:
                return target
        return None
    return None
