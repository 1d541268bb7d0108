"""What every typed trace event has in common, and the helpers the event kinds share.

An event kind is one frozen dataclass (see `events.py` for the list). Each knows, in one
place: its JSON (`from_dict` / `to_dict`, keys exactly as docs/trace.md writes them), the
tensor and node ids it mentions, what it lights up in the graph, its caption, the values
it changes and its source line (`line`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, NamedTuple, Protocol

from autograd_viz.core.trace._records import NodeInfo, TensorInfo, TensorValue

# Values already read in one pass, by the id of their dict. The tracer hands the same
# snapshot dict to every event that shows an unchanged tensor (a gradient leaving one node
# and entering the next): reading each once keeps them one object, as they were recorded.
# The dict itself is kept beside its value, so an id reused after it is freed cannot match.
ValueMemo = dict[int, tuple[dict[str, Any], TensorValue]]


class Lookup(Protocol):
    """What captions and lighting read from the trace: tensors and nodes by id
    (a `TraceIndex` is one)."""

    @property
    def tensors(self) -> Mapping[str, TensorInfo]: ...

    @property
    def nodes(self) -> Mapping[str, NodeInfo]: ...


class ValueChange(NamedTuple):
    """A tensor's value (or its `.grad`) that an event sets."""

    tensor: str
    grad: bool  # True: its .grad changed; False: its value
    before: TensorValue | None  # None where the event does not say (an op's new output)
    after: TensorValue | None


def read_value(data: Any, memo: ValueMemo | None = None) -> TensorValue | None:
    """An event's value dict as a TensorValue (None stays None)."""
    if data is None:
        return None
    if memo is None:
        return TensorValue.from_event_dict(data)
    known = memo.get(id(data))
    if known is not None and known[0] is data:
        return known[1]
    value = TensorValue.from_event_dict(data)
    memo[id(data)] = (data, value)
    return value


def read_values(data: Any, memo: ValueMemo | None = None) -> tuple[TensorValue | None, ...]:
    """A list of event values as TensorValues."""
    if not data:
        return ()
    if memo is None:
        return tuple([None if d is None else TensorValue.from_event_dict(d) for d in data])
    # read_value inlined: this runs for every op and every backward node of a trace
    out: list[TensorValue | None] = []
    for d in data:
        if d is None:
            out.append(None)
            continue
        known = memo.get(id(d))
        if known is not None and known[0] is d:
            out.append(known[1])
        else:
            value = TensorValue.from_event_dict(d)
            memo[id(d)] = (d, value)
            out.append(value)
    return tuple(out)


def quick_maker(cls: type) -> Callable[..., Any]:
    """A maker for a frozen dataclass made by the ten thousand (a trace's ops and backward
    nodes, a player's steps): `make(cls, ...)` takes `cls.__init__`'s arguments and fills
    the slots (or the __dict__) straight. A frozen __init__ sets each field through
    object.__setattr__, and that was more than half of what typing an op cost (18 fields:
    2.9-5 us of 9; this: 1.3 us)."""
    names = {f.name for f in fields(cls)}
    if any(f.default_factory is not MISSING for f in fields(cls)) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: a field with a factory, or a __post_init__")
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    if {p.name for p in params} != names:
        raise TypeError(f"{cls.__name__}: __init__ takes other arguments than its fields")
    slotted = "__slots__" in cls.__dict__
    scope: dict[str, Any] = {"_new": object.__new__}
    signature, body = ["_cls"], ["    _o = _new(_cls)"]
    if not slotted:
        body.append("    _d = _o.__dict__")
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and "*" not in signature:
            signature.append("*")
        if p.default is p.empty:
            signature.append(p.name)
        else:
            scope[f"_d{i}"] = p.default
            signature.append(f"{p.name}=_d{i}")
        if slotted:
            scope[f"_s{i}"] = getattr(cls, p.name).__set__  # the slot's own setter
            body.append(f"    _s{i}(_o, {p.name})")
        else:
            body.append(f"    _d[{p.name!r}] = {p.name}")
    source = f"def make({', '.join(signature)}):\n" + "\n".join([*body, "    return _o"])
    exec(source, scope)  # what dataclasses does to write an __init__
    return scope["make"]


def write_value(value: TensorValue | None) -> dict[str, Any] | None:
    """A TensorValue as an event writes it."""
    return None if value is None else value.to_event_dict()


def write_values(values: tuple[TensorValue | None, ...]) -> list[dict[str, Any] | None]:
    """TensorValues as an event's list of values."""
    return [None if v is None else v.to_event_dict() for v in values]


