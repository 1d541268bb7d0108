"""A real ipykernel behind KernelSession: round trip, errors, interrupt, death and restart."""

from __future__ import annotations

import os

import pytest

from autograd_viz.core.kernel.protocol import namespace_summary
from autograd_viz.core.learning.lab import lab_step
from autograd_viz.session import KernelCall, KernelSession, KernelState

pytestmark = pytest.mark.kernel

LAB = """import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
print("grads", w.grad.item(), b.grad.item(), x.grad)
"""


@pytest.fixture
def session(qtbot):
    s = KernelSession()
    with qtbot.waitSignal(s.kernel_info, timeout=60_000) as info:
        s.start()
    qtbot.waitUntil(lambda: s.state is KernelState.IDLE, timeout=10_000)
    assert info.args[0]["device"] in ("cpu", "cuda:0")
    yield s
    s.shutdown()


def answer_of(qtbot, call: KernelCall, timeout: int = 30_000) -> dict:
    """The call's answer, once `finished` has come."""
    if not call.done:
        with qtbot.waitSignal(call.finished, timeout=timeout):
            pass
    assert call.answer is not None
    return call.answer


def _run(qtbot, s: KernelSession, code: str, timeout: int = 30_000, **where):
    out: list[str] = []
    err: list[str] = []
    s.stdout.connect(out.append)
    s.stderr.connect(err.append)
    with qtbot.waitSignal(s.run_finished, timeout=timeout):
        run = s.run(code, **where)
    s.stdout.disconnect(out.append)
    s.stderr.disconnect(err.append)
    answer = answer_of(qtbot, run)
    assert answer["ok"] is True, answer
    return answer["trace"], "".join(out), "".join(err)


def test_round_trip_gives_torchs_numbers(qtbot, session) -> None:
    trace, out, _ = _run(qtbot, session, LAB)
    assert "grads 8.0 4.0 None" in out
    assert trace.tensor_named("w").grad.data == 8.0
    assert trace.tensor_named("b").grad.data == 4.0
    assert {n.name for n in trace.nodes} == {
        "PowBackward0",
        "SubBackward0",
        "AddBackward0",
        "MulBackward0",
        "AccumulateGrad",
    }
    assert session.state is KernelState.IDLE


def test_each_run_starts_in_a_fresh_namespace_unless_kept(qtbot, session) -> None:
    _run(qtbot, session, LAB)
    trace, _, err = _run(qtbot, session, "loss2 = w * 10\n")
    assert trace.errors[0]["type"] == "NameError" and "name 'w' is not defined" in err
    _run(qtbot, session, LAB)
    trace, out, _ = _run(qtbot, session, "loss2 = w * 10\nprint(loss2.item())", keep=True)
    assert "30.0" in out
    assert trace.tensor_named("loss2").value.data == 30.0


def test_exception_reports_line_and_traceback(qtbot, session) -> None:
    trace, _, err = _run(qtbot, session, "import torch\nx = torch.ones(2)\nx.backward()\n")
    (error,) = trace.errors
    assert error["line"] == 3 and error["type"] == "RuntimeError"
    assert 'File "<editor>", line 3' in err


AS_FILE = """import pickle, sys
import helper
class Point:
    pass
def f(n):
    return 0 if n == 0 else f(n - 1) + 1
print(sys.argv, sys.path[0], helper.VALUE, len(pickle.dumps(Point())) > 0, f(990), __file__)
sys.exit(0)
print("not reached")
"""


def test_a_saved_file_runs_as_python_runs_it(qtbot, session, tmp_path) -> None:
    # argv, sys.path[0], __main__ and the recursion limit as under `python FILE`, put back
    # afterwards; sys.exit(0) is a clean end, sys.exit(3) an error shown as before.
    (tmp_path / "helper.py").write_text("VALUE = 'sibling'\n")
    path = str(tmp_path / "lesson.py")
    trace, out, err = _run(qtbot, session, AS_FILE, path=path)
    assert out.splitlines() == [f"{[path]} {tmp_path} sibling True 990 {path}"]
    assert trace.errors == [] and err == ""
    code = f"import sys\nprint(sys.argv, {str(tmp_path)!r} in sys.path, '__file__' in globals())"
    _, out, _ = _run(qtbot, session, code)
    assert out.strip() == "['<editor>'] False False"  # unsaved: the editor's name, no folder
    trace, out, err = _run(qtbot, session, "import sys\nprint('x')\nsys.exit(3)\n")
    (error,) = trace.errors
    assert error["type"] == "SystemExit" and error["line"] == 3
    assert "SystemExit: 3" in err and out == "x\n"
    _, out, _ = _run(
        qtbot, session, "import pickle\nclass C: pass\nprint(len(pickle.dumps(C())))\n", space="lab"
    )
    assert out.strip().isdigit()  # a named space is a __main__ module of its own too


