"""The Compare tab: pin a run, run an edit, read what changed, click through to it."""

from __future__ import annotations

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.ui.graph.compare_pane import NOTE_WIDTH, NOTHING_PINNED, SAME_RUN, ComparePane
from tests.core.test_compare import WITH_RESET, WITHOUT_RESET


def _pane(qtbot, width: int) -> tuple[RunView, ComparePane]:
    view = RunView()
    pane = ComparePane()
    qtbot.addWidget(pane)
    pane.follow(view)
    pane.resize(width, 500)
    pane.show()
    return view, pane


def test_pin_run_again_and_the_missing_reset_is_named(qtbot) -> None:
    view, pane = _pane(qtbot, 1000)
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


MODEL = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
X = torch.randn(32, 4)
y = X.sum(dim=1, keepdim=True)
opt = torch.optim.SGD(model.parameters(), lr={lr})
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
"""


def test_at_a_small_window_the_note_keeps_a_readable_width(qtbot) -> None:
    # At 1000 px the value columns ("[1×8] -8.13e+13…8.84e+13") took every pixel and
    # each note wrapped a word a line, rows ten lines high (a walk).
    view, pane = _pane(qtbot, 640)
    view.show(prepare_run(run_source(MODEL.format(lr=0.1))))
    pane.pin_button.click()
    view.show(prepare_run(run_source(MODEL.format(lr=0.9))))
    table = pane.table
    note = table.columnCount() - 1
    assert any(table.item(r, note).text() for r in range(table.rowCount()))
    assert table.columnWidth(note) >= NOTE_WIDTH - 2
    assert sum(table.columnWidth(c) for c in range(table.columnCount())) <= (
        table.viewport().width() + 2
    )
    # Wider again, every column gets its text's width back.
    pane.resize(1600, 500)
    qtbot.waitUntil(lambda: table.columnWidth(2) >= table.sizeHintForColumn(2))
    assert table.columnWidth(3) >= table.sizeHintForColumn(3)
