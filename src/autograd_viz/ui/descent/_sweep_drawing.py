"""What the descent pane shows of a sweep: a result or a failure arriving from the sweeper,
and the slider's rate and step of it drawn as paths, captions and a readout."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt

from autograd_viz.ui.descent._descent_paths import LOOKS
from autograd_viz.ui.descent._descent_readout import caption_line, readout_lines, readout_table

if TYPE_CHECKING:
    import numpy as np

    from autograd_viz.ui.descent._descent_sweep import Sweep


class SweepDrawing:
    """The pane's half that draws a sweep; DescentPane builds the widgets it draws into."""

    # A plain mixin: the signals it emits (sweep_ready, sweep_failed) stay declared on the
    # QWidget subclass, where Qt can register them.
    def _on_failed(self, message: str, details: str) -> None:
        self._waiting.stop()
        self._drawn = None
        self.surface_plot.clear_surface()
        self.paths.clear()
        self.message.setText(message)
        self.message.setToolTip(details)
        self.message.show()
        self.caption.setText("")
        self.readout.setText("")
        self.sweep_failed.emit(message)

    def _on_sweep(self, sweep: Sweep) -> None:
        self._waiting.stop()
        drawn, self._drawn = self._drawn, sweep
        self.message.hide()
        self.message.setText("")
        if drawn is None or drawn.grid is not sweep.grid or drawn.key[:2] != sweep.key[:2]:
            self.surface_plot.draw_surface(sweep, self.start)
        if drawn is None or drawn.contours is not sweep.contours:
            self.surface_plot.draw_contours(sweep)
        self.rate_ticks.set_thresholds(self._rates, sweep.thresholds)
        if drawn is None or list(drawn.runs) != list(sweep.runs) or drawn.key != sweep.key:
            self.paths.show(list(sweep.runs))
            self.paths.frame(sweep)
            longest = max(run.paths.shape[1] for run in sweep.runs.values())
            self.step_slider.blockSignals(True)
            self.step_slider.setRange(0, longest - 1)
            self.step_slider.setValue(longest - 1)
            self.step_slider.blockSignals(False)
        elif sweep.complete:
            self.paths.frame(sweep)  # the loss range covers every rate once all are in
        self._place_legend()
        self._draw_path()
        self.surface_plot.repaint_whole()
        if sweep.complete:
            self.sweep_ready.emit()

    def _place_legend(self) -> None:
        if self._drawn is not None and self.paths.legend.isVisible():
            self.surface_plot.place_legend(self.paths.legend, self._drawn, self._rate_index())

    # ---- drawing (a slider tick only does this) --------------------------------
    def _rate_index(self) -> int:
        # A model's sweep holds one rate (the slider's, computed in the kernel).
        drawn = self._drawn
        return 0 if drawn is None or len(drawn.rates) == 1 else self.rate_slider.value()

    def current_path(self, optimizer: str | None = None) -> np.ndarray | None:
        """The path for the slider's learning rate: (steps + 1, 3) of w, b, loss."""
        if self._drawn is None or not self._drawn.has_rate(self._rate_index()):
            return None
        run = self._drawn.runs[optimizer or next(iter(self._drawn.runs))]
        return run.paths[self._rate_index()]

    def path_data(self, optimizer: str = "sgd") -> tuple[np.ndarray, np.ndarray]:
        """The (w, b) points drawn for an optimizer's path."""
        return self.paths.path_data(optimizer)

    @property
    def caption_kind(self) -> str | None:
        """The first shown optimizer's caption class (converges, bounces, …)."""
        return next(iter(self.caption_kinds.values()), None)

    def _draw_path(self) -> None:
        sweep = self._drawn
        if sweep is None:
            return
        index, step = self._rate_index(), self.step_slider.value()
        self.caption_texts, self.caption_kinds = {}, {}
        if not sweep.has_rate(index):
            self.paths.clear()  # never another rate's path under this rate's caption
            done = int(sweep.computed.sum())
            self.caption.setText(
                f"Computing the path at lr = {self.rate_box.text()}… "
                f"({done} of {len(sweep.rates)} learning rates in)"
            )
            self.readout.setText("")
            self.words.refit()
            return
        self.paths.draw(sweep, index, step)
        far = self.surface_plot.reaches_far(sweep, index)
        if far != self._drew_far:
            # Going to or from a path far outside the view, Qt's update of the item's own
            # region missed pixels (the old line stayed on screen): repaint the whole plot.
            # Only at the change: every tick of a far path would cost 9 ms more.
            self.surface_plot.repaint_whole()
        self._drew_far = far
        lines = []
        for name, run in sweep.runs.items():
            colour, _, title = LOOKS[name]
            caption = run.captions[index]
            self.caption_texts[name] = caption.text
            self.caption_kinds[name] = caption.kind
            lines.append(caption_line(colour, title, caption.text))
        if not sweep.complete:
            done = int(sweep.computed.sum())
            lines.append(f"<i>computing the other rates… {done} of {len(sweep.rates)}</i>")
        self.caption.setText("<br>".join(lines))
        looks = {name: (LOOKS[name][0], LOOKS[name][2]) for name in sweep.runs}
        table = readout_table(sweep, index, step, looks)
        if table is not None:
            self.readout.setTextFormat(Qt.TextFormat.RichText)
            self.readout.setText(table)
        else:
            titles = {name: title for name, (_, title) in looks.items()}
            self.readout.setTextFormat(Qt.TextFormat.PlainText)
            self.readout.setText("\n".join(readout_lines(sweep, index, step, titles)))
        self.words.refit()
