"""The typed events that change a `.grad` or a value outside a backward pass (a reset,
an assignment, an optimizer step), and the fields every change event shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from autograd_viz.core.trace._event_base import (
    ChangeEvent,
    Lookup,
    TraceEvent,
    ValueChange,
    ValueMemo,
    names_of,
    read_value,
    read_written,
    tensor_name,
    write_value,
    write_written,
)
from autograd_viz.core.trace._records import TensorValue
from autograd_viz.core.trace.value_text import UNINITIALISED, show_change, show_value


def read_change(data: Mapping[str, Any], memo: ValueMemo | None) -> tuple:
    """line, tensor, before, after: the fields every change event starts with."""
    return (
        data.get("line"),
        data.get("tensor", ""),
        read_value(data.get("before"), memo),
        read_value(data.get("after"), memo),
    )


def change_dict(e: ChangeEvent, how: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": e.kind, "line": e.line, "tensor": e.tensor}
    if how is not None:
        out["how"] = how
    out["before"] = write_value(e.before)
    out["after"] = write_value(e.after)
    return out


@dataclass(frozen=True, slots=True)
class GradResetEvent(ChangeEvent):
    """A leaf's `.grad` was zeroed or dropped (also by `optimizer.zero_grad()`)."""

    kind: ClassVar[str] = "grad_reset"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {"tensor", "how", "before", "after"}

    how: str  # .grad.zero_(), .grad = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> GradResetEvent:
        """From the JSON form."""
        how = data.get("how", ".grad =")
        return cls(*read_change(data, memo), how, source=data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return self._finish(change_dict(self, self.how))

    def caption(self, lookup: Lookup) -> str:
        """`line 9: w.grad.zero_() — .grad 8.0 → 0.0`."""
        change = show_change(self.before, self.after)
        return f"{self.where}{tensor_name(lookup, self.tensor)}{self.how} — .grad {change}"


@dataclass(frozen=True, slots=True)
class GradAssignEvent(ChangeEvent):
    """`.grad` was set to a tensor."""

    kind: ClassVar[str] = "grad_assign"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {"tensor", "before", "after"}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> GradAssignEvent:
        """From the JSON form."""
        return cls(*read_change(data, memo), source=data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return self._finish(change_dict(self))

    def caption(self, lookup: Lookup) -> str:
        """`line 5: w.grad set — .grad None → 1.0`."""
        change = show_change(self.before, self.after)
        return f"{self.where}{tensor_name(lookup, self.tensor)}.grad set — .grad {change}"


@dataclass(frozen=True, slots=True)
class ParamUpdateEvent(ChangeEvent):
    """An optimizer step or a `.data` assignment changed a tensor's value."""

    kind: ClassVar[str] = "param_update"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {
        "tensor", "how", "before", "after", "written", "uninitialised",
    }  # fmt: skip
    GRAD: ClassVar[bool] = False

    how: str  # SGD.step(), .data =
    # Other tensors on the changed memory (a weight tied by `nn.Parameter(w.t())`): id ->
    # value after the change.
    written: Mapping[str, TensorValue] | None = None
    # True: `.data =` memory `empty()` made and nothing set (a lazy module's parameter
    # materialised), whose numbers are not recorded (`after` is null).
    uninitialised: bool | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> ParamUpdateEvent:
        """From the JSON form."""
        how = data.get("how", "")
        shared = read_written(data.get("written"))
        unset = data.get("uninitialised")
        return cls(*read_change(data, memo), how, shared, unset, source=data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out = change_dict(self, self.how)
        if self.written is not None:
            out["written"] = write_written(self.written)
        if self.uninitialised is not None:
            out["uninitialised"] = self.uninitialised
        return self._finish(out)

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The tensor it changes, and those on the same memory."""
        return (self.tensor, *(self.written or ()))

    def changes(self) -> tuple[ValueChange, ...]:
        """The tensor's value, and the values of those on the same memory."""
        mine = ValueChange(self.tensor, False, self.before, self.after)
        shared = self.written or {}
        return (mine, *(ValueChange(t, False, None, v) for t, v in shared.items()))

    def caption(self, lookup: Lookup) -> str:
        """`line 8: SGD.step() changed w: 1.0 → 0.2`."""
        change = show_change(self.before, self.after)
        if self.uninitialised:
            change = f"{show_value(self.before)} → {UNINITIALISED} (made by empty())"
        also = (
            f"  · also changes {names_of(lookup, self.written)} (same memory)"
            if self.written
            else ""
        )
        name = tensor_name(lookup, self.tensor)
        before, after = self.before, self.after
        if (
            self.how.endswith(".step()")  # a `.data =` may change the dtype alone
            and before is not None
            and after is not None
            and before.data is not None
            and before.shape == after.shape
            and before.data == after.data
        ):  # a step of zero (a dead ReLU's weights): "changed w: A → A" said otherwise
            return f"{self.where}{self.how} left {name} as it was: {show_value(after)}{also}"
        return f"{self.where}{self.how} changed {name}: {change}{also}"
