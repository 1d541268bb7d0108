"""The player's steps: the event kinds each view (mode) replays, one `Step` per event or
per folded module-building statement, what each step lights up on the drawing, and its
caption, written when first read."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any

from autograd_viz.core.graph.graph_model import DrawnGraph
from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.playback.step_text import construction_caption, folds, why_nothing_drawn
from autograd_viz.core.trace import Trace
from autograd_viz.core.trace._event_base import quick_maker
from autograd_viz.core.trace.events import BackwardEndEvent, NodeEvent, OpEvent, TraceEvent
from autograd_viz.core.trace.index import TraceIndex

FORWARD = "forward"
BACKWARD = "backward"
EVERYTHING = "all"
MODES = (FORWARD, BACKWARD, EVERYTHING)

_KINDS = {
    FORWARD: {"op", "history_break", "error"},
    BACKWARD: {
        "backward",
        "backward_end",  # torch.autograd.grad()'s: what it returned (the others: none)
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
    # The trace events one step stands for when it folds several: a module's construction
    # (`nn.Linear(3, 4)`'s empty/kaiming_uniform_/uniform_ ops) is one step; its ops stay
    # in the trace, at these positions, for a view that expands the step. () otherwise.
    folded: tuple[int, ...] = ()
    # For one op of a statement whose folded step the learner opened: the events of the
    # whole statement (the step that folds them back). () otherwise.
    opened_from: tuple[int, ...] = ()

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


_make_step = quick_maker(Step)  # a run of 50,000 ops makes 50,000 steps


class _StepLists:
    """Builds a mode's list of steps from the trace, for the drawing the player follows."""

    trace: Trace
    graph: DrawnGraph
    _index: TraceIndex
    _captions: _Captions
    _error_lit: dict[int, frozenset[str]]
    _opened: set[int]

    def _build_steps(self, mode: str) -> list[Step]:
        event = self._index.event
        steps: list[Step] = []
        with collections_postponed():
            positions = self._index.of_kind(*_KINDS[mode])
            if mode == FORWARD:  # a custom backward's op: not part of the forward pass
                positions = [
                    i
                    for i in positions
                    if not (isinstance(e := event(i), OpEvent) and e.in_backward)
                ]
            else:  # a pass's end is a step only where it returned gradients
                positions = [
                    i
                    for i in positions
                    if not isinstance(e := event(i), BackwardEndEvent) or e.results
                ]
                if mode == BACKWARD:  # what ran inside a pass: a custom backward's ops, a
                    # hook's (`p.grad.clamp_(-1, 1)` after AccumulateGrad)
                    inside = [
                        i
                        for i in self._index.of_kind(OpEvent.kind)
                        if isinstance(e := event(i), OpEvent) and e.in_backward
                    ]
                    if inside:
                        positions = sorted(positions + inside)
            for group in folds(positions, event):
                first = event(group[0])
                if len(group) > 1 and not isinstance(first, OpEvent):  # resets, their op
                    steps.append(self._joined_step(len(steps), group, first))
                elif not (isinstance(first, OpEvent) and first.construction is not None):
                    steps.append(self._step(len(steps), group[0], first))
                elif group[0] not in self._opened:
                    steps.append(self._folded_step(len(steps), group))
                else:
                    whole = tuple(group)
                    for i in group:
                        step = self._step(len(steps), i, event(i))
                        steps.append(replace(step, opened_from=whole))
        return steps

    def _first_lit_at(self, steps: list[Step]) -> tuple[list[str], list[int]]:
        first: dict[str, int] = {}  # in order of first lighting: step numbers ascend
        for step in steps:
            for key in step.lit:
                first.setdefault(key, step.number)
        return list(first), list(first.values())

    def _drawn(self, *ids: Any) -> frozenset[str]:
        alias = self.graph.alias
        if alias:
            ids = tuple(alias.get(i, i) for i in ids)
        # A set operation in C: a run of 50,000 ops calls this 50,000 times.
        return frozenset(self.graph.nodes.keys() & ids)

    def _step(self, number: int, index: int, e: TraceEvent) -> Step:
        # An untracked (no_grad) op is drawn as a box of its own: the graph says which.
        lit = self._drawn(
            *e.lights(self._index),
            *self._index.built_inside(index),
            self.graph.event_nodes.get(index),
            *self._error_lit.get(index, ()),
        )
        return _make_step(
            Step,
            number,
            index,
            e.kind,
            e.line,
            lit,
            partial(self._captions.describe, e, not lit, index),
            self.trace.events[index] if e.kind == "error" else None,
        )

    def _joined_step(self, number: int, group: list[int], first: TraceEvent) -> Step:
        """One step for the events of one call (`w.grad.zero_()`: its resets and its op),
        captioned by the first, standing at the last so every value they set is set."""
        events = [self._index.event(i) for i in group]
        event_nodes = self.graph.event_nodes
        lit = self._drawn(
            *(key for e in events for key in e.lights(self._index)),
            *(key for i in group for key in self._index.built_inside(i)),
            *(event_nodes.get(i) for i in group),
        )
        step = self._step(number, group[0], first)
        return replace(step, event_index=group[-1], lit=lit)

    def _folded_step(self, number: int, group: list[int]) -> Step:
        """One step for the ops of one module-building statement: it lights what they
        made and stands at the last of them, so every value they set is set."""
        ops = [self._index.event(i) for i in group]
        event_nodes = self.graph.event_nodes
        lit = self._drawn(
            *(key for i, e in zip(group, ops, strict=True) for key in e.lights(self._index)),
            *(key for i in group for key in self._index.built_inside(i)),
            *(event_nodes.get(i) for i in group),
        )
        first = ops[0]
        line = first.construction if isinstance(first, OpEvent) else first.line
        describe = partial(self._captions.describe_folded, ops, not lit)
        return Step(number, group[-1], first.kind, line, lit, describe, folded=tuple(group))


