"""The canvas's work on worker threads: a big trace's layout, its replay once the picture
has painted, and big graphs laid out again after a fold. Stale answers are dropped."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Slot

from autograd_viz.core.playback.run_view import RunView, ShownRun
from autograd_viz.core.trace import Trace
from autograd_viz.ui.graph._layout_job import BIG_LAYOUT_SIZE, LayoutJob, RefoldJob, ReplayJob

REPLAY_AFTER_MS = 40  # a big run's replay is prepared this long after its picture is shown


class CanvasJobs(QObject):
    """Starts and answers the jobs of one canvas's view (answers arrive on its thread)."""

    def __init__(self, view: RunView, parent: QObject) -> None:
        super().__init__(parent)
        self.view = view
        self.generation = 0  # bumps with each layout asked for; stale answers are dropped
        self._jobs: set[LayoutJob | ReplayJob] = set()
        self._refolds: set[RefoldJob] = set()  # big graphs laid out again after a fold

    @property
    def running(self) -> bool:
        """Whether any job is still at work."""
        return bool(self._jobs or self._refolds)

    def new_generation(self) -> int:
        """A new layout is asked for (or none is wanted): what runs now is stale."""
        self.generation += 1
        return self.generation

    def lay_out(
        self, generation: int, trace: Trace, previous: dict | None, room: tuple[float, float]
    ) -> None:
        """Lay out a trace on a worker; the view shows it when done. A big one is shown
        before its player's tables are made, and the canvas says it is laying out."""
        big = len(trace.nodes) + len(trace.tensors) > BIG_LAYOUT_SIZE
        choices = dict(self.view.fold_choices)
        job = LayoutJob(generation, trace, previous, choices, big, room)
        job.setAutoDelete(False)
        self._jobs.add(job)
        job.signals.done.connect(self._layout_done, Qt.ConnectionType.QueuedConnection)
        job.signals.prepared.connect(self._laid_out, Qt.ConnectionType.QueuedConnection)
        job.signals.failed.connect(self._failed, Qt.ConnectionType.QueuedConnection)
        if big:  # a mid-sized one takes a tenth of a second: no message to flash
            self.view.say(f"Laying out {len(trace.nodes):,} nodes…")
        QThreadPool.globalInstance().start(job)

    @Slot(int, object)
    def _laid_out(self, generation: int, run: ShownRun) -> None:
        self._jobs = {j for j in self._jobs if j.generation > generation}
        if generation == self.generation:  # else a newer trace arrived meanwhile
            self.view.show(run)

    @Slot(int, object)
    def _layout_done(self, generation: int, run: ShownRun) -> None:
        if generation != self.generation:
            self._jobs = {j for j in self._jobs if j.generation > generation}
            return  # a newer trace arrived meanwhile
        self.view.show(run)
        # Its replay is prepared once the picture has painted (see ReplayJob).
        QTimer.singleShot(REPLAY_AFTER_MS, lambda: self._prepare_replay(generation, run))

    def _prepare_replay(self, generation: int, run: ShownRun) -> None:
        # The layout job is done; this run's replay job takes its place.
        self._jobs = {j for j in self._jobs if j.generation != generation}
        if generation != self.generation:
            return
        job = ReplayJob(generation, run)
        job.setAutoDelete(False)
        self._jobs.add(job)
        job.signals.prepared.connect(self._replay_prepared, Qt.ConnectionType.QueuedConnection)
        job.signals.failed.connect(self._failed, Qt.ConnectionType.QueuedConnection)
        QThreadPool.globalInstance().start(job)

    @Slot(int, object)
    def _replay_prepared(self, generation: int, run: ShownRun) -> None:
        self._jobs = {j for j in self._jobs if j.generation > generation}
        self.view.replay_prepared(run)

    @Slot(int, str)
    def _failed(self, generation: int, message: str) -> None:
        self._jobs = {j for j in self._jobs if j.generation > generation}
        if generation == self.generation:
            self.view.say(f"Could not lay out this graph: {message}")

    def refold_elsewhere(self, work, done) -> None:
        """Run a big graph's new layout on a worker thread; `done` gets it on this one."""
        job = RefoldJob(work, done)
        job.setAutoDelete(False)
        self._refolds.add(job)

        def finish(callback, graph) -> None:
            self._refolds.discard(job)
            callback(graph)

        def failed(message: str) -> None:
            self._refolds.discard(job)
            self.view.say(f"Could not lay out this graph: {message}")

        job.signals.done.connect(finish, Qt.ConnectionType.QueuedConnection)
        job.signals.failed.connect(failed, Qt.ConnectionType.QueuedConnection)
        QThreadPool.globalInstance().start(job)
