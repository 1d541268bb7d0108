"""The Compare tab: a pinned run beside the run shown now, and what the edit changed."""

from __future__ import annotations

import html
import math
import time
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.core.playback.compare import RunDiff, compare_runs
from autograd_viz.core.playback.run_view import RunView, ShownRun
from autograd_viz.core.trace import Trace
from autograd_viz.ui.graph.held_numbers import HeldNumbers, holding

NOTHING_PINNED = (
    "Pin a run (the button above, or Run → Pin this run for comparison, Ctrl+Shift+P),"
    " edit the code and run it again: this tab then shows what the edit changed: the"
    " nodes added and removed, the values and gradients that moved, and where a"
    " gradient first parted (a forgotten zero_grad() shows at its second step)."
)
SAME_RUN = "This is the pinned run. Edit the code and run it again to compare."
FETCHING = "Fetching the runs' numbers from the kernel…"
COLUMNS = ("tensor", "", "pinned", "this run", "change", "where it first differed")
MAX_NAMES = 12  # added / removed items named before "and N more"
# The note column keeps room for a readable sentence; the value columns give it up first
# (their text wraps, the whole of it in the tooltip).
NOTE_WIDTH, VALUE_WIDTH, NAME_WIDTH = 220, 96, 110
VALUES, NAME, NOTE = (2, 3), 0, len(COLUMNS) - 1


def _relative(change: float) -> str:
    if not math.isfinite(change):
        return "new / gone"
    return f"{change:.0%}" if change < 10 else f"×{change:.3g}"


def _names(items: list[tuple[str, str]]) -> str:
    titles = [title for _, title in items]
    shown = ", ".join(titles[:MAX_NAMES])
    more = len(titles) - MAX_NAMES
    return shown + (f" and {more} more" if more > 0 else "")


