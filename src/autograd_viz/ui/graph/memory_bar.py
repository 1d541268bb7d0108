"""The memory bar: what the autograd graph holds for backward at the moment shown."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from autograd_viz.core.playback.run_view import RunView, ShownRun
from autograd_viz.core.playback.saved_memory import (
    HeldMemory,
    by_module,
    bytes_text,
)

# Runs with more nodes than this are measured on the worker that lays them out, after
# their replay is prepared (the 8k-node RNN takes 0.1 s; a few hundred nodes 1 ms).
BACKGROUND_SIZE = 2_000
WIDTH = 270
MIN_WIDTH = 170
MODULES_IN_TIP = 6
LESSON = (
    "What autograd keeps alive for the backward pass: the tensors each node saved"
    " (its inputs or its result) to compute its local gradient. It grows as the forward"
    " pass runs and shrinks as backward() frees each node's saved tensors right after"
    " running it: after the backward pass, the graph is freed from memory, unless"
    " backward(retain_graph=True) kept it. A storage saved twice (x * x) counts once."
)


class MemoryBar(QWidget):
    """Two lines beside the player's caption: the bytes held now, and a bar of them
    against the run's peak. The tooltip says what they are, by module where there are
    modules."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryBar")
        # As wide as its text wants, narrower (elided) before the caption beside it is.
        self.setMinimumWidth(MIN_WIDTH)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(2 * self.fontMetrics().height() + 4)  # the caption's two lines
        self.view: RunView | None = None
        self.memory: HeldMemory | None = None
        self._run: ShownRun | None = None
        self.text = ""  # the first line, as drawn
        self.fraction = 0.0  # of the peak, as the bar shows it
        self.why = ""  # the second line, beside the bar
        self.index = -1  # the event shown
        self._first_free: int | None = None
        self._kept_from: int | None = None
        self.setVisible(False)

    def sizeHint(self) -> QSize:  # Qt's name
        return QSize(WIDTH, self.height())

    def follow(self, view: RunView) -> None:
        """Show what the graph of `view`'s run holds at its player's moment."""
        self.view = view
        view.run_changed.connect(self._run_changed)
        view.player_ready.connect(self._replay_ready)
        view.frame_changed.connect(self.refresh)

    def _run_changed(self, run: ShownRun | None) -> None:
        self._run, self.memory = run, None
        if run is None:
            self._measured(None, None)
        elif run.measured_memory is not None or len(run.trace.nodes) <= BACKGROUND_SIZE:
            self._measured(run, run.memory)
        else:  # a big run: the worker that laid it out measures it after its replay
            self.text, self.fraction = "Saved for backward: measuring…", 0.0
            self.update()

    def _replay_ready(self) -> None:
        run = self._run
        if run is not None and self.memory is None and run.measured_memory is not None:
            self._measured(run, run.measured_memory)

    def _measured(self, run: ShownRun | None, memory: HeldMemory | None) -> None:
        self.memory = memory
        if memory is not None and run is not None:
            # From when the bar says why it stands where it does.
            stops = [stop for _, stop in memory.spans.values() if stop is not None]
            self._first_free = min(stops, default=None)
            self._kept_from = _first_run(run, memory.kept)
        self.setVisible(memory is not None and memory.peak.bytes > 0)
        self.refresh()

    def refresh(self) -> None:
        """Read the moment shown off the view."""
        memory, view, run = self.memory, self.view, self._run
        if memory is None or view is None or run is None:
            return
        shown = view.event_index()
        self.index = index = len(run.trace.events) if shown is None else shown
        held, peak = memory.at(index), memory.peak
        self.fraction = held.bytes / peak.bytes if peak.bytes else 0.0
        self.text = f"Saved for backward: {bytes_text(held.bytes)}"
        if held.bytes:
            self.text += f" · {held.tensors} tensor{'s' if held.tensors != 1 else ''}"
        if self._kept_from is not None and index >= self._kept_from and held.bytes:
            self.why = "kept (retain_graph)"
        elif self._first_free is not None and index >= self._first_free and not held.bytes:
            self.why = "freed by backward()"
        else:
            self.why = f"peak {bytes_text(peak.bytes)}"
        self.update()

    def tooltip(self) -> str:
        """What the bar means, and the bytes held now by module (where there are any)."""
        memory, run = self.memory, self._run
        rows = [html.escape(LESSON)]
        if memory is not None and run is not None and run.trace.modules:
            parts = by_module(run.trace, memory.holding(self.index))
            top = sorted(parts.items(), key=lambda kv: -kv[1])[:MODULES_IN_TIP]
            if top:
                lines = [
                    f"{html.escape(name or '(outside any module)')}: {bytes_text(n)}"
                    for name, n in top
                ]
                rows.append("<b>By module now</b><br>" + "<br>".join(lines))
        return "<p>" + "</p><p>".join(rows) + "</p>"

    def event(self, event: QEvent) -> bool:  # Qt's name
        if event.type() == QEvent.Type.ToolTip:  # by module only when asked: 8k nodes
            QToolTip.showText(event.globalPos(), self.tooltip(), self)
            return True
        return super().event(event)

    def paintEvent(self, event) -> None:  # Qt's name
        painter = QPainter(self)
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        painter.setPen(text)
        height = self.fontMetrics().height()
        first = QRect(0, 0, self.width(), height)
        painter.drawText(
            first,
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            self.fontMetrics().elidedText(self.text, Qt.TextElideMode.ElideRight, self.width()),
        )
        if self.memory is None:
            return
        bar = QRect(0, height + 3, self.width() // 2, height - 6)
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.setBrush(palette.color(QPalette.ColorRole.Base))
        painter.drawRect(bar.adjusted(0, 0, -1, -1))
        fill = QColor("#0f766e")  # the teal of results: memory the graph holds
        fill.setAlpha(200)
        painter.fillRect(
            bar.adjusted(1, 1, -1, -1).adjusted(
                0, 0, -int((1 - self.fraction) * (bar.width() - 2)), 0
            ),
            fill,
        )
        painter.setPen(text)
        rest = QRect(bar.right() + 6, height, self.width() - bar.width() - 6, height)
        painter.drawText(
            rest,
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            self.fontMetrics().elidedText(self.why, Qt.TextElideMode.ElideRight, rest.width()),
        )


def _first_run(run: ShownRun, nodes: frozenset[str]) -> int | None:
    """The first event at which a backward ran one of `nodes` (None: none ever ran)."""
    events, index = run.trace.events, run.trace.index
    ran = (i for nid in nodes for i in index.of_node(nid) if events[i]["kind"] == "node")
    return min(ran, default=None)
