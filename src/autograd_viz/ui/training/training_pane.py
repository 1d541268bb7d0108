"""The Training view: gradient health over the optimizer steps of the shown run."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QSplitter, QVBoxLayout, QWidget

from autograd_viz.core.playback.run_view import RunView, ShownRun
from autograd_viz.core.playback.training import (
    EXPLODING,
    VANISHING,
    TrainingHealth,
    training_health,
)
from autograd_viz.ui._plot_fitting import FittedTitle, SpacedAxis
from autograd_viz.ui._plot_theme import style_plot
from autograd_viz.ui.training._heat_strip import HeatStrip

HEALTHY_RATIO = 1e-3  # ‖Δp‖ / ‖p‖ of a typical SGD step: the dashed line
NOTHING = (
    "No optimizer.step() in this run. Write a training loop (optimizer.zero_grad(),"
    " loss.backward(), optimizer.step()) and run it: each step's gradient norms show here."
)
SELECTED = "#2563eb"
BAND = (148, 163, 184, 70)


def _log_plot(label: str) -> pg.PlotWidget:
    plot = pg.PlotWidget(axisItems={"left": SpacedAxis("left")})
    item = plot.getPlotItem()
    item.setMenuEnabled(False)
    item.hideButtons()
    item.setLabel("bottom", "step")
    item.setLabel("left", label)
    item.setLogMode(y=True)
    item.showGrid(y=True, alpha=0.2)
    item.getAxis("left").enableAutoSIPrefix(False)  # "loss (x0.001)" reads as a unit
    return plot


def _whole_steps(plot: pg.PlotWidget, steps: int) -> None:
    spacing = max(1, round(steps / 10))
    plot.getPlotItem().getAxis("bottom").setTickSpacing(spacing, spacing)


class TrainingPane(QWidget):
    """Heat strip of ‖grad‖ (parameters × steps), the loss and the update ratio per step,
    and the flags; a click on a cell or a flag asks to show that step in the graph."""

    step_chosen = Signal(int, str)  # the step's first event (-1: unknown), the parameter id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trainingPane")
        self.health = TrainingHealth()
        self.selected = 0  # the parameter whose update ratio is drawn bold
        self.summary = QLabel(NOTHING, self)
        self.summary.setObjectName("trainingSummary")
        self.summary.setWordWrap(True)
        self.flags = QListWidget(self)
        self.flags.setObjectName("trainingFlags")
        self.flags.setWordWrap(True)  # a flag is a sentence: read whole, not scrolled
        self.flags.itemActivated.connect(self._flag_chosen)
        self.flags.itemClicked.connect(self._flag_chosen)
        self.strip = HeatStrip(self)
        self.strip.cell_clicked.connect(self._cell_clicked)
        self.loss = _log_plot("loss")
        FittedTitle(self.loss).set("loss")
        self.ratio = _log_plot("ratio")
        self.ratio_title = FittedTitle(self.ratio)
        self.ratio_title.set("update / parameter (‖Δp‖ / ‖p‖)")
        plots = QSplitter(Qt.Orientation.Horizontal, self)
        plots.addWidget(self.loss)
        plots.addWidget(self.ratio)
        # Shown and hidden as one: a splitter keeps a child it once hid at no height.
        column = self.charts = QSplitter(Qt.Orientation.Vertical, self)
        column.addWidget(self.strip)
        column.addWidget(plots)
        column.setSizes([400, 260])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.summary)
        layout.addWidget(self.flags)
        layout.addWidget(column, 1)
        self.set_dark(False)
        self.show_health(self.health)

    def follow(self, view: RunView) -> None:
        """Chart each run the view shows."""
        view.run_changed.connect(self._run_changed)

    def _run_changed(self, run: ShownRun | None) -> None:
        self.show_health(training_health(run.trace) if run is not None else TrainingHealth())

    def set_dark(self, dark: bool) -> None:
        """Follow the window's theme."""
        for plot in (self.strip, self.loss, self.ratio):
            style_plot(plot, dark)

    def show_health(self, health: TrainingHealth) -> None:
        """Chart `health` (an empty one says how to get a chart)."""
        self.health = health
        self.flags.clear()
        has = bool(health.steps and health.parameters)
        for widget in (self.flags, self.charts):
            widget.setVisible(has)
        if not has:
            self.summary.setText(NOTHING)
            self.strip.show_health(TrainingHealth())
            return
        optimizer = ", ".join(dict.fromkeys(health.optimizers))
        self.summary.setText(
            f"{health.steps} {optimizer} step{'s' if health.steps != 1 else ''} ×"
            f" {len(health.parameters)} parameters. Flags: ‖grad‖ below {VANISHING:g}"
            f" (vanishing) or above {EXPLODING:g} (exploding); weight rows with zero gradient"
            " for every sample (dead units). Click a cell or a flag to see that step."
            + (
                f" The event cap stopped the detailed record after step {health.detailed_steps}:"
                " later steps keep their norms, and a click on one selects the parameter."
                if health.detailed_steps < health.steps
                else ""
            )
        )
        self.strip.show_health(health)
        # `+ 0.0` turns a rounded -0.0 into 0.0: "from -2.0 to -0.0" read as a typo.
        low, high = (float(f"{v:.1f}") + 0.0 for v in self.strip.levels)
        self.strip.title.set(
            f"‖grad‖ per parameter and step: colour log₁₀ from {low:.1f} (dark) to"
            f" {high:.1f} (yellow); grey: no gradient",
            f"‖grad‖: log₁₀ from {low:.1f} (dark) to {high:.1f} (yellow); grey: none",
            f"log₁₀ ‖grad‖: {low:.1f} to {high:.1f}",
        )
        for flag in health.flags:
            item = QListWidgetItem(f"⚠ {flag.kind}: {flag.text}")
            item.setData(Qt.ItemDataRole.UserRole, (flag.step, flag.tensor))
            self.flags.addItem(item)
        if not health.flags:
            self.flags.addItem("✓ No vanishing, exploding or dead units in these steps.")
        # Room for up to three flags of two lines each (a flag wraps once at most widths).
        shown = min(self.flags.count(), 3)
        line = self.flags.fontMetrics().lineSpacing()
        self.flags.setFixedHeight(shown * (2 * line + 4) + 2 * self.flags.frameWidth() + 2)
        first = health.flags[0].tensor if health.flags else None
        self.selected = health.parameters.index(first) if first else 0
        self._draw_lines()

    def _draw_lines(self) -> None:
        health = self.health
        steps = np.arange(1, health.steps + 1, dtype=float)
        for plot in (self.loss, self.ratio):
            _whole_steps(plot, health.steps)
        self.loss.clear()
        loss = health.loss
        finite = loss[np.isfinite(loss)]
        # A log scale when the loss spans decades and stays above 0; else its values.
        log = bool(finite.size and finite.min() > 0 and finite.max() / finite.min() > 20)
        self.loss.getPlotItem().setLogMode(y=log)
        if finite.size:
            self.loss.plot(steps, loss, pen=pg.mkPen(SELECTED, width=2), symbol="o",
                           symbolSize=4, connect="finite")  # fmt: skip
        self.ratio.clear()
        ratio = np.where(health.ratio > 0, health.ratio, np.nan)
        with np.errstate(all="ignore"):
            known = np.isfinite(ratio).any(axis=0)
            low = np.where(known, np.nanmin(np.where(np.isfinite(ratio), ratio, np.inf), axis=0), 1)
            high = np.where(known, np.nanmax(np.where(np.isfinite(ratio), ratio, 0), axis=0), 1)
        if len(health.parameters) > 1:
            bottom = pg.PlotCurveItem(steps, np.log10(low))
            top = pg.PlotCurveItem(steps, np.log10(high))
            self.ratio.addItem(pg.FillBetweenItem(bottom, top, brush=pg.mkBrush(BAND)))
        self.ratio.addItem(pg.InfiniteLine(np.log10(HEALTHY_RATIO), angle=0,
                           pen=pg.mkPen("#64748b", style=Qt.PenStyle.DashLine)))  # fmt: skip
        name = health.names[self.selected]
        mine = ratio[self.selected]
        titles = (f"‖Δp‖/‖p‖: {name} (band: every parameter)", f"‖Δp‖/‖p‖: {name}")
        if np.isfinite(mine).any():
            self.ratio.plot(steps, mine, pen=pg.mkPen(SELECTED, width=2), symbol="o",
                            symbolSize=4, connect="finite")  # fmt: skip
        else:  # a log scale has no 0: say it instead
            titles = (f"‖Δp‖/‖p‖: {name} never moved (‖Δp‖ = 0)", f"{name} never moved")
        self.ratio_title.set(*titles)

    def _cell_clicked(self, step: int, parameter: int) -> None:
        self.selected = parameter
        self._draw_lines()
        self._choose(step, self.health.parameters[parameter])

    def _flag_chosen(self, item: QListWidgetItem) -> None:
        chosen = item.data(Qt.ItemDataRole.UserRole)
        if chosen:
            step, tensor = chosen
            self.selected = self.health.parameters.index(tensor)
            self._draw_lines()
            self._choose(step, tensor)

    def _choose(self, step: int, tensor: str) -> None:
        event = self.health.events[step]
        self.step_chosen.emit(-1 if event is None else int(event), tensor)
