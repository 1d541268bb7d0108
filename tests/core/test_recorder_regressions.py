"""Each regression script prints the same, and exits the same, under `autograd-viz trace`
as under a plain `python FILE.py`, each in a fresh process of its own; the trace it
writes holds the backward passes torch ran (nested and threaded ones included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.recorder_regressions import REGRESSIONS

_ENV = dict(os.environ, AUTOGRAD_VIZ_THREADS="1", PYTHONWARNINGS="ignore")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=cwd, env=_ENV, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.parametrize("case", sorted(REGRESSIONS))
def test_trace_prints_what_python_prints(case: str, tmp_path: Path) -> None:
    script = tmp_path / f"{case}.py"
    script.write_text(REGRESSIONS[case], encoding="utf-8")
    out = tmp_path / "trace.json"
    plain = _run([sys.executable, str(script)], tmp_path)
    traced = _run(
        [sys.executable, "-m", "autograd_viz", "trace", str(script), "--json", str(out)],
        tmp_path,
    )
    assert plain.returncode == 0, plain.stderr
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == plain.stdout
    trace = json.loads(out.read_text(encoding="utf-8"))
    assert trace["error"] is None
    passes = [e for e in trace["events"] if e["kind"] == "backward"]
    ends = [e for e in trace["events"] if e["kind"] == "backward_end"]
    assert passes and len(ends) == len(passes)
    assert any(e["kind"] == "accumulate" for e in trace["events"])


def _traced_events(case: str, tmp_path: Path) -> list[dict]:
    """The events of `autograd-viz trace` on a regression script, run in a process of its own."""
    script = tmp_path / f"{case}.py"
    script.write_text(REGRESSIONS[case], encoding="utf-8")
    out = tmp_path / "trace.json"
    done = _run(
        [sys.executable, "-m", "autograd_viz", "trace", str(script), "--json", str(out)],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text(encoding="utf-8"))["events"]


def test_the_nested_passes_are_recorded_inside_the_outer_one(tmp_path: Path) -> None:
    events = _traced_events("checkpoint_reentrant_inner_pass", tmp_path)
    shape = [
        (e["kind"], e.get("depth"), e.get("name"))
        for e in events
        if e["kind"] in ("backward", "backward_end", "node")
    ]
    assert shape == [
        ("backward", 0, None),
        ("node", None, "SumBackward0"),
        ("backward", 1, None),  # CheckpointFunction's backward runs the recomputed graph
        ("node", None, "TanhBackward0"),
        ("node", None, "MmBackward0"),
        ("node", None, "AccumulateGrad"),
        ("node", None, "AccumulateGrad"),
        ("backward_end", 1, None),
        ("node", None, "CheckpointFunctionBackward"),
        ("node", None, "AccumulateGrad"),
        ("backward_end", 0, None),
    ]
    recomputed = [e["op"] for e in events if e["kind"] == "op" and e.get("in_backward")]
    assert recomputed == ["matmul", "tanh"]


def test_a_threads_backward_names_the_thread(tmp_path: Path) -> None:
    events = _traced_events("backward_on_a_thread", tmp_path)
    passes = [e for e in events if e["kind"] == "backward"]
    assert [(e["thread"].startswith("Thread-"), e["line"]) for e in passes] == [
        (True, 5),  # a Thread's target
        (True, 11),  # a Thread subclass's own run()
    ]
    assert [e["after"]["data"] for e in events if e["kind"] == "accumulate"] == [3.0, 5.0]


def test_an_inductor_call_is_one_op_with_what_it_returned(tmp_path: Path) -> None:
    # Inductor's kernels are invisible to torch's function dispatch: the call is noticed
    # through its runtime, and its event shows the value the call really returned.
    events = _traced_events("torch_compile_inductor", tmp_path)
    calls = [e for e in events if e["kind"] == "op" and e["op"] == "compiled <lambda>"]
    assert [e["values"][0]["data"] for e in calls] == [10.5, 15.0, 19.5]
    passes = [e for e in events if e["kind"] == "backward"]
    assert [e["roots"] for e in passes] == [e["outputs"] for e in calls]
    nodes = [e["name"] for e in events if e["kind"] == "node"]
    assert nodes == ["CompiledFunctionBackward", "AccumulateGrad"] * 3


def test_a_view_torch_will_no_longer_describe_keeps_whether_it_is_a_leaf() -> None:
    """Once a view's base is written in place, torch refuses to read its is_leaf. One made
    with grad on (`a, b = x.chunk(2)`) was listed as a leaf that requires grad (torch had
    said False); one made under no_grad is a leaf, as torch said before the write."""
    import torch

    from autograd_viz.core.kernel.runner import run_source

    trace = run_source(
        "import torch\n"
        "x = torch.ones(4, requires_grad=True)\n"
        "a, b = x.chunk(2)\n"
        "w = torch.zeros(3, 2, requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    v = w[1]\n"
        "x.detach().add_(1)\n"
        "with torch.no_grad():\n"
        "    w[0].add_(1)\n"
    )
    x = torch.ones(4, requires_grad=True)
    a, _ = x.chunk(2)
    w = torch.zeros(3, 2, requires_grad=True)
    with torch.no_grad():
        v = w[1]
    expected = {"a": a.is_leaf, "b": a.is_leaf, "v": v.is_leaf}  # read before the writes
    assert (
        {n: trace.tensor_named(n).is_leaf for n in expected}
        == expected
        == {
            "a": False,
            "b": False,
            "v": True,
        }
    )
