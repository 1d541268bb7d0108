"""The main window: assembles the panes and connects their signals. No logic of its own."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QMainWindow,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.core.graph.summary import graph_summary
from autograd_viz.core.learning.exercise_catalog import EXERCISES
from autograd_viz.core.learning.lab_tasks import TASKS as LAB_TASKS
from autograd_viz.core.learning.progress import Progress, load_progress
from autograd_viz.core.platform.preferences import save_keep_variables
from autograd_viz.core.playback.player import Player
from autograd_viz.core.playback.run_text import finished_line, nothing_ran
from autograd_viz.core.playback.run_view import RunView, ShownRun
from autograd_viz.core.playback.source_map import SourceMap
from autograd_viz.core.trace import Trace
from autograd_viz.resources import DEFAULT_EXAMPLE, ICON
from autograd_viz.session import KernelSession, KernelState
from autograd_viz.ui._run_links import RunLinks
from autograd_viz.ui._sideways_scroll import SidewaysScroll
from autograd_viz.ui._trace_opener import TraceOpener, dropped_path
from autograd_viz.ui._window_menus import build_toolbar, fill_menus
from autograd_viz.ui.descent.descent_pane import DescentPane
from autograd_viz.ui.editor.console import ConsolePane
from autograd_viz.ui.editor.document import Document
from autograd_viz.ui.editor.editor_pane import EditorPane
from autograd_viz.ui.editor.run_lines import EditorFollowsRun
from autograd_viz.ui.graph.compare_pane import ComparePane
from autograd_viz.ui.graph.export import AnimationExporter
from autograd_viz.ui.graph.export_actions import ExportActions
from autograd_viz.ui.graph.fold_bar import FoldBar
from autograd_viz.ui.graph.graph_canvas import GraphCanvas
from autograd_viz.ui.graph.held_numbers import HeldNumbers
from autograd_viz.ui.graph.inspector import Inspector
from autograd_viz.ui.graph.player_bar import PlayerBar
from autograd_viz.ui.kernel.device_picker import DevicePicker
from autograd_viz.ui.kernel.kernel_connection import KernelConnection
from autograd_viz.ui.kernel.kernel_status import KernelStatus
from autograd_viz.ui.learning.exercises_pane import ExercisesPane
from autograd_viz.ui.learning.lab_pane import LabPane
from autograd_viz.ui.learning.lessons_pane import LessonsPane
from autograd_viz.ui.learning.quiz_pane import QuizPane
from autograd_viz.ui.theme import Theme
from autograd_viz.ui.training.training_pane import TrainingPane

SOURCE_NAME = "<editor>"
KERNEL_GONE = (
    "The kernel stopped, and the graph of its last run went with it. "
    "Run your code again (Ctrl+Enter) once it has restarted."
)
KERNEL_RESTARTED = "The kernel restarted: run your code again (Ctrl+Enter) to see its graph."


class MainWindow(QMainWindow):
    """Editor on the left, graph in the centre, console below, kernel state in the status bar."""

    trace_shown = Signal(object)  # the Trace just drawn

    def __init__(
        self, session: KernelSession | None = None, progress: Progress | None = None
    ) -> None:
        super().__init__()
        # One record of the learner's progress, shared by every pane that marks or shows it.
        self.progress = load_progress() if progress is None else progress
        self.setWindowIcon(QIcon(str(ICON)))
        self.session = session or KernelSession(self)
        self.editor_pane = EditorPane()
        self.editor = self.editor_pane.editor
        # Path, unsaved changes, autosave and recovery of the editor's text live here.
        self.document = Document(self, self.editor, self.editor_pane.recovery_bar)
        self.theme = Theme(self)
        # What the graph tab shows; the canvas, player bar, inspector and editor follow it.
        self.run_view = RunView()
        self.canvas = GraphCanvas(view=self.run_view)
        self.fold_bar = FoldBar(self.run_view)
        self.console = ConsolePane()
        self.console.set_source_name(SOURCE_NAME)
        self.kernel_status = KernelStatus()
        self.kernel_connection = KernelConnection(self, self.session, self.kernel_status)
        self.device_picker = DevicePicker(self.session)
        self.player_bar = PlayerBar()
        # Big tensors' numbers stay in the kernel until a view asks (core/kernel/held.py).
        self.held_numbers = HeldNumbers(self.session, self)
        self.inspector = Inspector(numbers=self.held_numbers)
        self.descent: DescentPane | None = None
        self.training = TrainingPane()
        self.training.follow(self.run_view)
        self.compare = ComparePane(numbers=self.held_numbers)
        self.compare.follow(self.run_view)
        self.lessons = LessonsPane(self.progress, opener=self.open_example)
        self.lessons.set_totals({"task": len(LAB_TASKS), "exercise": len(EXERCISES)})
        self.quiz = QuizPane(self.progress)
        self.lab = LabPane(self.session, self.progress)
        self.exercises = ExercisesPane(self.progress, source=self.editor.text)
        self.inspector.hide()  # until a node is clicked
        self.player_bar.follow(self.run_view)
        self.inspector.follow(self.run_view)
        self.editor_follows = EditorFollowsRun(self.editor, self.run_view)
        self._pending_run = False
        self._build_layout()
        self.setAcceptDrops(True)  # a .json trace or a .py file dropped on the window
        self.exports = ExportActions(self, self.canvas, self.graph_area, lambda: self.player)
        build_toolbar(self)
        fill_menus(self)
        self._connect()
        self.theme.apply()
        self.set_document(DEFAULT_EXAMPLE.read_text(encoding="utf-8"), None)

    @property
    def player(self) -> Player | None:
        """The shown run's player."""
        return self.run_view.player

    @property
    def source_map(self) -> SourceMap | None:
        """The shown run's line map."""
        return self.run_view.source_map

    # ---- assembly --------------------------------------------------------------
    def _build_layout(self) -> None:
        graph_area = self.graph_area = QWidget()
        graph_area.setObjectName("graphArea")
        column = QVBoxLayout(graph_area)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.fold_bar)
        column.addWidget(self.canvas, 1)
        column.addWidget(self.player_bar)
        self.player_bar.install_shortcuts(graph_area)
        self.fold_bar.install_shortcuts(graph_area)
        beside = QSplitter(Qt.Orientation.Horizontal)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("mainTabs")
        self.tabs.addTab(graph_area, "Graph")
        self.tabs.addTab(self.training, "Training")
        self.tabs.addTab(self.compare, "Compare")
        self.tabs.addTab(QWidget(), "Descent")  # built on first visit: it loads torch
        self.tabs.addTab(SidewaysScroll(self.lab), "Lab")
        self.tabs.addTab(self.lessons, "Lessons")
        self.tabs.addTab(self.quiz, "Quiz")
        self.tabs.addTab(self.exercises, "Exercises")  # cheap: checks run in a child
        self.tabs.currentChanged.connect(self._tab_changed)
        beside.addWidget(self.tabs)
        beside.addWidget(self.inspector)
        beside.setStretchFactor(0, 4)
        beside.setStretchFactor(1, 1)
        beside.setSizes([640, 240])
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(beside)
        right.addWidget(self.console)
        right.setStretchFactor(0, 4)
        right.setStretchFactor(1, 1)
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(self.editor_pane)
        main.addWidget(right)
        main.setStretchFactor(0, 2)
        main.setStretchFactor(1, 3)
        main.setSizes([520, 880])
        right.setSizes([640, 200])
        self.setCentralWidget(main)
        self.statusBar().addPermanentWidget(self.kernel_status)

    def make_action(
        self, text: str, slot, shortcut: str | QKeySequence | None = None, tip: str = ""
    ) -> QAction:
        """An action of this window: its text, what it calls, its shortcut and tooltip."""
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(tip or text)
        action.triggered.connect(slot)
        return action

    def _connect(self) -> None:
        self.editor.run_requested.connect(self.run_code)
        self.lessons.tab_requested.connect(self.show_tab)
        self.quiz.example_requested.connect(self.open_example)
        self.exercises.starter_requested.connect(self.open_example)
        self.exercises.line_requested.connect(self.editor.goto_line)
        self.run_view.run_changed.connect(self._run_shown)
        # A fold or an opening redraws the graph: the status bar counts what is drawn now.
        self.run_view.graph_changed.connect(lambda: self._run_shown(self.run_view.run, True))
        self.console.line_clicked.connect(self.editor.goto_line)
        self.canvas.node_clicked.connect(self.run_view.inspect)
        self.canvas.why_asked.connect(self.inspector.ask_why)
        # Where the Training and Compare tabs and the inspector's answers lead.
        self.links = RunLinks(self)
        self.traces = TraceOpener(self)  # recorded traces: File → Open trace…, drops
        self.inspector.why.fix_requested.connect(self.links.apply_fix)
        s = self.session
        s.state_changed.connect(self._on_state)
        s.kernel_info.connect(self.kernel_status.set_info)
        s.stdout.connect(self.console.append_stdout)
        s.stderr.connect(self.console.append_stderr)
        s.notice.connect(self.console.append_info)
        s.start_failed.connect(self._on_start_failed)
        s.run_finished.connect(self._on_run_finished)
        self.document.message.connect(lambda text: self.statusBar().showMessage(text, 4000))
        self.theme.dark_changed.connect(self.editor.set_dark)
        self.theme.dark_changed.connect(self.canvas.set_dark)
        self.theme.dark_changed.connect(self.lab.canvas.set_dark)
        self.theme.dark_changed.connect(self.inspector.set_dark)
        self.theme.dark_changed.connect(self.training.set_dark)
        self.training.step_chosen.connect(self.links.show_training_step)
        self.compare.show_tensor.connect(self.links.show_tensor)

    # ---- documents -------------------------------------------------------------
    def set_document(self, text: str, path: Path | None) -> None:
        """Put text in the editor as the content of `path` (never runs it)."""
        self.document.set_text(text, path)

    def open_path(self, path: Path) -> bool:
        """Open a file into the editor, or say why it cannot be opened."""
        # Examples open as untitled copies, so saving never overwrites the shipped file.
        return self.document.open_path(path, as_copy=Path(path).parent == DEFAULT_EXAMPLE.parent)

    def open_example(self, code: str, run: bool = False) -> bool:
        """Put a lesson's example in the editor; run it (as Ctrl+Enter does) when asked.

        False when the learner kept their unsaved changes (Cancel), and nothing happened.
        """
        if not self.document.open_text(code):
            return False
        if run:
            self.tabs.setCurrentWidget(self.graph_area)
            self.run_code()
        return True

    # ---- running ---------------------------------------------------------------
    def run_code(self) -> None:
        """Run the editor's text in the kernel (queued if the kernel is still starting)."""
        self.document.autosave_now()  # a run may crash the app: the text is safe first
        if self.traces.replaying:
            self.statusBar().showMessage(
                "This is a recording: press “Edit to run it here” above the code first.", 5000
            )
            return
        state = self.session.state
        if state is KernelState.BUSY:
            self.statusBar().showMessage("Still running: press Stop first.", 3000)
            return
        if state in (KernelState.STARTING, KernelState.DEAD):
            self._pending_run = True
            self.statusBar().showMessage("Will run as soon as the kernel is ready…")
            if state is KernelState.DEAD:
                self.restart_kernel()
            return
        self.editor.clear_error()
        path = self.document.path
        self.console.append_info(f"▶ Running {path.name if path else SOURCE_NAME}")
        run = self.session.run(self.editor.text(), SOURCE_NAME, path=str(path) if path else "")
        started = time.perf_counter()
        run.finished.connect(lambda answer: self._run_answered(answer, started))

    def _run_answered(self, answer: dict, started: float) -> None:
        """This run's own answer: its trace is drawn; without one, no earlier graph stays."""
        if answer["ok"] and answer.get("trace") is not None:
            self.console.append_info(finished_line(answer["trace"], time.perf_counter() - started))
            self.show_trace(answer["trace"])
        elif self.session.state in (KernelState.DEAD, KernelState.STARTING):
            self.run_view.clear(KERNEL_GONE)  # it died under this run, or was restarted
        elif answer.get("error"):
            self.run_view.clear(f"No graph: {answer['error']['message']}")

    @property
    def keep_variables(self) -> bool:
        """Whether editor runs keep their variables between runs (Run menu)."""
        return self.keep_variables_action.isChecked()

    def keep_variables_toggled(self, keep: bool) -> None:
        """Run → Keep variables between runs was switched."""
        save_keep_variables(keep)
        self.session.set_keep_variables(keep)
        self.statusBar().showMessage(
            "Runs keep their variables: the next run sees this run's names."
            if keep
            else "Each run starts from a fresh namespace, as python file.py does.",
            5000,
        )

    def restart_kernel(self) -> None:
        """Start a fresh kernel; the editor text is untouched."""
        self.console.append_info("Restarting the kernel…")
        self.session.restart()

    def show_trace(self, trace: Trace) -> None:
        """Draw a trace and mark its first error in the editor."""
        self.canvas.show_trace(trace)  # trace_drawn follows: at once, or after a big layout

    def _run_shown(self, run: ShownRun | None, refolded: bool = False) -> None:
        """A run is on screen (or its graph was folded again): its first error is marked,
        the status bar sums it up."""
        if run is None:
            return
        trace = run.trace
        errors = trace.errors
        if errors and errors[0].get("line") and not refolded:
            first = errors[0]
            self.editor.mark_error(int(first["line"]), f"{first['type']}: {first['message']}")
        graph = run.graph
        ops, passes = trace.index.count("op"), trace.index.count("backward")
        summary = (
            f"{graph_summary(graph)}  ·  run: {ops} ops, "
            f"{passes} backward pass{'es' if passes != 1 else ''}"
        )
        if errors:
            summary += f" — {errors[0]['type']} on line {errors[0].get('line') or '?'}"
        if nothing_ran(trace):
            summary = nothing_ran(trace)
        if trace.events and trace.events[-1].get("namespace") == "kept":
            summary += "  ·  variables kept from earlier runs"
        self.statusBar().showMessage(summary)
        if not refolded:
            self.trace_shown.emit(trace)

    def show_step(self, mode: str | None, step: int | None) -> None:
        """Put the player in a view at a step (1-based; None: the view's last step)."""
        if self.player is None:
            return
        self.player.set_mode(mode or self.player.mode)
        if step is None:
            self.player.to_end()
        else:
            self.player.seek(step - 1)

    def _on_state(self, state: str) -> None:
        self.kernel_status.set_state(state)
        # No graph outlives its kernel: what it showed was that kernel's run.
        if state == KernelState.DEAD.value:
            self.run_view.clear(KERNEL_GONE)
        elif state == KernelState.STARTING.value and self.run_view.run is not None:
            self.run_view.clear(KERNEL_RESTARTED)
        busy = state == KernelState.BUSY.value
        self.stop_action.setEnabled(busy)
        self.run_action.setEnabled(not busy)
        if state == KernelState.IDLE.value and self._pending_run:
            self._pending_run = False
            QTimer.singleShot(0, self.run_code)

    def _on_run_finished(self, ok: bool) -> None:
        if not ok and self.editor.error_line is None:
            self.statusBar().showMessage("The run did not finish: see the console.")

    def _on_start_failed(self, message: str) -> None:
        self._pending_run = False
        self.console.append_error(message + "\n")
        self.statusBar().showMessage("The kernel could not start: see the console.")

    def _tab_changed(self, index: int) -> None:
        if self.tabs.tabText(index) == "Descent" and self.descent is None:
            self.show_descent()

    def show_descent(self) -> DescentPane:
        """The descent view (built the first time: it computes with torch in a thread)."""
        if self.descent is None:
            self.descent = DescentPane(self.session)
            self.descent.set_dark(self.theme.dark)
            self.theme.dark_changed.connect(self.descent.set_dark)
            self.lab.watch_descent(self.descent)
            index = [self.tabs.tabText(i) for i in range(self.tabs.count())].index("Descent")
            self.tabs.blockSignals(True)
            self.tabs.removeTab(index)
            self.tabs.insertTab(index, self.descent, "Descent")
            self.tabs.blockSignals(False)
        self.tabs.setCurrentWidget(self.descent)
        return self.descent

    def show_tab(self, name: str) -> None:
        """Bring a tab to the front by its name ("Descent", "Lessons", "Lab", …)."""
        if name == "Descent":
            self.show_descent()
            return
        names = [self.tabs.tabText(i) for i in range(self.tabs.count())]
        if name in names:
            self.tabs.setCurrentIndex(names.index(name))
        else:
            self.statusBar().showMessage(f"There is no {name} tab in this version.", 4000)

    def export_animation(self, path: Path) -> AnimationExporter | None:
        """Replay the forward and backward passes into an animated GIF (in the background)."""
        return self.exports.export_animation(path)

    def dragEnterEvent(self, event) -> None:  # Qt's name
        if dropped_path(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # Qt's name
        """A dropped .json opens as a recorded trace, a .py as the editor's file."""
        path = dropped_path(event.mimeData())
        if path is None:
            return
        event.acceptProposedAction()
        if path.suffix.lower() == ".json":
            self.traces.open(path)
        else:
            self.open_path(path)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.document.close():  # the learner cancelled: unsaved changes stay
            event.ignore()
            return
        self.session.shutdown()
        super().closeEvent(event)
