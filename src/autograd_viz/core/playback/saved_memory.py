"""The memory the autograd graph holds for backward, at every moment of a run.

Each node that saved tensors holds their storages from the op that made it until a
backward that does not retain the graph runs it (the engine lets go right after the node's
backward), or until Python lets go of the node (a graph dropped without a backward). A
storage saved by several nodes (or twice by one: `x * x`) counts once while any of them
holds it. All of it comes from the trace's nodes (`saved_tensors`, `made_at`,
`released_at`, docs/trace.md) and its backward events.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.playback.freeing import freed_when
from autograd_viz.core.trace import NodeInfo, Trace

BEFORE_RUN = -1  # a node made before the run (a kept namespace's graph) holds from the start


@dataclass(frozen=True)
class Held:
    """What the graph holds once one event has happened."""

    bytes: int  # distinct storages' sizes
    tensors: int  # distinct storages


@dataclass
class HeldMemory:
    """The held memory over a run: `at(i)` after event i (-1: before the first)."""

    # Event positions where what is held changes, and what is held from each on.
    positions: list[int] = field(default_factory=list)
    states: list[Held] = field(default_factory=list)
    # For each node that held something: (from, until); until None while never let go.
    spans: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    # Nodes a backward ran but kept (retain_graph=True): their memory stays.
    kept: frozenset[str] = frozenset()

    @property
    def peak(self) -> Held:
        """The most held at any moment."""
        return max(self.states, key=lambda h: h.bytes, default=_NOTHING)

    def at(self, index: int) -> Held:
        """What is held once event `index` has happened."""
        at = bisect_right(self.positions, index)
        return self.states[at - 1] if at else _NOTHING

    def holding(self, index: int) -> set[str]:
        """The nodes holding saved tensors once event `index` has happened."""
        return {
            nid
            for nid, (start, stop) in self.spans.items()
            if start <= index and (stop is None or index < stop)
        }


_NOTHING = Held(0, 0)


def held_memory(trace: Trace) -> HeldMemory:
    """What the graph holds for backward at each event of `trace`."""
    # Thousands of small objects beside a trace of hundreds of thousands: without this,
    # the collector's passes over the trace took 0.4 s of the 8k-node RNN's 0.45 s.
    with collections_postponed():
        return _held_memory(trace)


def _held_memory(trace: Trace) -> HeldMemory:
    freed = freed_when(trace)
    nodes = [n for n in trace.nodes if _holding(n)]
    spans: dict[str, tuple[int, int | None]] = {}
    changes: dict[int, list[tuple[NodeInfo, int]]] = {}
    for n in nodes:
        start = BEFORE_RUN if n.made_at is None else n.made_at
        # Let go of: right after its node event in a freeing pass, or when Python dropped
        # it (`released_at` events had been recorded: the last of them came before).
        stops = [freed[n.id]] if n.id in freed else []
        if n.released_at is not None:
            stops.append(max(start, n.released_at - 1))
        stop = min(stops) if stops else None
        spans[n.id] = (start, stop)
        changes.setdefault(start, []).append((n, +1))
        if stop is not None:
            changes.setdefault(stop, []).append((n, -1))
    memory = HeldMemory(spans=spans, kept=_kept(trace, {n.id for n in nodes}, freed))
    counts: dict[str, int] = {}  # storage -> how many saved entries hold it now
    sizes: dict[str, int] = {}  # the storages held now, with their sizes
    total = 0
    for position in sorted(changes):
        for n, sign in changes[position]:
            for entry in n.saved_tensors:
                sid = entry.get("storage")
                if sid is None:
                    continue
                before = counts.get(sid, 0)
                counts[sid] = before + sign
                if before == 0 and sign > 0:
                    sizes[sid] = int(entry.get("bytes") or 0)
                    total += sizes[sid]
                elif before == 1 and sign < 0:
                    total -= sizes.pop(sid, 0)
        memory.positions.append(position)
        memory.states.append(Held(total, len(sizes)))
    return memory


def _holding(node: NodeInfo) -> bool:
    return any(entry.get("storage") is not None for entry in node.saved_tensors)


def _kept(trace: Trace, holding: set[str], freed: dict[str, int]) -> frozenset[str]:
    """Nodes holding saved tensors that a backward ran and kept (retain_graph=True)."""
    # Node ids read raw: typing 8,000 node events holds the index's lock.
    ran = set(trace.index.raw_values("node", "node"))
    return frozenset(n for n in ran & holding if n not in freed)


def by_module(trace: Trace, holding: set[str]) -> dict[str, int]:
    """The bytes the nodes `holding` hold, by the innermost module whose call made each
    node ("" outside any); a storage counts where it was first saved."""
    events = trace.events
    seen: set[str] = set()
    out: dict[str, int] = {}
    for n in trace.nodes:
        if n.id not in holding:
            continue
        modules = []
        if n.made_at is not None and 0 <= n.made_at < len(events):
            modules = events[n.made_at].get("modules") or []
        where = modules[-1] if modules else ""
        for entry in n.saved_tensors:
            sid = entry.get("storage")
            if sid is not None and sid not in seen:
                seen.add(sid)
                out[where] = out.get(where, 0) + int(entry.get("bytes") or 0)
    return out


def bytes_by_node(trace: Trace) -> dict[str, int]:
    """Each node's saved bytes (its distinct storages), for nodes that saved any."""
    out: dict[str, int] = {}
    for n in trace.nodes:
        sizes = {
            e["storage"]: int(e.get("bytes") or 0) for e in n.saved_tensors if e.get("storage")
        }
        if sizes:
            out[n.id] = sum(sizes.values())
    return out


def bytes_text(n: int) -> str:
    """A byte count as a reader takes it in: `12 B`, `3.1 KB`, `48 MB` (powers of 1024)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            if unit == "B":
                return f"{int(size)} B"
            return f"{size:.1f} {unit}" if size < 100 else f"{size:.0f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")
