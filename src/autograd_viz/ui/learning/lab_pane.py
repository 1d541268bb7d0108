"""The lab tab: toggles and actions on w, x, b, run for real in the kernel's "lab" namespace.

The pane only forwards intent and draws: each action is one `core.lab.lab_step` call in
the kernel (its answer, trace and state, comes back on that call's own `finished`), the
`core.lab.Lab` model keeps the steps, `core.lab_tasks` judges them, and the outcome of a
prediction is read from the step by `core.lab_predict`.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.core.learning.lab import (
    ACTIONS,
    LAB_SOURCE,
    LAB_SPACE,
    LEAVES,
    Lab,
    Step,
    formula_text,
    lab_step,
    toggle_code,
)
from autograd_viz.core.learning.lab_predict import Question, Verdict, judge, question_for
from autograd_viz.core.learning.lab_tasks import TASKS, check_descent_task, tasks_done
from autograd_viz.core.learning.progress import Progress, load_progress
from autograd_viz.session import KernelCall, KernelSession, KernelState
from autograd_viz.ui.graph._caption_label import CaptionLabel
from autograd_viz.ui.graph.graph_canvas import GraphCanvas
from autograd_viz.ui.learning.lab_grad_table import GradTable
from autograd_viz.ui.learning.lab_predict_bar import PredictBar
from autograd_viz.ui.learning.lab_task_list import TaskList

DESCENT_TASK = "lesson1.descent_10_steps"
# The graph's column never forces the window wider: the canvas refits and wraps its legend
# to whatever width it gets (a 1000-pixel window still shows the Graph tab's inspector).
CANVAS_MIN_WIDTH = 220
_ACTION_ROWS = (
    ("forward", "forward_no_grad", "item", "detach"),
    ("backward", "backward_retain", "retain_grad"),
    ("zero_none", "zero_inplace"),
)


class LabPane(QWidget):
    """Lesson 2's lab on real torch: grad table, graph, errors, log, tasks, predictions."""

    step_done = Signal(object)  # the core.lab.Step just recorded
    verdict_shown = Signal(object)  # the core.lab_predict.Verdict of a prediction

    def __init__(
        self,
        session: KernelSession,
        progress: Progress | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("labPane")
        self.session = session
        self.progress = progress if progress is not None else load_progress()
        self.lab = Lab()
        self.started = False
        self._queue: list[tuple[str, str, bool]] = []  # (key, code, fresh) still to run
        self._in_flight: tuple[KernelCall, str, str] | None = None  # (call, key, code)
        self._pending_action: str | None = None  # waiting for a prediction
        self._question: Question | None = None
        self._prediction = ""
        self._before: dict[str, Any] = {}
        self._build()
        self.progress.changed.connect(self._refresh_tasks)
        self.progress.was_reset.connect(self._refresh_tasks)
        session.state_changed.connect(self._on_kernel_state)
        session.kernel_info.connect(self._on_new_kernel)
        self._refresh()

    # ---- assembly --------------------------------------------------------------

    def _build(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.toggles: dict[str, QCheckBox] = {}
        top = QHBoxLayout()
        top.addWidget(QLabel("requires_grad:"))
        for name in LEAVES:
            box = QCheckBox(name)
            box.setChecked(self.lab.requires_grad[name])
            box.setToolTip(f"{name}.requires_grad_(…): switch whether autograd tracks {name}")
            box.toggled.connect(lambda on, n=name: self.toggle(n, on))
            self.toggles[name] = box
            top.addWidget(box)
        top.addStretch(1)
        self.device_label = QLabel()
        top.addWidget(self.device_label)
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Start over: new w, x, b with the toggles as they are")
        self.reset_button.clicked.connect(self.reset)
        top.addWidget(self.reset_button)
        self.formula = QLabel()
        self.formula.setFont(mono)
        self.formula.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid = QGridLayout()
        grid.setSpacing(4)
        self.buttons: dict[str, QPushButton] = {}
        for row, keys in enumerate(_ACTION_ROWS):
            for column, key in enumerate(keys):
                action = ACTIONS[key]
                button = QPushButton(action.label)
                button.setToolTip(f"{action.tip}\n\n{action.code}")
                button.clicked.connect(lambda _=False, k=key: self.perform(k))
                grid.addWidget(button, row, column)
                self.buttons[key] = button
        self.predict_first = QCheckBox("Predict first")
        self.predict_first.setToolTip("Before each action, say what you expect; torch decides")
        self.predict_bar = PredictBar()
        self.predict_bar.answered.connect(self._predicted)
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        # Two lines at most, the rest in its tooltip (and the console): torch's message for
        # a second backward took five lines and pushed the tasks and log out of view.
        self.error = CaptionLabel()
        self.error.setObjectName("labError")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setStyleSheet("color: #b91c1c; font-weight: 600;")
        self.error.hide()  # shown while it has something to say
        self.table = GradTable()
        self.why = QLabel()
        self.why.setFont(mono)
        self.why.setWordWrap(True)
        # The Graph tab's canvas, fed the trace of the whole log (`lab_step`'s picture): the
        # same graph, layout and labels the Graph tab draws for the lab's script.
        self.canvas = GraphCanvas()
        self.canvas.setMinimumSize(CANVAS_MIN_WIDTH, 200)
        self.tasks = TaskList()
        self.log = QPlainTextEdit()
        self.log.setObjectName("labLog")
        self.log.setReadOnly(True)
        self.log.setFont(mono)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the action log as a Python script")
        self.copy_button.clicked.connect(self.copy_script)
        self.replay_button = QPushButton("Replay")
        self.replay_button.setToolTip("Start over and run every logged action again")
        self.replay_button.clicked.connect(self.replay)

        # The chain rule under the table scrolls when the column is short: the table asks
        # for all its rows, and the two must never be drawn over each other.
        why_box = QScrollArea()
        why_box.setWidget(self.why)
        why_box.setWidgetResizable(True)
        why_box.setFrameShape(QFrame.Shape.NoFrame)
        why_box.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        why_box.setMinimumHeight(2 * self.why.fontMetrics().lineSpacing() + 4)
        self.why.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        table_box = _column(self.table, why_box)
        log_buttons = QHBoxLayout()
        log_title = QLabel("Action log")
        log_title.setToolTip("What you did, as an equivalent Python script")
        log_buttons.addWidget(log_title)
        log_buttons.addStretch(1)
        log_buttons.addWidget(self.copy_button)
        log_buttons.addWidget(self.replay_button)
        log_box = _column(log_buttons, self.log)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(self.tasks)
        lower.addWidget(log_box)
        lower.setSizes([230, 230])
        lower.setChildrenCollapsible(False)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(table_box)
        left.addWidget(lower)
        left.setSizes([300, 260])
        # The graph gets a full-height column: at a third of the width its labels were
        # dropped and its legend cut off ("res…").
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(left)
        body.addWidget(self.canvas)
        body.setStretchFactor(0, 1)
        body.setStretchFactor(1, 1)
        body.setSizes([460, 540])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.formula)
        layout.addLayout(grid)
        predict_row = QHBoxLayout()
        predict_row.addWidget(self.predict_first)
        predict_row.addWidget(self.verdict, 1)
        layout.addLayout(predict_row)
        layout.addWidget(self.predict_bar)
        layout.addWidget(self.error)
        layout.addWidget(body, 1)

    # ---- what the learner does ---------------------------------------------------
    def start(self) -> None:
        """Create w, x and b in the kernel (the first time the lab is shown)."""
        if not self.started:
            self.started = True
            self.reset()

    def reset(self) -> None:
        """Empty the lab's namespace and create w, x, b again with the toggles as they are."""
        self.started = True
        self.lab.clear()
        self.predict_bar.hide()
        self._hide_answer(())
        self._pending_action = None
        self._enqueue([("setup", self.lab.setup(), True)])

    def replay(self) -> None:
        """Start from an empty namespace and run every logged action again, in order."""
        plan = self.lab.replay_plan()
        if not plan:
            return
        self.lab.clear()
        self._enqueue([(key, code, i == 0) for i, (key, code) in enumerate(plan)])

    def toggle(self, name: str, on: bool) -> None:
        """Switch a leaf's requires_grad (before the lab starts: how it will be created)."""
        if not self.started:
            self.lab.requires_grad[name] = on
            return
        self._enqueue([("toggle", toggle_code(name, on), False)])

    def perform(self, key: str) -> None:
        """Run one action; with Predict first on, ask the question before running it."""
        if not self._can_act():
            return
        question = question_for(key, self.lab.state) if self.predict_first.isChecked() else None
        if question is None:
            self._run_action(key, None, "")
            return
        self._pending_action = key
        self._question = question
        self._refresh_enabled()
        self._hide_answer(question.hides)
        self.predict_bar.ask(question)

    def _hide_answer(self, columns: tuple[str, ...]) -> None:
        """Keep what would give an open question away out of sight ((): show it all)."""
        self.table.hide_columns(columns)
        self.why.setVisible(not columns)  # its chain rule says what a round adds

    def _predicted(self, choice: str) -> None:
        key, self._pending_action = self._pending_action, None
        self._hide_answer(())
        if key is not None:
            self._run_action(key, self._question if choice else None, choice)

    def _run_action(self, key: str, question: Question | None, prediction: str) -> None:
        self._question, self._prediction = question, prediction
        self._before = self.lab.state
        self._enqueue([(key, self.lab.code_for(key), False)])

    def copy_script(self) -> str:
        """Put the log, as a Python script, on the clipboard."""
        text = self.lab.script()
        QApplication.clipboard().setText(text)
        return text

    def watch_descent(self, descent: Any) -> None:
        """Mark the descent task when the descent view's path converges quickly enough."""

        def check(*_: object) -> None:
            sweep = getattr(descent, "sweep", None)
            if sweep is None:
                return
            captions = sweep.captions  # one per slider position (one only for a model)
            caption = captions[0 if len(captions) == 1 else descent.rate_slider.value()]
            if check_descent_task(caption.steps):
                self.progress.mark("task", DESCENT_TASK, True)

        descent.sweep_ready.connect(check)
        descent.rate_slider.valueChanged.connect(check)
        check()

    # ---- talking to the kernel -----------------------------------------------------
    def _enqueue(self, steps: list[tuple[str, str, bool]]) -> None:
        self._queue.extend(steps)
        self._next()

    def _next(self) -> None:
        if self._in_flight is not None or not self._queue:
            self._refresh_enabled()
            return
        key, code, fresh = self._queue.pop(0)
        label = ACTIONS[key].label if key in ACTIONS else "setup" if key == "setup" else code
        arguments = {"code": code, "fresh": fresh, "label": label}
        call = self.session.call(lab_step, arguments, space=LAB_SPACE)
        self._in_flight = (call, key, code)
        call.finished.connect(lambda payload: self._on_result(call, payload))
        self._refresh_enabled()

    def _on_result(self, call: KernelCall, payload: dict) -> None:
        if self._in_flight is None or call is not self._in_flight[0]:
            return  # the answer of a step given up on (the kernel restarted)
        _, key, code = self._in_flight
        self._in_flight = None
        trace = payload.get("trace")
        if trace is not None and trace.source == LAB_SOURCE:
            self.canvas.show_trace(trace)
        if not payload.get("ok"):
            error = payload.get("error", {})
            self._queue.clear()
            self._say_error(f"The lab could not run: {error.get('message', 'no answer')}")
            self._refresh_enabled()
            return
        step = self.lab.record(key, code, payload["result"])
        verdict = self._judge(step) if key in ACTIONS else None
        self._refresh(verdict)
        self._next()
        self.step_done.emit(step)
        if verdict is not None:
            self.verdict_shown.emit(verdict)

    def _judge(self, step: Step) -> Verdict | None:
        question, prediction = self._question, self._prediction
        self._question, self._prediction = None, ""
        if question is None or not prediction or question.action != step.key:
            return None
        return judge(question, prediction, self._before, step)

    def _on_kernel_state(self, state: str) -> None:
        if state == KernelState.IDLE.value and self.isVisible():
            self.start()
        self._refresh_enabled()

    def _on_new_kernel(self, _info: dict) -> None:
        """A fresh kernel has an empty lab namespace: start over when it is ready."""
        if self.started:
            self.started = False
            self._queue.clear()
            self._in_flight = None  # its answer, if any, is only the failure of the old kernel
            self.lab.clear()
            self._refresh()
            self._say_error("The kernel restarted: the lab starts over.")

    def _say_error(self, text: str) -> None:
        """Show torch's error (two lines, all of it in the tooltip), or hide the line."""
        self.error.setText(text)
        self.error.setVisible(bool(text))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.session.state is KernelState.IDLE:
            self.start()

    # ---- drawing -------------------------------------------------------------------
    def _can_act(self) -> bool:
        return (
            self.started
            and self._in_flight is None
            and not self._queue
            and self._pending_action is None
            and self.session.state is KernelState.IDLE
        )

    def _refresh_enabled(self) -> None:
        ready = self._can_act()
        for widget in (*self.buttons.values(), *self.toggles.values(), self.reset_button):
            widget.setEnabled(ready)
        self.replay_button.setEnabled(ready and bool(self.lab.steps))

    def _refresh(self, verdict: Verdict | None = None) -> None:
        state = self.lab.state
        adds = state.get("adds", {})
        self.table.show_state(state)
        self.why.setText(
            "\n".join(f"{n}: {adds[n]['why']}" for n in LEAVES if n in adds)
            or "(w, x, b are created when the kernel is ready)"
        )
        step = self.lab.last
        error = step.error if step else None
        self._say_error("" if error is None else f"{error['type']}: {error['message']}")
        self.verdict.setText("" if verdict is None else verdict.message())
        colour = "#15803d" if verdict is not None and verdict.held else "#b45309"
        self.verdict.setStyleSheet(f"color: {colour};")
        self._show_formula(state)
        for name, box in self.toggles.items():
            box.blockSignals(True)
            box.setChecked(self.lab.requires_grad[name])
            box.blockSignals(False)
        self.log.setPlainText(self.lab.script() if self.lab.steps else "")
        self.log.verticalScrollBar().setValue(self.log.verticalScrollBar().maximum())
        self._mark_tasks()
        self._refresh_enabled()

    def _show_formula(self, state: dict[str, Any]) -> None:
        self.formula.setText(formula_text(state))
        device = state.get("tensors", {}).get("w", {}).get("device")
        self.device_label.setText(f"device: {device}" if device else "")

    def _mark_tasks(self) -> None:
        for key, done in tasks_done(self.lab.steps).items():
            if done:
                self.progress.mark("task", key, True)
        self._refresh_tasks()

    def _refresh_tasks(self, *_: object) -> None:
        self.tasks.show_done({t.key: self.progress.is_done("task", t.key) for t in TASKS})


def _column(*parts: Any) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        if isinstance(part, QWidget):
            layout.addWidget(part)
        else:
            layout.addLayout(part)
    return box
