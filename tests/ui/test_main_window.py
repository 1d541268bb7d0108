"""The whole app against a real kernel: type code, run it, see PyTorch's graph."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from autograd_viz.session import KernelState
from autograd_viz.ui.main_window import MainWindow

pytestmark = pytest.mark.kernel

LAB = (
    "import torch\n"
    "w = torch.tensor(3.0, requires_grad=True)\n"
    "x = torch.tensor(2.0)\n"
    "b = torch.tensor(1.0, requires_grad=True)\n"
    "loss = (w * x + b - 5) ** 2\n"
    "loss.backward()\n"
    "print('w.grad', w.grad.item())\n"
)


@pytest.fixture
def window(running_window):
    return running_window


def _run_typed(qtbot, win: MainWindow, code: str):
    win.editor.set_text(code)
    win.editor.setFocus()
    with (
        qtbot.waitSignal(win.trace_shown, timeout=30_000) as shown,
        qtbot.waitSignal(win.session.run_finished, timeout=30_000),
    ):
        qtbot.keyClick(win.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=5_000)
    return shown.args[0]


def test_typed_code_runs_and_graph_matches_trace(qtbot, window) -> None:
    window.editor.clear()
    window.editor.setFocus()
    qtbot.keyClicks(window.editor, "import torch")
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    qtbot.keyClicks(window.editor, "a = torch.tensor(2.0, requires_grad=True)")
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    qtbot.keyClicks(window.editor, "out = (a * 3 + 1) ** 2")
    assert window.editor.text() == (
        "import torch\na = torch.tensor(2.0, requires_grad=True)\nout = (a * 3 + 1) ** 2"
    )
    with qtbot.waitSignal(window.trace_shown, timeout=30_000) as shown:
        qtbot.keyClick(window.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    trace = shown.args[0]
    assert window.canvas.marker_count() == len(trace.nodes) + len(trace.tensors)
    assert sorted(n.name for n in trace.nodes) == [
        "AccumulateGrad",
        "AddBackward0",
        "MulBackward0",
        "PowBackward0",
    ]
    assert trace.tensor_named("out").value.data == 49.0


def test_lab_grads_reach_the_canvas_and_console(qtbot, window) -> None:
    trace = _run_typed(qtbot, window, LAB)
    labels = {n.title: n for n in window.canvas.graph.nodes.values()}
    assert labels["w"].grad == "grad 8.0" and labels["b"].grad == "grad 4.0"
    qtbot.waitUntil(lambda: "w.grad 8.0" in window.console.plain_text(), timeout=5_000)
    assert window.canvas.marker_count() == len(trace.nodes) + len(trace.tensors)
    # The run's last console line says it finished, and what it did: "▶ Running" alone
    # read as still running when the script printed nothing.
    last = window.console.plain_text().rstrip().splitlines()[-1]
    ops = sum(1 for e in trace.events if e.get("kind") == "op")
    assert last.startswith("✓ Finished in ") and last.endswith(f": {ops} ops, 1 backward pass")


def test_exception_marks_its_line_and_shows_traceback(qtbot, window) -> None:
    _run_typed(
        qtbot, window, "import torch\ny = torch.ones(3, requires_grad=True) * 2\ny.backward()\n"
    )
    assert window.editor.error_line == 3
    assert "scalar outputs" in window.editor.error_message
    qtbot.waitUntil(lambda: 'File "<editor>", line 3' in window.console.plain_text(), timeout=5_000)
    qtbot.waitUntil(
        lambda: "■ Stopped by RuntimeError on line 3 after " in window.console.plain_text()
    )


def test_syntax_error_marks_line_and_runs_nothing(qtbot, window) -> None:
    _run_typed(qtbot, window, "ran = 1\nif True\n    pass\n")
    assert window.editor.error_line == 2
    trace = _run_typed(qtbot, window, "print('ran' in dir())\n")
    qtbot.waitUntil(lambda: "False" in window.console.plain_text(), timeout=5_000)
    assert window.editor.error_line is None and not trace.errors


def test_a_saved_file_runs_as_that_file(qtbot, window, tmp_path) -> None:
    # As `python lesson.py`: its path is sys.argv[0] and its folder sys.path[0].
    path = tmp_path / "lesson.py"
    path.write_text("import sys\nprint('argv', sys.argv, sys.path[0])\n", encoding="utf-8")
    assert window.document.open_path(path)
    _run_typed(qtbot, window, window.editor.text())
    said = f"argv {[str(window.document.path)]} {window.document.path.resolve().parent}"
    qtbot.waitUntil(lambda: said in window.console.plain_text(), timeout=5_000)


def test_text_survives_a_kernel_crash(qtbot, window) -> None:
    code = "import os\nos._exit(3)\n# keep me\n"
    window.editor.set_text(code)
    window.run_code()
    qtbot.waitUntil(lambda: "kernel died" in window.console.plain_text(), timeout=30_000)
    qtbot.waitUntil(lambda: window.session.state is KernelState.IDLE, timeout=60_000)
    assert window.editor.text() == code
    assert window.kernel_status.state == "idle"


def test_player_keys_step_and_editor_follows(qtbot, window) -> None:
    trace = _run_typed(qtbot, window, LAB)
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_Right)
    assert window.player.position == 0 and window.player.current.line == 2
    assert window.editor.highlighted_lines == {2}
    qtbot.keyClick(window.canvas, Qt.Key.Key_End)
    assert window.player.at_end()
    assert window.editor.highlighted_lines == {5}  # the last forward op: the loss line
    loss = trace.tensor_named("loss").id
    assert window.canvas.frame.labels[loss][0] == "4.0"
    qtbot.keyClick(window.canvas, Qt.Key.Key_Home)
    assert window.player.position == -1 and window.canvas.frame.visited == set()


def test_clicking_a_node_inspects_it_and_shows_its_line(qtbot, window) -> None:
    trace = _run_typed(qtbot, window, LAB)
    w = trace.tensor_named("w")
    assert not window.inspector.isVisible()
    point = window.canvas.widget_position(w.id) - window.canvas.viewport().pos()
    qtbot.mouseClick(window.canvas.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: window.inspector.key == w.id, timeout=2_000)
    assert window.inspector.isVisible()
    text = window.inspector.details.text()
    assert "w" in text and "8.0" in text and "line 2" in text
    assert window.canvas.selected == [w.id]
    assert window.editor.textCursor().blockNumber() + 1 == 2
    # And back: putting the cursor on the loss line rings what that line made.
    window.editor.goto_line(5)
    assert trace.tensor_named("loss").id in window.canvas.selected


def test_search_box_finds_and_inspects(qtbot, window) -> None:
    trace = _run_typed(qtbot, window, LAB)
    window.search.setText("loss")
    qtbot.keyClick(window.search, Qt.Key.Key_Return)
    loss = trace.tensor_named("loss").id
    assert window.canvas.selected[0] == loss and window.inspector.key == loss


HELD = (
    "import torch\n"
    "torch.manual_seed(0)\n"
    "W = torch.randn(12, 10){edit}.requires_grad_()\n"
    "x = torch.randn(4, 12)\n"
    "loss = torch.tanh(x @ W).pow(2).mean()\n"
    "loss.backward()\n"
)


def test_a_big_tensors_numbers_come_from_the_kernel_when_inspected(qtbot, window) -> None:
    trace = _run_typed(qtbot, window, HELD.format(edit=""))
    W = trace.tensor_named("W")
    # The trace crossed without W's 120 numbers; the kernel kept them.
    assert W.grad.data is None and W.grad.held is not None
    window.run_view.inspect(W.id)
    qtbot.waitUntil(lambda: window.inspector.plot.isVisible(), timeout=10_000)
    assert not window.inspector.plot_note.isVisible()
    namespace: dict = {}
    exec(HELD.format(edit=""), namespace)
    torch_grad = namespace["W"].grad
    image = window.inspector.plot.image.image
    # The heatmap is drawn transposed (x = columns): torch's numbers, every one.
    assert image.shape == (10, 12)
    assert image[3, 7] == pytest.approx(torch_grad[7, 3].item())
    assert W.grad.data == torch_grad.tolist() and W.grad.held is None
    assert W.value.data == namespace["W"].tolist()


def test_compare_reads_every_number_of_big_tensors(qtbot, window) -> None:
    # The edit reverses W's rows: its min, max, mean and norm stay the same, so only its
    # numbers (fetched from the kernel for both runs) show that it changed.
    _run_typed(qtbot, window, HELD.format(edit=""))
    window.compare.pin()
    _run_typed(qtbot, window, HELD.format(edit=".flip(0)"))
    qtbot.waitUntil(lambda: window.compare.diff is not None, timeout=10_000)
    changed = {(c.name, c.what) for c in window.compare.diff.changes}
    assert ("W", "value") in changed and ("W", ".grad") in changed
