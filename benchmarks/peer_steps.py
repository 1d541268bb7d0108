"""Real models side by side: a plain step, our capture and layout, torchview, torchlens.

Part of `python -m benchmarks.bench_peers` (its first table). Every cell is the median
of N runs after a warm-up run, one run only where the warm-up took more than `SLOW_S` (a
30-second cell repeated five times would make the bench too long to run at all). The
plain forward, the plain step and our capture take turns; each peer runs in a fresh
process of its own (see `_in_subprocess`), cut off after a time limit. The peers record
a forward pass only, so their ratios are to the plain forward; ours records the whole
step (forward, backward, the gradients), so its ratios are to the plain step.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib.util
import io
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.run_view import prepare_run

from .models import BUILDERS, Workload, param_count, workloads

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
            break  # the warm-up was slow enough to be the figure itself
    return statistics.median(times) if times else elapsed


def _alternating(
    runs: list[tuple[Callable[[], Any], Callable[[], None]]], repeat: int
) -> list[float]:
    """Median seconds of each (fn, untimed before) pair, taking turns round by round so a
    change in the machine's load falls on all of them; a warm-up round first, and a
    single timed round when the warm-up took more than `SLOW_S`."""
    times: list[list[float]] = [[] for _ in runs]
    rounds = repeat
    for round_ in range(repeat + 1):
        if round_ > rounds:
            break
        for (fn, before), column in zip(runs, times, strict=True):
            before()
            gc.collect()
            start = time.perf_counter()
            fn()
            column.append(time.perf_counter() - start)
        if round_ == 0 and sum(c[0] for c in times) > SLOW_S:
            rounds = 1
    return [statistics.median(column[1:]) for column in times]


def _quiet() -> contextlib.ExitStack:
    """Peers print progress bars and warnings; the table is all this bench prints."""
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    return stack


def _in_subprocess(peer: str, key: str, repeat: int, limit: float) -> tuple[str, Any]:
    """Time one peer on one model in a fresh Python process, cut off after `limit` s.

    A process of its own because torchlens wraps torch's functions and leaves them
    wrapped (in process, every row after its first would time plain torch and our capture
    through its wrappers), and refuses to capture in a forked child; and because a peer
    that takes minutes on a model (torchlens on the RNN) must not hold up the table. The
    child rebuilds the model from the same seed. Returns ("ok", [seconds, note]),
    ("failed", why) or ("cut", None).
    """
    command = [sys.executable, "-m", "benchmarks.peer_steps", peer, key, str(repeat)]
    # A session of its own, so a cut-off child is ended with the `dot` it may be running.
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, _ = child.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return "cut", None
    lines = stdout.strip().splitlines()
    if child.returncode or not lines:
        return "failed", f"exit {child.returncode}"
    status, value = json.loads(lines[-1])
    return status, value


def _cell(result: tuple[str, Any], plain_fwd: float, limit: float) -> tuple[str, str]:
    """A peer's time and its ratio to the plain forward pass, or why there is none."""
    status, value = result
    if status == "cut":
        return f"> {limit * 1e3:.0f} (cut)", f"> {limit / plain_fwd:.0f}×"
    if status == "failed":
        return f"failed: {value}", ""
    seconds, note = value
    return f"{seconds * 1e3:.0f}{note}", f"{seconds / plain_fwd:.0f}×"


def _torchview_seconds(w: Workload, repeat: int) -> tuple[float, str]:
    """torchview's draw_graph(depth=2), then graphviz's `dot` rendering it to SVG."""
    from torchview import draw_graph

    dot = shutil.which("dot")

    def draw() -> None:
        graph = draw_graph(w.model, input_data=w.x, depth=2)
        if dot is not None:
            subprocess.run(
                [dot, "-Tsvg"],
                input=graph.visual_graph.source.encode(),
                capture_output=True,
                check=True,
            )

    return _time(draw, repeat, lambda: None), "" if dot else " (no dot)"


