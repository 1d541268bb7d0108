"""A notebook cell run under the tracer, without a kernel: the cell's namespace, its
exception (raised again by the magic) and the kept traces, checked against torch."""

from __future__ import annotations

import subprocess
import sys
import traceback

import torch

from autograd_viz.core.kernel import notebook
from autograd_viz.core.kernel.notebook import KEPT_RUNS, kept_trace, run_cell

CELL = """import torch
w = torch.tensor([1.0, -2.0], requires_grad=True)
y = (w.exp() * 3).sum()
y.backward()
"""


def test_a_cell_runs_in_the_notebook_namespace_and_its_trace_is_kept() -> None:
    namespace: dict = {"earlier": torch.ones(2, requires_grad=True)}
    run = run_cell(CELL, namespace, "<cell-1>", cell=1)
    assert run.error is None and kept_trace(run.run_id) is run.trace
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    (w.exp() * 3).sum().backward()
    assert torch.equal(namespace["w"].grad, w.grad)
    assert run.trace.tensor_named("w").grad.data == w.grad.tolist()
    # A tensor an earlier cell left, untouched by this one, is not this cell's.
    assert run.trace.tensor_named("earlier") is None
    assert run.trace.source == "Cell In[1]" and run.trace.script == CELL


def test_the_error_comes_back_with_only_the_learners_frames() -> None:
    code = "import torch\ndef f(t):\n    return t @ torch.ones(3)\nz = f(torch.ones(2))\n"
    run = run_cell(code, {}, "<cell-2>", cell=2)
    assert isinstance(run.error, RuntimeError)
    frames = traceback.extract_tb(run.error.__traceback__)
    assert [(f.filename, f.lineno) for f in frames] == [("<cell-2>", 4), ("<cell-2>", 3)]
    assert run.trace.error["line"] == 3  # the innermost of the learner's lines


def test_a_syntax_error_runs_nothing_and_comes_back() -> None:
    run = run_cell("x = (\n", {}, "<cell-3>")
    assert isinstance(run.error, SyntaxError) and run.trace.events[0]["kind"] == "error"


def test_only_the_last_few_traces_are_kept() -> None:
    runs = [run_cell("x = 1\n", {}, f"<cell-{i}>") for i in range(KEPT_RUNS + 2)]
    assert [kept_trace(r.run_id) is not None for r in runs][-KEPT_RUNS:] == [True] * KEPT_RUNS
    assert kept_trace(runs[0].run_id) is None and len(notebook._RUNS) == KEPT_RUNS


def test_the_app_imports_without_ipythons_magics() -> None:
    code = "import sys, autograd_viz, autograd_viz.jupyter; print('IPython' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_replay_too_big_for_a_notebook_leaves_the_picture(monkeypatch) -> None:
    from autograd_viz.jupyter import _display

    run = run_cell(CELL, {}, "<cell-5>", cell=5)
    assert "text/html" in _display.display_bundle(run)
    monkeypatch.setattr(_display, "MAX_PAGE_CHARS", 100)
    bundle = _display.display_bundle(run)
    assert "text/html" not in bundle and bundle["image/svg+xml"].startswith("<svg")
