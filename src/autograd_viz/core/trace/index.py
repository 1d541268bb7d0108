"""A trace's look-up tables, built once per trace: tensors and nodes by id, the typed
events, and where each kind of event (and each tensor's and node's) sits."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from itertools import chain
from typing import Any, TypeVar

from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.trace._backward_events import BackwardEndEvent
from autograd_viz.core.trace._event_base import TraceEvent, ValueMemo
from autograd_viz.core.trace._forward_events import HistoryBreakEvent, OpEvent
from autograd_viz.core.trace._records import NodeInfo, TensorInfo
from autograd_viz.core.trace.events import (
    EVENT_TYPES,
    READ_ERRORS,
    UnknownEvent,
    event_from_dict,
    unreadable,
)
from autograd_viz.core.trace.naming import display_names

E = TypeVar("E", bound=TraceEvent)


class TraceIndex:
    """Tensors and nodes by id, and the events typed, by kind, by tensor and by node.

    Positions are indices into the trace's event list (the same as `Step.event_index`).
    The first question about events files them by kind in one pass over the list; the
    events of a kind are typed when that kind is first asked for (a layout types the ops,
    not the far more numerous backward node events), each read once. The tables by
    tensor, by node and by name are made when first asked for. Get it from
    `Trace.index`, which notices when the trace's lists have grown or been replaced.
    """

    def __init__(
        self, events: list[dict[str, Any]], tensors: list[TensorInfo], nodes: list[NodeInfo]
    ) -> None:
        self._sources = (events, len(events), tensors, len(tensors), nodes, len(nodes))
        self.tensors: dict[str, TensorInfo] = {t.id: t for t in tensors}
        self.nodes: dict[str, NodeInfo] = {n.id: n for n in nodes}
        self._raw = events
        self._typed: list[TraceEvent | None] = []
        self._by_kind: dict[str, list[int]] | None = None
        self._kinds_read: set[str] = set()
        self._raw_values: dict[tuple[str, str], list[Any]] = {}  # see raw_values
        self._memo: ValueMemo = {}
        # The layout job's thread and the GUI thread may both ask; filing and typing a
        # kind happen once, under this lock.
        self._lock = threading.Lock()
        self._by_tensor: dict[str, list[int]] | None = None
        self._by_node: dict[str, list[int]] | None = None
        self._by_name: dict[str, TensorInfo] | None = None
        self._display: dict[str, str] | None = None
        self._inside: dict[int, tuple[str, ...]] | None = None

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

    def give_up_lists(self) -> list[list[Any]]:
        """Its big lists (the event list it was built from, the typed events), let go of
        here and handed to the caller: for a trace that is being freed (Trace.__del__)."""
        lists = [self._raw, self._typed]
        self._raw, self._typed = [], []
        self._sources = ([], 0, [], 0, [], 0)
        return lists

    # ---- reading the events ---------------------------------------------------------
    def _kinds(self) -> dict[str, list[int]]:
        """Kind -> positions: the one pass over the event list."""
        by_kind = self._by_kind
        if by_kind is not None:
            return by_kind
        with self._lock:
            if self._by_kind is None:
                filed: dict[str, list[int]] = {}
                for i, d in enumerate(self._raw):
                    try:  # the common case, kept cheap: a known kind's dict
                        filed[d["kind"]].append(i)
                    except (KeyError, TypeError):  # a kind's first event, or an odd one
                        kind = d.get("kind") if isinstance(d, dict) else None
                        if not isinstance(kind, str):
                            kind = ""  # what UnknownEvent.kind says of it
                        filed.setdefault(kind, []).append(i)
                self._typed = [None] * len(self._raw)
                self._by_kind = filed
            return self._by_kind

    def _read(self, kind: str) -> list[int]:
        """The positions of one kind's events, typed (on the first call for the kind)."""
        positions = self._kinds().get(kind, [])
        if kind in self._kinds_read:
            return positions
        with self._lock, collections_postponed():
            # Several objects per event, beside a trace of as many dicts: at the
            # collector's default thresholds its full passes made typing 20,000 events
            # quadratic (40 us an event, against 7 at 200: measured).
            raw, typed, memo = self._raw, self._typed, self._memo
            read = EVENT_TYPES.get(kind, UnknownEvent).from_dict
            for i in positions:
                if typed[i] is None:
                    try:
                        typed[i] = read(raw[i], memo)
                    except READ_ERRORS:
                        typed[i] = unreadable(raw[i])
            self._kinds_read.add(kind)
            if len(self._kinds_read) == len(self._by_kind or ()):
                self._memo = {}  # every value read: nothing left to share with
        return positions

    def positions(self, kind: str) -> list[int]:
        """The positions of one kind's events, without typing them (see `raw_values`)."""
        return self._kinds().get(kind, [])

    def raw_values(self, kind: str, key: str) -> list[Any]:
        """`key` of each event of `kind` (None where absent), in `positions(kind)` order,
        read off the dicts once and kept: for passes over thousands of events that need
        one id of each, without typing them (node events' `node`: freeing's)."""
        cache = self._raw_values
        found = cache.get((kind, key))
        if found is None:
            raw = self._raw
            found = cache[(kind, key)] = [
                d.get(key) if isinstance(d := raw[i], dict) else None for i in self.positions(kind)
            ]
        return found

    def event(self, position: int) -> TraceEvent:
        """The typed event at this position of the trace's event list."""
        self._kinds()
        e = self._typed[position]
        if e is None:
            with self._lock:
                e = self._typed[position]
                if e is None:
                    e = self._typed[position] = event_from_dict(self._raw[position], self._memo)
        return e

    @property
    def events(self) -> list[TraceEvent]:
        """Every event, typed, in order."""
        for kind in self._kinds():
            self._read(kind)
        return self._typed  # type: ignore[return-value]  # every kind read: no None left

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
            for t in self._sources[2]:
                for n in (t.name, *t.aliases):
                    if n is not None:
                        by_name.setdefault(n, t)
            self._by_name = by_name
        return self._by_name.get(name)

    def name_of(self, tensor_id: str) -> str:
        """What captions call a tensor: its variable, the local its line bound it to, or
        what made it (`mse_loss(…)`); its id when no event mentions it (naming.py)."""
        if self._display is None:
            ops = self.of_kind(OpEvent.kind, HistoryBreakEvent.kind, BackwardEndEvent.kind)
            self._display = display_names(self.tensors, [self.event(i) for i in ops])
        return self._display.get(tensor_id, tensor_id)

    def built_inside(self, position: int) -> tuple[str, ...]:
        """The nodes the op (or the pass's end) at `position` made that no event names:
        those inside one call, between its result's node and what it used (`linear` on a
        3-d input makes UnsafeView, Mm and T nodes behind its result's View; the weight's
        AccumulateGrad hangs off T; an LSTM's weights off its MkldnnRnnLayer). Each node is
        the first such event's whose result's graph reaches it; () for other events."""
        inside = self._inside
        if inside is None:
            inside = self._inside = self._nodes_built_inside()
        return inside.get(position, ())

    def _nodes_built_inside(self) -> dict[int, tuple[str, ...]]:
        nodes = self.nodes
        roots: list[tuple[int, tuple[str, ...]]] = [
            (i, e.node_ids()) for i, e in self.each(OpEvent)
        ]
        roots += [
            (i, tuple(n for n in e.grad_fn or () if n)) for i, e in self.each(BackwardEndEvent)
        ]
        roots.sort(key=lambda r: r[0])
        seen: set[str] = set()
        inside: dict[int, tuple[str, ...]] = {}
        for i, made in roots:
            seen.update(made)
            found: list[str] = []
            todo = [n for n in made if n in nodes]
            while todo:
                for nxt in nodes[todo.pop()].next:
                    if nxt not in seen and nxt in nodes:
                        seen.add(nxt)
                        found.append(nxt)
                        todo.append(nxt)
            if found:
                inside[i] = tuple(found)
        return inside

    # ---- events ---------------------------------------------------------------------
    def of_kind(self, *kinds: str) -> list[int]:
        """The positions of the events of these kinds, in trace order."""
        lists = [self._read(k) for k in kinds]
        if len(lists) == 1:
            return list(lists[0])
        # Each kind's list is sorted: sorting their concatenation merges the runs.
        return sorted(chain.from_iterable(lists))

    def each(self, kind: type[E]) -> Iterator[tuple[int, E]]:
        """(position, event) for each event of one typed kind, in trace order (an event
        of that kind its class could not read, an UnknownEvent, is left out)."""
        positions = self._read(kind.kind)
        typed = self._typed
        for i in positions:
            e = typed[i]
            if isinstance(e, kind):
                yield i, e

    @property
    def size(self) -> int:
        """How many events the trace holds."""
        return self._sources[1]

    def count(self, kind: str) -> int:
        """How many events of this kind the trace holds."""
        return len(self._kinds().get(kind, ()))

    @property
    def counts(self) -> dict[str, int]:
        """Events per kind, kinds in the order they first occur."""
        return {kind: len(positions) for kind, positions in self._kinds().items()}

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
