"""\"Why is x.grad None?\" in the window: asked in the inspector or by a right-click on the
tensor, answered with its line, and fixed in the editor with one click."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.session import KernelState
from autograd_viz.ui.graph.inspector import Inspector
from tests.ui.test_main_window import _run_typed

NO_GRAD = (
    "import torch\n"
    "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    "b = torch.tensor([1.0, 1.0], requires_grad=True)\n"
    "with torch.no_grad():\n"
    "    h = w * 2\n"
    "loss = (h * b).sum()\n"
    "loss.backward()\n"
)


def test_the_inspector_asks_and_answers_at_the_moment_shown(qtbot) -> None:
    trace = run_source(NO_GRAD)
    view = RunView()
    view.show(prepare_run(trace))
    inspector = Inspector()
    qtbot.addWidget(inspector)
    inspector.follow(view)
    inspector.show()
    b, w = trace.tensor_named("b").id, trace.tensor_named("w").id
    view.inspect(w)
    why = inspector.why
    assert why.isVisible() and why.ask_button.text() == "Why is w.grad None?"
    assert not why.text.isVisible()
    qtbot.mouseClick(why.ask_button, Qt.MouseButton.LeftButton)
    assert why.text.isVisible()
    assert "line 4: with torch.no_grad():" in why.text.text()
    assert why.fix_button.text() == "Apply the fix (line 4)"
    assert why.fix_button.toolTip().startswith("Line 4 becomes `if True:`")
    with qtbot.waitSignal(why.fix_requested) as fixed:
        qtbot.mouseClick(why.fix_button, Qt.MouseButton.LeftButton)
    edit, script = fixed.args
    assert script == NO_GRAD and (edit.line, edit.text) == (4, "if True:")
    # b does get a gradient: at the run's end the question is about its value; before
    # the backward ran, about its None.
    view.inspect(b)
    assert why.ask_button.text() == "Why is b.grad [2.0, 4.0]?" and not why.text.isVisible()
    view.player.set_mode(BACKWARD)
    view.player.seek(-1)
    assert why.ask_button.text() == "Why is b.grad None?"
    why.ask()
    assert "No backward() ran yet." in why.text.text()
    view.player.seek(len(view.player.steps) - 1)  # asked again for the new moment
    assert why.answer is not None and why.answer.question == "Why is b.grad [2.0, 4.0]?"


@pytest.mark.kernel
def test_right_click_asks_why_and_the_fix_gives_the_gradient(qtbot, running_window) -> None:
    window = running_window
    trace = _run_typed(qtbot, window, NO_GRAD)
    w = trace.tensor_named("w")
    assert trace.tensor_named("w").grad is None
    point = window.canvas.widget_position(w.id) - window.canvas.viewport().pos()
    qtbot.mouseClick(window.canvas.viewport(), Qt.MouseButton.RightButton, pos=point)
    menu = window.canvas.clicks.menu
    assert isinstance(menu, QMenu) and menu.isVisible()
    ask = menu.actions()[0]
    assert ask.text() == "Why is w.grad what it is?"
    ask.trigger()
    menu.close()
    inspector = window.inspector
    assert inspector.isVisible() and inspector.key == w.id
    assert "ran with gradient tracking off" in inspector.why.text.text()
    # The pane opens beside the canvas once the window lays itself out again.
    qtbot.waitUntil(lambda: inspector.why.fix_button.width() > 0, timeout=2_000)
    qtbot.mouseClick(inspector.why.fix_button, Qt.MouseButton.LeftButton)
    assert window.editor.text().split("\n")[3] == "if True:"
    window.editor.undo()  # one undo step takes the fix back
    assert window.editor.text() == NO_GRAD
    window.editor.redo()
    qtbot.waitUntil(lambda: window.session.state is KernelState.IDLE, timeout=5_000)
    fixed = _run_typed(qtbot, window, window.editor.text())
    assert fixed.tensor_named("w").grad is not None  # torch, in the kernel, agrees
