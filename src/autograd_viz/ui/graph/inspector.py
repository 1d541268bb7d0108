"""The inspector: everything about the selected tensor or node, with a picture of its values."""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from autograd_viz.core.playback.player import show
from autograd_viz.core.playback.run_view import RunView
from autograd_viz.core.playback.saved_memory import HeldMemory, by_module, bytes_text
from autograd_viz.core.trace import NodeInfo, TensorValue, Trace
from autograd_viz.core.trace.value_text import (
    UNINITIALISED,
    format_number,
    format_value,
    is_complex,
    show_value,
)
from autograd_viz.ui._plot_theme import style_plot
from autograd_viz.ui.graph._value_plot import ValuePlot
from autograd_viz.ui.graph._value_table import ValueTable
from autograd_viz.ui.graph.held_numbers import HeldNumbers
from autograd_viz.ui.graph.why_panel import WhyPanel

MAX_VALUE_TEXT = 240  # longer printed values are summarised (shape, range, mean, norm)
MAX_BOX_PARAMS = 24  # a folded group's inspector lists this many of its parameters


def _numeric(data: object) -> np.ndarray | None:
    try:
        array = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        return None
    return array if array.size else None


def _nested_text(data: object, digits: int = 4) -> str:
    """Nested lists as torch prints them, each number at `digits` significant digits."""
    if isinstance(data, (list, tuple)):
        return "[" + ", ".join(_nested_text(d, digits) for d in data) + "]"
    return format_number(data, digits)


def _value_text(value: TensorValue | None) -> str:
    if value is None:
        return "None"
    # A matrix's numbers are in the table under the heatmap; as text they would push the
    # rows below them out of the pane.
    if value.data is not None and len(value.shape) <= 1:
        text = format_value(value) if is_complex(value) else _nested_text(value.data)
        if len(text) <= MAX_VALUE_TEXT:
            return text
    summary = format_value(value)
    if value.mean is not None:
        summary += f"  mean {value.mean:.4g}  norm {value.norm:.4g}"
    return summary


def _full_text(value: TensorValue | None) -> str:
    """Every number as Python holds it (the float torch gave), for the tooltip."""
    if value is None:
        return "None"
    return str(value.data) if value.data is not None else format_value(value)


