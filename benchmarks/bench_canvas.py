"""Picture speed: layout time, playback frame time, and torchviz + graphviz on the same graphs.

    python -m benchmarks.bench_canvas [--frames N] [--dot-timeout S]

Needs a display or QT_QPA_PLATFORM=offscreen. torchviz and graphviz's `dot` are optional
(pip install torchviz; apt-get install graphviz); without them their column says so.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

import torch

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, Player

NET = """
import torch
torch.manual_seed(0)
x = torch.randn(4, requires_grad=True)
ws = [torch.randn(4, requires_grad=True) for _ in range(8)]
h = x
for i in range({steps}):
    h = torch.tanh(h * ws[i % 8] + h)
loss = h.sum()
loss.backward()
"""
SIZES = {"~100 nodes": 30, "~1,000 nodes": 330, "~10,000 nodes": 3300}


def _trace(steps: int):
    with contextlib.redirect_stderr(io.StringIO()):
        return run_source(NET.format(steps=steps), "<bench>", max_nodes=50_000, max_events=200_000)


_TORCHVIZ = """
import sys, time, subprocess, os, tempfile
sys.setrecursionlimit(200_000)  # torchviz walks the graph recursively
from torchviz import make_dot
namespace = {{}}
exec({code!r}, namespace)
start = time.perf_counter()
dot = make_dot(namespace["loss"], params={{"x": namespace["x"]}})
with tempfile.TemporaryDirectory() as folder:
    source = os.path.join(folder, "graph.dot")
    open(source, "w").write(dot.source)
    subprocess.run(["dot", "-Tpng", source, "-o", os.path.join(folder, "g.png")], check=True,
                   capture_output=True)
print(time.perf_counter() - start)
"""


def _torchviz_seconds(steps: int, timeout: float) -> str:
    """torchviz make_dot + graphviz dot to PNG, in a child process (it may crash)."""
    try:
        import torchviz  # noqa: F401
    except ImportError:
        return "torchviz not installed"
    if shutil.which("dot") is None:
        return "graphviz dot not installed"
    code = NET.format(steps=steps).replace("loss.backward()", "")
    # Its own session, so a timeout kills dot too, not only the Python child.
    child = subprocess.Popen(
        [sys.executable, "-c", _TORCHVIZ.format(code=code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return f"> {timeout:g} s"
    if child.returncode != 0:
        return f"failed ({child.returncode})"
    return f"{float(out.strip()):.3f} s"


TRANSFORMER = """
import torch
from torch import nn
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
model = nn.Sequential(nn.Linear(8, 16), nn.TransformerEncoder(layer, num_layers=4,
                      enable_nested_tensor=False), nn.Linear(16, 1))
loss = model(torch.randn(2, 5, 8)).pow(2).mean()
loss.backward()
"""


def _frame_times(frames: int, size: str) -> tuple[float, float, int]:
    """Playback frame times of one picture: a loop net opened in full (every node drawn),
    or the 4-layer transformer as it first opens (folded to a budget)."""
    from PySide6.QtWidgets import QApplication

    from autograd_viz.ui.graph.graph_canvas import GraphCanvas

    app = QApplication.instance() or QApplication([])
    if size == "transformer":
        with contextlib.redirect_stdout(io.StringIO()):
            trace = run_source(TRANSFORMER, "<bench>")
    else:
        trace = _trace(SIZES[size])
    canvas = GraphCanvas()
    canvas.resize(1200, 800)
    canvas.show()
    canvas.show_trace(trace)

    def settle() -> None:
        while canvas.laying_out:  # big graphs are laid out on a worker thread
            app.processEvents()
            time.sleep(0.01)
        app.processEvents()

    settle()
    if size != "transformer":
        canvas.view.open_all()  # the open graph: every node drawn, in its frames
        settle()
    player = Player(trace, canvas.graph)
    player.set_mode(BACKWARD)
    times = []
    for _ in range(frames):
        if not player.step_forward():
            player.to_start()
        start = time.perf_counter()
        canvas.show_frame(player.frame())
        canvas.viewport().repaint()  # paint now, synchronously: the whole frame's cost
        times.append(time.perf_counter() - start)
    times.sort()
    return (
        statistics.median(times) * 1000,
        times[int(0.95 * (len(times) - 1))] * 1000,
        len(canvas.graph.nodes),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--dot-timeout", type=float, default=120.0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread\n")
    print(
        f"{'graph':16} {'drawn':>7} {'trace s':>8} {'layout s':>9} {'folded':>7} "
        f"{'layout s':>9} {'torchviz+dot':>16}"
    )
    for title, steps in SIZES.items():
        start = time.perf_counter()
        trace = _trace(steps)
        traced = time.perf_counter() - start
        start = time.perf_counter()
        graph = drawn_graph(trace)  # every group open: every node drawn
        laid = time.perf_counter() - start
        start = time.perf_counter()
        folded = drawn_graph(trace, None)  # as a picture first opens: folded to a budget
        first = time.perf_counter() - start
        print(
            f"{title:16} {len(graph.nodes):>7,} {traced:>8.3f} {laid:>9.3f} "
            f"{len(folded.nodes):>7,} {first:>9.3f} "
            f"{_torchviz_seconds(steps, args.dot_timeout):>16}"
        )
    print()
    for size in ("~1,000 nodes", "~10,000 nodes", "transformer"):
        median, p95, nodes = _frame_times(args.frames, size)
        what = "4-layer transformer, folded" if size == "transformer" else "open"
        print(
            f"playback, backward view, {what}, {nodes:,} drawn items, 1200×800: "
            f"frame p50 {median:.1f} ms, p95 {p95:.1f} ms (60 fps = 16.7 ms)"
        )


if __name__ == "__main__":
    main()
