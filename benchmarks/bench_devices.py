"""Capture and descent on each device torch has, side by side (cpu, and cuda when present).

python -m benchmarks.bench_devices [--repeat N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import time

import torch

from autograd_viz.core.descent.paths import FUNCTIONS, descend_many, learning_rate_grid, surface
from autograd_viz.core.kernel.runner import run_source
from benchmarks.bench_capture import MLP, RNN


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _time(fn, device: str, repeat: int) -> float:
    fn()  # warm up (CUDA context, kernels, allocator)
    times = []
    for _ in range(repeat):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    devices = ["cpu"] + (["cuda:0"] if torch.cuda.is_available() else [])
    scripts = [
        ("MLP step, 50 layers", MLP.format(depth=50, steps=1, width=32, batch=64)),
        ("RNN 2,000 steps", RNN.format(steps=2000)),
    ]
    print(f"{'work':34}" + "".join(f"{d:>12}" for d in devices))
    for title, code in scripts:
        cells = []
        for device in devices:

            def traced(code=code, device=device):
                with contextlib.redirect_stderr(io.StringIO()):
                    run_source(code, "<bench>", device=device)

            cells.append(_time(traced, device, args.repeat))
        print(f"{'trace: ' + title:34}" + "".join(f"{c * 1e3:>10.1f}ms" for c in cells))
    bowl = FUNCTIONS["bowl"]
    cells = [
        _time(lambda d=d: surface(bowl.fn, bowl.extent, 256, device=d), d, args.repeat)
        for d in devices
    ]
    print(f"{'descent surface 256×256':34}" + "".join(f"{c * 1e3:>10.2f}ms" for c in cells))
    rates = learning_rate_grid()
    cells = [
        _time(
            lambda d=d: descend_many(bowl.fn, (0.5, 1.0), rates, 100, "sgd", device=d),
            d,
            args.repeat,
        )
        for d in devices
    ]
    print(f"{'descent paths, all rates × 100':34}" + "".join(f"{c * 1e3:>10.1f}ms" for c in cells))


if __name__ == "__main__":
    main()
