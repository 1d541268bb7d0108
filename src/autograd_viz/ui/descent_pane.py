"""The descent pane: a loss surface, a learning-rate slider, and the path real torch.optim
takes, with a caption computed from that path."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

RATE_COUNT = 241  # slider positions, log-spaced from 1e-3 to 2
RESOLUTION = 256  # surface grid
CONTOUR_LEVELS = 10
PATH_COLOUR = "#be185d"


@dataclass
class Sweep:
    """Everything the pane draws for one function / optimizer / start / step count."""

    key: tuple
    rates: list[float]
    paths: np.ndarray  # (rates, steps + 1, 3): w, b, loss
    ws: np.ndarray
    bs: np.ndarray
    grid: np.ndarray  # loss[b, w]
    contours: list[np.ndarray]  # each (n, 2) with NaN breaks
    minimum: tuple[float, float] | None
    grads: np.ndarray  # (rates, steps + 1, 2): ∂L/∂w, ∂L/∂b at every point, from autograd
    captions: list  # one core.descent.Caption per learning rate


def compute_sweep(function: str, optimizer: str, start: tuple[float, float], steps: int) -> Sweep:
    """Paths for every slider position, the surface and its contours (runs off the GUI)."""
    from autograd_viz.core.descent import (
        FUNCTIONS,
        descend_many,
        describe_path,
        learning_rate_grid,
        surface,
    )

    spec = FUNCTIONS[function]
    rates = learning_rate_grid(count=RATE_COUNT)
    paths_t = descend_many(spec.fn, start, rates, steps, optimizer)
    points = paths_t[:, :, :2].clone().requires_grad_(True)
    spec.fn(points[..., 0], points[..., 1]).nan_to_num(0.0, 0.0, 0.0).sum().backward()
    grads = points.grad.numpy()
    captions = [
        describe_path(path, lr, spec.minimum) for path, lr in zip(paths_t, rates, strict=True)
    ]
    paths = paths_t.numpy()
    ws, bs, grid = (t.numpy() for t in surface(spec.fn, spec.extent, RESOLUTION))
    shown = np.log10(grid - grid.min() + 1e-3)  # contours of a log surface read better
    contours = []
    for level in np.linspace(shown.min(), shown.max(), CONTOUR_LEVELS + 2)[1:-1]:
        lines = pg.functions.isocurve(shown, level, connected=True, extendToEdge=True)
        pieces = []
        for line in lines:
            points = np.asarray(line, dtype=float)  # (row, col) = (b index, w index)
            w = np.interp(points[:, 1], np.arange(len(ws)), ws)
            b = np.interp(points[:, 0], np.arange(len(bs)), bs)
            pieces.append(np.column_stack([w, b]))
            pieces.append(np.array([[np.nan, np.nan]]))
        if pieces:
            contours.append(np.vstack(pieces))
    return Sweep(
        (function, optimizer, start, steps),
        rates,
        paths,
        ws,
        bs,
        grid,
        contours,
        spec.minimum,
        grads,
        captions,
    )


class _Bridge(QObject):
    done = Signal(object)


class DescentPane(QWidget):
    """Drag the learning rate: the path is already computed, so only the drawing changes."""

    sweep_ready = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from autograd_viz.core.descent import FUNCTIONS, OPTIMIZERS  # torch loads lazily here

        self._functions = FUNCTIONS
        self.sweep: Sweep | None = None
        self.start = FUNCTIONS["bowl"].start
        self._generation = 0
        self._bridge = _Bridge(self)
        self._bridge.done.connect(self._on_sweep)
        self.function = QComboBox()
        for key, spec in FUNCTIONS.items():
            self.function.addItem(f"{spec.title}: {spec.formula}", key)
        self.optimizer = QComboBox()
        self.optimizer.addItems(list(OPTIMIZERS))
        self.rate_slider = QSlider(Qt.Orientation.Horizontal)
        self.rate_slider.setRange(0, len(self.rates()) - 1)
        self.rate_box = QDoubleSpinBox()
        self.rate_box.setDecimals(4)
        self.rate_box.setRange(0.001, 2.0)
        self.rate_box.setSingleStep(0.01)
        self.steps = QSpinBox()
        self.steps.setRange(1, 1000)
        self.steps.setValue(50)
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.caption = QLabel()
        self.caption.setObjectName("descentCaption")
        self.caption.setWordWrap(True)
        self.readout = QLabel()
        self._build_plots()
        self._build_layout()
        self.function.currentIndexChanged.connect(self._function_changed)
        self.optimizer.currentIndexChanged.connect(self.recompute)
        self.steps.valueChanged.connect(self.recompute)
        self.rate_slider.valueChanged.connect(self._rate_slider_moved)
        self.rate_box.editingFinished.connect(self._rate_typed)
        self.step_slider.valueChanged.connect(self._draw_path)
        self.set_learning_rate(0.1)
        self.recompute()

    # ---- assembly --------------------------------------------------------------
    def _build_plots(self) -> None:
        self.surface_plot = pg.PlotWidget(background="#ffffff")
        self.surface_plot.setLabel("bottom", "w")
        self.surface_plot.setLabel("left", "b")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.surface_plot.addItem(self.image)
        self.colour_bar = pg.ColorBarItem(
            colorMap=pg.colormap.get("viridis"), interactive=False, label="log₁₀ loss"
        )
        self.colour_bar.setImageItem(self.image, insert_in=self.surface_plot.getPlotItem())
        self.contour_items: list[pg.PlotDataItem] = []
        self.path_item = pg.PlotDataItem(
            pen=pg.mkPen(PATH_COLOUR, width=2),
            symbol="o",
            symbolSize=5,
            symbolBrush=PATH_COLOUR,
            symbolPen=None,
        )
        self.current_item = pg.ScatterPlotItem(
            size=14, brush="#ffffff", pen=pg.mkPen(PATH_COLOUR, width=3)
        )
        self.minimum_item = pg.ScatterPlotItem(
            symbol="star", size=18, brush="#facc15", pen=pg.mkPen("#0f172a")
        )
        for item in (self.path_item, self.current_item, self.minimum_item):
            item.setZValue(10)
            self.surface_plot.addItem(item)
        self.surface_plot.scene().sigMouseClicked.connect(self._surface_clicked)
        self.loss_plot = pg.PlotWidget(background="#ffffff")
        self.loss_plot.setLabel("bottom", "step")
        self.loss_plot.setLabel("left", "loss")
        self.loss_plot.setLogMode(y=True)
        self.loss_curve = self.loss_plot.plot(pen=pg.mkPen(PATH_COLOUR, width=2))
        # A plot item (not a bare scatter) so that the log axis applies to it too.
        self.loss_marker = self.loss_plot.plot(
            pen=None, symbol="o", symbolSize=10, symbolBrush=PATH_COLOUR, symbolPen=None
        )

    def _build_layout(self) -> None:
        form = QFormLayout()
        form.addRow("function", self.function)
        form.addRow("optimizer", self.optimizer)
        rate_row = QHBoxLayout()
        rate_row.addWidget(self.rate_slider, 1)
        rate_row.addWidget(self.rate_box)
        form.addRow("learning rate", rate_row)
        form.addRow("steps", self.steps)
        form.addRow("step", self.step_slider)
        side = QVBoxLayout()
        side.addLayout(form)
        side.addWidget(self.caption)
        side.addWidget(self.readout)
        side.addWidget(self.loss_plot, 1)
        row = QHBoxLayout(self)
        row.addWidget(self.surface_plot, 3)
        row.addLayout(side, 2)

    # ---- inputs ----------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        """The learning rate the slider shows."""
        return self.rates()[self.rate_slider.value()]

    def rates(self) -> list[float]:
        """The slider's learning rates (log-spaced)."""
        from autograd_viz.core.descent import learning_rate_grid

        return self.sweep.rates if self.sweep else learning_rate_grid(count=RATE_COUNT)

    def set_learning_rate(self, rate: float) -> None:
        """Move the slider to the position nearest `rate`."""
        rates = self.rates()
        index = min(range(len(rates)), key=lambda i: abs(math.log(rates[i] / rate)))
        self.rate_slider.setValue(index)
        self._rate_slider_moved(index)

    def _rate_slider_moved(self, _index: int) -> None:
        self.rate_box.blockSignals(True)
        self.rate_box.setValue(self.learning_rate)
        self.rate_box.blockSignals(False)
        self.step_slider.setValue(self.step_slider.maximum())
        self._draw_path()

    def _rate_typed(self) -> None:
        self.set_learning_rate(self.rate_box.value())

    def _function_changed(self) -> None:
        self.start = self._functions[self.function.currentData()].start
        self.recompute()

    def _surface_clicked(self, event) -> None:
        if self.sweep is None or event.button() != Qt.MouseButton.LeftButton:
            return
        point = self.surface_plot.getViewBox().mapSceneToView(event.scenePos())
        self.start = (float(point.x()), float(point.y()))
        self.recompute()

    # ---- computing (off the GUI thread) ----------------------------------------
    def recompute(self) -> None:
        """Start computing paths for every learning rate; the pane redraws when ready."""
        self._generation += 1
        generation = self._generation
        args = (
            self.function.currentData(),
            self.optimizer.currentText(),
            self.start,
            self.steps.value(),
        )
        self.caption.setText("Computing the paths…")

        def work() -> None:
            sweep = compute_sweep(*args)
            self._bridge.done.emit((generation, sweep))

        threading.Thread(target=work, name="descent-sweep", daemon=True).start()

    def _on_sweep(self, payload: tuple[int, Sweep]) -> None:
        generation, sweep = payload
        if generation != self._generation:
            return  # the inputs changed while it computed
        self.sweep = sweep
        shown = np.log10(sweep.grid - sweep.grid.min() + 1e-3)
        self.image.setImage(shown, autoLevels=True)
        w0, w1, b0, b1 = sweep.ws[0], sweep.ws[-1], sweep.bs[0], sweep.bs[-1]
        self.image.setRect(pg.QtCore.QRectF(w0, b0, w1 - w0, b1 - b0))
        self.colour_bar.setLevels((float(shown.min()), float(shown.max())))
        for item in self.contour_items:
            self.surface_plot.removeItem(item)
        self.contour_items = [
            self.surface_plot.plot(
                c[:, 0], c[:, 1], pen=pg.mkPen(255, 255, 255, 110), connect="finite"
            )
            for c in sweep.contours
        ]
        if sweep.minimum is not None:
            self.minimum_item.setData([sweep.minimum[0]], [sweep.minimum[1]])
        else:
            self.minimum_item.clear()
        self.surface_plot.getViewBox().setRange(xRange=(w0, w1), yRange=(b0, b1), padding=0)
        self.step_slider.setRange(0, sweep.paths.shape[1] - 1)
        self.step_slider.setValue(sweep.paths.shape[1] - 1)
        self._draw_path()
        self.sweep_ready.emit()

    # ---- drawing (a slider tick only does this) --------------------------------
    def current_path(self) -> np.ndarray | None:
        """The path for the slider's learning rate: (steps + 1, 3) of w, b, loss."""
        return None if self.sweep is None else self.sweep.paths[self.rate_slider.value()]

    def _draw_path(self) -> None:
        path = self.current_path()
        if path is None:
            return
        finite = np.isfinite(path).all(axis=1)
        self.path_item.setData(path[finite, 0], path[finite, 1])
        step = min(self.step_slider.value(), len(path) - 1)
        w, b, loss = path[step]
        self.current_item.setData([w], [b])
        steps = np.arange(len(path))
        positive = finite & (path[:, 2] > 0)
        self.loss_curve.setData(steps[positive], path[positive, 2])
        if np.isfinite(loss) and loss > 0:
            self.loss_marker.setData([step], [loss])
        else:
            self.loss_marker.setData([], [])
        caption = self.sweep.captions[self.rate_slider.value()]
        self.caption_kind = caption.kind
        self.caption.setText(caption.text)
        dw, db = self.sweep.grads[self.rate_slider.value(), step]
        self.readout.setText(
            f"step {step}: w = {w:.4g}, b = {b:.4g}, loss = {loss:.4g}\n"
            f"gradient: ∂L/∂w = {dw:.4g}, ∂L/∂b = {db:.4g}"
        )