class ComparePane(QWidget):
    """Pin / Unpin, then the differences between the pinned run and the one shown; a row
    asks to show its tensor in the graph."""

    show_tensor = Signal(str)  # a tensor id of the run shown now

    def __init__(self, parent: QWidget | None = None, numbers: HeldNumbers | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("comparePane")
        self.pinned: ShownRun | None = None
        self.current: ShownRun | None = None
        self.diff: RunDiff | None = None
        self._pinned_at = ""
        # Fetches the numbers the kernel kept (None: runs are compared by what their
        # traces carry, big tensors by their summaries).
        self.numbers = numbers
        self.pin_button = QPushButton("Pin this run", self)
        self.pin_button.setToolTip("Keep this run to compare the next runs with (Ctrl+Shift+P)")
        self.pin_button.clicked.connect(self.pin)
        self.unpin_button = QPushButton("Unpin", self)
        self.unpin_button.clicked.connect(self.unpin)
        self.header = QLabel(self)
        self.header.setObjectName("compareHeader")
        self.header.setWordWrap(True)
        self.summary = QLabel(self)
        self.summary.setObjectName("compareSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("compareTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(NOTE, QHeaderView.ResizeMode.Stretch)
        # Wrapped notes take the rows' height for the width they have now, not at filling.
        header.sectionResized.connect(lambda *_: self.table.resizeRowsToContents())
        self.table.cellClicked.connect(self._row_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.header, 1)
        buttons.addWidget(self.pin_button)
        buttons.addWidget(self.unpin_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(buttons)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.refresh()

    def follow(self, view: RunView) -> None:
        """Compare each run the view shows with the pinned one."""
        view.run_changed.connect(self._run_changed)

    def _run_changed(self, run: ShownRun | None) -> None:
        self.current = run
        self.refresh()

    def pin(self) -> None:
        """Keep the run shown now to compare later runs with."""
        if self.current is None:
            return
        self.pinned = self.current
        self._pinned_at = time.strftime("%H:%M:%S")
        # Now, while the kernel still holds them: later runs push them out (KEEP_RUNS).
        self._fetch(self.pinned.trace, lambda: None)
        self.refresh()

    def unpin(self) -> None:
        """Forget the pinned run."""
        self.pinned = None
        self.refresh()

    def refresh(self) -> None:
        """Compare again (a new run, a pin or an unpin)."""
        pinned, current = self.pinned, self.current
        self.pin_button.setEnabled(current is not None and current is not pinned)
        self.unpin_button.setEnabled(pinned is not None)
        self.table.setRowCount(0)
        self.diff = None
        if pinned is None:
            self.header.setText("<b>Compare two runs</b>")
            self.summary.setText(NOTHING_PINNED)
            self.table.hide()
            return
        nodes = len(pinned.trace.nodes)
        source = pinned.trace.source
        of = f" of {html.escape(source)}" if source and not source.startswith("<") else ""
        self.header.setText(
            f"<b>Pinned:</b> the run{of} at {self._pinned_at}"
            f" ({nodes} autograd node{'s' if nodes != 1 else ''})"
        )
        if current is None or current is pinned:
            self.summary.setText(SAME_RUN)
            self.table.hide()
            return
        asked = [
            self._fetch(run.trace, lambda run=run: self._numbers_in(run))
            for run in (pinned, current)
        ]
        if any(asked):
            self.summary.setText(FETCHING)
            self.table.hide()
            return
        diff = self.diff = compare_runs(
            (pinned.trace, pinned.graph), (current.trace, current.graph)
        )
        self.summary.setText(self._summary(diff))
        self.table.setVisible(bool(diff.changes))
        self.table.setRowCount(len(diff.changes))
        for row, change in enumerate(diff.changes):
            cells = (change.name, change.what, change.pinned, change.now,
                     _relative(change.relative), change.note)  # fmt: skip
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if column == 0:
                    item.setData(Qt.ItemDataRole.UserRole, change.tensor)
                self.table.setItem(row, column, item)
        self._fit_columns()
        self.table.resizeRowsToContents()

    def _fetch(self, trace: Trace, then: Callable[[], None]) -> bool:
        """Ask for every number of `trace` the kernel kept; True if some are on their way."""
        held = holding(trace) if self.numbers is not None else []
        return bool(held) and self.numbers is not None and self.numbers.fetch(trace, held, then)

    def _numbers_in(self, run: ShownRun) -> None:
        if run is self.pinned or run is self.current:
            self.refresh()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Each column as wide as its text, but the note keeps NOTE_WIDTH: at 1000 px the
        values took it all and a note wrapped a word a line, rows ten lines high."""
        table = self.table
        if not table.rowCount():
            return
        header = table.horizontalHeader()
        widths = [max(table.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in range(NOTE)]
        # Room with a vertical scroll bar: rows grow as they wrap, which often brings one.
        room = table.width() - 2 * table.frameWidth() - table.verticalScrollBar().sizeHint().width()
        over = sum(widths) + NOTE_WIDTH - room
        for columns, least in ((VALUES, VALUE_WIDTH), ((NAME,), NAME_WIDTH)):
            for c in columns:
                if over <= 0:
                    break
                give = min(over, max(widths[c] - least, 0), math.ceil(over / len(columns)))
                widths[c] -= give
                over -= give
        for c, width in enumerate(widths):
            header.resizeSection(c, width)

    def _summary(self, diff: RunDiff) -> str:
        counts = " · ".join(f"{label} {a} → {b}" for label, (a, b) in diff.counts.items())
        lines = [f"Pinned → this run: {counts}."]
        if diff.same:
            lines.append("Nothing else differs: the same graph, values, gradients and order.")
        if diff.added:
            lines.append(f"Added: {_names(diff.added)}.")
        if diff.removed:
            lines.append(f"Removed: {_names(diff.removed)}.")
        if diff.backward_order:
            lines.append(f"Backward order differs: {diff.backward_order}.")
        if diff.changes:
            lines.append(
                f"{len(diff.changes)} value{'s' if len(diff.changes) != 1 else ''} and"
                " gradients changed, the largest change first (click a row to see it):"
            )
        return "\n".join(lines)

    def _row_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        tensor = item.data(Qt.ItemDataRole.UserRole) if item is not None else ""
        if tensor:
            self.show_tensor.emit(tensor)
