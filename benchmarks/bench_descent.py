"""Descent view speed: surface evaluation, the all-rates sweep, slider tick → redraw (one
optimizer, and three compared on one surface), and a model's loss landscape.

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
    from autograd_viz.core.descent.paths import FUNCTIONS, surface
    from autograd_viz.ui.descent._descent_sweep import compute_sweep

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
    sweep = compute_sweep("bowl", ["sgd"], bowl.start, 100)
    print(
        f"sweep: {len(sweep.rates)} rates × 100 steps, captions, contours: "
        f"{time.perf_counter() - start:.2f} s (off the GUI thread)"
    )
    start = time.perf_counter()
    compute_sweep("bowl", ["sgd", "momentum", "adam"], bowl.start, 100, reuse=sweep)
    print(
        f"sweep: + momentum, adam (sgd and the surface reused): "
        f"{time.perf_counter() - start:.2f} s (off the GUI thread)"
    )
    _landscape()

    from PySide6.QtWidgets import QApplication

    from autograd_viz.ui.descent.descent_pane import DescentPane

    app = QApplication.instance() or QApplication([])
    pane = DescentPane()
    pane.resize(1200, 600)
    pane.show()
    for optimizers in (["sgd"], ["sgd", "momentum", "adam"]):
        pane.set_optimizers(optimizers)
        pane.steps.setValue(100)
        while pane.sweep is None or pane.sweep.key[2:] != (tuple(optimizers), bowl.start, 100):
            app.processEvents()
            time.sleep(0.01)
        ticks, cpu = [], []
        top = pane.rate_slider.maximum()
        for i in range(args.ticks):
            start, start_cpu = time.perf_counter(), time.thread_time()
            pane.rate_slider.setValue((i * 7) % top)
            pane.surface_plot.viewport().repaint()
            pane.loss_plot.viewport().repaint()
            pane.caption.repaint()
            ticks.append(time.perf_counter() - start)
            cpu.append(time.thread_time() - start_cpu)
        median, p95 = _median_p95(ticks)
        # The GUI thread's own CPU time: what a tick costs, whatever else the machine runs.
        cpu_median, cpu_p95 = _median_p95(cpu)
        print(
            f"slider tick → {len(optimizers)} path{'s' if len(optimizers) > 1 else ''} "
            f"redrawn (100 steps): median {median:.1f} ms, p95 {p95:.1f} ms; GUI thread CPU "
            f"median {cpu_median:.1f} ms, p95 {cpu_p95:.1f} ms (target ≤ 16 ms)"
        )


def _landscape() -> None:
    from torch import nn

    from autograd_viz.core.descent.landscape import model_landscape

    torch.manual_seed(0)
    x = torch.randn(256, 8)
    y = torch.randn(256, 1)
    model = nn.Sequential(
        nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1)
    )
    count = sum(p.numel() for p in model.parameters())

    def loss_fn() -> torch.Tensor:
        return nn.functional.mse_loss(model(x), y)

    model_landscape(model, loss_fn, steps=0, resolution=11)  # warm-up
    times = []
    for _ in range(5):
        start = time.perf_counter()
        model_landscape(model, loss_fn, learning_rate=0.1, steps=20, resolution=41)
        times.append(time.perf_counter() - start)
    median, _ = _median_p95(times)
    print(
        f"model landscape 41×41, MLP of {count} parameters, 256 samples, 20 SGD steps "
        f"projected: median {median:.0f} ms (target well under 1 s)"
    )


if __name__ == "__main__":
    main()
