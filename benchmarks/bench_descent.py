"""Descent view speed: surface evaluation, the all-rates sweep, and slider tick → redraw.

QT_QPA_PLATFORM=offscreen python -m benchmarks.bench_descent [--ticks N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _median_p95(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times) * 1000, times[int(0.95 * (len(times) - 1))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    from autograd_viz.core.descent import FUNCTIONS, surface
    from autograd_viz.ui.descent_pane import compute_sweep

    bowl = FUNCTIONS["bowl"]
    surface(bowl.fn, bowl.extent, 256)
    times = []
    for _ in range(20):
        start = time.perf_counter()
        surface(bowl.fn, bowl.extent, 256)
        times.append(time.perf_counter() - start)
    median, p95 = _median_p95(times)
    print(f"torch {torch.__version__}, 1 thread\n")
    print(
        f"surface 256×256 (bowl):            median {median:.2f} ms, p95 {p95:.2f} ms "
        "(target ≤ 50 ms)"
    )
    start = time.perf_counter()
    sweep = compute_sweep("bowl", "sgd", bowl.start, 100)
    print(
        f"sweep: {len(sweep.rates)} rates × 100 steps, captions, contours: "
        f"{time.perf_counter() - start:.2f} s (off the GUI thread)"
    )

    from PySide6.QtWidgets import QApplication

    from autograd_viz.ui.descent_pane import DescentPane

    app = QApplication.instance() or QApplication([])
    pane = DescentPane()
    pane.resize(1200, 600)
    pane.show()
    pane.steps.setValue(100)
    while pane.sweep is None or pane.sweep.key[3] != 100:
        app.processEvents()
        time.sleep(0.01)
    ticks = []
    top = pane.rate_slider.maximum()
    for i in range(args.ticks):
        start = time.perf_counter()
        pane.rate_slider.setValue((i * 7) % top)
        pane.surface_plot.viewport().repaint()
        pane.loss_plot.viewport().repaint()
        ticks.append(time.perf_counter() - start)
    median, p95 = _median_p95(ticks)
    print(
        f"slider tick → path redrawn (100 steps): median {median:.1f} ms, p95 {p95:.1f} ms "
        "(target ≤ 16 ms)"
    )


if __name__ == "__main__":
    main()
