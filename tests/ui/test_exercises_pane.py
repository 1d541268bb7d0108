"""The exercises pane: put a solution in, press Check, read the rows the checker filled in."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from autograd_viz.core.learning.exercises import EXERCISES
from autograd_viz.core.learning.progress import load_progress
from autograd_viz.ui.learning.exercises_pane import ExercisesPane
from tests.core.exercise_solutions import SOLUTIONS

HALF_RIGHT = (
    "import torch\n"
    "\n"
    "def grad_of(f, x0):\n"
    "    x = torch.tensor(x0, requires_grad=True)\n"
    "    if len(x0) == 1:\n"
    "        raise ValueError('one number is not enough')\n"  # line 6
    "    f(x).backward()\n"
    "    return x.grad.numpy() * (2 if x0 == [1.0, 2.0, 3.0] else 1)\n"
)


class _Editor:
    """Stands in for the code editor: the pane only reads its text."""

    text = ""


@pytest.fixture
def editor() -> _Editor:
    return _Editor()


@pytest.fixture
def pane(qtbot, tmp_path, editor) -> ExercisesPane:
    widget = ExercisesPane(load_progress(tmp_path / "progress.json"), source=lambda: editor.text)
    widget.resize(900, 760)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _rows(pane: ExercisesPane) -> list[list[str]]:
    tree = pane.results
    return [
        [tree.topLevelItem(i).text(c) for c in range(tree.columnCount())]
        for i in range(tree.topLevelItemCount())
    ]


def _press_check(qtbot, pane: ExercisesPane) -> None:
    with qtbot.waitSignal(pane.check_finished, timeout=60_000):
        qtbot.mouseClick(pane.check_button, Qt.MouseButton.LeftButton)
        assert not pane.check_button.isEnabled()  # checking: the GUI thread stays free


def test_starter_goes_to_the_editor(qtbot, pane) -> None:
    pane.select_exercise("descend")
    assert "descend(f, x0, lr, steps)" in pane.statement.text()
    with qtbot.waitSignal(pane.starter_requested) as sent:
        qtbot.mouseClick(pane.open_button, Qt.MouseButton.LeftButton)
    assert sent.args == [EXERCISES["descend"].starter]


def test_check_shows_each_case_with_expected_got_and_error(qtbot, pane, editor) -> None:
    pane.select_exercise("grad_of")
    editor.text = HALF_RIGHT
    _press_check(qtbot, pane)
    rows = _rows(pane)
    assert rows[0] == [
        "✗",
        "square_sum",
        "tensor [2, 4, 6] (float32)",
        "array [4, 8, 12] (float32)",
    ]
    assert rows[1][0] == "    ↳ values differ by up to 6"
    assert rows[2][:2] == ["✓", "lab_loss"] and rows[3][:2] == ["✓", "wave"]
    assert rows[4][:2] == ["✗", "returns_numpy"]
    assert rows[5][0] == "    ↳ ValueError: one number is not enough (line 6)"
    assert pane.status.text() == "2 of 4 cases pass."
    assert "values differ by up to 6" in pane.details.toPlainText()  # the first failure
    pane.results.setCurrentItem(pane.results.topLevelItem(4))
    assert "line 6, in grad_of" in pane.details.toPlainText()  # the learner's traceback
    with qtbot.waitSignal(pane.line_requested) as line:
        pane.results.itemDoubleClicked.emit(pane.results.topLevelItem(4), 0)
    assert line.args == [6]
    assert not pane.progress.is_done("exercise", "grad_of")


def test_passing_every_case_records_progress(qtbot, pane, editor) -> None:
    pane.select_exercise("descent3")
    editor.text = SOLUTIONS["descent3"]
    _press_check(qtbot, pane)
    assert [row[0] for row in _rows(pane)] == ["✓"] * 4
    assert pane.status.text() == "All 4 cases pass ✓ — exercise done."
    assert pane.progress.is_done("exercise", "descent3")
    assert pane.picker.currentText().startswith("✓ Descent in three variables")


def test_gradient_check_fills_the_table(qtbot, pane, editor) -> None:
    editor.text = "import torch\n\ndef f(x, y):\n    return (x**2 * y).sum()\n"
    pane.point.setText("1, 2; 3")
    with qtbot.waitSignal(pane.gradients_finished, timeout=60_000):
        qtbot.mouseClick(pane.gradient_button, Qt.MouseButton.LeftButton)
    table = pane.gradient_table
    cells = [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(3)]
    assert [row[0] for row in cells] == ["∂f/∂x[0]", "∂f/∂x[1]", "∂f/∂y"]
    assert [row[2] for row in cells] == ["6", "12", "5"]  # autograd: 2xy, 2xy, x²
    assert all(row[5] == "ok" for row in cells)
    assert pane.gradient_summary.text().startswith("PASS: max abs error")


def test_main_window_has_the_tab_and_the_starter_lands_in_the_editor(qtbot, tmp_path) -> None:
    from autograd_viz.ui.main_window import MainWindow

    window = MainWindow(progress=load_progress(tmp_path / "progress.json"))  # no kernel started
    qtbot.addWidget(window)
    try:
        tabs = [window.tabs.tabText(i) for i in range(window.tabs.count())]
        assert "Exercises" in tabs
        window.exercises.select_exercise("descend")
        qtbot.mouseClick(window.exercises.open_button, Qt.MouseButton.LeftButton)
        assert window.editor.text() == EXERCISES["descend"].starter
        window.editor.set_text("x = 1\n")
        assert window.exercises._source() == "x = 1\n"  # a check reads the editor's text
    finally:
        window.close()
