"""Computes the descent pane's sweeps off the GUI thread: the built-in functions in a
worker thread, the user's own loss(w, b) or model in the kernel (where the user's code
lives). Only the answer to the latest request is delivered."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from autograd_viz.ui.descent._descent_sweep import (
    Sweep,
    landscape_from_kernel,
    sweep_from_kernel,
    sweep_stages,
)

if TYPE_CHECKING:
    from autograd_viz.session import KernelSession

NO_KERNEL = "No kernel: the pane was opened without one, so it cannot run your code."


class Sweeper(QObject):
    """Ask for a sweep; `ready` or `failed` follows for the latest request only."""

    ready = Signal(object)  # a Sweep
    failed = Signal(str, str)  # a sentence for the pane, the details (a traceback)
    _done = Signal(int, object)  # from worker threads: generation, Sweep | Exception

    def __init__(self, session: KernelSession | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self.generation = 0
        self._keys: dict[int, tuple] = {}
        self._done.connect(self._deliver)

    def _next(self) -> int:
        self.generation += 1
        return self.generation

    def _in_thread(self, generation: int, work: Callable[[], Sweep]) -> None:
        def run() -> None:
            try:
                result: Sweep | Exception = work()
            except Exception as exc:  # shown in the pane, never lost in a thread
                result = exc
            self._done.emit(generation, result)

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

        def run() -> None:
            try:
                for sweep in stages:
                    if generation != self.generation:
                        return  # superseded: stop computing rates nobody will see
                    self._done.emit(generation, sweep)
            except Exception as exc:  # shown in the pane, never lost in a thread
                self._done.emit(generation, exc)

        threading.Thread(target=run, name="descent-sweep", daemon=True).start()

    def user_function(
        self, optimizers: list[str], start: tuple, steps: int, bounds: list | None
    ) -> None:
        """The user's loss(w, b) swept in the kernel."""
        arguments = {
            "function": "loss",
            "optimizers": list(optimizers),
            "steps": steps,
            "start": list(start),
            "bounds": bounds,
        }
        # Imported when first asked for: the function object names what the kernel runs,
        # and its module (torch with it) need not load with the app.
        from autograd_viz.core.descent.sweep import sweep_in_namespace

        key = ("user", tuple(optimizers), tuple(start), steps)
        self._ask(sweep_in_namespace, key, arguments)

    def model(self, learning_rate: float, steps: int, span: float, seed: int = 0) -> None:
        """The landscape of the user's model and an SGD path on it, in the kernel."""
        from autograd_viz.core.descent.landscape import landscape_in_namespace

        arguments = {"learning_rate": learning_rate, "steps": steps, "span": span, "seed": seed}
        self._ask(landscape_in_namespace, ("model", learning_rate, steps, span, seed), arguments)

    def _ask(self, function: Callable[..., Any], key: tuple, arguments: dict[str, Any]) -> None:
        generation = self._next()
        if self.session is None:
            self.failed.emit(NO_KERNEL, "")
            return
        self._keys = {generation: key}
        call = self.session.call(function, arguments)
        call.finished.connect(lambda payload: self._kernel_answered(generation, payload))

    def _kernel_answered(self, generation: int, payload: dict) -> None:
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
        convert = landscape_from_kernel if key[0] == "model" else sweep_from_kernel
        result = payload["result"]
        # Lists of a few hundred thousand numbers: turned into arrays off the GUI thread.
        self._in_thread(generation, lambda: convert(key, result))

    def _deliver(self, generation: int, result: object) -> None:
        if generation != self.generation:
            return  # the inputs changed while it computed
        if isinstance(result, Exception):
            self.failed.emit(f"{type(result).__name__}: {result}", "")
        else:
            self.ready.emit(result)