class Inspector(QWidget):
    """Shows one trace item: a tensor (value, grad, flags, line) or a node (edges, line).

    Following a RunView, it shows the inspected item at the player's moment: a tensor's
    value and `.grad` then, a node's gradients in and out in its latest run by then.
    """

    def __init__(self, parent: QWidget | None = None, numbers: HeldNumbers | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspector")
        self.key: str | None = None
        self.view: RunView | None = None
        self.details = QLabel(self)
        self.details.setObjectName("inspectorDetails")
        self.details.setWordWrap(True)
        # Its rows are never squeezed under the answer and the plot below them.
        self.details.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot = ValuePlot(self)
        self.plot.setVisible(False)
        self.values = ValueTable()
        self.values.setVisible(False)
        # Where the plot would be, while a big tensor's numbers come from the kernel.
        self.plot_note = QLabel(self)
        self.plot_note.setObjectName("inspectorPlotNote")
        self.plot_note.setWordWrap(True)
        self.plot_note.setVisible(False)
        # Fetches the numbers the kernel kept (None: the summaries stand).
        self.numbers = numbers
        self._shown: tuple[Trace, str, int | None] | None = None  # what show_item showed last
        self.close_button = QToolButton(self)
        self.close_button.setText("×")
        self.close_button.setToolTip("Hide the inspector")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.hide)
        top = QHBoxLayout()
        top.addWidget(self.details, 1)
        top.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        # The rows, an answer and the plot can be taller than the pane: it scrolls then,
        # instead of squeezing the rows.
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        # "Why is x.grad None?" for a tensor (hidden for nodes and boxes).
        self.why = WhyPanel(content)
        layout.addWidget(self.why)
        layout.addWidget(self.plot_note)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.values, 1)
        layout.addStretch(0)
        scroll = QScrollArea(self)
        scroll.setWidget(content)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.clear()

    def set_dark(self, dark: bool) -> None:
        """Follow the window's theme (the values plot's background and axes)."""
        style_plot(self.plot, dark)

    def follow(self, view: RunView) -> None:
        """Show what `view` inspects, at the moment its player shows; hide on a new run."""
        self.view = view
        view.inspected_changed.connect(self._inspected)
        view.frame_changed.connect(self._refresh)

    def ask_why(self, key: str) -> None:
        """Inspect the tensor `key` and answer why its .grad is what it is now."""
        if self.view is not None:
            self.view.inspect(key)  # shows it here (see _inspected)
        if self.key == key:
            self.why.ask()

    def _inspected(self, key: str) -> None:
        if not key or self.view is None or self.view.trace is None:
            self.clear()
            self.hide()
            return
        self.show_item(self.view.trace, key, self.view.line_of(key))

    def _refresh(self) -> None:
        view = self.view
        if view is not None and self.key and view.trace is not None and self.isVisible():
            self.show_item(view.trace, self.key, view.line_of(self.key))

    def _now(self, trace: Trace) -> RunView | None:
        """The view whose moment to show, when it shows this trace mid-replay."""
        view = self.view
        if view is None or view.trace is not trace or view.event_index() is None:
            return None
        return view

    def _moment(self, view: RunView) -> str:
        player = view.player
        return f"at step {player.position + 1} of {len(player.steps)} ({view.mode_name()})"

    def clear(self) -> None:
        """Nothing selected."""
        self.key = None
        self._shown = None
        self.why.hide()
        self.details.setText("<i>Click a node in the graph to inspect it.</i>")
        self.details.setToolTip("")
        self._hide_values()

    def _hide_values(self) -> None:
        self.plot_note.setVisible(False)
        self.plot.setVisible(False)
        self.values.setVisible(False)

    def show_item(self, trace: Trace, key: str, line: int | None = None) -> None:
        """Describe the tensor or node `key` of `trace` (and show the pane)."""
        self.key = key
        self._shown = (trace, key, line)
        self.show()
        self.why.setVisible(key.startswith("t"))
        if key.startswith("t"):
            self._show_tensor(trace, key, line)
        elif key.startswith("m:"):
            self._show_box(trace, key)
        else:
            self._show_node(trace, key, line)

    def _rows(self, title: str, rows: list[tuple[str, str]]) -> str:
        cells = "".join(
            f"<tr><td style='color:#64748b;padding-right:8px'>{html.escape(k)}</td>"
            f"<td>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        return f"<b>{html.escape(title)}</b><table>{cells}</table>"

    def _show_tensor(self, trace: Trace, key: str, line: int | None) -> None:
        t = trace.tensor(key)
        kind = ("leaf" if t.is_leaf else "non-leaf") + (
            ", requires grad" if t.requires_grad else ", no grad"
        )
        rows = [
            ("kind", kind),
            ("shape", str(tuple(t.shape))),
            ("dtype", t.dtype),
            ("device", t.device),
            ("requires_grad", str(t.requires_grad)),
            ("is_leaf", str(t.is_leaf)),
            ("retains_grad", str(t.retains_grad)),
            ("grad_fn", trace.node(t.grad_fn).name if t.grad_fn else "None"),
        ]
        value, grad = t.value, t.grad
        now = self._now(trace)
        if now is not None:
            (value, exists), (grad, _) = now.value_now(key), now.grad_now(key)
            rows.append(("shown", self._moment(now)))
            if not exists:
                rows += [("value", "not computed yet at this step"), (".grad", "—")]
        if now is None or exists:
            shown = _value_text(value)
            if value is None and t.uninitialised:
                shown = f"{UNINITIALISED}: made by empty(), nothing set its memory"
            rows += [("value", shown), (".grad", _value_text(grad))]
        if t.aliases:  # c = b.mul_(3): one tensor, several names
            rows.insert(0, ("also named", ", ".join(t.aliases)))
        if line:
            rows.append(("created on", f"line {line}"))
        self.details.setText(self._rows(t.name or trace.index.name_of(key), rows))
        self.why.set_tensor(trace, key, now.event_index() if now else None, show_value(grad))
        # The rows round to 4 significant digits; the full floats are a hover away.
        full = [f"{k}: {_full_text(v)}" for k, v in (("value", value), (".grad", grad))]
        self.details.setToolTip("\n".join(full) if now is None or exists else "")
        shows_grad = grad is not None and (grad.data is not None or grad.held is not None)
        shown_value, what = (grad, ".grad") if shows_grad else (value, "value")
        self._plot(shown_value, what)
        if shown_value is None or shown_value.data is not None or shown_value.held is None:
            return
        # Its numbers stayed in the kernel (core/kernel/held.py): fetch them, then show
        # this again; meanwhile, and if they are gone, the summary above stands.
        numbers = self.numbers
        if numbers is not None and (
            numbers.waiting(trace, key)  # asked already: that answer shows it again
            or numbers.fetch(trace, [key], lambda: self._numbers_in(trace, key))
        ):
            self.plot_note.setText(f"Fetching every number of {what} from the kernel…")
        else:
            self.plot_note.setText(
                "Every number stayed with the kernel that ran this, which no longer has"
                " them: run the code again to see them."
            )
        self.plot_note.show()

    def _numbers_in(self, trace: Trace, key: str) -> None:
        """A tensor's fetched numbers arrived: show them if it is still what is shown."""
        shown = self._shown
        if shown is not None and shown[0] is trace and shown[1] == key and self.isVisible():
            self.show_item(trace, key, shown[2])

    def _show_node(self, trace: Trace, key: str, line: int | None) -> None:
        node = trace.node(key)
        rows = [
            (
                "passes gradients to",
                ", ".join(trace.node(n).name for n in node.next) or "nothing (a leaf's end)",
            )
        ]
        if node.tensor and node.variable is None:
            rows.append(("produced", trace.index.name_of(node.tensor)))
        if node.variable:
            rows.append(("writes .grad of", trace.index.name_of(node.variable)))
        ran_at = [i for i in trace.index.of_node(key) if trace.events[i]["kind"] == "node"]
        runs = len(ran_at)
        rows.append(("ran in backward", f"{runs} time{'s' if runs != 1 else ''}"))
        now = self._now(trace)
        ran = now.node_grads_now(key) if now is not None else None
        if now is not None:
            rows.append(("shown", self._moment(now)))
        if ran is None and now is None and runs:
            ran = trace.events[ran_at[-1]]
        if ran is not None:
            rows.append(("received", ", ".join(show(g) for g in ran.get("grads_in", ())) or "—"))
            rows.append(("sent on", ", ".join(show(g) for g in ran.get("grads_out", ())) or "—"))
        elif now is not None:
            rows.append(("gradients", "it has not run yet at this step"))
        rows += self._saved_rows(trace, node)
        if line:
            rows.append(("created on", f"line {line}"))
        self.details.setText(self._rows(node.name, rows))
        self.details.setToolTip("")
        self._hide_values()

    def _memory(self, trace: Trace) -> tuple[HeldMemory | None, int]:
        """The shown run's held memory, if measured, and the event shown."""
        view = self.view
        run = view.run if view is not None else None
        if run is None or run.trace is not trace:
            return None, len(trace.events)
        shown = view.event_index() if view is not None else None
        return run.measured_memory, len(trace.events) if shown is None else shown

    def _saved_rows(self, trace: Trace, node: NodeInfo) -> list[tuple[str, str]]:
        """What the node saved for its backward, and whether it holds it at this moment."""
        if not node.saved_tensors:
            saved = "nothing: its local gradient needs no tensor" if node.saved == [] else ""
            return [("saved for backward", saved)] if saved else []
        rows = []
        for entry in node.saved_tensors:
            tensor = entry.get("tensor")
            what = trace.index.name_of(tensor) if tensor else "made by torch for backward"
            shape = "×".join(str(n) for n in entry["shape"]) or "0-dim"
            rows.append(
                (
                    f"saved {entry['name']}",
                    f"{what} · {shape} {entry['dtype']} · {bytes_text(entry['bytes'])}",
                )
            )
        memory, index = self._memory(trace)
        span = memory.spans.get(node.id) if memory is not None else None
        if span is not None:
            start, stop = span
            if index < start:
                state = "not made yet at this step"
            elif stop is None or index < stop:
                kept = node.id in memory.kept and index >= start
                state = "held now" + (" (retain_graph=True keeps it)" if kept else "")
            elif trace.events[stop].get("kind") == "node":
                state = "freed: backward() let go of them after running this node"
            else:
                state = "let go of: nothing referred to this graph any more"
            rows.append(("saved tensors", state))
        return rows

    def _show_box(self, trace: Trace, key: str) -> None:
        """A folded group: what its box says, then each parameter inside it with its value
        and `.grad` at the moment shown."""
        view = self.view
        graph = view.graph if view is not None else None
        folding = graph.folding if graph is not None else None
        if graph is None or folding is None or key not in graph.nodes:
            self.clear()
            return
        lines = graph.box_text.get(key, [])
        rows = [("folded", graph.nodes[key].detail), *(("", line) for line in lines[1:])]
        now = self._now(trace)
        if now is not None:
            rows.append(("shown", self._moment(now)))
        inside = set(folding.tree.members(key[2:]))
        params = [t for t in trace.tensors if t.id in inside and t.is_leaf and t.requires_grad]
        for t in params[:MAX_BOX_PARAMS]:
            value, grad = t.value, t.grad
            if now is not None:
                (value, _), (grad, _) = now.value_now(t.id), now.grad_now(t.id)
            name = graph.short.get(t.id) or t.name or trace.index.name_of(t.id)
            shown = format_value(grad) if grad is not None else "None"
            rows.append((name, f"{format_value(value)}  ·  .grad {shown}"))
        if len(params) > MAX_BOX_PARAMS:
            rows.append(("", f"and {len(params) - MAX_BOX_PARAMS} more parameters"))
        memory, index = self._memory(trace)
        if memory is not None:
            held = by_module(trace, memory.holding(index) & inside)
            rows.append(("saved for backward now", bytes_text(sum(held.values()))))
        self.details.setText(self._rows(graph.nodes[key].title, rows))
        self.details.setToolTip("Double-click the box (or press Enter) to open it")
        self._hide_values()

    def _plot(self, value: TensorValue | None, what: str) -> None:
        """A heatmap for matrices, bars for vectors, each with its numbers; nothing for
        scalars (the row above shows them)."""
        array = _numeric(value.data) if value is not None else None
        # A complex tensor's pairs would draw as a real matrix one column too wide: its
        # numbers are in the rows above, as complex numbers.
        complex_pairs = value is not None and value.data is not None and is_complex(value)
        if value is None or array is None or array.ndim == 0 or array.size < 2 or complex_pairs:
            self._hide_values()
            return
        # torch's own min/max when the trace carries them: the colour bar reads those.
        low = float(np.nanmin(array)) if value.min is None else float(value.min)
        high = float(np.nanmax(array)) if value.max is None else float(value.max)
        self.plot.show_values(array, f"{what} {tuple(array.shape)}", low, high)
        self.plot_note.setVisible(False)
        self.plot.setVisible(True)
        self.values.setVisible(self.values.show_values(array, what))
