"""The lab pane against a real kernel: click actions, read the grad table and the tasks."""

from __future__ import annotations

import contextlib
import io

import pytest
from PySide6.QtCore import Qt

from autograd_viz.core.learning.lab import LAB_SOURCE, lab_state
from autograd_viz.core.learning.progress import load_progress
from autograd_viz.session import KernelSession, KernelState
from autograd_viz.ui.learning.lab_grad_table import COLUMNS, NEXT
from autograd_viz.ui.learning.lab_pane import LabPane
from autograd_viz.ui.learning.lab_task_list import DONE, OPEN

pytestmark = pytest.mark.kernel

SECOND_TIME = "Trying to backward through the graph a second time"
LAB_TASKS = (
    "lab.w_b_not_x",
    "lab.accumulate_16",
    "lab.zero_grad_8",
    "lab.second_time_error",
    "lab.retain_graph_16",
)


@pytest.fixture
def session(qtbot):
    s = KernelSession()
    with qtbot.waitSignal(s.kernel_info, timeout=60_000):
        s.start()
    qtbot.waitUntil(lambda: s.state is KernelState.IDLE, timeout=10_000)
    yield s
    s.shutdown()


@pytest.fixture
def pane(qtbot, session) -> LabPane:
    widget = LabPane(session, load_progress())  # conftest points the data dir at tmp
    widget.resize(1000, 760)
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.step_done, timeout=30_000) as setup:
        widget.show()  # the lab creates w, x, b the first time it is shown
    assert setup.args[0].key == "setup"
    _wait_ready(qtbot, widget)
    return widget


def _wait_ready(qtbot, pane: LabPane) -> None:
    qtbot.waitUntil(lambda: pane.buttons["forward"].isEnabled(), timeout=10_000)


def click(qtbot, pane: LabPane, key: str):
    """Click an action button and wait for the step torch ran."""
    with qtbot.waitSignal(pane.step_done, timeout=30_000) as done:
        qtbot.mouseClick(pane.buttons[key], Qt.MouseButton.LeftButton)
        assert not pane.buttons["backward"].isEnabled()  # actions wait for the kernel
    _wait_ready(qtbot, pane)
    return done.args[0]


def grad_column(pane: LabPane) -> dict[str, str]:
    return {n: pane.table.rows[n][".grad now"] for n in ("w", "x", "b")}


def next_column(pane: LabPane) -> list[str]:
    return [pane.table.rows[n][NEXT] for n in ("w", "x", "b")]


def shown_done(pane: LabPane) -> set[str]:
    """The tasks the list shows ticked (read from the items' text, as a learner sees it)."""
    marks = {key: item.text()[0] for key, item in pane.tasks.items.items()}
    assert set(marks.values()) <= {DONE, OPEN}
    return {key for key, mark in marks.items() if mark == DONE}


def test_grad_table_and_tasks_follow_real_torch(qtbot, pane) -> None:
    assert grad_column(pane) == {"w": "None", "x": "None", "b": "None"}
    assert next_column(pane) == ["—", "—", "—"]  # no loss yet: nothing to measure
    assert pane.table.why["w"] == "∂loss/∂w = 2(w·x+b−5)·x = 2·2·2 = 8 per forward + backward"
    assert shown_done(pane) == set()

    click(qtbot, pane, "forward")
    assert next_column(pane) == ["8", "nothing", "4"]  # torch's backward on a copy of the lab
    z = pane.table.rows["z"]
    assert z["grad_fn"] == "MulBackward0" and z[".grad now"] == "None (non-leaf)"
    assert shown_done(pane) == set()
    click(qtbot, pane, "backward")
    assert grad_column(pane) == {"w": "8", "x": "None", "b": "4"}
    assert shown_done(pane) == {"lab.w_b_not_x", "lesson1.leaf_non_leaf"}
    assert pane.canvas.marker_count() > 0 and pane.error.text() == ""
    assert next_column(pane) == ["RuntimeError"] * 3  # the graph is freed

    step = click(qtbot, pane, "backward")  # the graph was freed: torch refuses
    assert step.error["type"] == "RuntimeError"
    assert pane.error.text().startswith(f"RuntimeError: {SECOND_TIME}")
    # Two lines of torch's five-line message, all of it in the tooltip: the tasks and the
    # log below keep their room.
    assert pane.error.isVisibleTo(pane) and pane.error.shown_text().count("\n") <= 1
    assert pane.error.toolTip() in ("", pane.error.text())
    assert grad_column(pane)["w"] == "8"
    assert "lab.second_time_error" in shown_done(pane)

    click(qtbot, pane, "forward")
    click(qtbot, pane, "backward")
    assert grad_column(pane) == {"w": "16", "x": "None", "b": "8"}
    assert "lab.accumulate_16" in shown_done(pane) and pane.error.text() == ""
    assert not pane.error.isVisibleTo(pane)  # nothing to say: no empty band
    assert "lab.retain_graph_16" not in shown_done(pane)

    click(qtbot, pane, "zero_none")
    assert grad_column(pane)["w"] == "None"
    click(qtbot, pane, "forward")
    click(qtbot, pane, "backward_retain")
    assert "lab.zero_grad_8" in shown_done(pane) and grad_column(pane)["w"] == "8"
    assert "lab.retain_graph_16" not in shown_done(pane)
    click(qtbot, pane, "backward")  # the same forward again, its graph kept: no error
    assert grad_column(pane)["w"] == "16" and pane.error.text() == ""
    assert set(LAB_TASKS) <= shown_done(pane)
    assert all(pane.progress.is_done("task", key) for key in LAB_TASKS)  # saved


