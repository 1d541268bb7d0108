"""The Compare tab: pin a run, run an edit, read what changed, click through to it."""

from __future__ import annotations

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.ui.graph.compare_pane import NOTHING_PINNED, SAME_RUN, ComparePane
from tests.core.test_compare import WITH_RESET, WITHOUT_RESET


def test_pin_run_again_and_the_missing_reset_is_named(qtbot) -> None:
    view = RunView()
    pane = ComparePane()
    qtbot.addWidget(pane)
    pane.follow(view)
    pane.resize(1000, 500)
    pane.show()
    assert pane.summary.text() == NOTHING_PINNED and not pane.unpin_button.isEnabled()
    view.show(prepare_run(run_source(WITH_RESET)))
    pane.pin_button.click()
    assert pane.summary.text() == SAME_RUN and not pane.pin_button.isEnabled()
    now = run_source(WITHOUT_RESET)
    view.show(prepare_run(now))
    assert pane.table.isVisible() and pane.table.rowCount() >= 2
    rows = [
        [pane.table.item(r, c).text() for c in range(pane.table.columnCount())]
        for r in range(pane.table.rowCount())
    ]
    grad = next(row for row in rows if row[:2] == ["w", ".grad"])
    assert grad[2:4] == ["4.8", "12.8"]
    assert "the pinned run reset it before that (line 5: opt.zero_grad())" in grad[5]
    assert "backward passes 2 → 2" in pane.summary.text()
    with qtbot.waitSignal(pane.show_tensor) as shown:
        pane.table.cellClicked.emit(rows.index(grad), 0)
    assert shown.args == [now.tensor_named("w").id]
    pane.unpin_button.click()
    assert pane.summary.text() == NOTHING_PINNED and not pane.table.isVisible()
