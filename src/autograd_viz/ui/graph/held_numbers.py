"""HeldNumbers: the numbers of a run's big tensors, fetched from the kernel when a view
needs them (the kernel's side and why: core/kernel/held.py).

A trace from the kernel lists its big tensors (more than 64 numbers) with their summaries
and `held` naming the run whose numbers the kernel kept. `fetch` asks the kernel for some
tensors' numbers and fills them into the trace's own values, so every view that reads
them afterwards (the inspector's heatmap and table, the Compare tab) finds them there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QObject

from autograd_viz.core.kernel.held import held_numbers
from autograd_viz.core.trace import TensorInfo, TensorValue, Trace

Then = Callable[[], None]


def holding(trace: Trace, tensors: Iterable[str] | None = None) -> list[str]:
    """The tensors of `trace` (all, or those of `tensors`) whose value or `.grad` has
    numbers that stayed in the kernel."""
    infos = trace.tensors if tensors is None else (trace.tensor(t) for t in tensors)
    return [t.id for t in infos if _run_of(t) is not None]


def _run_of(info: TensorInfo) -> str | None:
    """The run whose kernel holds the numbers of the tensor's value or `.grad`, if any."""
    return next((v.held for v in (info.value, info.grad) if v is not None and v.held), None)


class HeldNumbers(QObject):
    """Fetches held numbers through `session` (a KernelSession: its `call`), one request
    per run and batch of tensors, never two for the same tensor at once."""

    def __init__(self, session: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        # (run, tensor) -> what to call once its numbers are in (or known to be gone).
        self._waiting: dict[tuple[str, str], list[Then]] = {}
        self._calls: list[Any] = []  # the KernelCalls under way (kept so Qt does not drop them)
        self.gone: set[str] = set()  # runs the kernel no longer holds

    def waiting(self, trace: Trace, tensor: str) -> bool:
        """Whether the numbers of `tensor` of `trace` have been asked for and not come yet."""
        return (_run_of(trace.tensor(tensor)), tensor) in self._waiting

    def fetch(self, trace: Trace, tensors: Iterable[str], then: Then) -> bool:
        """Ask for the held numbers of `tensors` of `trace`; True if some are on their way
        (`then` is called once they are in the trace, or known to be lost), False if there is
        nothing to fetch (none held, or held by a run the kernel has let go of)."""
        by_run: dict[str, list[TensorInfo]] = {}
        for tensor in holding(trace, tensors):
            info = trace.tensor(tensor)
            run = _run_of(info)
            if run is not None and run not in self.gone:
                by_run.setdefault(run, []).append(info)
        if not by_run:
            return False
        calls = []
        for run, infos in by_run.items():
            asking = [i for i in infos if (run, i.id) not in self._waiting]
            for info in infos:
                self._waiting.setdefault((run, info.id), [])
            if asking:
                calls.append((run, asking))
        # `then` waits for the last of its tensors (one callback list each; called once).
        pending = {(run, i.id) for run, infos in by_run.items() for i in infos}
        left = [len(pending)]

        def one_done() -> None:
            left[0] -= 1
            if left[0] == 0:
                then()

        for key in pending:
            self._waiting[key].append(one_done)
        for run, infos in calls:
            self._ask(run, infos)
        return True

    def _ask(self, run: str, infos: list[TensorInfo]) -> None:
        call = self.session.call(held_numbers, {"run": run, "tensors": [i.id for i in infos]})
        self._calls.append(call)
        call.finished.connect(lambda answer: self._answered(call, run, infos, answer))

    def _answered(self, call: Any, run: str, infos: list[TensorInfo], answer: dict) -> None:
        if call in self._calls:
            self._calls.remove(call)
        result = answer.get("result") if answer.get("ok") else None
        values = result.get("values", {}) if isinstance(result, dict) else {}
        if not answer.get("ok"):
            self.gone.add(run)
        for info in infos:
            numbers = values.get(info.id)
            if isinstance(numbers, dict):
                _fill(info.value, numbers.get("value"))
                _fill(info.grad, numbers.get("grad"))
            for done in self._waiting.pop((run, info.id), []):
                done()


def _fill(value: TensorValue | None, data: Any) -> None:
    """Put the fetched numbers where the trace keeps them; `held` says they are here now."""
    if value is not None and value.held is not None and data is not None:
        value.data, value.held = data, None
