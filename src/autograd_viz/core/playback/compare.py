"""Two runs side by side: what an edit changed in the graph, the values, the gradients and
the backward order.

Items are matched by the stable keys that keep a picture's order across runs
(`graph_model.stable_keys`: a tensor by its variable name, an op by where its result
goes), over every item of each graph, folded or not. A gradient is compared backward by
backward: each `.grad` a leaf held after its k-th accumulation, so a loop that forgot
`zero_grad()` shows the step where 8 became 16, and which reset the other run made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from autograd_viz.core.graph.graph_model import DrawnGraph, stable_keys
from autograd_viz.core.graph.picture_graph import topological_order
from autograd_viz.core.trace import TensorValue, Trace
from autograd_viz.core.trace.events import AccumulateEvent, BackwardEvent, GradResetEvent, NodeEvent
from autograd_viz.core.trace.value_text import show_value

SAME = 1e-6  # relative change below which two values are the same number
MAX_LISTED = 200  # items listed per kind of change


@dataclass(frozen=True)
class Change:
    """One tensor's value or .grad, in the pinned run and this one."""

    key: str  # the stable key (`tensor:w`)
    name: str
    what: str  # "value" or ".grad"
    pinned: str  # as the labels show it
    now: str
    relative: float  # ‖now − pinned‖ / ‖pinned‖ (inf when one is missing)
    tensor: str  # the id in this run ("" when it is gone)
    note: str = ""  # where it first differed: "after backward #2", a missing reset


@dataclass
class RunDiff:
    """What differs between a pinned run and the run shown now."""

    added: list[tuple[str, str]] = field(default_factory=list)  # (key, title)
    removed: list[tuple[str, str]] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)  # largest relative change first
    backward_order: str = ""  # the first pass whose node order differs, in words
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # label -> (pinned, now)

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changes or self.backward_order)


def compare_runs(pinned: tuple[Trace, DrawnGraph], now: tuple[Trace, DrawnGraph]) -> RunDiff:
    """What changed from the pinned run to the one shown now."""
    (old, old_graph), (new, new_graph) = pinned, now
    old_base, new_base = _base(old_graph), _base(new_graph)
    old_keys, new_keys = stable_keys(old_base), stable_keys(new_base)
    match = _match(old_base, new_base, old_keys, new_keys)  # this run's id -> the pinned's
    matched = set(match.values())
    diff = RunDiff()
    added = [(new_keys[v], _title(new_base, v)) for v in new_base if v not in match]
    removed = [(old_keys[v], _title(old_base, v)) for v in old_base if v not in matched]
    diff.added, diff.removed = added[:MAX_LISTED], removed[:MAX_LISTED]
    # A matched item goes by the pinned run's key in both: the backward orders compare.
    new_keys = {v: old_keys[match[v]] if v in match else k for v, k in new_keys.items()}
    changes: list[Change] = []
    for new_id, old_id in match.items():
        key = old_keys[old_id]
        if not new_id.startswith("t") or not old_id.startswith("t"):
            continue
        if old_id not in old.index.tensors or new_id not in new.index.tensors:
            continue
        a, b = old.index.tensor(old_id), new.index.tensor(new_id)
        name = new.index.name_of(new_id)
        value = _change(a.value, b.value)
        if value is not None:
            changes.append(Change(key, name, "value", show_value(a.value), show_value(b.value),
                                  value, new_id))  # fmt: skip
        grad = _change(a.grad, b.grad)
        if grad is not None:
            note = _first_grad_difference(old, old_id, new, new_id)
            changes.append(Change(key, name, ".grad", show_value(a.grad), show_value(b.grad),
                                  grad, new_id, note))  # fmt: skip
    changes.sort(key=lambda c: -c.relative if math.isfinite(c.relative) else -math.inf)
    diff.changes = changes[:MAX_LISTED]
    diff.backward_order = _order_difference(old, old_keys, new, new_keys)
    for label, count in (
        ("ops", lambda t: t.index.count("op")),
        ("autograd nodes", lambda t: len(t.nodes)),
        ("backward passes", lambda t: t.index.count("backward")),
    ):
        diff.counts[label] = (count(old), count(new))
    return diff


def _base(graph: DrawnGraph) -> nx.MultiDiGraph:
    """Every item of the run's graph, folded or not (a folded picture draws boxes instead)."""
    base = getattr(graph.folding, "base", None)
    if base is not None:
        return base
    g = nx.MultiDiGraph()
    for v, item in graph.nodes.items():
        g.add_node(v, item=item)
    g.add_edges_from(graph.edges)
    return g


def _title(g: nx.MultiDiGraph, item: str) -> str:
    return g.nodes[item]["item"].title


