"""The player: one position in a trace's events that the canvas, the editor and the
inspector all follow. Stepping back is free: every state is read off the recorded trace."""

from __future__ import annotations

import threading
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from psygnal import Signal

from autograd_viz.core.graph.graph_model import DrawnGraph
from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.playback._player_steps import (
    BACKWARD,
    EVERYTHING,
    FORWARD,
    MODES,
    Step,
    _Captions,
    _StepLists,
)
from autograd_viz.core.playback.freeing import freed_at, freeing, second_backward_errors
from autograd_viz.core.trace import TensorValue, Trace
from autograd_viz.core.trace.events import EVENT_TYPES, TraceEvent
from autograd_viz.core.trace.value_text import show_value

__all__ = ["BACKWARD", "EVERYTHING", "FORWARD", "MODES", "Frame", "Player", "Step", "show"]

# The kinds whose events set a value or a .grad (each class says which: `changes()`).
_CHANGING = tuple(k for k, c in EVENT_TYPES.items() if c.changes is not TraceEvent.changes)


def show(d: dict[str, Any] | TensorValue | None) -> str:
    """An event's tensor value as a label shows it ("None" for a missing grad)."""
    if isinstance(d, dict):
        d = TensorValue.from_event_dict(d)
    return show_value(d)


@dataclass
class Frame:
    """Everything a view draws for the current position."""

    step: Step | None
    visited: set[str]
    labels: dict[str, tuple[str, str]]  # drawn tensor id -> (value text, grad text)
    freed: set[str] = field(default_factory=set)  # nodes whose saved tensors were freed


