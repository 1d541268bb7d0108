"""The player bar drives the player; the canvas follows it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.bar_text import caption_now
from autograd_viz.core.playback.player import BACKWARD, Player
from autograd_viz.ui.graph._graph_style import CURRENT_COLOUR, FAILED_RING
from autograd_viz.ui.graph.graph_canvas import GraphCanvas
from autograd_viz.ui.graph.player_bar import PlayerBar
from tests.core.fidelity_cases import CASES


def _setup(qtbot, case: str):
    return _setup_code(qtbot, CASES[case])


def _setup_code(qtbot, code: str):
    trace = run_source(code)
    canvas = GraphCanvas()
    canvas.resize(900, 600)
    bar = PlayerBar()
    for widget in (canvas, bar):
        qtbot.addWidget(widget)
        widget.show()
    canvas.show_trace(trace)
    player = Player(trace, canvas.graph)
    bar.set_player(player)
    bar.frame_changed.connect(lambda: canvas.show_frame(player.frame()))
    return trace, canvas, bar, player


def test_buttons_step_and_the_caption_follows(qtbot) -> None:
    trace, canvas, bar, player = _setup(qtbot, "lab_two_rounds")
    player.set_mode(BACKWARD)
    assert bar.mode_buttons.checkedButton().property("mode") == BACKWARD
    for _ in range(9):
        qtbot.mouseClick(bar.step_button, Qt.MouseButton.LeftButton)
    assert player.position == 8 and bar.slider.value() == 8
    assert (
        bar.caption.text() == player.current.caption == "w.grad: None → 8.0  (AccumulateGrad adds)"
    )
    w = trace.tensor_named("w").id
    assert canvas.frame.labels[w][1] == "grad 8.0"
    assert w in canvas.frame.step.lit
    qtbot.mouseClick(bar.back_button, Qt.MouseButton.LeftButton)
    assert canvas.frame.labels[w][1] == "grad None"


def test_current_node_is_ringed_on_screen(qtbot) -> None:
    _, canvas, _, player = _setup(qtbot, "leaf_example")
    player.set_mode(BACKWARD)
    step = next(s for s in player.steps if s.caption.startswith("MulBackward0"))
    player.seek(step.number)
    qtbot.wait(20)
    (node,) = [k for k in step.lit if k.startswith("n")]
    image = canvas.grab().toImage()
    centre = canvas.widget_position(node)
    ring = [QColor(image.pixel(centre.x() + dx, centre.y())).name() for dx in range(10, 16)]
    assert QColor(CURRENT_COLOUR).name() in ring


def test_slider_seeks_and_play_runs_to_the_end(qtbot) -> None:
    _, _, bar, player = _setup(qtbot, "lab_loss")
    bar.slider.setValue(3)
    assert player.position == 3
    bar.speed.setCurrentText("10×")
    bar.toggle_play()
    assert bar.playing
    qtbot.waitUntil(lambda: not bar.playing, timeout=5_000)
    assert player.at_end()


def test_without_a_player_the_controls_are_disabled(qtbot) -> None:
    bar = PlayerBar()
    qtbot.addWidget(bar)
    assert not bar.play_button.isEnabled() and not bar.slider.isEnabled()
    assert "Run your code" in bar.caption.text()


def test_freed_graph_is_dashed_and_explained(qtbot) -> None:
    trace, canvas, bar, player = _setup(qtbot, "lab_loss")
    pens = {d["data"]: d["pen"].style() for d in canvas._markers.data}
    # Only the nodes that saved tensors lose them (MulBackward0, PowBackward0): Add and
    # Sub save none (tests/core/test_freeing.py asks torch node by node).
    saved = {n.id for n in trace.nodes if n.saved}
    assert {trace.node(n).name for n in saved} == {"MulBackward0", "PowBackward0"}
    assert {k for k, style in pens.items() if style == Qt.PenStyle.DashLine} == saved
    assert "backward() on line 7 freed their saved tensors" in bar.caption.text()
    kept = run_source(CASES["retain_graph"])
    canvas.show_trace(kept)
    pens = [d["pen"].style() for d in canvas._markers.data]
    # retain_graph=True first, then a plain backward: freed after the second pass only.
    assert Qt.PenStyle.DashLine in pens
    player = Player(kept, canvas.graph)
    player.set_mode(BACKWARD)
    first_pass_end = next(s.number for s in player.steps if s.kind == "backward" and s.number)
    player.seek(first_pass_end - 1)
    assert player.frame().freed == set()  # kept by retain_graph=True


def test_a_folded_construction_step_opens_and_folds_from_its_button(qtbot) -> None:
    from tests.core.test_fold_open import SCRIPT

    _trace, _canvas, bar, player = _setup_code(qtbot, SCRIPT)
    assert bar.fold_button.isHidden()
    folded = next(s for s in player.steps if s.folded)
    width = bar.caption.width()
    player.seek(folded.number)
    assert bar.fold_button.isVisible()
    assert bar.fold_button.text() == f"Show its {len(folded.folded)} ops"
    assert bar.caption.width() == width  # the caption does not reflow as it appears
    qtbot.mouseClick(bar.fold_button, Qt.MouseButton.LeftButton)
    assert player.current.opened_from == folded.folded
    assert bar.fold_button.text() == "Fold into one step"
    assert bar.position_label.text() == f"{player.position + 1} / {len(player.steps)}"
    qtbot.mouseClick(bar.fold_button, Qt.MouseButton.LeftButton)
    assert player.current.folded == folded.folded
    player.seek(folded.number + 1)
    assert bar.fold_button.isHidden()


def test_a_view_with_no_steps_says_why(qtbot) -> None:
    trace = run_source("import torch\nw = torch.tensor(3.0, requires_grad=True)\nloss = w * 2\n")
    bar = PlayerBar()
    qtbot.addWidget(bar)
    from autograd_viz.core.graph.graph_model import drawn_graph

    player = Player(trace, drawn_graph(trace))
    bar.set_player(player)
    player.set_mode(BACKWARD)
    assert bar.caption.text() == (
        "The Backward view has no steps: this run called no backward(). The graph shows its end."
    )


def test_an_error_step_rings_the_operands_of_the_call_that_raised_in_red(qtbot) -> None:
    code = (
        "import torch\n"
        "X = torch.randn(8, 3)\n"
        "W1 = torch.randn(3, 4, requires_grad=True)\n"
        "W2 = torch.randn(3, 1, requires_grad=True)\n"
        "h = torch.relu(X @ W1)\n"
        "out = h @ W2\n"
    )
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):
        trace, canvas, bar, player = _setup_code(qtbot, code)
    player.seek(len(player.steps) - 1)
    qtbot.wait(20)
    step = player.current
    assert step.kind == "error"
    h, w2 = trace.tensor_named("h").id, trace.tensor_named("W2").id
    assert step.lit == {h, w2}
    assert bar.caption.text().startswith("line 6: matmul(h, W2) raised RuntimeError: mat1")
    image = canvas.grab().toImage()
    for key in (h, w2):
        centre = canvas.widget_position(key)
        ring = [QColor(image.pixel(centre.x() + dx, centre.y())) for dx in range(8, 24)]
        red = QColor(FAILED_RING)
        assert any(
            abs(c.red() - red.red()) + abs(c.green() - red.green()) + abs(c.blue() - red.blue())
            < 60
            for c in ring
        ), (key, [c.name() for c in ring])


def test_the_run_end_stands_at_the_timeline_end_and_home_and_left_leave_it(qtbot) -> None:
    # Until the learner first moves, the canvas shows the run's end: the timeline said
    # "0 / 8" with its handle at the start, and ⏮ did nothing (the player was already at -1).
    trace, canvas, bar, player = _setup(qtbot, "lab_loss")
    count = len(player.steps)
    assert player.position == -1 and count > 2
    assert bar.slider.value() == bar.slider.maximum() == count - 1
    assert bar.position_label.text() == f"end / {count}"
    moves = []
    player.position_changed.connect(moves.append)
    bar.to_start()
    assert moves == [-1] and bar.slider.value() == -1
    assert bar.position_label.text() == f"0 / {count}"
    assert bar.caption.text() == caption_now(player)
    bar.set_player(Player(trace, canvas.graph))  # a new run: its end again
    assert bar.position_label.text() == f"end / {count}"
    bar.step_back()  # from the end, back to the view's last step
    assert bar.player.position == count - 1 and bar.position_label.text() == f"{count} / {count}"
    bar.set_player(Player(trace, canvas.graph))
    bar.step_forward()  # → replays from the first step
    assert bar.player.position == 0 and bar.slider.value() == 0
