"""The descent pane: a loss surface, a learning-rate slider, and the paths real torch.optim
takes (several optimizers side by side), each with a caption computed from its path. The
surface can also be the user's own loss(w, b), or a model's loss landscape: both are
computed in the kernel, where the user's code ran."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
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

from autograd_viz.ui._plot_theme import DARK_PLOT, LIGHT_PLOT, style_plot
from autograd_viz.ui._step_buttons import StepControls
from autograd_viz.ui.descent._descent_paths import LOOKS, PathLayers
from autograd_viz.ui.descent._descent_sweep import RATE_COUNT, Sweep, shown_surface
from autograd_viz.ui.descent._rate_ticks import RateTicks
from autograd_viz.ui.descent._sweeper import Sweeper

if TYPE_CHECKING:
    from autograd_viz.session import KernelSession

USER, MODEL = "user", "model"  # the function choices computed in the kernel
LANDSCAPE_DELAY_MS = 300  # a model's path is recomputed in the kernel once the slider rests
HELP = {
    USER: "Runs your editor's <code>def loss(w, b): …</code> in the kernel, on its device: "
    "write it with torch operations, press Ctrl+Enter, then choose this. Click the surface "
    "to start elsewhere.",
    MODEL: "Your editor's code defines <code>model</code> (an nn.Module) and "
    "<code>loss_fn()</code>, a function with no arguments returning the loss, e.g. "
    "<code>def loss_fn(): return F.mse_loss(model(x), y)</code>. Press Ctrl+Enter, then "
    "choose this. The surface is L(θ + α·d1 + β·d2) along two random filter-normalized "
    "directions around the current parameters θ (Li et al. 2018); the path is real SGD at "
    "the slider's rate from θ, projected onto that plane.",
}


class DescentPane(QWidget):
    """Drag the learning rate: the paths are already computed, so only the drawing changes."""

    sweep_ready = Signal()
    sweep_failed = Signal(str)

    def __init__(self, session: KernelSession | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        from autograd_viz.core.descent.paths import (  # torch loads here
            FUNCTIONS,
            learning_rate_grid,
        )

        self._functions = FUNCTIONS
        self._rates = learning_rate_grid(count=RATE_COUNT)
        self.session = session
        self.sweep: Sweep | None = None
        self.start = FUNCTIONS["bowl"].start
        self.caption_texts: dict[str, str] = {}
        self.caption_kinds: dict[str, str] = {}
        self._keep_view = self._stale = False
        self.sweeper = Sweeper(session, self)
        self.sweeper.ready.connect(self._on_sweep)
        self.sweeper.failed.connect(self._on_failed)
        self.function = QComboBox()
        for key, spec in FUNCTIONS.items():
            self.function.addItem(f"{spec.title}: {spec.formula}", key)
        self.function.insertSeparator(self.function.count())
        self.function.addItem("Use loss(w, b) from the editor", USER)
        self.function.addItem("Model landscape: model and loss_fn() from the editor", MODEL)
        # Beale's formula is long: let the box be narrower than its longest item.
        self.function.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.function.setMinimumContentsLength(24)
        self.optimizer_boxes = {name: QCheckBox(look[2]) for name, look in LOOKS.items()}
        self.optimizer_boxes["sgd"].setChecked(True)
        self.rate_slider = QSlider(Qt.Orientation.Horizontal)
        self.rate_slider.setRange(0, len(self._rates) - 1)
        self.rate_ticks = RateTicks(self.rate_slider)
        self.rate_box = QDoubleSpinBox()
        self.rate_box.setDecimals(4)
        self.rate_box.setRange(0.001, 2.0)
        self.rate_box.setSingleStep(0.01)
        self.steps = QSpinBox()
        self.steps.setRange(1, 1000)
        self.steps.setValue(50)
        self.span = QDoubleSpinBox()  # the model landscape's α, β range
        self.span.setRange(0.01, 20.0)
        self.span.setValue(1.0)
        self.span.setSingleStep(0.25)
        self.span.setToolTip("The grid covers α and β in [−span, span] (Li et al. use 1)")
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.help = QLabel()
        self.help.setWordWrap(True)
        self.help.setObjectName("descentHelp")
        self.help.setStyleSheet("color: #475569;")
        self.message = QLabel()
        self.message.setObjectName("descentMessage")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b91c1c; font-weight: 600;")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.caption = QLabel()
        self.caption.setObjectName("descentCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.readout = QLabel()
        self.readout.setWordWrap(True)
        self._landscape_timer = QTimer(self)
        self._landscape_timer.setSingleShot(True)
        self._landscape_timer.setInterval(LANDSCAPE_DELAY_MS)
        self._landscape_timer.timeout.connect(self.recompute)
        self._build_plots()
        self._build_layout()
        self.function.currentIndexChanged.connect(self._function_changed)
        for box in self.optimizer_boxes.values():
            box.toggled.connect(self._optimizers_changed)
        self.steps.valueChanged.connect(self.recompute)
        self.span.valueChanged.connect(self.recompute)
        self.rate_slider.valueChanged.connect(self._rate_slider_moved)
        self.rate_box.editingFinished.connect(self._rate_typed)
        self.step_slider.valueChanged.connect(self._draw_path)
        if session is not None:
            session.run_finished.connect(self._code_ran)
        self.set_learning_rate(0.1)
        self._show_source_widgets()
        self.recompute()

    # ---- assembly --------------------------------------------------------------
    def _build_plots(self) -> None:
        self.surface_plot = pg.PlotWidget(background="#ffffff")
        self.surface_plot.setMinimumWidth(360)
        self.surface_plot.setLabel("bottom", "w")
        self.surface_plot.setLabel("left", "b")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.surface_plot.addItem(self.image)
        self.colour_bar = pg.ColorBarItem(
            colorMap=pg.colormap.get("viridis"), interactive=False, label="log₁₀ loss"
        )
        self.colour_bar.setImageItem(self.image, insert_in=self.surface_plot.getPlotItem())
        self.contour_items: list[pg.PlotDataItem] = []
        self.minimum_item = pg.ScatterPlotItem(
            symbol="star", size=18, brush="#facc15", pen=pg.mkPen("#0f172a")
        )
        self.minimum_item.setZValue(9)
        self.surface_plot.addItem(self.minimum_item)
        self.surface_plot.scene().sigMouseClicked.connect(self._surface_clicked)
        self.loss_plot = pg.PlotWidget(background="#ffffff")
        self.loss_plot.setLabel("bottom", "step")
        self.loss_plot.setLabel("left", "loss")
        self.loss_plot.setLogMode(y=True)
        self.loss_plot.getAxis("left").setStyle(maxTextLevel=0)  # label decades only
        self.paths = PathLayers(self.surface_plot, self.loss_plot, LOOKS)

    def _build_layout(self) -> None:
        form = QFormLayout()
        form.addRow("function", self.function)
        boxes = QHBoxLayout()
        for box in self.optimizer_boxes.values():
            boxes.addWidget(box)
        boxes.addStretch(1)
        form.addRow("optimizers", boxes)
        rate_column = QVBoxLayout()
        rate_column.setSpacing(0)
        rate_column.addWidget(self.rate_slider)
        rate_column.addWidget(self.rate_ticks)
        rate_row = QHBoxLayout()
        rate_row.addLayout(rate_column, 1)
        rate_row.addWidget(self.rate_box, 0, Qt.AlignmentFlag.AlignTop)
        form.addRow("learning rate", rate_row)
        form.addRow("steps", self.steps)
        form.addRow("span", self.span)
        self.step_controls = StepControls(self.step_slider)
        form.addRow("step", self.step_controls)
        self.form = form
        side = QVBoxLayout()
        side.addLayout(form)
        side.addWidget(self.help)
        side.addWidget(self.message)
        side.addWidget(self.caption)
        side.addWidget(self.readout)
        side.addWidget(self.loss_plot, 1)
        row = QHBoxLayout(self)
        row.addWidget(self.surface_plot, 3)
        row.addLayout(side, 2)

    def _show_source_widgets(self) -> None:
        source = self.function.currentData()
        self.form.setRowVisible(self.span, source == MODEL)
        for name, box in self.optimizer_boxes.items():
            box.setEnabled(source != MODEL or name == "sgd")
        self.help.setText(HELP.get(source, ""))
        self.help.setVisible(source in HELP)

    # ---- inputs ----------------------------------------------------------------
    @property
    def learning_rate(self) -> float:
        """The learning rate the slider shows."""
        return self._rates[self.rate_slider.value()]

    def rates(self) -> list[float]:
        """The slider's learning rates (log-spaced, with the lesson's round values)."""
        return self._rates

    @property
    def optimizers(self) -> list[str]:
        """The optimizers whose paths are shown (only SGD for a model landscape)."""
        if self.function.currentData() == MODEL:
            return ["sgd"]
        return [name for name, box in self.optimizer_boxes.items() if box.isChecked()]

    def set_dark(self, dark: bool) -> None:
        """Follow the window's theme: plot backgrounds, axes and the help text."""
        for plot in (self.surface_plot, self.loss_plot):
            style_plot(plot, dark)
        axis = self.colour_bar.getAxis("right")
        axis.setPen(DARK_PLOT[1] if dark else LIGHT_PLOT[1])
        axis.setTextPen(DARK_PLOT[1] if dark else LIGHT_PLOT[1])
        self.help.setStyleSheet(f"color: {'#a3a3a3' if dark else '#475569'};")

    def set_learning_rate(self, rate: float) -> None:
        """Move the slider to the position nearest `rate`."""
        rates = self._rates
        index = min(range(len(rates)), key=lambda i: abs(math.log(rates[i] / rate)))
        self.rate_slider.setValue(index)
        self._rate_slider_moved(index)

    def set_function(self, key: str) -> None:
        """Show a built-in function ("bowl", …), "user" (loss(w, b)) or "model"."""
        self.function.setCurrentIndex(self.function.findData(key))

    def set_optimizers(self, names: list[str]) -> None:
        """Show exactly these optimizers' paths (one recompute, of the new ones only)."""
        for name, box in self.optimizer_boxes.items():
            box.blockSignals(True)
            box.setChecked(name in names)
            box.blockSignals(False)
        self.recompute()

    def _optimizers_changed(self, checked: bool) -> None:
        if not checked and not self.optimizers:  # keep at least one path to show
            box = self.sender()
            box.blockSignals(True)
            box.setChecked(True)
            box.blockSignals(False)
            return
        self.recompute()

    def _rate_slider_moved(self, _index: int) -> None:
        self.rate_box.blockSignals(True)
        self.rate_box.setValue(self.learning_rate)
        self.rate_box.blockSignals(False)
        if self.function.currentData() == MODEL:
            if self.sweep is None or self.sweep.rates != [self.learning_rate]:
                self._landscape_timer.start()  # its path is computed at one rate, in the kernel
            return
        self.step_slider.setValue(self.step_slider.maximum())
        self._draw_path()

    def _rate_typed(self) -> None:
        self.set_learning_rate(self.rate_box.value())

    def _function_changed(self) -> None:
        source = self.function.currentData()
        self.start = self._functions[source].start if source in self._functions else (0.5, 1.0)
        self._show_source_widgets()
        self.recompute()

    def _code_ran(self, _ok: bool) -> None:
        # The editor's code ran again: its loss or model may have changed. A hidden pane
        # waits until it is shown, so the kernel is not kept busy for nothing.
        self._stale = self.function.currentData() in (USER, MODEL)
        if self._stale and self.isVisible():
            self.recompute()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.recompute()

    def _surface_clicked(self, event) -> None:
        if (
            self.sweep is None
            or self.sweep.kind == "model"
            or event.button() != Qt.MouseButton.LeftButton
        ):
            return
        point = self.surface_plot.getViewBox().mapSceneToView(event.scenePos())
        self.start = (float(point.x()), float(point.y()))
        self._keep_view = True  # a new start on the user's surface keeps its window
        self.recompute()

    # ---- computing (off the GUI thread, or in the kernel) -----------------------
    def recompute(self) -> None:
        """Start computing paths for every learning rate; the pane redraws when ready."""
        self._landscape_timer.stop()
        source, steps = self.function.currentData(), self.steps.value()
        self._keep_view, keep_view = False, self._keep_view
        self._stale = False
        self.caption.setText("Computing the paths…")
        if source == MODEL:
            self.caption.setText("Computing the landscape in the kernel…")
            self.sweeper.model(self.learning_rate, steps, self.span.value())
        elif source == USER:
            self.caption.setText("Computing the paths in the kernel…")
            same = keep_view and self.sweep is not None and self.sweep.key[0] == USER
            bounds = [list(self.sweep.ws[[0, -1]]), list(self.sweep.bs[[0, -1]])] if same else None
            self.sweeper.user_function(self.optimizers, self.start, steps, bounds)
        else:
            reuse = self.sweep if self.sweep is not None and self.sweep.kind == "function" else None
            self.sweeper.builtin(source, self.optimizers, self.start, steps, reuse)

    def _on_failed(self, message: str, details: str) -> None:
        self.sweep = None
        self.image.clear()
        for item in self.contour_items:
            self.surface_plot.removeItem(item)
        self.contour_items = []
        self.minimum_item.clear()
        self.paths.clear()
        self.message.setText(message)
        self.message.setToolTip(details)
        self.message.show()
        self.caption.setText("")
        self.readout.setText("")
        self.sweep_failed.emit(message)

    def _on_sweep(self, sweep: Sweep) -> None:
        self.sweep = sweep
        self.message.hide()
        self.message.setText("")
        shown = shown_surface(sweep.grid)
        self.image.setImage(shown, autoLevels=False, levels=self._levels(shown))
        w0, w1, b0, b1 = sweep.ws[0], sweep.ws[-1], sweep.bs[0], sweep.bs[-1]
        self.image.setRect(pg.QtCore.QRectF(w0, b0, w1 - w0, b1 - b0))
        self.colour_bar.setLevels(self._levels(shown))
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
        self.surface_plot.setLabel("bottom", sweep.axes[0])
        self.surface_plot.setLabel("left", sweep.axes[1])
        self.surface_plot.getViewBox().setRange(xRange=(w0, w1), yRange=(b0, b1), padding=0)
        self.rate_ticks.set_thresholds(self._rates, sweep.thresholds)
        self.paths.show(list(sweep.runs))
        self.paths.frame(sweep)
        longest = max(run.paths.shape[1] for run in sweep.runs.values())
        self.step_slider.setRange(0, longest - 1)
        self.step_slider.setValue(longest - 1)
        self._draw_path()
        self.sweep_ready.emit()

    @staticmethod
    def _levels(shown: np.ndarray) -> tuple[float, float]:
        finite = shown[np.isfinite(shown)]
        return (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)

    # ---- drawing (a slider tick only does this) --------------------------------
    def _rate_index(self) -> int:
        # A model's sweep holds one rate (the slider's, computed in the kernel).
        return 0 if self.sweep is None or len(self.sweep.rates) == 1 else self.rate_slider.value()

    def current_path(self, optimizer: str | None = None) -> np.ndarray | None:
        """The path for the slider's learning rate: (steps + 1, 3) of w, b, loss."""
        if self.sweep is None:
            return None
        run = self.sweep.runs[optimizer or next(iter(self.sweep.runs))]
        return run.paths[self._rate_index()]

    def path_data(self, optimizer: str = "sgd") -> tuple[np.ndarray, np.ndarray]:
        """The (w, b) points drawn for an optimizer's path."""
        return self.paths.path_data(optimizer)

    @property
    def caption_kind(self) -> str | None:
        """The first shown optimizer's caption class (converges, bounces, …)."""
        return next(iter(self.caption_kinds.values()), None)

    def _draw_path(self) -> None:
        sweep = self.sweep
        if sweep is None:
            return
        index, step = self._rate_index(), self.step_slider.value()
        self.paths.draw(sweep, index, step)
        lines, readouts = [], []
        self.caption_texts, self.caption_kinds = {}, {}
        for name, run in sweep.runs.items():
            colour, _, title = LOOKS[name]
            caption = run.captions[index]
            self.caption_texts[name] = caption.text
            self.caption_kinds[name] = caption.kind
            lines.append(
                f'<span style="color:{colour}">■</span> <b>{title}</b>: {html.escape(caption.text)}'
            )
            path = run.paths[index]
            at = min(step, len(path) - 1)
            w, b, loss = path[at]
            if run.grads is not None:
                dw, db = run.grads[index, at]
                readouts.append(
                    f"{title} step {at}: w = {w:.4g}, b = {b:.4g}, loss = {loss:.4g}; "
                    f"∂L/∂w = {dw:.4g}, ∂L/∂b = {db:.4g}"
                )
            else:
                extra = sweep.extra
                readouts.append(
                    f"step {at}: α = {w:.4g}, β = {b:.4g}, the model's loss = {loss:.4g}, "
                    f"‖∇L‖ = {extra['grad_norms'][at]:.4g}; the plane holds "
                    f"{100 * extra['in_plane'][at]:.0f}% of the way from θ "
                    f"({extra['parameters']} parameters, {sweep.device})"
                )
        self.caption.setText("<br>".join(lines))
        self.readout.setText("\n".join(readouts))
