"""Capture overhead: tracing vs plain execution of the same script, measured side by side.

    python -m benchmarks.bench_capture [--repeat N]

Each script runs plain (exec) and traced (run_source: tracer + final graph capture),
alternating, N times; the table shows medians and the ratio traced / plain. The "floor"
column runs it a third way: under a TorchFunctionMode that records nothing, with an empty
Python hook on every new autograd node. That is what any recorder built from torch's
Python hooks pays before it records anything.
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
from torch.overrides import TorchFunctionMode

from autograd_viz.core.kernel.runner import run_source

TOY = """
import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
"""

MLP = """
import torch
from torch import nn
torch.manual_seed(0)
layers = []
for _ in range({depth}):
    layers += [nn.Linear({width}, {width}), nn.ReLU()]
model = nn.Sequential(*layers, nn.Linear({width}, 1))
X = torch.randn({batch}, {width})
y = torch.randn({batch}, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range({steps}):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
"""

RNN = """
import torch
torch.manual_seed(0)
W = torch.randn(16, 16, requires_grad=True)
U = torch.randn(8, 16, requires_grad=True)
xs = torch.randn({steps}, 8)
h = torch.zeros(16)
for t in range({steps}):
    h = torch.tanh(h @ W * 0.1 + xs[t] @ U)
loss = h.sum()
loss.backward()
"""

CHAIN = """
import torch
x = torch.tensor(1.0, requires_grad=True)
y = x
for _ in range({n}):
    y = y * 1.0001
y.backward()
"""

SCRIPTS = [
    ("seed toy (w·x+b−5)²", TOY),
    ("MLP step, 13 layers", MLP.format(depth=13, steps=1, width=32, batch=64)),
    ("MLP step, 50 layers", MLP.format(depth=50, steps=1, width=32, batch=64)),
    ("MLP 6 steps, 50 layers", MLP.format(depth=50, steps=6, width=32, batch=64)),
    # The same 1,020 nodes with bigger ops: the cost of tracing is per event, not per flop.
    ("  same, 128 wide, batch 128", MLP.format(depth=50, steps=6, width=128, batch=128)),
    ("RNN unrolled 2,000 steps", RNN.format(steps=2000)),
    ("chain of 10,000 ops", CHAIN.format(n=10_000)),
]


def _plain(code: str) -> float:
    gc.collect()  # each run starts without the previous run's garbage
    start = time.perf_counter()
    exec(compile(code, "<bench>", "exec"), {"__name__": "__main__"})
    return time.perf_counter() - start


class _Floor(TorchFunctionMode):
    """Torch's callbacks into Python, and nothing else: the mode sees every op, and each new
    grad_fn gets an empty post hook (removed at the end), as the tracer's do."""

    def __init__(self) -> None:
        super().__init__()
        self.handles: list[Any] = []
        self.seen: set[int] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        fn = getattr(result, "grad_fn", None) if isinstance(result, torch.Tensor) else None
        if fn is not None and id(fn) not in self.seen:
            self.seen.add(id(fn))
            self.handles.append(fn.register_hook(_nothing))
        return result


def _nothing(grad_inputs: Any, grad_outputs: Any) -> None:
    return None


def _floor(code: str) -> float:
    gc.collect()
    start = time.perf_counter()
    mode = _Floor()
    with mode:
        exec(compile(code, "<bench>", "exec"), {"__name__": "__main__"})
    for handle in mode.handles:
        handle.remove()
    return time.perf_counter() - start


def _traced(code: str) -> tuple[float, int]:
    gc.collect()
    start = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        trace = run_source(code, "<bench>")
    return time.perf_counter() - start, len(trace.nodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    # As in the kernel (core.protocol.kernel_setup): objects alive after the imports are
    # frozen, so full garbage collections in either run do not rescan torch itself.
    gc.collect()
    gc.freeze()
    print(f"torch {torch.__version__}, 1 thread, median of {args.repeat} alternating runs\n")
    print(f"{'script':28} {'nodes':>7} {'plain s':>9} {'traced s':>9} {'ratio':>7} {'floor':>7}")
    for title, code in SCRIPTS:
        _plain(code), _traced(code), _floor(code)  # warm up imports and allocators
        plain, traced, floor, nodes = [], [], [], 0
        for _ in range(args.repeat):
            plain.append(_plain(code))
            seconds, nodes = _traced(code)
            traced.append(seconds)
            floor.append(_floor(code))
        p, t, f = (statistics.median(x) for x in (plain, traced, floor))
        print(f"{title:28} {nodes:>7,} {p:>9.4f} {t:>9.4f} {t / p:>6.1f}× {f / p:>6.1f}×")


if __name__ == "__main__":
    main()
