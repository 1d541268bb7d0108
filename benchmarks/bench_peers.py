"""Forward capture against torchlens, the most complete peer, on the same models.

    python -m benchmarks.bench_peers [--repeat N]

Each row times, median of N alternating runs: the plain forward pass; ours (`run_source`
of a script doing that forward pass: every op with its values, the graph, the module
stack); torchlens (`torchlens.trace(model, x)`, saving every layer's output). torchlens is
optional (pip install torchlens, the `bench` extra); without it its column says so.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import statistics
import time
from typing import Any

import torch
from torch import nn

from autograd_viz.core.kernel.runner import run_source

FORWARD = "out = model(X)\n"


def _mlp(depth: int) -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(32, 32), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(32, 1)), torch.randn(64, 32)


def _median(fn: Any, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    gc.collect()
    gc.freeze()
    try:
        import torchlens
    except ImportError:
        torchlens = None
    print(
        f"{'model':24} {'ops':>6} {'plain ms':>9} {'ours ms':>9} {'ratio':>6} "
        f"{'torchlens ms':>13} {'ratio':>6}"
    )
    for depth in (13, 50, 200):
        model, x = _mlp(depth)
        namespace = {"model": model, "X": x, "__name__": "__main__"}

        def ours(namespace=namespace) -> int:
            with contextlib.redirect_stderr(io.StringIO()):
                trace = run_source(FORWARD, "<bench>", namespace)
            return sum(e["kind"] == "op" for e in trace.events)

        plain = _median(lambda model=model, x=x: model(x), args.repeat)
        mine = _median(ours, args.repeat)
        ops = ours()
        lens = "not installed"
        lens_ratio = ""
        if torchlens is not None:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                seconds = _median(lambda model=model, x=x: torchlens.trace(model, x), args.repeat)
            lens, lens_ratio = f"{seconds * 1e3:.1f}", f"{seconds / plain:.0f}×"
        print(
            f"{f'MLP, {depth} layers':24} {ops:>6} {plain * 1e3:>9.2f} {mine * 1e3:>9.2f} "
            f"{mine / plain:>5.1f}× {lens:>13} {lens_ratio:>6}"
        )


if __name__ == "__main__":
    main()
