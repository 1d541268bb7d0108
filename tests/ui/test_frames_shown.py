"""What the panes show of the first-graph example at a step: the editor's two line marks,
the caption's words and its two lines, and tooltips and inspector of the moment replayed,
with torch's full node names."""

from __future__ import annotations

import pytest
import torch
from PySide6.QtGui import QColor, QFontDatabase

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, EVERYTHING, FORWARD
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.resources import EXAMPLES
from autograd_viz.ui.editor.editor import CodeEditor
from autograd_viz.ui.editor.run_lines import EditorFollowsRun
from autograd_viz.ui.graph._caption_label import elide_to_lines
from autograd_viz.ui.graph._describe import describe
from autograd_viz.ui.graph.inspector import Inspector
from autograd_viz.ui.graph.player_bar import PlayerBar

FIRST_GRAPH = (EXAMPLES / "first_graph.py").read_text(encoding="utf-8")


def _line(text: str) -> int:
    return next(n for n, line in enumerate(FIRST_GRAPH.splitlines(), 1) if text in line)


def _view() -> RunView:
    view = RunView()
    view.show(prepare_run(run_source(FIRST_GRAPH, "<editor>", {"__name__": "__main__"})))
    return view


def _step(view: RunView, caption_start: str) -> int:
    return next(s.number for s in view.player.steps if s.caption.startswith(caption_start))


def _backgrounds(editor: CodeEditor) -> dict[int, str]:
    """Each line's extra-selection colour, as painted (the last selection of a line wins)."""
    return {
        s.cursor.blockNumber() + 1: s.format.background().color().name()
        for s in editor.extraSelections()
    }


@pytest.fixture
def followed(qtbot):
    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.set_text(FIRST_GRAPH)
    editor.setReadOnly(True)  # no current-line band: only the replay's marks
    view = _view()
    EditorFollowsRun(editor, view)
    return editor, view


def test_a_backward_node_marks_the_line_that_made_it_and_its_backward_call(followed) -> None:
    editor, view = followed
    mul, backward = _line("z = x * y"), _line("out.backward()")
    view.player.set_mode(BACKWARD)
    view.player.seek(_step(view, "MulBackward0"))
    assert editor.highlighted_lines == {mul} and editor.caller_line == backward
    colours = _backgrounds(editor)
    assert set(colours) == {mul, backward}
    assert colours[mul] == QColor(editor._colors["highlight"]).name()
    assert colours[backward] == QColor(editor._colors["caller"]).name() != colours[mul]
    assert "Called from here" in editor.tooltip_for_line(backward)
    assert editor.tooltip_for_line(mul) == ""
    # x's AccumulateGrad: the line that made the leaf x.
    view.player.seek(_step(view, "x.grad: None"))
    assert editor.highlighted_lines == {_line("x = torch.tensor")}
    assert editor.caller_line == backward
    # The backward() step itself, and a forward op: one line, no caller.
    view.player.seek(0)
    assert editor.highlighted_lines == {backward} and editor.caller_line is None
    view.player.set_mode(FORWARD)
    view.player.seek(2)
    assert editor.highlighted_lines == {mul} and editor.caller_line is None
    assert set(_backgrounds(editor)) == {mul}


def test_the_caption_names_the_views_as_the_buttons_do(qtbot) -> None:
    view = _view()
    bar = PlayerBar()
    qtbot.addWidget(bar)
    bar.follow(view)
    view.show(view.run)  # follow() hears the next run
    assert [b.text() for b in bar.mode_buttons.buttons()] == ["Forward", "Backward", "Both"]
    with qtbot.waitSignal(view.player.position_changed):
        view.player.set_mode(EVERYTHING)
    assert bar.caption.text().startswith("Start of the Both view")
    assert "all" not in bar.caption.text()
    with qtbot.waitSignal(view.player.position_changed):
        view.player.set_mode(BACKWARD)
    assert bar.caption.text().startswith("Start of the Backward view: the forward has run")


def test_a_long_caption_is_elided_to_two_lines_with_all_of_it_in_the_tooltip(qtbot) -> None:
    view = _view()
    bar = PlayerBar()
    qtbot.addWidget(bar)
    bar.set_player(view.player)
    bar.resize(260, 120)
    bar.show()
    qtbot.waitExposed(bar)
    height = bar.caption.height()
    # The Forward view's last step, out.item() after backward(), with its note on the grads.
    view.player.to_end()
    caption = view.player.current.caption + "\n" + view.player.unseen_changes()
    assert "x.grad, y.grad changed on line 12" in caption
    assert bar.caption.text() == caption  # the whole caption, for whoever reads it
    shown = bar.caption.shown_text()
    assert bar.caption.is_elided() and shown.endswith("…") and shown.count("\n") == 1
    assert bar.caption.toolTip() == caption and bar.caption.height() == height
    bar.resize(3000, 120)
    qtbot.waitUntil(lambda: not bar.caption.is_elided())
    assert bar.caption.shown_text() == caption and bar.caption.toolTip() == ""
    assert bar.caption.height() == height


def test_tooltips_and_inspector_show_the_moment_and_full_names(qtbot) -> None:
    x_torch = torch.tensor(2.0, requires_grad=True)
    y_torch = torch.tensor(3.0, requires_grad=True)
    ((x_torch * y_torch + 4) ** 2).backward()
    view = _view()
    trace = view.trace
    x = trace.tensor_named("x")
    accumulate = next(n for n in trace.nodes if n.variable == x.id)
    assert f".grad: {x_torch.grad.item()}" in describe(trace, x.id, view)  # the end: not replaying
    view.player.seek(4)  # out = w**2, the last forward op: no backward() yet
    text = describe(trace, x.id, view)
    assert ".grad: None" in text and "value: 2.0" in text and "Forward view" in text
    assert describe(trace, accumulate.id, view).startswith("AccumulateGrad\n")
    inspector = Inspector()
    qtbot.addWidget(inspector)
    inspector.follow(view)
    view.inspect(x.id)
    details = inspector.details.text()
    assert ">.grad</td><td>None</td>" in details and "(Forward)" in details
    view.player.set_mode(EVERYTHING)
    view.player.to_end()
    assert f".grad: {x_torch.grad.item()}" in describe(trace, x.id, view)
    assert ">.grad</td><td>60" in inspector.details.text()
    assert "(Both)" in inspector.details.text()
    view.inspect(accumulate.id)
    assert "<b>AccumulateGrad</b>" in inspector.details.text()


def test_a_value_range_in_a_caption_is_never_broken_at_its_ellipsis(qtbot) -> None:
    # "-0.0116…0.01" broke after its "…" at some widths and read as a cut-off number.
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    text = "LinearBackward: [6×32] -0.0116…0.0100 → model.2.weight.grad;  [3] 0.5…0.9 → x"
    for width in range(60, 700, 7):
        shown, elided = elide_to_lines(text, font, width, 4)
        for line in shown.split("\n")[:-1] if elided else shown.split("\n"):
            assert not line.endswith("…"), (width, shown)
        assert "\u2060" not in shown
        if not elided:
            assert shown.replace("\n", " ").split() == text.split()
