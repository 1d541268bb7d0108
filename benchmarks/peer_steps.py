"""Real models side by side: a plain step, our capture and layout, torchview, torchlens.

Part of `python -m benchmarks.bench_peers` (its second table). Every cell is the median
of N runs, one run only where a single run takes more than `SLOW_S` (a 30-second cell
repeated five times would make the bench too long to run at all). The peers record a
forward pass only, so their ratios are to the plain forward; ours records the whole step
(forward, backward, the gradients), so its ratios are to the plain step.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

import torch

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.run_view import prepare_run

from .models import Workload, param_count, workloads

SLOW_S = 5.0
COLUMNS = (
    f"{'model':46} {'params':>11} {'ops':>6} {'nodes':>6} {'fwd ms':>8} {'step ms':>8} "
    f"{'ours ms':>8} {'ratio':>6} {'layout ms':>9} {'ours+lay':>8} "
    f"{'torchview+dot ms':>22} {'ratio':>6} {'torchlens ms':>13} {'ratio':>6}"
)


def _time(fn: Callable[[], Any], repeat: int, before: Callable[[], None]) -> float:
    """Median seconds of `fn` over `repeat` runs (after one warm-up run), `before` untimed."""
    times = []
    for run in range(repeat + 1):
        before()
        gc.collect()
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        if run:
            times.append(elapsed)
        elif elapsed > SLOW_S:
            return elapsed  # the warm-up was slow enough to be the figure itself
    return statistics.median(times)


def _quiet() -> contextlib.ExitStack:
    """Peers print progress bars and warnings; the table is all this bench prints."""
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    return stack


def _torchview_cell(
    w: Workload, repeat: int, plain_fwd: float, reset: Callable[[], None], timeout: float
) -> tuple[str, str]:
    """torchview's draw_graph(depth=2), then graphviz's `dot` rendering it to SVG."""
    try:
        from torchview import draw_graph
    except ImportError:
        return "not installed", ""
    dot = shutil.which("dot")
    timed_out: list[bool] = []

    def draw() -> None:
        graph = draw_graph(w.model, input_data=w.x, depth=2)
        if dot is None:
            return
        try:  # `dot` in a process of its own, so a picture it cannot finish is cut off
            subprocess.run(
                [dot, "-Tsvg"],
                input=graph.visual_graph.source.encode(),
                capture_output=True,
                check=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            timed_out.append(True)

    try:
        with _quiet():
            seconds = _time(draw, repeat, reset)
    except Exception as error:  # a peer that cannot take this model says so in its cell
        return f"failed: {type(error).__name__}", ""
    if timed_out:
        return f"> {seconds * 1e3:.0f} (dot cut)", ""
    cell = f"{seconds * 1e3:.0f}" + ("" if dot else " (no dot)")
    return cell, f"{seconds / plain_fwd:.0f}×"


def _torchlens_cell(
    w: Workload, repeat: int, plain_fwd: float, reset: Callable[[], None], torchlens: Any
) -> tuple[str, str]:
    """torchlens.trace(model, x): every op of the forward pass, each layer's output saved."""
    if torchlens is None:
        return "not installed", ""
    try:
        with _quiet():
            seconds = _time(lambda: torchlens.trace(w.model, w.x), repeat, reset)
    except Exception as error:
        return f"failed: {type(error).__name__}", ""
    return f"{seconds * 1e3:.0f}", f"{seconds / plain_fwd:.0f}×"


def _row(w: Workload, repeat: int, torchlens: Any, dot_timeout: float) -> str:
    """One model's cells, measured one after the other on the same model and input."""
    code = compile(w.script, "<bench>", "exec")

    def reset() -> None:
        for p in w.model.parameters():  # every step starts with no .grad, as a fresh run
            p.grad = None

    plain_fwd = _time(lambda: w.model(w.x), repeat, reset)
    plain_step = _time(lambda: exec(code, w.namespace()), repeat, reset)
    traces: list[Any] = []

    def ours() -> None:
        with contextlib.redirect_stderr(io.StringIO()):
            traces.append(run_source(w.script, "<bench>", w.namespace()))

    def reset_ours() -> None:
        traces.clear()  # the previous trace is freed before the clock starts, not during
        reset()

    capture = _time(ours, repeat, reset_ours)
    trace = traces.pop()
    layout = _time(functools.partial(prepare_run, trace), repeat, lambda: None)
    ops = sum(e["kind"] == "op" for e in trace.events)
    nodes = len(trace.nodes)
    del trace  # a big model's trace is not kept alive while the peers run
    view, view_ratio = _torchview_cell(w, repeat, plain_fwd, reset, dot_timeout)
    lens, lens_ratio = _torchlens_cell(w, repeat, plain_fwd, reset, torchlens)
    return (
        f"{w.name:46} {param_count(w.model):>11,} {ops:>6} {nodes:>6} "
        f"{plain_fwd * 1e3:>8.1f} {plain_step * 1e3:>8.1f} {capture * 1e3:>8.0f} "
        f"{capture / plain_step:>5.1f}× {layout * 1e3:>9.0f} "
        f"{(capture + layout) / plain_step:>7.1f}× "
        f"{view:>22} {view_ratio:>6} {lens:>13} {lens_ratio:>6}"
    )


def models_table(repeat: int, torchlens: Any, only: str = "", dot_timeout: float = 60.0) -> None:
    """Print the side-by-side table for every model whose name contains `only`."""
    print(COLUMNS, flush=True)
    for w in workloads():
        if only.lower() in w.name.lower():
            print(_row(w, repeat, torchlens, dot_timeout), flush=True)
        del w
        gc.collect()
    print(
        "fwd/step: plain forward / forward+backward in process; ours: run_source of the "
        "step; layout: prepare_run(trace); ours+lay: (ours + layout) / step; peers: "
        "forward only, ratio to fwd. Ctrl+Enter → picture: benchmarks/bench_picture.py."
    )


def quick_check(w: Workload) -> torch.Tensor:
    """Run the workload's step once, plainly, and return its loss (for the tests)."""
    namespace = w.namespace()
    exec(compile(w.script, "<bench>", "exec"), namespace)
    return namespace["loss"]
