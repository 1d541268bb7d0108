"""The editor follows the shown run: the replayed step's line, the inspected item's line,
and a highlight that never outlives its run or the text it marked."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFontInfo

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.ui.editor.console import ConsolePane
from autograd_viz.ui.editor.editor import CodeEditor
from autograd_viz.ui.editor.run_lines import EditorFollowsRun
from autograd_viz.ui.learning.lab_grad_table import GradTable

CODE = "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * 3\ny.backward()\n"


@pytest.fixture
def followed(qtbot):
    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.set_text(CODE)
    view = RunView()
    EditorFollowsRun(editor, view)
    view.show(prepare_run(run_source(CODE, "<editor>", {"__name__": "__main__"})))
    return editor, view


def test_the_replayed_step_and_the_inspected_item_mark_their_lines(followed) -> None:
    editor, view = followed
    view.player.seek(1)  # y = x * 3
    assert editor.highlighted_lines == {3}
    x = view.trace.tensor_named("x").id
    view.inspect(x)
    assert editor.highlighted_lines == {2} and editor.textCursor().blockNumber() + 1 == 2
    assert view.selection == (x,)  # moving the cursor there did not replace the selection


def test_a_highlight_goes_with_an_edit_and_with_a_new_run(followed) -> None:
    editor, view = followed
    view.player.seek(1)
    assert editor.highlighted_lines == {3}
    editor.insertPlainText("# edited\n")
    assert editor.highlighted_lines == set()
    view.player.seek(0)
    assert editor.highlighted_lines == {2}
    view.show(prepare_run(run_source(CODE, "<editor>", {"__name__": "__main__"})))
    assert editor.highlighted_lines == set()


def test_console_says_what_it_is_for_and_tables_use_a_fixed_width_face(qtbot) -> None:
    console = ConsolePane()
    qtbot.addWidget(console)
    assert console.placeholderText().startswith("Output")
    table = GradTable()
    qtbot.addWidget(table)
    assert QFontInfo(table._mono).fixedPitch()
