"""The player: one position in a trace's events that the canvas, the editor and the
inspector all follow. Stepping back is free: every state is read off the recorded trace."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

from psygnal import Signal

from autograd_viz.core.graph.graph_model import DrawnGraph, format_number, format_value
from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.playback.freeing import freed_at, freeing
from autograd_viz.core.trace import TensorValue, Trace

FORWARD = "forward"
BACKWARD = "backward"
EVERYTHING = "all"
MODES = (FORWARD, BACKWARD, EVERYTHING)

_KINDS = {
    FORWARD: {"op", "history_break", "error"},
    BACKWARD: {
        "backward",
        "node",
        "accumulate",
        "retained_grad",
        "grad_reset",
        "grad_assign",
        "param_update",
        "error",
    },
}
_KINDS[EVERYTHING] = _KINDS[FORWARD] | _KINDS[BACKWARD]


def _value(d: dict[str, Any] | None) -> TensorValue | None:
    if d is None:
        return None
    known = TensorValue.__dataclass_fields__
    return TensorValue(**{k: v for k, v in d.items() if k in known})


def show(d: dict[str, Any] | None) -> str:
    """An event's tensor value as a label shows it ("None" for a missing grad)."""
    return "None" if d is None else format_value(_value(d))


def _change(e: dict[str, Any]) -> str:
    """An event's `before → after`, as labels show values."""
    return f"{show(e.get('before'))} → {show(e.get('after'))}"


def _scalar(d: dict[str, Any] | None) -> float | None:
    if d is None or d.get("shape") or not isinstance(d.get("data"), (int, float)):
        return None
    return float(d["data"])


_Description = tuple[str, dict[tuple[str, str], str]]


@dataclass(frozen=True)
class Step:
    """One step of playback: an event, what it lights up, and what to say about it.

    The caption and the gradients on the edges are written when first read: a run of
    50,000 ops must not format 50,000 captions before its graph can be shown.
    """

    number: int  # position in the player's step list
    event_index: int  # position in trace.events
    kind: str
    line: int | None
    lit: frozenset[str]  # drawn ids this step lights up
    describe: Callable[[], _Description] = field(repr=False, compare=False)
    error: dict[str, Any] | None = None

    @cached_property
    def _description(self) -> _Description:
        return self.describe()

    @property
    def caption(self) -> str:
        """What the step does, in words and numbers."""
        return self._description[0]

    @property
    def edge_grads(self) -> dict[tuple[str, str], str]:
        """The gradient each drawn edge carries at this step (backward node steps)."""
        return self._description[1]


@dataclass
class Frame:
    """Everything a view draws for the current position."""

    step: Step | None
    visited: set[str]
    labels: dict[str, tuple[str, str]]  # drawn tensor id -> (value text, grad text)
    freed: set[str] = field(default_factory=set)  # nodes whose saved tensors were freed


