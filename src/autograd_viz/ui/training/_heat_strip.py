"""The heat strip: each parameter's gradient norm at each step, on a log colour scale."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetrics

from autograd_viz.core.playback.training import TrainingHealth
from autograd_viz.ui._plot_fitting import FittedTitle

MAX_LABELS = 16  # parameter names on the axis (more would overlap); every k-th past that
MAX_AXIS_WIDTH = 260  # px for the names; a longer one is cut
NO_DATA = (160, 160, 160, 60)  # a step that left a parameter without a gradient


class HeatStrip(pg.PlotWidget):
    """Parameters down, steps across; the colour is log10 ‖grad‖. Flagged cells are ringed;
    a click on a cell says which (step, parameter)."""

    cell_clicked = Signal(int, int)  # step, parameter (0-based)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("heatStrip")
        self.title = FittedTitle(self)
        item = self.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.invertY(True)  # the first parameter on top, as the model lists them
        item.setMouseEnabled(x=False, y=False)
        item.setLabel("bottom", "step")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.colours = pg.colormap.get("viridis")
        self.addItem(self.image)
        self.rings = pg.ScatterPlotItem(
            pxMode=False, symbol="s", size=0.9, brush=None, pen=pg.mkPen("#dc2626", width=1.5)
        )
        self.addItem(self.rings)
        self.health: TrainingHealth | None = None
        self.levels = (0.0, 1.0)
        self.scene().sigMouseClicked.connect(self._clicked)

    def show_health(self, health: TrainingHealth) -> None:
        """Draw `health` (an empty one clears the strip)."""
        self.health = health
        norms = health.grad_norm
        if norms.size == 0:
            self.image.clear()
            self.rings.clear()
            return
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log10(np.where(norms > 0, norms, np.nan))
        finite = logs[np.isfinite(logs)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if high - low < 1e-9:
            low, high = low - 0.5, high + 0.5
        self.levels = (low, high)
        rgba = self.colours.map((np.clip(logs, low, high) - low) / (high - low), mode="byte")
        rgba[~np.isfinite(logs)] = NO_DATA
        self.image.setImage(rgba)
        self.image.setRect(0.5, -0.5, norms.shape[1], norms.shape[0])  # steps from 1
        place = {tid: i for i, tid in enumerate(health.parameters)}
        self.rings.setData(
            x=[f.step + 1 for f in health.flags], y=[place[f.tensor] for f in health.flags]
        )
        left = self.getPlotItem().getAxis("left")
        every = max(1, math.ceil(len(health.names) / MAX_LABELS))
        ticks = [(i, name) for i, name in enumerate(health.names) if i % every == 0]
        left.setTicks([ticks])
        # Wide enough for the longest name: the axis only widens itself after a repaint,
        # and drew no name at all before one.
        metrics = QFontMetrics(self.font())
        left.setWidth(min(MAX_AXIS_WIDTH, max(metrics.horizontalAdvance(n) for _, n in ticks) + 14))
        steps = norms.shape[1]
        spacing = max(1, round(steps / 10))  # whole steps only
        self.getPlotItem().getAxis("bottom").setTickSpacing(spacing, spacing)
        self.getPlotItem().setRange(
            xRange=(0.5, norms.shape[1] + 0.5), yRange=(-0.5, norms.shape[0] - 0.5), padding=0
        )

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """The (step, parameter) under a scene position, or None off the strip."""
        if self.health is None or self.health.grad_norm.size == 0:
            return None
        point = self.getPlotItem().vb.mapSceneToView(scene_pos)
        step, parameter = round(point.x()) - 1, round(point.y())
        rows, steps = self.health.grad_norm.shape
        if 0 <= step < steps and 0 <= parameter < rows:
            return step, parameter
        return None

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        cell = self.cell_at(event.scenePos())
        if cell is not None:
            self.cell_clicked.emit(*cell)