class Player(_StepLists):
    """Steps through a trace in one of three modes: forward ops, the backward pass, or both."""

    position_changed = Signal(int)
    mode_changed = Signal(str)

    def __init__(self, trace: Trace, graph: DrawnGraph, prepared: bool = True) -> None:
        """`prepared` False leaves the replay's tables (value histories, the first view's
        steps) to `prepare`, which a worker thread calls once the picture is on screen:
        the 8k-node RNN's 0.26 s of them no longer wait in front of its first picture."""
        self.trace = trace
        self.graph = graph
        self._index = trace.index
        # Held while a table is built: the worker preparing and the GUI thread asking
        # early build it once, not twice (re-entrant: building steps reads histories).
        self._building = threading.RLock()
        self._histories_built: tuple[dict, dict] | None = None
        self._captions = _Captions(self._index, graph)
        # Per mode, built when the mode is first shown.
        self._steps: dict[str, list[Step]] = {}
        # Per mode, each node in the order it first lights up, with that step's number:
        # the nodes visited by a position are a prefix, found by bisection, not a scan.
        self._first_lit: dict[str, tuple[list[str], list[int]]] = {}
        self.freeing = freeing(trace)
        # A second backward's error step rings the freed node(s) it ran into.
        self._error_lit = second_backward_errors(trace, self.freeing)
        self._opened: set[int] = set()  # folded statements shown op by op (first event)
        self.mode = FORWARD
        self.position = -1  # -1: before the first step
        # Whether it has moved since it was made: until then the run's end is shown (the
        # canvas's state after a run, the timeline at its end).
        self.moved = False
        if prepared:
            self.prepare()

    def prepare(self) -> None:
        """Build what replaying needs: each tensor's value history and the current view's
        steps (done when first needed otherwise)."""
        self._histories_now()
        self.steps_in(self.mode)

    @property
    def ready(self) -> bool:
        """Whether `prepare` has built everything (nothing then waits on a first step)."""
        return self._histories_built is not None and self.mode in self._first_lit

    @property
    def _values(self) -> dict:
        return self._histories_now()[0]

    @property
    def _grads(self) -> dict:
        return self._histories_now()[1]

    def _histories_now(self) -> tuple[dict, dict]:
        built = self._histories_built
        if built is None:
            with self._building:
                built = self._histories_built
                if built is None:
                    with collections_postponed():
                        built = self._histories_built = self._histories()
        return built

    # ---- navigation ---------------------------------------------------------------
    @property
    def steps(self) -> list[Step]:
        """The steps of the current mode."""
        return self.steps_in(self.mode)

    def steps_in(self, mode: str) -> list[Step]:
        """The steps of any mode."""
        if mode not in self._first_lit:
            with self._building:
                if mode not in self._first_lit:
                    steps = self._build_steps(mode)
                    self._steps[mode] = steps
                    self._first_lit[mode] = self._first_lit_at(steps)
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
            # The position goes first: a listener of mode_changed may read `current`, and
            # the old position can lie past the end of the new mode's steps.
            self.mode, self.position = mode, -1
            self.mode_changed.emit(mode)
            self.seek(-1, force=True)

    def seek(self, position: int, force: bool = False) -> None:
        """Go to a step (clamped to -1 … last)."""
        position = max(-1, min(position, len(self.steps) - 1))
        if position != self.position or force:
            self.position, self.moved = position, True
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

    def fold_at(self) -> tuple[int, ...]:
        """The trace events of the module-building statement the current step stands
        for, folded or opened (empty when it is no such step)."""
        step = self.current
        if step is None:
            return ()
        return step.folded or step.opened_from

    def toggle_fold(self) -> None:
        """Open the current folded step into its ops, or fold them back into one step.
        Playback stays on the same statement: on its first op when opened."""
        group = self.fold_at()
        if not group:
            return
        with self._building:
            self._opened ^= {group[0]}
            self._steps.clear()
            self._first_lit.clear()
        target = group[0] if group[0] in self._opened else group[-1]
        position = next(s.number for s in self.steps if s.event_index == target)
        self.seek(position, force=True)

    def use_graph(self, graph: DrawnGraph) -> None:
        """Follow a new drawing of the same trace (a module opened or closed): the view and
        the step stay; what each step lights up is worked out again for the new boxes."""
        with self._building:  # not while a worker still builds steps for the old one
            self.graph = graph
            self._captions.graph = graph
            self._steps.clear()
            self._first_lit.clear()

    # ---- state at the current position --------------------------------------------
    def event_index(self) -> int:
        """Index in trace.events of the moment shown: the current step's event, or at the
        start the moment before the view's first step."""
        step = self.current
        return step.event_index if step is not None else self.start_index()

    def start_index(self, mode: str | None = None) -> int:
        """The moment a view's start (position -1) shows. Forward and Both start before
        everything; Backward starts just before its first step, so the forward that led
        to the first backward() has run and its values are shown, not "…"; a run with no
        backward at all shows its forward's end there."""
        mode = mode or self.mode
        if mode != BACKWARD:
            return -1
        steps = self.steps_in(mode)
        return steps[0].event_index - 1 if steps else self._index.size - 1

    def unseen_changes(self) -> str:
        """What changed since the previous Forward step in events that view skips: a
        Forward step after a backward() shows the .grad it wrote, and this says where it
        came from ("" when nothing did, and in the other views)."""
        step = self.current
        if step is None or self.mode != FORWARD:
            return ""
        before = self.steps[step.number - 1].event_index if step.number else -1
        names: dict[str, None] = {}  # ordered, without repeats
        lines: dict[int, None] = {}
        for i in range(before + 1, step.event_index):
            e = self._index.event(i)
            if e.kind not in _CHANGING:
                continue
            for change in e.changes():
                if change.grad and change.tensor in self.graph.nodes:
                    info = self._index.tensors.get(change.tensor)
                    names[((info.name if info else None) or "tensor") + ".grad"] = None
                    if e.line:
                        lines[e.line] = None
        if not names:
            return ""
        where = ", ".join(f"line {n}" for n in lines) or "code the trace has no line for"
        return (
            f"Since the previous step, {', '.join(names)} changed on {where}, which the "
            "Forward view skips (Backward or Both replays it)."
        )

    def grad_at(self, tensor_id: str, event_index: int | None = None) -> TensorValue | None:
        """`.grad` of a tensor as it was right after `event_index` (default: now)."""
        index = self.event_index() if event_index is None else event_index
        return self._as_of(self._grads.get(tensor_id), index)

    def value_at(self, tensor_id: str, event_index: int | None = None) -> TensorValue | None:
        """A tensor's value right after `event_index` (None: not computed yet)."""
        index = self.event_index() if event_index is None else event_index
        return self._as_of(self._values.get(tensor_id), index)

    def frame(self) -> Frame:
        """What to draw now."""
        self.steps_in(self.mode)
        keys, at = self._first_lit[self.mode]
        visited = set(keys[: bisect_right(at, self.position)])
        index = self.event_index()
        nodes = self.graph.nodes
        labels = {t.id: self.label_at(t.id, index) for t in self.trace.tensors if t.id in nodes}
        return Frame(self.current, visited, labels, freed_at(self.freeing, index))

    def first_lit(self, mode: str) -> dict[str, int]:
        """Each drawn key a view lights, with the step that first lights it: a frame at
        position p shows as visited the keys first lit at or before p."""
        self.steps_in(mode)
        keys, at = self._first_lit[mode]
        return dict(zip(keys, at, strict=True))

    def label_at(self, tensor_id: str, event_index: int) -> tuple[str, str]:
        """A drawn tensor's label lines right after `event_index`: (value text, grad text;
        "" for a tensor whose .grad nothing tracks)."""
        t = self._index.tensors[tensor_id]
        value = self.value_at(tensor_id, event_index)
        grad = self.grad_at(tensor_id, event_index)
        tracks_grad = (t.is_leaf and t.requires_grad) or t.retains_grad
        return (
            "…" if value is None else show_value(value),
            ("grad " + show_value(grad)) if (grad is not None or tracks_grad) else "",
        )

    def label_changes(self, tensor_id: str) -> list[int]:
        """The trace events after which a tensor's label may read differently (its value
        or its .grad changed), in order: a view that precomputes labels asks only there."""
        values, grads = self._values.get(tensor_id), self._grads.get(tensor_id)
        return sorted({*(values[0] if values else ()), *(grads[0] if grads else ())})

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
        index = self._index
        event = index.event
        for i in index.of_kind(*_CHANGING):
            for change in event(i).changes():
                table = grads if change.grad else values
                history = table.get(change.tensor)
                if history is None:
                    history = table[change.tensor] = ([], [], change.before)
                history[0].append(i)
                history[1].append(change.after)
        for t in self.trace.tensors:
            if t.grad_of is not None and t.id not in values and t.grad_of in grads:
                values[t.id] = _since_made(grads[t.grad_of])
        return values, grads


def _since_made(
    history: tuple[list[int], list[Any], Any],
) -> tuple[list[int], list[Any], Any]:
    """A `.grad` history from where its last grad object was made: after the last time it
    was None (`g = w.grad` is that object; an earlier one was another tensor)."""
    at, after, _before = history
    start = max((k + 1 for k, value in enumerate(after) if value is None), default=0)
    return at[start:], after[start:], None