def test_stop_interrupts_and_keeps_the_kernel(qtbot, session) -> None:
    _run(qtbot, session, "kept = 41")
    pid = session.kernel_pid
    with qtbot.waitSignal(
        session.state_changed, timeout=10_000, check_params_cb=lambda st: st == "busy"
    ):
        run = session.run("while True:\n    pass\n", keep=True)
    qtbot.wait(300)
    with qtbot.waitSignal(run.finished, timeout=5_000) as got:
        session.interrupt()
    assert got.args[0]["trace"].errors[0]["type"] == "KeyboardInterrupt"
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=5_000)
    _, out, _ = _run(qtbot, session, "print(kept + 1)", keep=True)
    assert "42" in out and session.kernel_pid == pid


def test_kernel_death_is_reported_and_recovered(qtbot, session) -> None:
    notices: list[str] = []
    session.notice.connect(notices.append)
    with qtbot.waitSignal(session.kernel_info, timeout=60_000):
        session.run("import os\nos._exit(1)\n")
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=30_000)
    assert any("kernel died" in n for n in notices)
    _, out, _ = _run(qtbot, session, "print('fresh', 'kept' in dir())")
    assert "fresh False" in out


def test_console_output_is_batched_not_lost(qtbot, session) -> None:
    _, out, _ = _run(qtbot, session, "for i in range(3000):\n    print(i)\n")
    lines = out.splitlines()
    assert lines[0] == "0" and lines[-1] == "2999" and len(lines) == 3000


def test_kernel_that_cannot_start_gives_a_clear_message(qtbot, monkeypatch) -> None:
    """…and a run asked of that dead kernel still finishes, once, saying so."""
    from jupyter_client.kernelspec import KernelSpec

    from autograd_viz.session import _launch

    def broken_spec(self, kernel_name):
        return KernelSpec(
            argv=["/nonexistent/python", "-f", "{connection_file}"],
            display_name="broken",
            language="python",
        )

    monkeypatch.setattr(_launch.OwnKernelSpecs, "get_kernel_spec", broken_spec)
    s = KernelSession()
    with qtbot.waitSignal(s.start_failed, timeout=30_000) as failed:
        s.start()
    assert failed.args[0].startswith("The Python kernel could not start:")
    qtbot.waitUntil(lambda: s.state is KernelState.DEAD, timeout=5_000)
    answers: list[dict] = []
    run = s.run("print('never')")
    run.finished.connect(answers.append)
    answer = answer_of(qtbot, run)
    assert answer["ok"] is False and answer["trace"] is None
    assert answer["error"]["message"] == "The kernel is not running; restart it and try again."
    s.shutdown()
    assert len(answers) == 1


def test_call_returns_a_core_functions_result(qtbot, session) -> None:
    _run(
        qtbot,
        session,
        "import torch\ndef loss(w, b):\n    return (w - 3) ** 2 + b\nt = torch.ones(2, 3)\n",
    )
    payload = answer_of(qtbot, session.call(namespace_summary))
    assert payload["ok"] is True and payload["trace"] is None
    assert payload["result"]["functions"] == {"loss": ["w", "b"]}
    assert payload["result"]["tensors"] == {"t": [2, 3]}
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=5_000)


def test_call_errors_come_back_as_payloads(qtbot, session) -> None:
    payload = answer_of(qtbot, session.call(namespace_summary, {"nonsense": 1}))
    assert payload["ok"] is False
    assert payload["error"]["type"] == "TypeError"
    with pytest.raises(ValueError):
        session.call(os.system, {"command": "true"})
    with pytest.raises(ValueError):
        session.call("autograd_viz.core.kernel.protocol:namespace_summary")  # a name is not enough


def test_each_call_gets_its_own_answer(qtbot, session) -> None:
    # Two panes ask at once: each call object carries its own answer, nobody filters.
    _run(qtbot, session, "import torch\nt = torch.ones(4)\n")
    summary = session.call(namespace_summary)
    step = session.call(
        lab_step, {"code": "import torch\nw = torch.tensor(2.0)", "fresh": True}, "lab"
    )
    seen: list[tuple[str, dict]] = []
    summary.finished.connect(lambda a: seen.append(("summary", a)))
    step.finished.connect(lambda a: seen.append(("step", a)))
    answer_of(qtbot, step)
    assert [name for name, _ in seen] == ["summary", "step"]  # in the order asked
    assert seen[0][1]["result"]["tensors"] == {"t": [4]} and seen[0][1]["trace"] is None
    lab = seen[1][1]
    assert lab["ok"] is True and lab["trace"].source == "<lab>"
    assert lab["result"]["state"]["tensors"]["w"]["value"] == 2.0


def test_named_spaces_keep_their_variables_apart(qtbot, session) -> None:
    _run(qtbot, session, "w = 1")
    code = "import torch\nw = torch.tensor(3.0, requires_grad=True)"
    trace, _, _ = _run(qtbot, session, code, filename="<lab>", space="lab")
    assert trace.source == "<lab>"
    assert trace.tensor_named("w") is not None
    _, out, _ = _run(qtbot, session, "print('editor w', w)", keep=True)
    assert "editor w 1" in out
