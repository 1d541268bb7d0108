"""An app attached to a notebook's kernel draws each %%autograd_viz cell the notebook runs,
as it happens, without the learner touching the app."""

from __future__ import annotations

import sys

import pytest

from autograd_viz.session import KernelState
from autograd_viz.ui.main_window import MainWindow
from tests.session.test_notebook_magic import BROKEN, CELL, Notebook
from tests.session.test_remote_kernel import _separate_kernel

pytestmark = pytest.mark.kernel


@pytest.fixture
def notebook(tmp_path):
    km = _separate_kernel(tmp_path, [sys.executable, "-m", "ipykernel_launcher"])
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    book = Notebook(client)
    book.connection_file = km.connection_file
    yield book
    client.stop_channels()
    km.shutdown_kernel(now=True)


@pytest.fixture
def attached(qtbot, notebook):
    """The window attached to the notebook's kernel (`autograd-viz --existing`), idle."""
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    with qtbot.waitSignal(win.session.kernel_info, timeout=60_000):
        win.session.attach(notebook.connection_file)
    qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=10_000)
    yield win
    win.close()


def test_the_attached_app_draws_each_traced_cell_of_the_notebook(qtbot, notebook, attached):
    win = attached
    assert notebook.run("%load_ext autograd_viz")[0]["status"] == "ok"
    with qtbot.waitSignal(win.trace_shown, timeout=30_000) as shown:
        reply, _ = notebook.run(CELL)
    assert reply["status"] == "ok"
    trace = shown.args[0]
    assert trace.tensor_named("w").grad.data == 8.0
    drawn = win.run_view.run.trace
    assert drawn is trace
    names = sorted(n.name for n in trace.nodes)
    assert names == sorted(
        [
            "AccumulateGrad",
            "AccumulateGrad",
            "MulBackward0",
            "AddBackward0",
            "SubBackward0",
            "PowBackward0",
        ]
    )
    # The cell's code, read-only, under a bar that says where it came from.
    assert win.editor.text() == CELL.split("\n", 1)[1] and win.editor.isReadOnly()
    bar = win.editor_pane.recording_bar
    assert bar.isVisible() and "From the notebook." in bar.label.text()
    assert f"cell [{reply['execution_count']}]" in bar.label.text()
    # A plain cell draws nothing; the next traced one replaces the picture, error and all.
    notebook.run("print(1)")
    with qtbot.waitSignal(win.trace_shown, timeout=30_000) as shown:
        reply, _ = notebook.run(BROKEN)
    assert reply["status"] == "error"
    assert shown.args[0].error["type"] == "RuntimeError"
    assert win.editor.error_line == 4
    assert win.session.state is KernelState.IDLE


def test_unsaved_edits_are_never_replaced_by_a_notebook_cell(qtbot, notebook, attached):
    win = attached
    win.editor.set_text("my_own = 1\n")
    win.editor.document().setModified(True)
    infos: list[str] = []
    win.session.notebook_run.connect(lambda *_: infos.append("fetched"))
    notebook.run("%load_ext autograd_viz")
    notebook.run(CELL)
    qtbot.waitUntil(lambda: bool(infos), timeout=30_000)
    assert win.editor.text() == "my_own = 1\n" and not win.editor.isReadOnly()
    assert "your unsaved edits stay" in win.console.toPlainText().lower()
