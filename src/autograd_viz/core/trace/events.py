"""Typed trace events: one frozen dataclass per event kind (docs/trace.md, "Events").

`trace.events` stays the list of plain dicts the tracer appends (its wire form); a
`TraceIndex` (`trace.index`) holds them typed. Each class knows, in one place, its JSON
(`from_dict` / `to_dict`, round-tripping exactly what the tracer wrote), the tensor and
node ids it mentions (`tensor_ids`, `node_ids`), what it lights up (`lights`), its caption
(`caption`), the values it sets (`changes`) and its source line (`line`). A kind this
version does not know becomes an `UnknownEvent` that keeps its dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autograd_viz.core.trace._backward_events import (
    AccumulateEvent,
    BackwardEndEvent,
    BackwardEvent,
    NodeEvent,
    RetainedGradEvent,
)
from autograd_viz.core.trace._change_events import (
    GradAssignEvent,
    GradResetEvent,
    ParamUpdateEvent,
)
from autograd_viz.core.trace._event_base import (
    ChangeEvent,
    Lookup,
    TraceEvent,
    UnknownEvent,
    ValueChange,
    ValueMemo,
)
from autograd_viz.core.trace._forward_events import (
    VIEW_ATTRIBUTES,
    CompiledCall,
    HistoryBreakEvent,
    OpEvent,
)
from autograd_viz.core.trace._run_events import ErrorEvent, RunEndEvent

__all__ = [
    "EVENT_TYPES",
    "READ_ERRORS",
    "VIEW_ATTRIBUTES",
    "AccumulateEvent",
    "BackwardEndEvent",
    "BackwardEvent",
    "ChangeEvent",
    "CompiledCall",
    "ErrorEvent",
    "GradAssignEvent",
    "GradResetEvent",
    "HistoryBreakEvent",
    "Lookup",
    "NodeEvent",
    "OpEvent",
    "ParamUpdateEvent",
    "RetainedGradEvent",
    "RunEndEvent",
    "TraceEvent",
    "UnknownEvent",
    "ValueChange",
    "event_from_dict",
    "unreadable",
]

EVENT_TYPES: dict[str, type[TraceEvent]] = {
    cls.kind: cls
    for cls in (
        OpEvent,
        BackwardEvent,
        BackwardEndEvent,
        NodeEvent,
        AccumulateEvent,
        RetainedGradEvent,
        GradResetEvent,
        GradAssignEvent,
        ParamUpdateEvent,
        HistoryBreakEvent,
        ErrorEvent,
        RunEndEvent,
    )
}


# What reading a malformed event dict can raise (a list where a number belongs, …).
READ_ERRORS = (AttributeError, KeyError, TypeError, ValueError)


def event_from_dict(data: Mapping[str, Any], memo: ValueMemo | None = None) -> TraceEvent:
    """The typed event for one event dict; an unknown kind, or a dict its kind's class
    cannot read, becomes an UnknownEvent (a trace from another version must still draw)."""
    try:
        return EVENT_TYPES.get(data.get("kind"), UnknownEvent).from_dict(data, memo)
    except READ_ERRORS:
        return unreadable(data)


def unreadable(data: Any) -> UnknownEvent:
    """An event dict its kind's class could not read, kept whole as an UnknownEvent."""
    return UnknownEvent(None, dict(data) if isinstance(data, Mapping) else {})
