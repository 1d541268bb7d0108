"""One run, one picture: the graph tab shows the run just made and nothing of earlier ones,
checked against `autograd-viz trace` of the same file and against a dead kernel."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from PySide6.QtCore import Qt

from autograd_viz.resources import EXAMPLES
from autograd_viz.session import KernelState
from autograd_viz.ui.main_window import MainWindow

pytestmark = pytest.mark.kernel

IN_A_ROW = ("first_graph.py", "lab_loss.py", "leaf_vs_nonleaf.py", "linear_step.py")


@pytest.fixture
def window(running_window):
    return running_window


def _run(qtbot, win: MainWindow, code: str):
    win.editor.set_text(code)
    with qtbot.waitSignal(win.trace_shown, timeout=60_000) as shown:
        win.run_code()
    qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=10_000)
    return shown.args[0]


def _cli_trace(path, tmp_path) -> dict:
    out = tmp_path / f"{path.stem}.json"
    done = subprocess.run(
        [sys.executable, "-m", "autograd_viz", "trace", str(path), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text(encoding="utf-8"))


def _picture(trace) -> tuple[list, list]:
    """What a learner reads off a trace: each named tensor with its value, and the ops."""
    tensors = sorted(
        (t.name, tuple(t.shape), json.dumps(t.value.data if t.value else None))
        for t in trace.tensors
        if t.name
    )
    return tensors, sorted(n.name for n in trace.nodes)


def _cli_picture(data: dict) -> tuple[list, list]:
    tensors = sorted(
        (t["name"], tuple(t["shape"]), json.dumps((t.get("value") or {}).get("data")))
        for t in data["tensors"]
        if t.get("name")
    )
    return tensors, sorted(n["name"] for n in data["nodes"])


def test_examples_in_a_row_each_draw_only_their_own_program(qtbot, window, tmp_path) -> None:
    for name in IN_A_ROW:
        path = EXAMPLES / name
        trace = _run(qtbot, window, path.read_text(encoding="utf-8"))
        assert _picture(trace) == _cli_picture(_cli_trace(path, tmp_path)), name
        assert window.canvas.trace is trace and window.player.trace is trace
        drawn = {k for k in window.canvas.graph.nodes if k.startswith("t")}
        assert drawn <= {t.id for t in trace.tensors}  # every tensor drawn is this run's


def test_a_dead_kernel_leaves_no_stale_graph(qtbot, window) -> None:
    _run(qtbot, window, "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * 5\n")
    assert window.canvas.marker_count() > 0
    window.editor.set_text("import os\nos._exit(1)\n")
    window.run_code()
    qtbot.waitUntil(lambda: window.canvas.trace is None, timeout=30_000)
    assert window.canvas.marker_count() == 0 and window.player is None
    assert "kernel stopped" in window.run_view.message
    assert not window.player_bar.play_button.isEnabled()
    qtbot.waitUntil(lambda: window.session.state is KernelState.IDLE, timeout=60_000)
    assert window.canvas.trace is None  # the restart brings no old picture back


def test_a_syntax_error_draws_nothing_and_says_so(qtbot, window) -> None:
    _run(qtbot, window, "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * 5\n")
    trace = _run(qtbot, window, "import torch\nx = torch.ones(2\nz = 3\n")
    assert window.canvas.marker_count() == 0 and not trace.tensors
    assert window.run_view.message.startswith("Nothing ran: SyntaxError on line 2")
    assert window.editor.error_line == 2
    assert not window.player_bar.play_button.isEnabled()  # no invitation to replay
    assert "Nothing to replay" in window.player_bar.caption.text()


def test_grad_mode_left_off_does_not_break_the_next_run(qtbot, window) -> None:
    _run(qtbot, window, "import torch\ntorch.set_grad_enabled(False)\n")
    trace = _run(
        qtbot,
        window,
        "import torch\nw = torch.tensor(3.0, requires_grad=True)\n(w * w).backward()\n",
    )
    assert trace.tensor_named("w").grad.data == 6.0


def test_the_inspector_shows_a_tensors_value_at_the_step_shown(qtbot, window) -> None:
    trace = _run(
        qtbot,
        window,
        "import torch\n"
        "w = torch.tensor(3.0, requires_grad=True)\n"
        "w2 = w * 2\n"
        "with torch.no_grad():\n"
        "    w.add_(1.0)\n"
        "loss = w2 * w\n"
        "loss.backward()\n",
    )
    w = trace.tensor_named("w")
    window.run_view.inspect(w.id)
    assert "4.0" in window.inspector.details.text()  # the end: w after add_
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_Right)  # step 1: w made, 3.0
    text = window.inspector.details.text()
    assert "step 1 of" in text and "3.0" in text and "4.0" not in text
    loss = trace.tensor_named("loss")
    window.run_view.inspect(loss.id)
    assert "not computed yet" in window.inspector.details.text()
