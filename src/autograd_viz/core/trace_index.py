"""A trace's look-up tables, built once per trace: tensors and nodes by id, the typed
events, and where each kind of event (and each tensor's and node's) sits."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import Any, TypeVar

from autograd_viz.core.event_base import TraceEvent, ValueMemo
from autograd_viz.core.events import event_from_dict
from autograd_viz.core.trace_records import NodeInfo, TensorInfo

E = TypeVar("E", bound=TraceEvent)


class TraceIndex:
    """Tensors and nodes by id, and the events typed, by kind, by tensor and by node.

    Positions are indices into the trace's event list (the same as `Step.event_index`).
    The events are read in one pass, when something first asks about them (a look-up of a
    tensor by id does not need them); the tables by tensor, by node and by name are made
    when first asked for. Get it from `Trace.index`, which notices when the trace's lists
    have grown or been replaced and builds a new one.
    """

    def __init__(
        self, events: list[dict[str, Any]], tensors: list[TensorInfo], nodes: list[NodeInfo]
    ) -> None:
        self._sources = (events, len(events), tensors, len(tensors), nodes, len(nodes))
        self.tensors: dict[str, TensorInfo] = {t.id: t for t in tensors}
        self.nodes: dict[str, NodeInfo] = {n.id: n for n in nodes}
        self._events: list[TraceEvent] | None = None
        self._by_kind: dict[str, list[int]] = {}
        self._by_tensor: dict[str, list[int]] | None = None
        self._by_node: dict[str, list[int]] | None = None
        self._by_name: dict[str, TensorInfo] | None = None

    def built_from(
        self, events: list[dict[str, Any]], tensors: list[TensorInfo], nodes: list[NodeInfo]
    ) -> bool:
        """Whether this index was built from these very lists, at their present lengths."""
        e, n_events, t, n_tensors, n, n_nodes = self._sources
        return (
            e is events
            and t is tensors
            and n is nodes
            and n_events == len(events)
            and n_tensors == len(tensors)
            and n_nodes == len(nodes)
        )

    @property
    def events(self) -> list[TraceEvent]:
        """The trace's events, typed, in order."""
        if self._events is None:
            self._read_events()
        return self._events  # type: ignore[return-value]  # _read_events filled it

    def _read_events(self) -> None:
        """The one pass over the event dicts: each typed, and filed by kind."""
        memo: ValueMemo = {}
        events: list[TraceEvent] = []
        by_kind: dict[str, list[int]] = {}
        for i, d in enumerate(self._sources[0]):
            e = event_from_dict(d, memo)
            events.append(e)
            positions = by_kind.get(e.kind)
            if positions is None:
                by_kind[e.kind] = [i]
            else:
                positions.append(i)
        # by_kind first: a thread that sees `_events` set must find by_kind complete
        self._by_kind, self._events = by_kind, events

    # ---- tensors and nodes ----------------------------------------------------------
    def tensor(self, tensor_id: str) -> TensorInfo:
        """The tensor with this id (KeyError when the trace lists none)."""
        return self.tensors[tensor_id]

    def node(self, node_id: str) -> NodeInfo:
        """The node with this id (KeyError when the trace has none)."""
        return self.nodes[node_id]

    def tensor_named(self, name: str) -> TensorInfo | None:
        """The first listed tensor bound to `name`, as its name or an alias."""
        if self._by_name is None:
            by_name: dict[str, TensorInfo] = {}
            for t in self.tensors.values():
                for n in (t.name, *t.aliases):
                    if n is not None:
                        by_name.setdefault(n, t)
            self._by_name = by_name
        return self._by_name.get(name)

    # ---- events ---------------------------------------------------------------------
    def of_kind(self, *kinds: str) -> list[int]:
        """The positions of the events of these kinds, in trace order."""
        by_kind = self._kinds()
        if len(kinds) == 1:
            return list(by_kind.get(kinds[0], ()))
        # Each kind's list is sorted: sorting their concatenation merges the runs.
        return sorted(chain.from_iterable(by_kind.get(k, ()) for k in kinds))

    def each(self, kind: type[E]) -> Iterator[tuple[int, E]]:
        """(position, event) for each event of one typed kind, in trace order."""
        events = self.events
        for i in self._kinds().get(kind.kind, ()):
            yield i, events[i]  # type: ignore[misc]  # this kind's list holds only E

    def count(self, kind: str) -> int:
        """How many events of this kind the trace holds."""
        return len(self._kinds().get(kind, ()))

    @property
    def counts(self) -> dict[str, int]:
        """Events per kind, kinds in the order they first occur."""
        return {kind: len(positions) for kind, positions in self._kinds().items()}

    def _kinds(self) -> dict[str, list[int]]:
        if self._events is None:
            self._read_events()
        return self._by_kind

    def of_tensor(self, tensor_id: str) -> list[int]:
        """The positions of the events that mention this tensor, in trace order."""
        if self._by_tensor is None:
            self._by_tensor = self._table("tensor_ids")
        return list(self._by_tensor.get(tensor_id, ()))

    def of_node(self, node_id: str) -> list[int]:
        """The positions of the events that mention this autograd node, in trace order."""
        if self._by_node is None:
            self._by_node = self._table("node_ids")
        return list(self._by_node.get(node_id, ()))

    def _table(self, ids: str) -> dict[str, list[int]]:
        """Id -> positions of the events whose `ids` method (tensor_ids, node_ids) names it."""
        table: dict[str, list[int]] = {}
        for i, e in enumerate(self.events):
            # dict.fromkeys: an op that takes one tensor twice is listed once for it
            for key in dict.fromkeys(getattr(e, ids)()):
                table.setdefault(key, []).append(i)
        return table