def test_item_breaks_the_connection_and_the_prediction_is_judged(qtbot, pane) -> None:
    click(qtbot, pane, "forward")
    pane.predict_first.setChecked(True)
    qtbot.mouseClick(pane.buttons["item"], Qt.MouseButton.LeftButton)
    assert pane.predict_bar.isVisible() and not pane.buttons["backward"].isEnabled()
    assert "still connected to w" in pane.predict_bar.label.text()
    with qtbot.waitSignal(pane.verdict_shown, timeout=30_000) as shown:
        qtbot.mouseClick(pane.predict_bar.buttons["yes"], Qt.MouseButton.LeftButton)
    verdict = shown.args[0]
    assert verdict.actual == "no" and not verdict.held
    assert pane.verdict.text().startswith("✗ You predicted yes; PyTorch gave no.")
    _wait_ready(qtbot, pane)
    pane.predict_first.setChecked(False)
    assert next_column(pane) == ["nothing", "nothing", "4"]  # what torch adds: w gets nothing
    click(qtbot, pane, "backward")
    assert grad_column(pane) == {"w": "None", "x": "None", "b": "4"}
    assert pane.table.rows["z_item"]["value"] == "6"


def test_toggle_log_script_and_replay_reproduce_the_state(qtbot, pane) -> None:
    with qtbot.waitSignal(pane.step_done, timeout=30_000) as toggled:
        pane.toggles["x"].click()
    assert toggled.args[0].code == "x.requires_grad_(True)"
    _wait_ready(qtbot, pane)
    for key in ("forward", "retain_grad"):
        click(qtbot, pane, key)
    assert next_column(pane) == ["8", "12", "4"]
    for key in ("backward", "backward"):
        click(qtbot, pane, key)
    assert grad_column(pane) == {"w": "8", "x": "12", "b": "4"}
    assert pane.table.rows["z"][".grad now"] == "4"

    script = pane.copy_script()
    assert pane.log.toPlainText() == script
    plain: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(script, LAB_SOURCE, "exec"), plain)  # plain torch, here, no kernel
    assert SECOND_TIME in out.getvalue()
    assert lab_state(plain)["tensors"] == pane.lab.state["tensors"]

    before = pane.lab.state["tensors"]
    count = len(pane.lab.steps)
    with qtbot.waitSignal(
        pane.step_done, timeout=30_000, check_params_cb=lambda _s: len(pane.lab.steps) == count
    ):
        pane.replay_button.click()
    _wait_ready(qtbot, pane)
    assert pane.lab.state["tensors"] == before
    assert pane.lab.script() == script


