"""Running user code: errors, their lines, and what still gets captured."""

from __future__ import annotations

import subprocess
import sys

from autograd_viz.core.kernel.runner import run_source


def test_syntax_error_points_at_its_line_and_runs_nothing() -> None:
    ns = {"__name__": "__main__"}
    trace = run_source("a = 1\nb = (\nc = 3\n", namespace=ns)
    (error,) = trace.errors
    assert error["type"] == "SyntaxError" and error["line"] in (2, 3)
    assert "a" not in ns  # nothing ran


def test_a_syntax_error_shows_no_tensors_of_earlier_runs() -> None:
    ns = {"__name__": "__main__"}
    run_source("import torch\nw = torch.tensor(3.0, requires_grad=True)\nz = w * 2\n", namespace=ns)
    trace = run_source("y = (\n", namespace=ns, kept=True)
    assert trace.tensors == [] and trace.nodes == []
    assert [e["kind"] for e in trace.events] == ["error"]  # nothing ran: no run_end


KEPT_FIRST = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
unused_model = nn.Linear(3, 1)
w = torch.tensor(3.0, requires_grad=True)
old = torch.ones(2)
loss = (w * 2).sum()
"""


def test_a_kept_namespace_lists_only_what_this_run_created_or_touched() -> None:
    ns = {"__name__": "__main__"}
    first = run_source(KEPT_FIRST, namespace=ns)
    assert first.events[-1]["namespace"] == "fresh"
    assert {"w", "loss", "model.weight", "unused_model.weight"} <= {t.name for t in first.tensors}

    trace = run_source(
        "y = model(torch.ones(1, 2)).sum()\ny.backward()\nz = w * 5\nalias = old\n",
        namespace=ns,
        kept=True,
    )
    assert trace.events[-1]["namespace"] == "kept"
    # model and w were used; unused_model, loss and old (merely bound again) were not.
    assert sorted(t.name for t in trace.tensors) == ["model.bias", "model.weight", "w", "y", "z"]
    assert trace.tensor_named("model.weight").grad is not None

    nothing = run_source("print('no tensors here')\n", namespace=ns, kept=True)
    assert nothing.tensors == [] and nothing.nodes == []

    # An earlier tensor that this run's graph reaches is drawn, under its name.
    reached = run_source("w2 = loss * 2\n", namespace=ns, kept=True)
    assert sorted(t.name for t in reached.tensors) == ["loss", "w", "w2"]
    assert {n.name for n in reached.nodes} == {"MulBackward0", "SumBackward0", "AccumulateGrad"}


def test_exception_keeps_graph_built_before_it() -> None:
    trace = run_source("""import torch
x = torch.tensor(2.0, requires_grad=True)
y = x * x
raise ValueError("boom")
""")
    (error,) = trace.errors
    assert error["type"] == "ValueError" and error["line"] == 4 and error["message"] == "boom"
    assert 'File "<editor>", line 4' in error["traceback"]
    assert "runner.py" not in error["traceback"]  # our own frame is left out
    assert trace.tensor_named("y").value.data == 4.0


def test_pytorch_second_backward_error_is_the_real_one() -> None:
    trace = run_source("""import torch
w = torch.tensor(3.0, requires_grad=True)
loss = (w * 2) ** 2
loss.backward()
loss.backward()
""")
    (error,) = trace.errors
    assert error["line"] == 5
    assert "Trying to backward through the graph a second time" in error["message"]


def test_error_inside_a_function_reports_the_users_deepest_line() -> None:
    trace = run_source(
        "def f(t):\n    return t.backward()\n\nimport torch\n"
        "f(torch.ones(2, requires_grad=True) * 2)\n"
    )
    (error,) = trace.errors
    assert error["line"] == 2
    assert "grad can be implicitly created only for scalar outputs" in error["message"]


def test_hundred_thousand_deep_chain_is_capped_without_crashing() -> None:
    # pytorch#109948: freeing a very deep graph after a Python walk can segfault.
    # Run in a child process so a crash fails this test instead of killing pytest.
    script = (
        "from autograd_viz.core.kernel.runner import run_source\n"
        "code = 'import torch\\nx = torch.tensor(1.0, requires_grad=True)\\ny = x\\n'"
        " + 'for _ in range(100_000):\\n    y = y * 1.0\\n'\n"
        "trace = run_source(code)\n"
        "assert trace.truncated and len(trace.nodes) == 20000, len(trace.nodes)\n"
        "del trace\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_a_traceback_shows_the_frames_plain_torch_shows() -> None:
    """The tracer adds frames of its own (the mode, `return handle_torch_function(...)`):
    the user sees exactly the frames a run without it would show."""
    import contextlib
    import io
    import traceback

    code = (
        "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x\n"
        "y.backward()\ny.backward()\n"
    )
    try:
        exec(compile(code, "<plain>", "exec"), {})
    except RuntimeError as exc:
        frames = traceback.extract_tb(exc.__traceback__)
    plain = [(f.filename, f.lineno) for f in frames if f.filename != __file__]
    with contextlib.redirect_stderr(io.StringIO()):
        trace = run_source(code, "<plain>")
    shown = [
        (line.split('"')[1], int(line.split("line ")[1].split(",")[0]))
        for line in trace.error["traceback"].splitlines()
        if line.startswith("  File ")
    ]
    assert shown == plain
