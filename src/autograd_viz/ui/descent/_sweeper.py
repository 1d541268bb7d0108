"""Computes the descent pane's sweeps off the GUI thread: the built-in functions in a
worker thread, the user's own loss(w, b) or model in the kernel (where the user's code
lives). Only the answer to the latest request is delivered."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from autograd_viz.ui.descent._descent_sweep import (
    RATE_COUNT,
    Sweep,
    landscape_from_kernel,
    sweep_from_kernel,
    sweep_stages,
    user_first_rates,
    user_rate_parts,
    with_kernel_rates,
)

POINTWISE = "point by point"  # core.descent.sweep.POINTWISE (not imported: it loads torch)

if TYPE_CHECKING:
    from autograd_viz.session import KernelSession

NO_KERNEL = "No kernel: the pane was opened without one, so it cannot run your code."


class _Mailbox(QObject):
    """What the sweep threads answer through, and the generation they work for. The
    threads hold this, never the Sweeper: the Sweeper dies with its pane while a thread
    may still compute, and a signal emitted on a QObject the GUI thread is deleting
    crashed the process (a segfault in CI)."""

    done = Signal(int, object)  # generation, Sweep | Exception

    def __init__(self) -> None:
        super().__init__()  # no parent: it lives as long as the Sweeper or a thread holds it
        self.generation = 0  # the latest request's; -1 once the Sweeper is gone

    def current(self, generation: int) -> bool:
        return generation == self.generation

    def close(self) -> None:
        self.generation = -1  # every thread still computing stops at its next stage


class Sweeper(QObject):
    """Ask for a sweep; `ready` or `failed` follows for the latest request only."""

    ready = Signal(object)  # a Sweep
    failed = Signal(str, str)  # a sentence for the pane, the details (a traceback)

    def __init__(self, session: KernelSession | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self._keys: dict[int, tuple] = {}
        self._plan: _UserPlan | None = None
        self._mailbox = mailbox = _Mailbox()
        # Queued from the threads; Qt drops the connection when this object is deleted.
        mailbox.done.connect(self._deliver)
        self.destroyed.connect(mailbox.close)

    @property
    def generation(self) -> int:
        return self._mailbox.generation

    def _next(self) -> int:
        self._mailbox.generation += 1
        self._plan = None  # a user sweep's parts still to ask for: only the latest request's
        return self._mailbox.generation

    def _in_thread(self, generation: int, work: Callable[[], Sweep]) -> None:
        mailbox = self._mailbox

        def run() -> None:
            try:
                result: Sweep | Exception = work()
            except Exception as exc:  # shown in the pane, never lost in a thread
                result = exc
            if mailbox.current(generation):
                mailbox.done.emit(generation, result)

        threading.Thread(target=run, name="descent-sweep", daemon=True).start()

    def builtin(
        self,
        function: str,
        optimizers: list[str],
        start: tuple,
        steps: int,
        reuse: Sweep | None,
        first_rate: float | None = None,
    ) -> None:
        """Paths of a built-in function for every learning rate, computed here: `ready`
        comes once per stage (surface, `first_rate`'s path, each chunk of rates)."""
        generation = self._next()
        stages = sweep_stages(function, list(optimizers), start, steps, reuse, first_rate)
        mailbox = self._mailbox

        def run() -> None:
            try:
                for sweep in stages:
                    if not mailbox.current(generation):
                        return  # superseded or closed: stop computing rates nobody will see
                    mailbox.done.emit(generation, sweep)
            except Exception as exc:  # shown in the pane, never lost in a thread
                mailbox.done.emit(generation, exc)

        threading.Thread(target=run, name="descent-sweep", daemon=True).start()

    def user_function(
        self,
        optimizers: list[str],
        start: tuple,
        steps: int,
        bounds: list | None,
        first_rate: float | None = None,
    ) -> None:
        """The user's loss(w, b) swept in the kernel, in parts: first the surface with the
        slider's rate and a spread of the others, then the rest (in small parts when the
        loss runs one point at a time), `ready` after each so the pane counts them in."""
        # Imported when first asked for: the function object names what the kernel runs,
        # and its module (torch with it) need not load with the app.
        from autograd_viz.core.descent.paths import learning_rate_grid
        from autograd_viz.core.descent.sweep import sweep_in_namespace

        rates = learning_rate_grid(count=RATE_COUNT)
        first = None
        if first_rate is not None:
            first = min(range(len(rates)), key=lambda i: abs(rates[i] - first_rate))
        indices = user_first_rates(len(rates), first)
        arguments = {
            "function": "loss",
            "optimizers": list(optimizers),
            "steps": steps,
            "start": list(start),
            "bounds": bounds,
            "learning_rates": [rates[i] for i in indices],
        }
        key = ("user", tuple(optimizers), tuple(start), steps)
        plan = _UserPlan(key, arguments, rates, first, indices)
        self._ask(sweep_in_namespace, key, arguments, plan)

    def _next_part(self, generation: int, plan: _UserPlan, sweep: Sweep) -> None:
        """Ask the kernel for the next part of the user's rates, over the surface it has."""
        from autograd_viz.core.descent.sweep import sweep_in_namespace

        if generation != self.generation or not plan.parts:
            return
        plan.indices = plan.parts.pop(0)
        arguments = {
            **plan.arguments,
            "learning_rates": [plan.rates[i] for i in plan.indices],
            "bounds": [list(sweep.ws[[0, -1]]), list(sweep.bs[[0, -1]])],
            "resolution": 0,
        }
        plan.sweep = sweep
        self._keys = {generation: plan.key}
        call = self.session.call(sweep_in_namespace, arguments)
        call.finished.connect(lambda payload: self._kernel_answered(generation, payload, plan))

    def model(self, learning_rate: float, steps: int, span: float, seed: int = 0) -> None:
        """The landscape of the user's model and an SGD path on it, in the kernel."""
        from autograd_viz.core.descent.landscape import landscape_in_namespace

        arguments = {"learning_rate": learning_rate, "steps": steps, "span": span, "seed": seed}
        self._ask(landscape_in_namespace, ("model", learning_rate, steps, span, seed), arguments)

    def _ask(
        self,
        function: Callable[..., Any],
        key: tuple,
        arguments: dict[str, Any],
        plan: _UserPlan | None = None,
    ) -> None:
        generation = self._next()
        if self.session is None:
            self.failed.emit(NO_KERNEL, "")
            return
        self._plan = plan
        self._keys = {generation: key}
        call = self.session.call(function, arguments)
        call.finished.connect(lambda payload: self._kernel_answered(generation, payload, plan))

    def _kernel_answered(
        self, generation: int, payload: dict, plan: _UserPlan | None = None
    ) -> None:
        key = self._keys.pop(generation, None)
        if generation != self.generation or key is None:
            return  # the inputs changed while it computed
        if not payload.get("ok"):
            error = payload.get("error", {})
            kind, message = error.get("type", "Error"), error.get("message", "")
            if kind in ("LookupError", "KernelError", "VersionMismatch"):
                text = message  # our own sentence ("Run your code first: …")
            else:
                text = f"Your code raised {kind}: {message}"
            self.failed.emit(text, error.get("traceback", ""))
            return
        result = payload["result"]
        # Lists of a few hundred thousand numbers: turned into arrays off the GUI thread.
        if key[0] == "model":
            self._in_thread(generation, lambda: landscape_from_kernel(key, result))
        elif plan is None:
            self._in_thread(generation, lambda: sweep_from_kernel(key, result))
        else:
            self._in_thread(generation, lambda: plan.take(result))

    def _deliver(self, generation: int, result: object) -> None:
        if generation != self.generation:
            return  # the inputs changed while it computed
        if isinstance(result, Exception):
            self.failed.emit(f"{type(result).__name__}: {result}", "")
            return
        self.ready.emit(result)
        plan = self._plan  # the latest request's: older answers stopped above
        if plan is not None and isinstance(result, Sweep) and not result.complete:
            self._next_part(generation, plan, result)


class _UserPlan:
    """The parts a user's sweep is asked for, and what has come back so far."""

    def __init__(
        self,
        key: tuple,
        arguments: dict[str, Any],
        rates: list[float],
        first: int | None,
        indices: list[int],
    ) -> None:
        self.key, self.arguments, self.rates, self.first = key, arguments, rates, first
        self.indices = indices  # the rows the call in flight computes
        self.parts: list[list[int]] | None = None  # the calls still to make
        self.sweep: Sweep | None = None  # what the earlier answers filled in

    def take(self, result: dict[str, Any]) -> Sweep:
        """The sweep with one more answer in (off the GUI thread)."""
        if self.sweep is None:
            sweep = sweep_from_kernel(self.key, result, self.indices, self.rates)
            pointwise = result.get("evaluation") == POINTWISE
            self.parts = user_rate_parts(len(self.rates), self.first, pointwise)
        else:
            sweep = with_kernel_rates(self.sweep, result, self.indices)
        return sweep