def read_written(data: Any) -> Mapping[str, TensorValue] | None:
    """The JSON form of an event's other tensors on changed memory (`written`, `updated`,
    `seen`): id -> value, None when absent or empty."""
    if not data:
        return None
    return {t: TensorValue.from_event_dict(v) for t, v in data.items() if v is not None}


def write_written(values: Mapping[str, TensorValue]) -> dict[str, Any]:
    """`read_written`'s inverse."""
    return {t: v.to_event_dict() for t, v in values.items()}


def names_of(lookup: Lookup, ids: Any) -> str:
    """Up to three tensors' caption names, then "…" (`bn.running_mean, bn.running_var`)."""
    names = [tensor_name(lookup, t) for t in ids]
    return ", ".join(names[:3]) + (", …" if len(names) > 3 else "")


def tensor_name(lookup: Lookup, tensor_id: str | None) -> str:
    """A tensor as a caption names it: its variable, else the variable its line bound it
    to, else what made it (`mse_loss(…)`), else its id ("?" without an id)."""
    if not tensor_id:
        return "?"
    info = lookup.tensors.get(tensor_id)
    if info is not None and info.name:
        return info.name
    # A TraceIndex names every tensor its events mention (see naming.py); a bare lookup
    # (tensors and nodes only) has nothing better than the id.
    name_of = getattr(lookup, "name_of", None)
    return name_of(tensor_id) if name_of is not None else tensor_id


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One event of a trace, typed. Subclasses are the kinds; `kind` is the JSON `kind`."""

    kind: ClassVar[str] = ""
    KEYS: ClassVar[frozenset[str]] = frozenset({"kind", "line"})

    line: int | None  # the user's line that was running (None when none)
    # The dict the event was read from, for the keys this version does not know (a newer
    # tracer's): `to_dict` writes them back as they came. Finding them when writing, not
    # when reading, keeps reading a trace's events cheap.
    source: Mapping[str, Any] | None = field(default=None, kw_only=True, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> TraceEvent:
        """The event from its JSON form (`memo` shares values read earlier in one pass)."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, key for key as the tracer wrote it."""
        raise NotImplementedError

    def _finish(self, out: dict[str, Any]) -> dict[str, Any]:
        """`out` with the source's keys this version does not know added."""
        source = self.source
        if source is not None and not source.keys() <= self.KEYS:
            out.update((k, v) for k, v in source.items() if k not in self.KEYS)
        return out

    @property
    def where(self) -> str:
        """`line N: ` to start a caption with, or "" without a line."""
        return f"line {self.line}: " if self.line else ""

    def tensor_ids(self) -> tuple[str, ...]:
        """The tensors this event mentions."""
        return ()

    def node_ids(self) -> tuple[str, ...]:
        """The autograd nodes this event mentions."""
        return ()

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The tensors and nodes a playback step on this event lights up (trace ids)."""
        return ()

    def caption(self, lookup: Lookup) -> str:
        """What the event does, in words and numbers."""
        return f"{self.where}{self.kind}"

    def changes(self) -> tuple[ValueChange, ...]:
        """The values and `.grad`s this event sets."""
        return ()


@dataclass(frozen=True, slots=True)
class UnknownEvent(TraceEvent):
    """An event of a kind this version does not know (from a newer tracer): kept whole."""

    data: Mapping[str, Any] = field(default_factory=dict)

    @property  # type: ignore[misc]  # the kind is the event's own, not the class's
    def kind(self) -> str:
        """The event's `kind`, as written ("" when it has none, or not a string)."""
        kind = self.data.get("kind")
        return kind if isinstance(kind, str) else ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> UnknownEvent:
        """The event, holding a copy of its dict."""
        line = data.get("line")
        return cls(line if isinstance(line, int) else None, dict(data))

    def to_dict(self) -> dict[str, Any]:
        """The dict it came from."""
        return dict(self.data)


@dataclass(frozen=True, slots=True)
class ChangeEvent(TraceEvent):
    """An event that sets one tensor's value or `.grad` (`before` → `after`)."""

    GRAD: ClassVar[bool] = True  # whether it is the .grad that changes

    tensor: str
    before: TensorValue | None
    after: TensorValue | None

    def tensor_ids(self) -> tuple[str, ...]:
        """The tensor it changes."""
        return (self.tensor,)

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The tensor it changes."""
        return (self.tensor,)

    def changes(self) -> tuple[ValueChange, ...]:
        """Its tensor's value or .grad, before and after."""
        return (ValueChange(self.tensor, self.GRAD, self.before, self.after),)
