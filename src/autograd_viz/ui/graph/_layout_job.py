"""Preparing a big run off the GUI thread: its layout, player and line map."""

from __future__ import annotations

from PySide6.QtCore import QObject, QRunnable, Signal

from autograd_viz.core.graph.folding import READABLE_HEIGHT, READABLE_WIDTH
from autograd_viz.core.platform.gc_pause import collections_postponed, freeze_big_run
from autograd_viz.core.platform.gil_sharing import gil_shared
from autograd_viz.core.playback.run_view import prepare_run
from autograd_viz.core.trace import Trace

# Traces with more nodes and tensors than this are laid out on a worker thread: a
# ResNet-18 step (134 nodes, 0.04-0.2 s of layout on the 2-core machine) held the GUI
# thread past 50 ms; the lessons' graphs (under 30) are drawn before show_trace returns.
BACKGROUND_LAYOUT_SIZE = 100
# Past this size the canvas says "Laying out…" and the player's tables wait until the
# picture has painted (ReplayJob); below it the job prepares the whole run at once.
BIG_LAYOUT_SIZE = 2_000


class _Signals(QObject):
    done = Signal(int, object)  # generation, the ShownRun (its picture ready)
    prepared = Signal(int, object)  # generation, the ShownRun (its player ready too)
    failed = Signal(int, str)


class LayoutJob(QRunnable):
    """Runs `prepare_run` for a trace (layout, freeing, source map). With `replay_later` it
    leaves the player's tables to a ReplayJob and answers `done`; without, it answers
    `prepared` with the whole run."""

    def __init__(
        self,
        generation: int,
        trace: Trace,
        previous: dict | None,
        choices: dict | None = None,
        replay_later: bool = True,
        room: tuple[float, float] = (READABLE_WIDTH, READABLE_HEIGHT),
    ) -> None:
        super().__init__()
        self.generation, self.trace, self.previous = generation, trace, previous
        self.choices = choices  # the learner's folds, by group key (a copy: this is a thread)
        self.replay_later = replay_later  # False: the player's tables are made here too
        self.room = room  # the canvas's width and height, in layers and rows
        self.signals = _Signals()

    def run(self) -> None:
        try:
            self._run()
        finally:
            # PySide keeps a started runnable's wrapper alive for good (measured: every
            # job of a session still existed at its end), so it lets go of the trace
            # itself: each big run's 60 MB stayed in memory otherwise.
            self.trace = self.previous = self.choices = None

    def _run(self) -> None:
        trace = self.trace
        size = len(trace.events) + len(trace.tensors) + len(trace.nodes)  # for the freeze
        try:
            with collections_postponed(), gil_shared():
                run = prepare_run(
                    trace,
                    previous=self.previous,
                    choices=self.choices,
                    replay_later=self.replay_later,
                    readable_width=self.room[0],
                    readable_height=self.room[1],
                )
                # Its picture lives as long as it is shown: out of the collector's sight
                # before any pass rescans it while the GUI thread waits (gc_pause.py).
                freeze_big_run(size)
        except Exception as exc:  # the canvas says so instead of hanging on "laying out"
            self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
            return
        # The picture first: the player's tables come after it is painted (ReplayJob).
        (self.signals.done if self.replay_later else self.signals.prepared).emit(
            self.generation, run
        )


class ReplayJob(QRunnable):
    """After a big run's picture is on screen: the player's tables (the 8k-node RNN's
    0.1-0.26 s), the line map and what the graph holds for backward (the memory bar's); answers
    `prepared` through its `signals`. Started once the picture has painted: run beside
    the first paint, its Python work slowed the paint's many GIL handovers to 60 ms."""

    def __init__(self, generation: int, run: object) -> None:
        super().__init__()
        self.generation, self.run_to_prepare = generation, run
        self.signals = _Signals()

    def run(self) -> None:  # Qt's name
        shown, self.run_to_prepare = self.run_to_prepare, None  # see LayoutJob.run
        trace = shown.trace
        try:
            with collections_postponed(), gil_shared():
                shown.player.prepare()
                shown.source_map  # noqa: B018 (made here, read when the editor and graph link)
                shown.memory  # noqa: B018 (measured here, read by the memory bar)
                freeze_big_run(len(trace.events) + len(trace.tensors) + len(trace.nodes))
        except Exception as exc:  # the picture stays; the player says so when asked
            self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
            return
        self.signals.prepared.emit(self.generation, shown)


class _RefoldSignals(QObject):
    done = Signal(object, object)  # the callback, the DrawnGraph
    failed = Signal(str)


class RefoldJob(QRunnable):
    """Lays out a big graph again after a fold or an opening (RunView's refold_runner)."""

    def __init__(self, work, done) -> None:
        super().__init__()
        self.work, self.done = work, done
        self.signals = _RefoldSignals()

    def run(self) -> None:
        try:
            with collections_postponed(), gil_shared():
                graph = self.work()
                # A graph opened all the way (10,000 nodes and more) lives as long as it is
                # shown, like a first picture: out of the collector's sight (gc_pause.py).
                freeze_big_run(len(graph.nodes) + len(graph.edges))
        except Exception as exc:  # said over the canvas; the old picture stays
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        finally:
            self.work = None  # it holds the run: see LayoutJob.run
        self.signals.done.emit(self.done, graph)
        self.done = None
