"""The exercises pane: pick an exercise, open its starter, check the editor's code against
hidden cases, and check the gradients of any function in the editor.

Checking runs the learner's code in a child process (core.exercise_runner) from a worker
thread of the global QThreadPool, so the window never waits on it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, SignalInstance
from PySide6.QtGui import QBrush, QColor, QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.core.learning.exercises import DEFAULT_TIMEOUT, EXERCISES, CheckResult, Exercise
from autograd_viz.core.learning.gradcheck import GradientCheck, parse_point
from autograd_viz.core.learning.progress import Progress

PASS_COLOUR, FAIL_COLOUR, NOTE_COLOUR = "#15803d", "#b91c1c", "#475569"
DONE_MARK, TODO_MARK = "✓", "○"


class _Bridge(QObject):
    checked = Signal(object)  # CheckResult, or the exception the check raised
    gradients = Signal(object)  # GradientCheck, or SolutionError / ValueError


class _Job(QRunnable):
    """Run `work` on a pool thread and hand its outcome (or its exception) to `done`."""

    def __init__(self, work: Callable[[], Any], done: SignalInstance) -> None:
        super().__init__()
        self._work, self._done = work, done

    def run(self) -> None:
        try:
            outcome = self._work()
        except Exception as exc:  # shown in the pane; the thread must not die with it
            outcome = exc
        with contextlib.suppress(RuntimeError):  # the pane was closed while the check ran
            self._done.emit(outcome)


class ExercisesPane(QWidget):
    """Statement, starter and self-checking cases of one exercise; a gradient checker."""

    starter_requested = Signal(str)  # code for the editor
    line_requested = Signal(int)  # a line of the learner's code to show
    check_finished = Signal(object)  # CheckResult (or the exception if checking failed)
    gradients_finished = Signal(object)  # GradientCheck (or the error)

    def __init__(
        self,
        progress: Progress | None = None,
        source: Callable[[], str] | None = None,
        parent: QWidget | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        super().__init__(parent)
        self.progress = progress
        self._source = source or (lambda: "")
        self.timeout = timeout
        self.result: CheckResult | None = None
        self.gradient_result: GradientCheck | None = None
        self._bridge = _Bridge(self)
        self._bridge.checked.connect(self._on_checked)
        self._bridge.gradients.connect(self._on_gradients)
        self._build()
        if progress is not None:
            progress.changed.connect(lambda *_: self._refresh_marks())
            progress.was_reset.connect(self._refresh_marks)
        self._refresh_marks()
        self._exercise_changed()

    # ---- assembly --------------------------------------------------------------
    def _build(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.picker = QComboBox()
        self.picker.setObjectName("exercisePicker")
        for exercise in EXERCISES.values():
            self.picker.addItem(exercise.title, exercise.id)
        self.statement = QLabel()
        self.statement.setObjectName("exerciseStatement")
        self.statement.setWordWrap(True)
        self.statement.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open starter in editor")
        self.check_button = QPushButton("Check my solution")
        self.check_button.setDefault(True)
        self.status = QLabel()
        self.status.setObjectName("exerciseStatus")
        self.status.setWordWrap(True)
        self.results = QTreeWidget()
        self.results.setObjectName("exerciseResults")
        self.results.setHeaderLabels(["", "case", "expected", "got"])
        self.results.setRootIsDecorated(False)
        self.results.setAlternatingRowColors(True)
        header = self.results.header()
        header.setStretchLastSection(False)
        for column, mode in enumerate(
            ("ResizeToContents", "ResizeToContents", "Stretch", "Stretch")
        ):
            header.setSectionResizeMode(column, getattr(QHeaderView.ResizeMode, mode))
        self.details = QPlainTextEdit()
        self.details.setObjectName("exerciseDetails")
        self.details.setReadOnly(True)
        self.details.setFont(mono)
        self.details.setPlaceholderText("Select a case to see its error and traceback.")

        self.function_name = QLineEdit("f")
        self.function_name.setMaximumWidth(140)
        self.point = QLineEdit("1.0, 2.0; 3.0")
        self.point.setToolTip(
            "One value per argument, separated by ';'. A number is a scalar, "
            "'1, 2' a vector, [[1, 2], [3, 4]] a matrix."
        )
        self.gradient_button = QPushButton("Check gradients")
        self.gradient_table = QTableWidget(0, 6)
        self.gradient_table.setObjectName("gradientTable")
        self.gradient_table.setHorizontalHeaderLabels(
            ["entry", "finite difference", "autograd", "abs error", "rel error", ""]
        )
        self.gradient_table.verticalHeader().hide()
        self.gradient_table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )
        self.gradient_table.horizontalHeader().setStretchLastSection(True)
        self.gradient_summary = QLabel(
            "Central differences in float64 next to autograd, entry by entry, for a function "
            "in the editor (the test torch.autograd.gradcheck makes)."
        )
        self.gradient_summary.setWordWrap(True)

        top = QWidget()
        column = QVBoxLayout(top)
        column.setContentsMargins(0, 0, 0, 0)
        pick_row = QHBoxLayout()
        pick_row.addWidget(QLabel("Exercise"))
        pick_row.addWidget(self.picker, 1)
        column.addLayout(pick_row)
        column.addWidget(self.statement)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.check_button)
        buttons.addWidget(self.status, 1)
        column.addLayout(buttons)
        column.addWidget(self.results, 3)
        column.addWidget(self.details, 2)

        gradients = QGroupBox("Gradient check: your own function")
        grid = QVBoxLayout(gradients)
        inputs = QHBoxLayout()
        inputs.addWidget(QLabel("function"))
        inputs.addWidget(self.function_name)
        inputs.addWidget(QLabel("at"))
        inputs.addWidget(self.point, 1)
        inputs.addWidget(self.gradient_button)
        grid.addLayout(inputs)
        grid.addWidget(self.gradient_table, 1)
        grid.addWidget(self.gradient_summary)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(gradients)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        QVBoxLayout(self).addWidget(splitter)

        self.picker.currentIndexChanged.connect(self._exercise_changed)
        self.open_button.clicked.connect(self.open_starter)
        self.check_button.clicked.connect(self.check)
        self.results.currentItemChanged.connect(self._show_details)
        self.results.itemDoubleClicked.connect(self._go_to_line)
        self.gradient_button.clicked.connect(self.check_gradients)
        self.point.returnPressed.connect(self.check_gradients)

    # ---- exercises -------------------------------------------------------------
    @property
    def exercise(self) -> Exercise:
        """The exercise the picker shows."""
        return EXERCISES[self.picker.currentData()]

    def select_exercise(self, exercise_id: str) -> None:
        """Show an exercise by its id."""
        self.picker.setCurrentIndex(self.picker.findData(exercise_id))

    def _exercise_changed(self) -> None:
        exercise = self.exercise
        self.statement.setText(
            f"<b>{exercise.title}</b> <span style='color:{NOTE_COLOUR}'>· {exercise.lesson} · "
            f"{len(exercise.cases)} hidden cases</span><br>{_html(exercise.statement)}"
        )
        self.results.clear()
        self.details.clear()
        self.status.setText(
            "Done before: check again any time." if self._is_done(exercise.id) else ""
        )
        self.status.setStyleSheet(f"color: {NOTE_COLOUR}")

    def open_starter(self) -> None:
        """Ask for the starter code to go into the editor."""
        self.starter_requested.emit(self.exercise.starter)

    def check(self) -> None:
        """Run the hidden cases on the editor's code, off the GUI thread."""
        from autograd_viz.core.learning.exercise_runner import check_solution

        exercise_id, source, timeout = self.exercise.id, self._source(), self.timeout
        self.check_button.setEnabled(False)
        self.status.setStyleSheet(f"color: {NOTE_COLOUR}")
        self.status.setText("Checking… (your code runs in a separate Python process)")
        job = _Job(
            lambda: check_solution(exercise_id, source, timeout=timeout), self._bridge.checked
        )
        QThreadPool.globalInstance().start(job)

    def _on_checked(self, result: object) -> None:
        self.check_button.setEnabled(True)
        if not isinstance(result, CheckResult):
            self._set_status(f"The check itself failed: {result}", FAIL_COLOUR)
            self.check_finished.emit(result)
            return
        if result.all_passed and self.progress is not None:
            self.progress.mark("exercise", result.exercise, True)
        if result.exercise == self.exercise.id:
            self.show_result(result)
        self.check_finished.emit(result)

    def show_result(self, result: CheckResult) -> None:
        """Fill the table: one row per case, a note row under each failure."""
        self.result = result
        self.results.clear()
        first_failure = None
        for case in result.cases:
            row = QTreeWidgetItem(
                ["✓" if case.passed else "✗", case.name, case.expected, case.got or "—"]
            )
            row.setForeground(0, QBrush(QColor(PASS_COLOUR if case.passed else FAIL_COLOUR)))
            row.setData(0, Qt.ItemDataRole.UserRole, case)
            row.setToolTip(1, case.description)
            for column in (2, 3):
                row.setToolTip(column, row.text(column))
            self.results.addTopLevelItem(row)
            if not case.passed:  # why, on a row of its own across the table
                note = QTreeWidgetItem([f"    ↳ {case.message or 'failed'}"])
                note.setData(0, Qt.ItemDataRole.UserRole, case)
                note.setForeground(0, QBrush(QColor(FAIL_COLOUR)))
                note.setToolTip(0, case.message)
                self.results.addTopLevelItem(note)
                note.setFirstColumnSpanned(True)
                first_failure = first_failure or row
        total = len(result.cases)
        if result.all_passed:
            self._set_status(f"All {total} cases pass ✓ — exercise done.", PASS_COLOUR)
        else:
            self._set_status(f"{result.passed} of {total} cases pass.", FAIL_COLOUR)
        if first_failure is not None:
            self.results.setCurrentItem(first_failure)
        else:
            self.details.setPlainText(_output_text(result))

    def _show_details(self, item: QTreeWidgetItem | None) -> None:
        case = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        if case is None:
            return
        lines = [f"{case.name}: {case.description}"]
        if not case.passed:
            lines.append(case.message)
        if case.error:
            lines += ["", case.error.rstrip()]
        if self.result is not None and self.result.output.strip():
            lines += ["", _output_text(self.result)]
        self.details.setPlainText("\n".join(lines))

    def _go_to_line(self, item: QTreeWidgetItem) -> None:
        case = item.data(0, Qt.ItemDataRole.UserRole)
        if case is not None and case.line:
            self.line_requested.emit(int(case.line))

    def _set_status(self, text: str, colour: str) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {colour}; font-weight: bold")

    # ---- progress ----------------------------------------------------------------
    def _is_done(self, exercise_id: str) -> bool:
        return self.progress is not None and self.progress.is_done("exercise", exercise_id)

    def _refresh_marks(self) -> None:
        for index in range(self.picker.count()):
            exercise = EXERCISES[self.picker.itemData(index)]
            mark = DONE_MARK if self._is_done(exercise.id) else TODO_MARK
            self.picker.setItemText(index, f"{mark} {exercise.title}  ({exercise.lesson})")

    # ---- gradient check ----------------------------------------------------------
    def check_gradients(self) -> None:
        """Finite differences against autograd for the named function, off the GUI thread."""
        from autograd_viz.core.learning.exercise_runner import run_gradient_check

        name = self.function_name.text().strip()
        try:
            point = parse_point(self.point.text())
        except ValueError as exc:
            self._gradient_message(f"'at' wants numbers: {exc}", FAIL_COLOUR)
            return
        source = self._source()
        self.gradient_button.setEnabled(False)
        self._gradient_message(f"Checking the gradients of {name}()…", NOTE_COLOUR)
        job = _Job(lambda: run_gradient_check(source, name, point), self._bridge.gradients)
        QThreadPool.globalInstance().start(job)

    def _on_gradients(self, outcome: object) -> None:
        self.gradient_button.setEnabled(True)
        self.gradient_table.setRowCount(0)
        if not isinstance(outcome, GradientCheck):
            message = getattr(outcome, "message", None) or str(outcome)
            self.gradient_result = None
            self._gradient_message(message, FAIL_COLOUR)
            line = getattr(outcome, "line", None)
            if line:
                self.line_requested.emit(int(line))
            self.gradients_finished.emit(outcome)
            return
        self.gradient_result = outcome
        self.gradient_table.setRowCount(len(outcome.entries))
        for row, entry in enumerate(outcome.entries):
            rel = "—" if entry.rel_error is None else f"{entry.rel_error:.2g}"
            cells = [
                entry.label,
                f"{entry.numerical:.10g}",
                f"{entry.analytical:.10g}",
                f"{entry.abs_error:.2g}",
                rel,
                "ok" if entry.ok else "mismatch",
            ]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column in (1, 2, 3, 4):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if column == 5:
                    item.setForeground(QBrush(QColor(PASS_COLOUR if entry.ok else FAIL_COLOUR)))
                self.gradient_table.setItem(row, column, item)
        text = " ".join([*outcome.notes, outcome.summary()])
        self._gradient_message(text, PASS_COLOUR if outcome.passed else FAIL_COLOUR)
        self.gradients_finished.emit(outcome)

    def _gradient_message(self, text: str, colour: str) -> None:
        self.gradient_summary.setText(text)
        self.gradient_summary.setStyleSheet(f"color: {colour}")


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _output_text(result: CheckResult) -> str:
    output = result.output.strip()
    return f"What your code printed:\n{output}" if output else "Your code printed nothing."
