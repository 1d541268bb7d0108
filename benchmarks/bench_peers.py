"""Capture against the peers, on the same models, in one process.

    python -m benchmarks.bench_peers [--repeat N] [--table mlp|models|both] [--only NAME]

First table, forward capture of MLPs, median of N alternating runs: the plain forward
pass; ours (`run_source` of a script doing that forward pass: every op with its values,
the graph, the module stack); torchlens (`torchlens.trace(model, x)`, saving every
layer's output). Second table (benchmarks/peer_steps.py), real model shapes built with
random weights (benchmarks/models.py): a plain training step, our capture of it, our
layout, torchview's `draw_graph(depth=2)` rendered by graphviz, torchlens. The peers are
optional (the `bench` extra); a missing one says "not installed" in its column.
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

from .peer_steps import models_table

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


def _mlp_table(repeat: int, torchlens: Any) -> None:
    """Forward capture of MLPs of three depths, ours against torchlens."""
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

        plain = _median(lambda model=model, x=x: model(x), repeat)
        mine = _median(ours, repeat)
        ops = ours()
        lens = "not installed"
        lens_ratio = ""
        if torchlens is not None:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                seconds = _median(lambda model=model, x=x: torchlens.trace(model, x), repeat)
            lens, lens_ratio = f"{seconds * 1e3:.1f}", f"{seconds / plain:.0f}×"
        print(
            f"{f'MLP, {depth} layers':24} {ops:>6} {plain * 1e3:>9.2f} {mine * 1e3:>9.2f} "
            f"{mine / plain:>5.1f}× {lens:>13} {lens_ratio:>6}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--table", choices=("mlp", "models", "both"), default="both", help="which table"
    )
    parser.add_argument("--only", default="", help="models whose name contains this")
    parser.add_argument(
        "--peer-timeout",
        type=float,
        default=60.0,
        help="seconds one peer may take on one model, all its runs (then its cell says cut)",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        import torchlens
    except ImportError:
        torchlens = None
    # The peers are imported before gc.freeze(), as the kernel freezes after user imports.
    with contextlib.suppress(ImportError):
        import torchview  # noqa: F401
    with contextlib.suppress(ImportError):
        import transformers  # noqa: F401
    gc.collect()
    gc.freeze()
    # The models table first: its peers run in processes of their own, while the MLP
    # table runs torchlens here, which leaves torch's functions wrapped for what follows.
    if args.table in ("models", "both"):
        models_table(args.repeat, args.only, args.peer_timeout)
    if args.table in ("mlp", "both"):
        if args.table == "both":
            print()
        _mlp_table(args.repeat, torchlens)


if __name__ == "__main__":
    main()