class _Captions:
    """Writes steps' captions from the trace alone. Steps hold this, not their Player, so a
    Player and its steps form no reference cycle and go as soon as the view drops them."""

    def __init__(self, index: TraceIndex, graph: DrawnGraph) -> None:
        self._index, self.graph = index, graph

    def describe(
        self, e: TraceEvent, dark: bool = False, position: int | None = None
    ) -> _Description:
        """A step's caption and the gradients its edges carry; a step that lights
        nothing (`dark`) says why. `position`: the event's place in the trace."""
        edges: dict[tuple[str, str], str] = {}
        if isinstance(e, NodeEvent):
            edges = e.edge_grads(self._index, self.graph.feeds, self.graph.alias)
            caption = e.caption(self._index, self._not_accumulated(e, position))
        else:
            caption = e.caption(self._index)
        caption += self._inside(e)
        why = why_nothing_drawn(e, self._index) if dark else None
        return (f"{caption}  · {why}" if why else caption), edges

    def _not_accumulated(self, e: NodeEvent, position: int | None) -> set[str]:
        """The AccumulateGrad nodes `e` sends to that its pass never ran: torch.autograd.grad
        returns those gradients and leaves `.grad` alone (so does backward(inputs=…) for
        the leaves it was not given). Told by the trace: no accumulate event of that node
        follows before the next pass begins."""
        if position is None:
            return set()
        index = self._index
        passes = index.positions("backward")
        after = bisect_right(passes, position)
        end = passes[after] if after < len(passes) else len(index.events)
        opening = index.event(passes[after - 1]) if after else None
        grad_call = getattr(opening, "call", "").startswith("torch.autograd.grad")
        skipped = set()
        for _, target, _ in e.sent(index):
            node = index.nodes.get(target)
            if node is None:
                continue
            # A leaf's AccumulateGrad that never wrote; or, for `torch.autograd.grad(y, h)`
            # of a non-leaf h, h's node, which never ran: the gradient was taken for h
            # (the caption read "→ MulBackward0").
            kind = "accumulate" if node.variable else "node"
            if not node.variable and not (grad_call and node.tensor):
                continue
            if not any(
                position < p < end and index.event(p).kind == kind for p in index.of_node(target)
            ):
                skipped.add(target)
        return skipped

    def _inside(self, e: TraceEvent) -> str:
        """`  · inside layers.3`: where a step's op sits when its node is folded into a
        card (the card lights; the caption names the op and the card)."""
        alias, folds = self.graph.alias, self.graph.folds
        if not alias:
            return ""
        cards = dict.fromkeys(alias[k] for k in e.lights(self._index) if k in alias)
        titles = [folds[c[2:]].title for c in cards if c[2:] in folds]
        return f"  · inside {', '.join(titles)}" if titles else ""

    def describe_folded(self, ops: list[TraceEvent], dark: bool) -> _Description:
        """The caption of a folded module-building step."""
        caption = construction_caption(self._index, [e for e in ops if isinstance(e, OpEvent)])
        why = why_nothing_drawn(ops[0], self._index, folded=True) if dark else None
        return (f"{caption}  · {why}" if why else caption), {}