def _match(
    old: nx.MultiDiGraph, new: nx.MultiDiGraph, old_keys: dict[str, str], new_keys: dict[str, str]
) -> dict[str, str]:
    """This run's items -> the pinned run's: by stable key, then, from the inputs up, an
    op of the same name fed by the same matched items (an edit downstream renames every
    key upstream of it, which is where the key says a node feeds)."""
    by_key = {k: v for v, k in old_keys.items()}
    match = {v: by_key[k] for v, k in new_keys.items() if k in by_key}
    taken = set(match.values())
    for v in topological_order(new):
        if v in match:
            continue
        inputs = {match.get(u) for u in new.predecessors(v)}
        if None in inputs:
            continue
        title = _title(new, v)
        for u in old.nodes:
            if u not in taken and _title(old, u) == title and set(old.predecessors(u)) == inputs:
                match[v] = u
                taken.add(u)
                break
    return match


def _array(value: TensorValue | None) -> np.ndarray | None:
    if value is None or value.data is None:
        return None
    try:
        return np.asarray(value.data, dtype=float).reshape(value.shape)
    except (TypeError, ValueError):
        return None


def _change(a: TensorValue | None, b: TensorValue | None) -> float | None:
    """How far `b` is from `a`, relatively; None when they are the same."""
    if a is None and b is None:
        return None
    if a is None or b is None or list(a.shape) != list(b.shape):
        return math.inf
    x, y = _array(a), _array(b)
    if x is not None and y is not None:
        with np.errstate(all="ignore"):
            if np.array_equal(x, y, equal_nan=True):
                return None
            distance = float(np.linalg.norm((y - x).ravel()))
            scale = float(np.linalg.norm(x.ravel()))
    else:  # summarised (more than 10,000 numbers): compare what both kept
        pairs = [(a.norm, b.norm), (a.mean, b.mean), (a.min, b.min), (a.max, b.max)]
        known = [(p, q) for p, q in pairs if p is not None and q is not None]
        if not known or all(p == q for p, q in known):
            return None
        distance = max(abs(q - p) for p, q in known)
        scale = abs(a.norm) if a.norm else 0.0
    if not math.isfinite(distance):
        return math.inf
    relative = distance / scale if scale > 0 else (math.inf if distance else 0.0)
    return relative if relative > SAME else None


def _accumulations(trace: Trace, tensor: str) -> list[tuple[int, TensorValue | None, int]]:
    """Each accumulation into `tensor`'s .grad: (event, .grad after it, resets before it
    since the previous one)."""
    out: list[tuple[int, TensorValue | None, int]] = []
    resets = 0
    for i in trace.index.of_tensor(tensor):
        e = trace.index.event(i)
        if isinstance(e, GradResetEvent) and e.tensor == tensor:
            resets += 1
        elif isinstance(e, AccumulateEvent) and e.tensor == tensor:
            out.append((i, e.after, resets))
            resets = 0
    return out


def _reset_line(trace: Trace, tensor: str, before: int) -> str:
    """The line of the last reset of `tensor`'s .grad before event `before`, quoted."""
    for i in reversed(trace.index.of_tensor(tensor)):
        e = trace.index.event(i)
        if i < before and isinstance(e, GradResetEvent) and e.tensor == tensor:
            lines = (trace.script or "").split("\n")
            text = lines[e.line - 1].strip() if e.line and e.line <= len(lines) else ""
            return f"line {e.line}" + (f": {text}" if text else "")
    return ""


def _first_grad_difference(old: Trace, old_id: str, new: Trace, new_id: str) -> str:
    """Where two .grad histories first part: the backward, and a reset one run made."""
    a, b = _accumulations(old, old_id), _accumulations(new, new_id)
    for k, ((i, x, reset_x), (j, y, reset_y)) in enumerate(zip(a, b, strict=False)):
        if _change(x, y) is None:
            continue
        said = f"after backward #{k + 1}: {show_value(x)} (pinned) vs {show_value(y)} (this run)"
        if reset_x and not reset_y:
            where = _reset_line(old, old_id, i)
            said += f"; the pinned run reset it before that ({where}), this run did not"
        elif reset_y and not reset_x:
            where = _reset_line(new, new_id, j)
            said += f"; this run reset it before that ({where}), the pinned run did not"
        return said
    if len(a) != len(b):
        return f"backward reached it {len(a)} times in the pinned run, {len(b)} in this run"
    return ""


def _passes(trace: Trace, keys: dict[str, str]) -> list[list[str]]:
    """Per backward pass, the stable keys of its nodes in the engine's order."""
    passes: list[list[str]] = []
    index = trace.index
    for i in index.of_kind(BackwardEvent.kind, NodeEvent.kind):
        e = index.event(i)
        if isinstance(e, BackwardEvent):
            passes.append([])
        elif passes and isinstance(e, NodeEvent):
            node = index.node(e.node) if e.node in index.nodes else None
            passes[-1].append(keys.get(e.node, node.name if node else e.node))
    return passes


def _order_difference(old: Trace, old_keys: dict, new: Trace, new_keys: dict) -> str:
    for p, (a, b) in enumerate(zip(_passes(old, old_keys), _passes(new, new_keys), strict=False)):
        for k, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return (
                    f"backward pass #{p + 1}, node {k + 1}: {x.split('>')[0]} (pinned) vs"
                    f" {y.split('>')[0]} (this run)"
                )
        if len(a) != len(b):
            return f"backward pass #{p + 1} ran {len(a)} nodes (pinned) vs {len(b)} (this run)"
    return ""
