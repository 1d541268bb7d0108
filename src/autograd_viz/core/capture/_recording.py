"""What the capture helpers need from the tracer: the run's record and the means to add to it.

The tracer's parts (node hooks, backward passes, module and optimizer hooks, compiled
calls) write events, give ids, take snapshots and ask for the user's line through one
`Recording`, and never reach into the `Tracer` itself. Torch ops the recorder runs for
itself, or that are not the user's (inside `optimizer.step()`), run in an
`unrecorded()` block.
"""

from __future__ import annotations

import contextlib
import sys
import weakref
from typing import Any

import torch

from autograd_viz.core.capture._guards import unseen
from autograd_viz.core.capture._passes import RunningPasses
from autograd_viz.core.capture._registry import Registry
from autograd_viz.core.capture._step_stats import StepStats
from autograd_viz.core.trace.values import Snapshots

_ENDED = 1 << 30  # `quiet` once the run is over: nothing nests that deep
QUIET_BREAKS_KEPT = 256  # a loop's `x.detach()` of data: only a recent one is used next


class Recording:
    """One run's record: its events, its ids, its snapshots, the backward passes running
    now, and whether torch ops are recorded at this moment."""

    def __init__(
        self, events: list[dict[str, Any]], filename: str, registry: Registry, max_events: int
    ) -> None:
        self.events = events
        self.filename = filename  # the user's code: what `user_line` looks for
        self.registry = registry
        self.max_events = max_events
        self.events_capped = False
        # > 0 while torch ops run unrecorded. Read on every op, so a plain attribute;
        # change it only through `unrecorded()` / `own_reads()` / `end()`.
        self.quiet = 0
        self.ended = False  # the run is over: a thread still running records no more
        self.snapshots = Snapshots()
        self.value = self.snapshots.take  # an event's snapshot of a tensor
        self.recall = self.snapshots.recall  # the same, shared while the tensor is unchanged
        self.passes = RunningPasses()  # the backward calls running now
        self.step_stats = StepStats()  # gradient health per optimizer step
        # The last torch call that raised: (the exception, the op, its input tensors' ids).
        # If that exception ends the script, its error event names the op and its inputs.
        self.failed: tuple[BaseException, str, list[str]] | None = None
        self.retained: dict[str, Any] = {}  # tensors that asked for retain_grad(), weakly
        # Leaves with a post-accumulate-grad hook (their AccumulateGrad is recorded when
        # the hooks begin: `_backward.BackwardRecorder.accumulated`), weakly.
        # (By id, each with a weak reference: a WeakSet compares tensors with `==`.)
        self.post_accumulate: dict[int, Any] = {}
        self._grad_owner: dict[int, tuple[Any, str]] = {}  # id(grad) -> (weakref, leaf id)
        # `a.detach()` or `a.data` of a tensor that needs no grad cuts nothing, so no event
        # says what it is: id(result) -> (result, a) weakly, and how, so the op that first
        # uses it can call it `a.detach()` (capture._first_met), not by its id.
        self.quiet_breaks: dict[int, tuple[Any, Any, str]] = {}

    # ---- what is recorded -------------------------------------------------------------
    def unrecorded(self) -> Unrecorded:
        """A block whose torch ops are not recorded (blocks nest)."""
        return Unrecorded(self)

    def own_reads(self) -> OwnReads:
        """A block where the recorder reads tensors for itself: nothing in it is
        recorded, and no subclass or mode of the user's sees it."""
        return OwnReads(self)

    def end(self) -> None:
        """The run is over: nothing records any more, on any thread."""
        self.ended = True
        self.quiet = _ENDED

    # ---- writing the record -------------------------------------------------------------
    def emit(self, event: dict[str, Any]) -> None:
        """Append an event unless the event cap is reached."""
        if len(self.events) >= self.max_events:
            self.events_capped = True
            return
        self.events.append(event)

    def tid(self, t: torch.Tensor) -> str:
        """The trace id of a tensor."""
        return self.registry.tensor_id(t)

    def user_line(self) -> int | None:
        """The line of the user's code that is running now (the innermost one)."""
        frame = sys._getframe(2)  # usually the user's frame: dispatch ← __torch_function__
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def quiet_break(self, source: torch.Tensor, result: torch.Tensor, how: str) -> None:
        """`result` is `source`'s `how` (`.detach()`), which cut no history (see
        `quiet_breaks`); the last QUIET_BREAKS_KEPT are remembered."""
        try:
            self.quiet_breaks[id(result)] = (weakref.ref(result), weakref.ref(source), how)
        except TypeError:  # a tensor-like without weakref support
            return
        if len(self.quiet_breaks) > QUIET_BREAKS_KEPT:
            del self.quiet_breaks[next(iter(self.quiet_breaks))]

    def quiet_source(self, t: torch.Tensor) -> tuple[torch.Tensor, str] | None:
        """The tensor `t` is a quiet break of, and how (`.detach()`), if it is one."""
        entry = self.quiet_breaks.get(id(t))
        if entry is None or entry[0]() is not t:
            return None
        source = entry[1]()
        return None if source is None else (source, entry[2])

    def own_grad(self, grad: torch.Tensor | None, leaf_id: str) -> None:
        """Remember that `grad` is the .grad of a leaf, to spot `.grad.zero_()` later."""
        if isinstance(grad, torch.Tensor):
            entry = self._grad_owner.get(id(grad))
            if entry is not None and entry[1] == leaf_id and entry[0]() is grad:
                return  # known already (read on every `.grad` access)
            with contextlib.suppress(TypeError):
                self._grad_owner[id(grad)] = (weakref.ref(grad), leaf_id)

    @property
    def grads_known(self) -> bool:
        """Whether any leaf's .grad has been seen (before that, no op needs asking)."""
        return bool(self._grad_owner)

    def grad_owner(self, t: Any) -> str | None:
        """The leaf whose .grad `t` is, if we know it."""
        entry = self._grad_owner.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None


# Objects with __enter__/__exit__ rather than @contextmanager generators: own_reads runs
# for every history break and grad reset, and a generator costs several times more.
class Unrecorded:
    """`Recording.unrecorded()`: torch ops in the block are not recorded. Entering and
    leaving may also happen in two separate hooks (before and after `optimizer.step()`)."""

    __slots__ = ("_recording",)

    def __init__(self, recording: Recording) -> None:
        self._recording = recording

    def __enter__(self) -> None:
        self._recording.quiet += 1

    def __exit__(self, *exc: Any) -> None:
        self._recording.quiet -= 1


class OwnReads:
    """`Recording.own_reads()`: unrecorded, and below every user subclass and mode."""

    __slots__ = ("_guard", "_recording")

    def __init__(self, recording: Recording) -> None:
        self._recording = recording

    def __enter__(self) -> None:
        self._recording.quiet += 1
        self._guard = unseen()
        self._guard.__enter__()

    def __exit__(self, *exc: Any) -> None:
        try:
            self._guard.__exit__(*exc)
        finally:
            self._recording.quiet -= 1