def test_lab_tab_in_the_window_leaves_the_editor_alone(qtbot) -> None:
    from autograd_viz.ui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    window.session.start()
    qtbot.waitUntil(lambda: window.session.state is KernelState.IDLE, timeout=60_000)
    try:
        with qtbot.waitSignal(window.lab.step_done, timeout=30_000):
            window.show_tab("Lab")
        _wait_ready(qtbot, window.lab)
        for key in ("forward", "backward", "backward"):
            click(qtbot, window.lab, key)
        assert SECOND_TIME in window.lab.error.text()
        assert window.editor.error_line is None  # the error belongs to the lab, not the file
        # With the error line there, every row of the table is still in view (z and loss
        # were below a scroll), and the chain rule under it is not drawn over it.
        table = window.lab.table
        assert table.rowCount() == 5
        view = table.viewport().rect()
        for row in range(table.rowCount()):
            assert view.contains(table.visualRect(table.model().index(row, 0)))
        why = window.lab.why.parentWidget().parentWidget()  # its scroll area
        table_bottom = table.mapTo(window, table.rect().bottomLeft()).y()
        assert why.mapTo(window, why.rect().topLeft()).y() > table_bottom
        assert window.canvas.trace is None  # the Graph tab keeps the editor's graph
        assert window.lab.canvas.trace.source == LAB_SOURCE
    finally:
        window.close()


def test_descent_task_follows_the_descent_view(qtbot) -> None:
    from autograd_viz.ui.descent.descent_pane import DescentPane

    session = KernelSession()  # never started: the descent task needs no kernel
    lab = LabPane(session, load_progress())
    descent = DescentPane()
    qtbot.addWidget(lab)
    qtbot.addWidget(descent)
    try:
        qtbot.waitUntil(lambda: descent.sweep is not None, timeout=60_000)
        lab.watch_descent(descent)
        descent.set_learning_rate(0.1)  # the lesson's rate: 38 steps
        assert not lab.tasks.done["lesson1.descent_10_steps"]
        descent.set_learning_rate(0.5)  # one step on the bowl
        assert lab.tasks.done["lesson1.descent_10_steps"]
        assert lab.progress.is_done("task", "lesson1.descent_10_steps")
    finally:
        session.shutdown()


def test_predict_first_hides_the_answer_and_offers_torchs(qtbot, pane) -> None:
    for key in ("forward", "backward", "forward"):
        click(qtbot, pane, key)
    column = COLUMNS.index(NEXT)
    assert not pane.table.isColumnHidden(column) and pane.table.rows["w"][NEXT] == "8"
    pane.predict_first.setChecked(True)
    qtbot.mouseClick(pane.buttons["backward"], Qt.MouseButton.LeftButton)
    assert pane.predict_bar.isVisible()
    assert pane.table.isColumnHidden(column) and not pane.why.isVisible()
    assert not pane.table.isColumnHidden(COLUMNS.index(".grad now"))
    assert {"16", "an error"} <= set(pane.predict_bar.buttons)  # torch's 8 + 8 is offered
    with qtbot.waitSignal(pane.verdict_shown, timeout=30_000) as shown:
        qtbot.mouseClick(pane.predict_bar.buttons["16"], Qt.MouseButton.LeftButton)
    assert shown.args[0].held and shown.args[0].actual == "16"
    _wait_ready(qtbot, pane)
    assert not pane.table.isColumnHidden(column) and pane.why.isVisible()
    assert grad_column(pane)["w"] == "16"


def test_lab_graph_is_the_graph_tabs_graph_of_the_same_code(qtbot, pane) -> None:
    from autograd_viz.core.graph.graph_model import drawn_graph
    from autograd_viz.core.kernel.runner import run_source

    for key in ("forward", "backward"):
        click(qtbot, pane, key)
    qtbot.waitUntil(lambda: pane.canvas.trace is not None and not pane.canvas.laying_out)
    with contextlib.redirect_stdout(io.StringIO()):
        same_code = drawn_graph(run_source(pane.lab.script(), LAB_SOURCE, {"__name__": "__main__"}))
    drawn = pane.canvas.graph
    assert set(drawn.nodes) == set(same_code.nodes) and drawn.edges == same_code.edges
    titles = {n.title for n in drawn.nodes.values()}
    assert {"w", "x", "b", "z", "loss"} <= titles  # x stays drawn after backward
    pane.canvas.repaint()
    qtbot.waitUntil(pane.canvas._overlay.labels_fit)  # labels are drawn at this size
    view = pane.canvas.getViewBox().sceneBoundingRect()
    legend = pane.canvas.legend.sceneBoundingRect()
    assert view.contains(legend), (view, legend)  # the legend's row is not cut off
    for _sample, label in pane.canvas.legend.items:
        assert "…" not in label.text
