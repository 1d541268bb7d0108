"""Laying out a big graph off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Signal

from autograd_viz.core.freeing import freeing
from autograd_viz.core.graph_model import DrawnGraph, drawn_graph
from autograd_viz.core.trace import Trace

# Traces with more nodes and tensors than this are laid out on a worker thread (about
# 0.1 s of layout at this size; 10,000 nodes take most of a second).
BACKGROUND_LAYOUT_SIZE = 2_000


class _Signals(QObject):
    # generation, trace, graph, freeing events, what `prepare` made
    done = Signal(int, object, object, object, object)
    failed = Signal(int, str)


class LayoutJob(QRunnable):
    """Computes `drawn_graph` and the freeing events of a trace; answers through `signals`."""

    def __init__(
        self,
        generation: int,
        trace: Trace,
        collapsed: set[str],
        previous: dict | None,
        prepare: Callable[[Trace, DrawnGraph], Any] | None = None,
    ) -> None:
        super().__init__()
        self.generation, self.trace = generation, trace
        self.collapsed, self.previous = set(collapsed), previous
        self.prepare = prepare  # more work on the laid-out graph, also off the GUI thread
        self.signals = _Signals()

    def run(self) -> None:
        try:
            graph = drawn_graph(self.trace, self.collapsed, self.previous)
            events = freeing(self.trace)
            prepared = self.prepare(self.trace, graph) if self.prepare is not None else None
        except Exception as exc:  # the canvas says so instead of hanging on "laying out"
            self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
            return
        self.signals.done.emit(self.generation, self.trace, graph, events, prepared)
