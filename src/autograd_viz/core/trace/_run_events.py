"""The typed events of how a run ended: the error that stopped it, or its end."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from autograd_viz.core.trace._event_base import Lookup, TraceEvent, ValueMemo, tensor_name
from autograd_viz.core.trace.value_text import format_number


@dataclass(frozen=True, slots=True)
class ErrorEvent(TraceEvent):
    """The script raised; recording stopped there."""

    kind: ClassVar[str] = "error"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {
        "type", "message", "column", "traceback", "op", "inputs",
    }  # fmt: skip

    type: str
    message: str
    column: int | None  # for syntax errors
    traceback: str
    # The torch call that raised, when one did, and the tensors it was given.
    op: str | None = None
    inputs: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> ErrorEvent:
        """From the JSON form."""
        return cls(
            data.get("line"),
            data.get("type", ""),
            data.get("message", ""),
            data.get("column"),
            data.get("traceback", ""),
            data.get("op"),
            tuple(data.get("inputs") or ()),
            source=data,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {
            "kind": "error",
            "type": self.type,
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "traceback": self.traceback,
        }
        if self.op is not None:
            out["op"], out["inputs"] = self.op, list(self.inputs)
        return self._finish(out)

    def tensor_ids(self) -> tuple[str, ...]:
        """What the call that raised was given."""
        return self.inputs

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The call's inputs: the operands a learner checks (`W2` of the wrong shape)."""
        return self.inputs

    def caption(self, lookup: Lookup) -> str:
        """`line 7: matmul(h, W2) raised RuntimeError: …`, else `line 6: RuntimeError: …`
        in PyTorch's own words."""
        if self.op is None:
            return f"{self.where}{self.type}: {self.message}"
        args = ", ".join(tensor_name(lookup, t) for t in self.inputs)
        return f"{self.where}{self.op}({args}) raised {self.type}: {self.message}"


@dataclass(frozen=True, slots=True)
class RunEndEvent(TraceEvent):
    """The script finished (always the last event)."""

    kind: ClassVar[str] = "run_end"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {"seconds", "ok", "exit_code"}

    seconds: float
    ok: bool
    exit_code: int | None = None  # absent before trace version 3

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> RunEndEvent:
        """From the JSON form."""
        return cls(
            data.get("line"),
            data.get("seconds", 0.0),
            data.get("ok", True),
            data.get("exit_code"),
            source=data,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out = {"kind": "run_end", "line": self.line, "seconds": self.seconds, "ok": self.ok}
        if self.exit_code is not None:
            out["exit_code"] = self.exit_code
        return self._finish(out)

    def caption(self, lookup: Lookup) -> str:
        """How the run ended."""
        how = "ran to its end" if self.ok else f"stopped (exit code {self.exit_code})"
        return f"the script {how} in {format_number(self.seconds)} s"
