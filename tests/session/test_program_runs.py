"""A run is a program run: in one lasting kernel, each run shows that program and nothing
else, whatever the one before it did; each request is answered exactly once."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograd_viz.core.kernel.protocol import PROTOCOL_VERSION, namespace_summary
from autograd_viz.core.learning.lab import lab_step
from autograd_viz.core.trace import Trace
from autograd_viz.resources import EXAMPLES as EXAMPLE_FOLDER
from autograd_viz.session import KernelCall, KernelSession, KernelState

pytestmark = pytest.mark.kernel

EXAMPLES = ["first_graph.py", "lab_loss.py", "leaf_vs_nonleaf.py", "linear_step.py"]
LAB = """import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
"""


@pytest.fixture
def session(qtbot):
    s = KernelSession()
    with qtbot.waitSignal(s.kernel_info, timeout=60_000):
        s.start()
    qtbot.waitUntil(lambda: s.state is KernelState.IDLE, timeout=10_000)
    yield s
    s.shutdown()


class Answers:
    """Every `finished` a call emits, to prove it is exactly one."""

    def __init__(self, call: KernelCall) -> None:
        self.call = call
        self.seen: list[dict] = []
        call.finished.connect(self.seen.append)

    def wait(self, qtbot, timeout: int = 60_000) -> dict:
        qtbot.waitUntil(lambda: len(self.seen) > 0, timeout=timeout)
        return self.seen[0]


def _run(qtbot, session: KernelSession, code: str, **how) -> dict:
    answer = Answers(session.run(code, **how)).wait(qtbot)
    assert answer["ok"] is True, answer
    return answer


def _comparable(trace: Trace) -> dict:
    """The trace without what differs from one process to another: the run's duration, when
    it was recorded, and the bytes `torch.empty` happened to find (nn.Linear fills its
    parameters after it)."""
    data = trace.to_dict()
    data.pop("recorded_at", None)
    for event in data["events"]:
        event.pop("seconds", None)
        if event.get("op") == "empty":
            event.pop("values", None)
    return json.loads(json.dumps(data))


@pytest.fixture(scope="module")
def cli_traces(tmp_path_factory) -> dict[str, Trace]:
    """`autograd-viz trace FILE --json OUT` of each example, the reference."""
    out = tmp_path_factory.mktemp("cli")
    traces = {}
    for name in EXAMPLES:
        target = out / f"{name}.json"
        script = str(EXAMPLE_FOLDER / name)
        done = subprocess.run(
            [sys.executable, "-m", "autograd_viz", "trace", script, "--json", str(target)],
            capture_output=True,
            text=True,
            timeout=140,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        traces[name] = Trace.from_json(target.read_text(encoding="utf-8"))
    return traces


def test_examples_in_a_row_each_show_only_their_own_program(qtbot, session, cli_traces) -> None:
    # The walk: first graph, lab loss, leaf vs non-leaf, linear step, one kernel.
    for name in EXAMPLES:
        path = str(EXAMPLE_FOLDER / name)
        with open(path, encoding="utf-8") as file:
            code = file.read()
        answer = _run(qtbot, session, code, filename=path, path=path)  # as the CLI runs it
        assert answer["namespace"] == "fresh"
        assert _comparable(answer["trace"]) == _comparable(cli_traces[name]), name


LEAKS = {
    "grad mode": "torch.set_grad_enabled(False)",
    "no_grad entered": "torch.no_grad().__enter__()",
    "inference mode": "torch.inference_mode().__enter__()",
    "inference mode held": "held = torch.inference_mode()\nheld.__enter__()",
    "default device": "torch.set_default_device('meta')",
    "device context": "torch.device('meta').__enter__()",
    "default dtype": "torch.set_default_dtype(torch.float64)",
    "anomaly detection": "torch.autograd.set_detect_anomaly(True)",
}


def _grads_are_right(trace: Trace) -> None:
    w, b = trace.tensor_named("w"), trace.tensor_named("b")
    assert trace.errors == []
    assert w.grad.data == 8.0 and b.grad.data == 4.0
    assert (w.device, w.dtype) == ("cpu", "float32")


def test_what_a_run_leaves_in_torch_does_not_reach_the_next(qtbot, session) -> None:
    for why, leak in LEAKS.items():
        for keep in (False, True):  # a kept namespace still holds the guard it entered
            _run(qtbot, session, f"import torch\n{leak}\n", keep=keep)
            trace = _run(qtbot, session, LAB, keep=keep)["trace"]
            try:
                _grads_are_right(trace)
            except AssertionError as exc:
                raise AssertionError(f"after {why} (keep={keep}): {exc}") from exc
    # A call runs on torch's defaults too (the lab's backward, the descent sweep's grads).
    _run(qtbot, session, "import torch\ntorch.set_grad_enabled(False)\n")
    code = "import torch\nw = torch.tensor(3.0, requires_grad=True)\n(w * w).backward()"
    step = Answers(session.call(lab_step, {"code": code, "fresh": True}, space="lab"))
    answer = step.wait(qtbot)
    assert answer["ok"] is True and answer["result"]["error"] is None
    assert answer["result"]["state"]["tensors"]["w"]["grad"] == 6.0


def test_kept_variables_and_only_this_runs_tensors(qtbot, session) -> None:
    _run(qtbot, session, LAB, keep=True)
    answer = _run(qtbot, session, "z = w * 10\nprint(z.item())\n", keep=True)
    assert answer["namespace"] == "kept"
    trace = answer["trace"]
    assert trace.events[-1]["namespace"] == "kept"
    # w was used; x, b and loss are still bound but this run did not touch them.
    assert sorted(t.name for t in trace.tensors) == ["w", "z"]
    assert trace.tensor_named("z").value.data == 30.0
    # Off again: the next run starts from nothing, and calls see what it left.
    fresh = _run(qtbot, session, "import torch\nt = torch.ones(3)\nprint(z)\n")
    assert fresh["namespace"] == "fresh" and fresh["trace"].errors[0]["type"] == "NameError"
    summary = Answers(session.call(namespace_summary)).wait(qtbot)
    assert summary["result"]["tensors"] == {"t": [3]}


def test_a_syntax_error_runs_nothing_and_shows_no_tensors(qtbot, session) -> None:
    _run(qtbot, session, LAB, keep=True)
    for keep in (False, True):
        trace = _run(qtbot, session, "import torch\ny = (\n", keep=keep)["trace"]
        assert trace.error["type"] == "SyntaxError" and trace.error["line"] in (2, 3)
        assert trace.tensors == [] and trace.nodes == []
        assert [e["kind"] for e in trace.events] == ["error"]


def test_a_kernel_death_mid_run_finishes_each_call_once(qtbot, session) -> None:
    notices: list[str] = []
    session.notice.connect(notices.append)
    old_pid = session.kernel_pid
    dying = Answers(session.run("import os, time\ntime.sleep(0.3)\nos._exit(1)\n"))
    queued = Answers(session.call(namespace_summary))  # asked of the kernel that dies
    with qtbot.waitSignal(session.kernel_info, timeout=90_000):
        died = dying.wait(qtbot)
    assert died["ok"] is False and died["trace"] is None
    assert died["error"]["message"].startswith("The kernel died (it exited with code 1")
    assert queued.wait(qtbot)["ok"] is False
    assert "before this ran" in queued.seen[0]["error"]["message"]
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=30_000)
    assert session.kernel_pid != old_pid and any("kernel died" in n for n in notices)
    after = _run(qtbot, session, "print('fresh')\n")
    assert after["trace"].errors == []
    qtbot.wait(200)
    assert len(dying.seen) == 1 and len(queued.seen) == 1


def test_a_restart_mid_run_finishes_each_call_once(qtbot, session) -> None:
    looping = Answers(session.run("while True:\n    pass\n"))
    queued = Answers(session.run("print('never')\n"))
    qtbot.waitUntil(lambda: session.state is KernelState.BUSY, timeout=10_000)
    with qtbot.waitSignal(session.kernel_info, timeout=90_000):
        session.restart()
    for answers in (looping, queued):
        answer = answers.wait(qtbot)
        assert answer["ok"] is False
        assert answer["error"]["message"] == "The kernel was restarted before answering."
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=30_000)
    _run(qtbot, session, "x = 1\n")
    qtbot.wait(200)
    assert len(looping.seen) == 1 and len(queued.seen) == 1


def test_a_reply_of_another_version_is_not_drawn(qtbot, session) -> None:
    # The kernel's autograd-viz changes under the app (as an attached kernel's may differ).
    notices: list[str] = []
    session.notice.connect(notices.append)
    code = (
        "import autograd_viz, autograd_viz.core.kernel.protocol as p\n"
        f"p.PROTOCOL_VERSION = {PROTOCOL_VERSION + 40}\nautograd_viz.__version__ = '9.9.9'\n"
    )
    answer = Answers(session.run(code)).wait(qtbot)
    assert answer["ok"] is False and answer["trace"] is None
    error = answer["error"]
    assert error["type"] == "VersionMismatch"
    assert "autograd-viz 9.9.9" in error["message"]
    assert f"kernel protocol {PROTOCOL_VERSION + 40}" in error["message"]
    assert f"kernel protocol {PROTOCOL_VERSION}," in error["message"]
    assert "pip install autograd-viz==" in error["message"]
    assert notices == [error["message"]]  # the console says it too
    call = Answers(session.call(namespace_summary)).wait(qtbot)
    assert call["ok"] is False and call["error"]["type"] == "VersionMismatch"
