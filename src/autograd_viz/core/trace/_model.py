"""The trace: the contract between the kernel, the GUI, the CLI and the tests.

A trace is plain JSON. Its keys are stable; new keys may be added, none renamed.
docs/trace.md documents every key; in short:

    version      trace format version (int)
    source       file name the code was run as
    torch        torch version string; device: the device the run used
    tensors      [{id, name, shape, dtype, device, requires_grad, is_leaf,
                   retains_grad, grad_fn, output_nr, value, grad}]
    nodes        [{id, name, tensor, variable, next, next_nr, next_input, saved}]
    events       [{kind, line, ...}] in the order they happened: op, backward, node,
                 accumulate, grad_reset, grad_assign, param_update, history_break,
                 error, run_end
    error        null, or the error event that stopped the run
    truncated    true when the node cap was reached
    notes        human-readable remarks (why something was capped)
    modules      {path: {class, parameters}} for every nn.Module the run called
    loops        [{line, end, text}]: the script's for/while statements
    script       the code that ran (its line numbers are the events' `line`)
    recorded_at  when it ran (ISO 8601, UTC)
    steps        [{line, optimizer, event, loss, parameters}]: gradient health per step

`events` stay plain dicts (the wire form, appended by the tracer as the run goes);
`trace.index` (core/trace/index.py) holds them typed (core/trace/events.py), with tensors and
nodes by id, built once.

`value` and `grad` are TensorValue objects ({shape, data, min, max, mean, norm, first});
`grad` is null exactly where PyTorch's `.grad` is None. `data` holds the full nested
list for tensors up to 10,000 elements and is null for bigger ones, which are summarised.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograd_viz.core.platform.shredder import shred
from autograd_viz.core.trace._json import json_safe
from autograd_viz.core.trace._records import NodeInfo, TensorInfo, TensorValue
from autograd_viz.core.trace.index import TraceIndex

__all__ = ["TRACE_MIME", "TRACE_VERSION", "NodeInfo", "TensorInfo", "TensorValue", "Trace"]

TRACE_VERSION = 3  # 2: tensors gained `aliases`; 3: run_end `exit_code`, nested passes
TRACE_MIME = "application/vnd.autograd-viz.trace+json"
SHRED_FROM = 5_000  # events from which a trace being freed frees them on another thread


@dataclass
class Trace:
    """Everything one run of user code produced for the views."""

    source: str = "<editor>"
    torch: str = ""
    device: str = "cpu"
    tensors: list[TensorInfo] = field(default_factory=list)
    nodes: list[NodeInfo] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None  # the error that stopped the run, or None
    version: int = TRACE_VERSION
    modules: dict[str, dict[str, Any]] = field(default_factory=dict)
    loops: list[dict[str, Any]] = field(default_factory=list)
    script: str | None = None  # the code that ran (None in traces written before the key)
    recorded_at: str | None = None  # when it ran: ISO 8601 UTC ("2026-12-02T01:30:00Z")
    # Per optimizer.step(): the norms of each parameter's .grad, update and value, kept
    # even past the event cap (docs/trace.md, `steps`).
    steps: list[dict[str, Any]] = field(default_factory=list)
    # The look-up tables, built on first use (see `index`). A field so that
    # `Trace(**vars(trace))` still works; a copy made that way notices its own lists
    # differ and builds its own.
    _index: TraceIndex | None = field(default=None, repr=False, compare=False)

    def __del__(self) -> None:
        # A big trace's events go a slice at a time on a thread of their own, not in one
        # cascade on whichever thread let go of the trace last (the GUI thread, when a new
        # run replaces it): see core/platform/shredder.py.
        events = self.__dict__.get("events")
        if type(events) is not list or len(events) < SHRED_FROM:
            return
        try:
            index = self.__dict__.get("_index")
            lists = index.give_up_lists() if index is not None else []
            lists.append(events)
            self.events, self._index = [], None
            del events, index
            shred(lists)
        except Exception:  # at interpreter exit (threads refused): freed here, as before
            return

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form of the trace (events and tensors' lists are shared, not
        copied)."""
        return {
            "source": self.source,
            "torch": self.torch,
            "device": self.device,
            "tensors": [t.to_dict() for t in self.tensors],
            "nodes": [n.to_dict() for n in self.nodes],
            "events": list(self.events),
            "truncated": self.truncated,
            "notes": list(self.notes),
            "error": self.error,
            "version": self.version,
            "modules": self.modules,
            "loops": self.loops,
            "script": self.script,
            "recorded_at": self.recorded_at,
            "steps": self.steps,
        }

    def to_json(self, indent: int | None = None) -> str:
        """The trace as strict JSON: NaN and infinities are written as strings."""
        data = self.to_dict()
        try:
            return json.dumps(data, indent=indent, allow_nan=False)
        except ValueError:  # a NaN or infinity somewhere: the rare, slower path
            return json.dumps(json_safe(data), indent=indent, allow_nan=False)

    def save(self, path: str | Path) -> None:
        """Write the trace to a JSON file."""
        Path(path).write_text(self.to_json(indent=1), encoding="utf-8")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        """Rebuild a trace from its JSON form (unknown keys are ignored)."""

        def value(v: dict[str, Any] | None) -> TensorValue | None:
            return None if v is None else TensorValue(**_known(TensorValue, v))

        tensors = [
            TensorInfo(
                **{
                    **_known(TensorInfo, t),
                    "value": value(t.get("value")),
                    "grad": value(t.get("grad")),
                }
            )
            for t in data.get("tensors", [])
        ]
        nodes = [NodeInfo(**_known(NodeInfo, n)) for n in data.get("nodes", [])]
        return cls(
            source=data.get("source", "<editor>"),
            torch=data.get("torch", ""),
            device=data.get("device", "cpu"),
            tensors=tensors,
            nodes=nodes,
            events=list(data.get("events", [])),
            truncated=bool(data.get("truncated", False)),
            notes=list(data.get("notes", [])),
            error=data.get("error"),
            version=int(data.get("version", TRACE_VERSION)),
            modules=dict(data.get("modules") or {}),
            loops=[loop for loop in data.get("loops") or [] if _a_loop(loop)],
            script=_text_or_none(data.get("script")),
            steps=list(data.get("steps") or []),
            recorded_at=_text_or_none(data.get("recorded_at")),
        )

    @classmethod
    def from_json(cls, text: str) -> Trace:
        """Parse a trace from a JSON string."""
        return cls.from_dict(json.loads(text))

    @property
    def index(self) -> TraceIndex:
        """Tensors and nodes by id, the events typed and by kind: built on first use, and
        again whenever the event, tensor or node list has grown or been replaced."""
        index = self._index
        if index is None or not index.built_from(self.events, self.tensors, self.nodes):
            index = self._index = TraceIndex(self.events, self.tensors, self.nodes)
        return index

    # Convenience look-ups used by views and tests.
    def tensor(self, tensor_id: str) -> TensorInfo:
        """The tensor with this id (KeyError when there is none)."""
        return self.index.tensor(tensor_id)

    def tensor_named(self, name: str) -> TensorInfo | None:
        """The tensor the user bound to `name` (as its name or an alias), if any."""
        return self.index.tensor_named(name)

    def node(self, node_id: str) -> NodeInfo:
        """The node with this id (KeyError when there is none)."""
        return self.index.node(node_id)

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The error events, in order."""
        index = self._index
        if index is not None and index.built_from(self.events, self.tensors, self.nodes):
            return [self.events[i] for i in index.of_kind("error")]
        # No index yet: while the run is recorded (runner.py asks before the last event is
        # in) a plain scan is cheaper than building one.
        return [e for e in self.events if e.get("kind") == "error"]


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = cls.__dataclass_fields__.keys()
    if data.keys() <= names:  # the usual case: no key to drop, no copy to make
        return data
    return {k: v for k, v in data.items() if k in names}


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _a_loop(loop: Any) -> bool:
    """Whether an entry of `loops` is one (a file edited by hand may hold anything)."""
    return (
        isinstance(loop, dict)
        and all(type(loop.get(k)) is int for k in ("line", "end"))
        and isinstance(loop.get("text"), str)
    )
