"""Limits a process running user code sets on itself, and the flood cut of its output."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from autograd_viz.core.kernel import limits
from autograd_viz.core.kernel.output_budget import OutputBudget, budgeted_output
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.kernel.trace_messages import trace_from_payload, trace_payload


def test_memory_limit_setting() -> None:
    assert limits.memory_limit("3072") == 3072 << 20
    assert limits.memory_limit("off") is None and limits.memory_limit("0") is None
    total = limits.physical_memory()
    assert total and limits.memory_limit("") == int(total * limits.DEFAULT_MEMORY_FRACTION)
    with pytest.raises(ValueError, match="AUTOGRAD_VIZ_KERNEL_MEMORY_MB"):
        limits.memory_limit("lots")


def test_a_capped_process_fails_cleanly_and_frees_deep_graphs() -> None:
    # In a child: the cap and the stack are this process's for good once set.
    code = """
import os
os.environ["AUTOGRAD_VIZ_KERNEL_MEMORY_MB"] = "2048"
from autograd_viz.core.kernel.limits import apply_process_limits, is_out_of_memory
from autograd_viz.core.kernel.runner import run_source
assert apply_process_limits() == {"memory_limit_mb": 2048}
trace = run_source("import torch\\nbig = torch.empty(10**9)\\n")
assert is_out_of_memory(trace.error), trace.error
namespace = {}
run_source("import torch\\ny = torch.ones(1, requires_grad=True)\\n"
           "for _ in range(100_000):\\n    y = y * 1.0\\n", namespace=namespace)
namespace.clear()  # freeing 100,000 touched nodes recurses deeper than 8 MB of stack
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_out_of_memory_errors_are_recognised() -> None:
    assert limits.is_out_of_memory({"type": "MemoryError", "message": ""})
    assert limits.is_out_of_memory({"type": "OutOfMemoryError", "message": "CUDA out of memory"})
    message = "DefaultCPUAllocator: can't allocate memory: you tried to allocate 4 bytes"
    assert limits.is_out_of_memory({"type": "RuntimeError", "message": message})
    assert not limits.is_out_of_memory({"type": "RuntimeError", "message": "shape mismatch"})
    assert not limits.is_out_of_memory(None)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_output_budget_passes_a_burst_then_a_rate_and_notes_the_gap() -> None:
    out, clock = io.StringIO(), Clock()
    budget = OutputBudget(out, burst=100, rate=10, clock=clock)
    budget.write("a" * 60)
    budget.write("b" * 60)  # 40 fit
    assert out.getvalue() == "a" * 60 + "b" * 40 and budget.dropped == 20
    clock.now = 5.0  # 50 characters of budget come back
    budget.write("c" * 5)  # flowing again: the note first
    assert "[… 20 characters of output not shown" in out.getvalue()
    assert out.getvalue().endswith("…]\n" + "c" * 5)
    budget.write("d" * 1000)
    budget.note()
    assert out.getvalue().count("characters of output not shown") == 2
    assert budget.dropped_total == 20 + (1000 - 45)  # 45 of the 50 were left for the d


def test_budgeted_output_restores_the_streams() -> None:
    before = sys.stdout, sys.stderr
    with budgeted_output(burst=10, rate=1):
        assert isinstance(sys.stdout, OutputBudget)
    assert (sys.stdout, sys.stderr) == before


def test_trace_payload_round_trip_in_chunks() -> None:
    trace = run_source(
        "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x\n"
        "for _ in range(30):\n    y = y * x\ny.backward()\nnan = torch.tensor(float('nan'))\n"
    )
    payload, buffers = trace_payload(trace)
    assert len(buffers) == 1 + sum(payload["parts"].values())
    back = trace_from_payload(payload, buffers)
    assert back.to_json() == trace.to_json()