def _torchlens_seconds(w: Workload, repeat: int) -> tuple[float, str]:
    """torchlens.trace(model, x): every op of the forward pass, each layer's output saved."""
    import torchlens

    return _time(lambda: torchlens.trace(w.model, w.x), repeat, lambda: None), ""


PEERS = {"torchview": _torchview_seconds, "torchlens": _torchlens_seconds}


def _installed(peer: str) -> bool:
    """Whether the peer can be imported here (without importing it in this process)."""
    return importlib.util.find_spec(peer) is not None


def _peer_cell(peer: str, key: str, repeat: int, plain_fwd: float, limit: float) -> tuple[str, str]:
    """One peer's cell for one model: "not installed" when it is not, never an exception."""
    if not _installed(peer):
        return "not installed", ""
    return _cell(_in_subprocess(peer, key, repeat, limit), plain_fwd, limit)


def _row(key: str, w: Workload, repeat: int, limit: float) -> str:
    """One model's cells, measured one after the other on the same model and input."""
    code = compile(w.script, "<bench>", "exec")

    def reset() -> None:
        for p in w.model.parameters():  # every step starts with no .grad, as a fresh run
            p.grad = None

    traces: list[Any] = []

    def ours() -> None:
        with contextlib.redirect_stderr(io.StringIO()):
            traces.append(run_source(w.script, "<bench>", w.namespace()))

    def reset_ours() -> None:
        traces.clear()  # the previous trace is freed before the clock starts, not during
        reset()

    plain_fwd, plain_step, capture = _alternating(
        [
            (lambda: w.model(w.x), reset),
            (lambda: exec(code, w.namespace()), reset),
            (ours, reset_ours),
        ],
        repeat,
    )
    trace = traces.pop()
    layout = _time(functools.partial(prepare_run, trace), repeat, lambda: None)
    ops = sum(e["kind"] == "op" for e in trace.events)
    nodes = len(trace.nodes)
    del trace  # a big model's trace is not kept alive while the peers run
    view, view_ratio = _peer_cell("torchview", key, repeat, plain_fwd, limit)
    lens, lens_ratio = _peer_cell("torchlens", key, repeat, plain_fwd, limit)
    return (
        f"{w.name:46} {param_count(w.model):>11,} {ops:>6} {nodes:>6} "
        f"{plain_fwd * 1e3:>8.1f} {plain_step * 1e3:>8.1f} {capture * 1e3:>8.0f} "
        f"{capture / plain_step:>5.1f}× {layout * 1e3:>9.0f} "
        f"{(capture + layout) / plain_step:>7.1f}× "
        f"{view:>22} {view_ratio:>6} {lens:>13} {lens_ratio:>6}"
    )


def models_table(repeat: int, only: str = "", limit: float = 60.0) -> None:
    """Print the side-by-side table for every model whose name contains `only`; each
    peer's cell (all its runs) is cut off after `limit` seconds."""
    print(COLUMNS, flush=True)
    for key, w in workloads():
        if only.lower() in f"{key} {w.name}".lower():
            print(_row(key, w, repeat, limit), flush=True)
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


def _sum(out: torch.Tensor, _target: Any) -> torch.Tensor:
    return out.sum()


def _peer_main(peer: str, key: str, repeat: int) -> None:
    """A peer subprocess: rebuild the model, time the peer, print one JSON line."""
    torch.set_num_threads(1)
    importlib.import_module(peer)  # imported before the freeze, as the parent's modules are
    with _quiet(), contextlib.suppress(Exception):  # the model's own cell reports failures
        # once on a tiny model first: torchlens wraps torch's functions on its first call,
        # a cost per process (as our kernel's imports are), not per model
        PEERS[peer](Workload("warm-up", torch.nn.Linear(2, 2), torch.ones(1, 2), None, _sum), 0)
    w = BUILDERS[key]()
    gc.collect()
    gc.freeze()
    try:
        with _quiet():
            result: list[Any] = ["ok", list(PEERS[peer](w, repeat))]
    except Exception as error:  # a peer that cannot take this model says so in its cell
        result = ["failed", type(error).__name__]
    print(json.dumps(result))


if __name__ == "__main__":
    _peer_main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