class Player:
    """Steps through a trace in one of three modes: forward ops, the backward pass, or both."""

    position_changed = Signal(int)
    mode_changed = Signal(str)

    def __init__(self, trace: Trace, graph: DrawnGraph) -> None:
        self.trace = trace
        self.graph = graph
        self._names = {t.id: t.name for t in trace.tensors}
        self._node_names = {n.id: n.name for n in trace.nodes}
        self._nodes = {n.id: n for n in trace.nodes}
        with collections_postponed():
            self._values, self._grads = self._histories()
        self._captions = _Captions(self._names, self._nodes, graph)
        # Per mode, built when the mode is first shown.
        self._steps: dict[str, list[Step]] = {}
        self._first_lit: dict[str, dict[str, int]] = {}
        self.freeing = freeing(trace)
        self.mode = FORWARD
        self.position = -1  # -1: before the first step

    # ---- navigation ---------------------------------------------------------------
    @property
    def steps(self) -> list[Step]:
        """The steps of the current mode."""
        return self.steps_in(self.mode)

    def steps_in(self, mode: str) -> list[Step]:
        """The steps of any mode."""
        if mode not in self._steps:
            self._steps[mode] = self._build_steps(mode)
            self._first_lit[mode] = self._first_lit_at(self._steps[mode])
        return self._steps[mode]

    @property
    def current(self) -> Step | None:
        """The step shown now, or None at the start."""
        return self.steps[self.position] if self.position >= 0 else None

    def set_mode(self, mode: str) -> None:
        """Switch between forward, backward and all; playback starts over."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if mode != self.mode:
            self.mode = mode
            self.mode_changed.emit(mode)
            self.seek(-1, force=True)

    def seek(self, position: int, force: bool = False) -> None:
        """Go to a step (clamped to -1 … last)."""
        position = max(-1, min(position, len(self.steps) - 1))
        if position != self.position or force:
            self.position = position
            self.position_changed.emit(position)

    def step_forward(self) -> bool:
        """One step on; False at the end."""
        if self.position >= len(self.steps) - 1:
            return False
        self.seek(self.position + 1)
        return True

    def step_back(self) -> bool:
        """One step back; False at the start."""
        if self.position < 0:
            return False
        self.seek(self.position - 1)
        return True

    def to_start(self) -> None:
        """Before the first step."""
        self.seek(-1)

    def to_end(self) -> None:
        """The last step."""
        self.seek(len(self.steps) - 1)

    def at_end(self) -> bool:
        """Whether there is no step left to play."""
        return self.position >= len(self.steps) - 1

    def use_graph(self, graph: DrawnGraph) -> None:
        """Follow a new drawing of the same trace (a module opened or closed): the view and
        the step stay; what each step lights up is worked out again for the new boxes."""
        self.graph = graph
        self._captions.graph = graph
        self._steps.clear()
        self._first_lit.clear()

    # ---- state at the current position --------------------------------------------
    def event_index(self) -> int:
        """Index in trace.events of the current step (-1 at the start)."""
        step = self.current
        return step.event_index if step is not None else -1

    def grad_at(self, tensor_id: str, event_index: int | None = None) -> dict | None:
        """`.grad` of a tensor as it was right after `event_index` (default: now)."""
        index = self.event_index() if event_index is None else event_index
        return self._as_of(self._grads.get(tensor_id), index)

    def value_at(self, tensor_id: str, event_index: int | None = None) -> dict | None:
        """A tensor's value right after `event_index` (None: not computed yet)."""
        index = self.event_index() if event_index is None else event_index
        return self._as_of(self._values.get(tensor_id), index)

    def frame(self) -> Frame:
        """What to draw now."""
        self.steps_in(self.mode)
        first = self._first_lit[self.mode]
        visited = {key for key, at in first.items() if at <= self.position}
        index = self.event_index()
        labels: dict[str, tuple[str, str]] = {}
        for t in self.trace.tensors:
            if t.id not in self.graph.nodes:
                continue
            value = self.value_at(t.id, index)
            grad = self.grad_at(t.id, index)
            tracks_grad = (t.is_leaf and t.requires_grad) or t.retains_grad
            labels[t.id] = (
                "…" if value is None else show(value),
                ("grad " + show(grad)) if (grad is not None or tracks_grad) else "",
            )
        return Frame(self.current, visited, labels, freed_at(self.freeing, index))

    # ---- building -----------------------------------------------------------------
    @staticmethod
    def _as_of(history: tuple[list[int], list[Any], Any] | None, index: int) -> Any:
        if history is None:
            return None
        indices, values, initial = history
        at = bisect_right(indices, index)
        return values[at - 1] if at else initial

    def _histories(self) -> tuple[dict, dict]:
        """Per tensor: (event indices, values after each, value before the first)."""
        values: dict[str, tuple[list[int], list[Any], Any]] = {}
        grads: dict[str, tuple[list[int], list[Any], Any]] = {}

        def record(table: dict, key: str, index: int, after: Any, before: Any = None) -> None:
            if key not in table:
                table[key] = ([], [], before)
            table[key][0].append(index)
            table[key][1].append(after)

        for i, e in enumerate(self.trace.events):
            kind = e.get("kind")
            if kind == "op":
                for tid, v in zip(e.get("outputs", ()), e.get("values", ()), strict=False):
                    record(values, tid, i, v)
            elif kind == "param_update":
                record(values, e["tensor"], i, e.get("after"), e.get("before"))
            elif kind in ("accumulate", "retained_grad", "grad_reset", "grad_assign"):
                record(grads, e["tensor"], i, e.get("after"), e.get("before"))
        return values, grads

    def _build_steps(self, mode: str) -> list[Step]:
        kinds = _KINDS[mode]
        steps: list[Step] = []
        with collections_postponed():
            for i, e in enumerate(self.trace.events):
                if e.get("kind") in kinds:
                    if mode == FORWARD and e.get("in_backward"):
                        continue  # a custom backward's op: not part of the forward pass
                    steps.append(self._step(len(steps), i, e))
        return steps

    def _first_lit_at(self, steps: list[Step]) -> dict[str, int]:
        first: dict[str, int] = {}
        for step in steps:
            for key in step.lit:
                first.setdefault(key, step.number)
        return first

    def _drawn(self, *ids: Any) -> frozenset[str]:
        alias = self.graph.alias
        if alias:
            ids = tuple(alias.get(i, i) for i in ids)
        # A set operation in C: a run of 50,000 ops calls this 50,000 times.
        return frozenset(self.graph.nodes.keys() & ids)

    def _step(self, number: int, index: int, e: dict[str, Any]) -> Step:
        kind = e["kind"]
        lit: frozenset[str] = frozenset()
        if kind == "op":
            made = [n for n in e.get("grad_fn", ()) if n]
            # A leaf's AccumulateGrad joins the graph with the first op that uses the leaf.
            joined = [
                nxt
                for n in made
                if n in self._nodes
                for nxt in self._nodes[n].next
                if nxt in self._nodes and self._nodes[nxt].variable
            ]
            inside = (e.get("compiled") or {}).get("nodes", ())  # a compiled call's own
            lit = self._drawn(
                *e.get("outputs", ()),
                *made,
                *inside,
                *joined,
                self.graph.event_nodes.get(index),
            )
        elif kind == "backward":
            lit = self._drawn(*e.get("roots", ()), *e.get("root_nodes", ()))
        elif kind == "node":
            lit = self._drawn(e["node"])
        elif kind == "accumulate":
            lit = self._drawn(e["tensor"], e.get("node"))
        elif kind in ("retained_grad", "grad_reset", "grad_assign", "param_update"):
            lit = self._drawn(e["tensor"])
        elif kind == "history_break":
            lit = self._drawn(e.get("tensor"), e.get("result"))
        return Step(
            number,
            index,
            kind,
            e.get("line"),
            lit,
            partial(self._captions.describe, e),
            e if kind == "error" else None,
        )


class _Captions:
    """Writes steps' captions from the trace alone. Steps hold this, not their Player, so a
    Player and its steps form no reference cycle and go as soon as the view drops them."""

    def __init__(self, names: dict[str, str | None], nodes: dict[str, Any], graph: DrawnGraph):
        self._names, self._nodes, self.graph = names, nodes, graph

    def _name(self, tid: str | None) -> str:
        return (self._names.get(tid) or "tensor") if tid else "?"

    def describe(self, e: dict[str, Any]) -> _Description:
        """A step's caption and the gradients its edges carry."""
        kind, line = e["kind"], e.get("line")
        where = f"line {line}: " if line else ""
        edges: dict[tuple[str, str], str] = {}
        if kind == "op":
            outs = ", ".join(
                f"{self._name(t)} = {show(v)}"
                for t, v in zip(e.get("outputs", ()), e.get("values", ()), strict=False)
            )
            args = ", ".join(self._name(t) for t in e.get("inputs", ()))
            untracked = "" if e.get("grad_enabled", True) else "  (no_grad: not tracked)"
            caption = f"{where}{e['op']}({args}) → {outs}{untracked}"
        elif kind == "backward":
            roots = ", ".join(self._name(t) for t in e.get("roots", ()))
            kept = "graph kept (retain_graph)" if e.get("retain_graph") else "graph freed after"
            caption = f"{where}{e['call']} from {roots} — {kept}"
            if e.get("depth"):  # run by a node's own backward (a reentrant checkpoint)
                caption += " — a backward pass run inside the one before it"
            if e.get("thread"):
                caption += f" — on thread {e['thread']}"
        elif kind == "node":
            caption, edges = self._chain_rule(e)
        elif kind == "accumulate":
            caption = f"{self._name(e['tensor'])}.grad: {_change(e)}  (AccumulateGrad adds)"
        elif kind == "retained_grad":
            caption = f"{self._name(e['tensor'])}.grad kept by retain_grad(): {_change(e)}"
        elif kind in ("grad_reset", "grad_assign"):
            how = e.get("how", ".grad =")
            caption = f"{where}{self._name(e['tensor'])}{how} — .grad {_change(e)}"
        elif kind == "param_update":
            caption = f"{where}{e.get('how')} changed {self._name(e['tensor'])}: {_change(e)}"
        elif kind == "history_break":
            result = f" = {format_number(e['value'])}" if "value" in e else ""
            caption = (
                f"{where}{self._name(e.get('tensor'))}.{e['how']}{result} — "
                "the result has no autograd history"
            )
        else:  # error
            caption = f"{where}{e.get('type')}: {e.get('message')}"
        return caption, edges

    def _chain_rule(self, e: dict[str, Any]) -> tuple[str, dict[tuple[str, str], str]]:
        """`MulBackward0: incoming 14 × local 3 = 42 → w` for scalars; shapes otherwise."""
        node = self._nodes.get(e["node"])
        grads_in = e.get("grads_in") or []
        grads_out = e.get("grads_out") or []
        incoming = grads_in[0] if grads_in else None
        g_in = _scalar(incoming)
        parts: list[str] = []
        edges: dict[tuple[str, str], str] = {}
        if node is not None:
            inputs = node.next_input or list(range(len(node.next)))
            for i, (target, slot) in enumerate(zip(node.next, inputs, strict=False)):
                grad = grads_out[slot] if slot < len(grads_out) else None
                source = self.graph.feeds.get((node.id, i))
                if grad is None:
                    continue
                if source is not None:
                    alias = self.graph.alias
                    edge = (alias.get(source, source), alias.get(node.id, node.id))
                    if edge[0] != edge[1]:
                        edges[edge] = show(grad)
                to = self._target_name(target)
                g_out = _scalar(grad)
                if g_in is not None and g_out is not None and g_in != 0:
                    parts.append(
                        f"incoming {format_number(g_in)} × local "
                        f"{format_number(g_out / g_in)} = {format_number(g_out)} → {to}"
                    )
                else:
                    parts.append(f"{show(grad)} → {to}")
        name = e.get("name", "")
        if not parts:
            return f"{name}: receives {show(incoming)}", edges
        return f"{name}: " + ";  ".join(parts), edges

    def _target_name(self, node_id: str) -> str:
        node = self._nodes.get(node_id)
        if node is None:
            return "?"
        if node.variable:
            return f"{self._name(node.variable)}.grad"
        return node.name
