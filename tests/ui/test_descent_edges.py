"""The descent view at its edges (issue 17): a fast drag, equal axes, the slider's ends, the
first open, a user's wide surface, and a small or dark window. Torch is the oracle: every
drawn path is compared with the sweep's rows, which sweep_optimizer computed."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QTextDocument
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QStyle, QStyleOptionSlider

from autograd_viz.core.descent.paths import FUNCTIONS, descend
from autograd_viz.ui._plot_theme import DARK_PLOT
from autograd_viz.ui.descent._descent_readout import readout_lines
from autograd_viz.ui.descent._descent_sweep import Run, Sweep, sweep_stages, view_of
from autograd_viz.ui.descent.descent_pane import DescentPane


def _handle_centre(slider) -> QPoint:
    option = QStyleOptionSlider()
    slider.initStyleOption(option)
    return (
        slider.style()
        .subControlRect(
            QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, slider
        )
        .center()
    )


def _drawn_matches_row(descent_pane: DescentPane) -> None:
    xs, ys = descent_pane.path_data("sgd")
    row = descent_pane.sweep.runs["sgd"].paths[descent_pane.rate_slider.value()]
    finite = np.isfinite(row[:, :2]).all(axis=1)
    # What the line holds is this rate's row, point for point (its first points at least:
    # a path that runs away may be cut where it leaves the view).
    assert len(xs) >= 2
    np.testing.assert_array_equal(np.column_stack([xs, ys]), row[finite, :2][: len(xs)])
    _symbols_on_steps_inside(descent_pane)


def _symbols_on_steps_inside(descent_pane: DescentPane) -> None:
    row = descent_pane.sweep.runs["sgd"].paths[descent_pane.rate_slider.value()]
    # A symbol on every step inside the surface, none elsewhere (not on a cut's border).
    w0, w1, b0, b1 = descent_pane.paths.box
    with np.errstate(invalid="ignore"):
        inside = (row[:, 0] >= w0) & (row[:, 0] <= w1) & (row[:, 1] >= b0) & (row[:, 1] <= b1)
    sx, sy = descent_pane.paths.symbols["sgd"].getData()
    np.testing.assert_array_equal(np.column_stack([sx, sy]), row[inside, :2])


def test_fast_drag_leaves_exactly_the_final_rates_path(descent_pane, qtbot) -> None:
    slider = descent_pane.rate_slider
    descent_pane.set_learning_rate(2.0)
    assert descent_pane.caption_kind == "diverges"
    _symbols_on_steps_inside(descent_pane)
    assert len(descent_pane.paths.symbols["sgd"].getData()[0]) == 1  # step 1 is off the surface
    start = _handle_centre(slider)
    QTest.mousePress(slider, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    target_x = (
        round(descent_pane.rate_ticks.x_of(0.28))
        - descent_pane.rate_ticks.mapFrom(
            descent_pane, slider.mapTo(descent_pane, QPoint(0, 0))
        ).x()
    )
    for x in np.linspace(start.x(), target_x, 4).round().astype(int):  # four big jumps
        QTest.mouseMove(slider, QPoint(int(x), start.y()))
    QTest.mouseRelease(
        slider,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
        QPoint(target_x, start.y()),
    )
    assert descent_pane.learning_rate == pytest.approx(0.28, rel=0.05)
    _drawn_matches_row(descent_pane)
    expected = descend(
        FUNCTIONS["bowl"].fn, FUNCTIONS["bowl"].start, descent_pane.learning_rate, 50
    )
    np.testing.assert_allclose(descent_pane.path_data("sgd")[0], expected[:, 0].numpy())
    QTest.keyClick(slider, Qt.Key.Key_Right)  # a nudge
    _drawn_matches_row(descent_pane)
    assert descent_pane.caption_kind != "diverges"


def test_surface_axes_are_equal_scaled_at_any_size(descent_pane, qtbot) -> None:
    box = descent_pane.surface_plot.getViewBox()
    for size in ((1100, 650), (860, 900), (1400, 500)):
        descent_pane.resize(*size)
        qtbot.waitUntil(lambda s=size: descent_pane.size().width() == s[0])
        (x0, x1), (y0, y1) = box.viewRange()
        rect = box.sceneBoundingRect()
        # One unit of w spans as many pixels as one unit of b.
        assert (x1 - x0) / rect.width() == pytest.approx((y1 - y0) / rect.height(), rel=0.02)
        assert x0 <= -2.0 and x1 >= 8.0 and y0 <= -6.0 and y1 >= 4.0  # the bowl still shows


def test_rate_box_writes_the_captions_number(descent_pane) -> None:
    for rate in (
        descent_pane.rates()[0],
        descent_pane.rates()[1],
        0.1,
        0.5,
        descent_pane.rates()[-1],
    ):
        descent_pane.set_learning_rate(rate)
        text = descent_pane.rate_box.text()
        assert descent_pane.caption_texts["sgd"].startswith(f"lr = {text} ")
    descent_pane.rate_slider.setValue(0)
    assert descent_pane.rate_box.text() == "0.001"  # the slider's first rate is 1e-3
    descent_pane.rate_box.lineEdit().setText("0.28")
    descent_pane.rate_box.editingFinished.emit()
    assert descent_pane.learning_rate == pytest.approx(0.28, rel=0.03)


@pytest.mark.parametrize("width", [1400, 1100, 860])
def test_tick_labels_never_overlap(descent_pane, qtbot, width) -> None:
    descent_pane.resize(width, 650)
    qtbot.waitUntil(lambda: descent_pane.width() == width)
    ticks = descent_pane.rate_ticks
    shown = ticks.shown_labels()
    assert [label for label, _, _ in shown] == ["one step", "bounces", "diverges"]
    rows = {rect.top() for _, _, rect in shown}
    for i, (label, text, a) in enumerate(shown):
        assert a.left() >= 0 and a.right() <= ticks.width() + 0.5
        assert a.bottom() <= ticks.height()
        assert not any(a.intersects(b) for _, _, b in shown[i + 1 :])
        # Whole or elided to its start, never another word.
        assert text == label or (text.endswith("…") and label.startswith(text[:-1]))
    # Never three deep; elided labels share one row.
    assert len(rows) <= 2
    if any(text != label for label, text, _ in shown):
        assert len(rows) == 1


def test_first_answer_is_the_surface_then_the_sliders_rate(qtbot) -> None:
    bowl = FUNCTIONS["bowl"]
    stages = sweep_stages("bowl", ["sgd"], bowl.start, 50, first_rate=0.1)
    surface_only = next(stages)
    assert surface_only.computed is not None and not surface_only.computed.any()
    np.testing.assert_allclose(surface_only.grid[0, 0], bowl.fn(*(np.float64(v) for v in (-2, -6))))
    first_path = next(stages)
    index = first_path.rates.index(0.1)
    assert first_path.computed.sum() == 1 and first_path.has_rate(index)
    expected = descend(bowl.fn, bowl.start, 0.1, 50).numpy()
    np.testing.assert_allclose(first_path.runs["sgd"].paths[index], expected)
    *_, last = stages
    assert last.complete and None not in last.runs["sgd"].captions


def test_pane_draws_before_every_rate_is_in(qtbot) -> None:
    descent_pane = DescentPane()
    qtbot.addWidget(descent_pane)
    # No placeholder axes: the bowl's own window and plain numbers before any answer.
    (x0, x1), (y0, y1) = descent_pane.surface_plot.getViewBox().viewRange()
    assert x0 <= -2.0 and x1 >= 8.0 and y0 <= -6.0 and y1 >= 4.0
    assert descent_pane.surface_plot.getAxis("bottom").labelText == "w"
    assert not descent_pane.surface_plot.getAxis("bottom").autoSIPrefix
    seen = []
    descent_pane.sweeper.ready.connect(
        lambda sweep: seen.append((sweep.complete, descent_pane.path_data()[0].size))
    )
    descent_pane.show()
    qtbot.waitUntil(lambda: descent_pane.sweep is not None, timeout=60_000)
    partial = [size for complete, size in seen if not complete]
    assert partial and partial[-1] == 51  # the slider's path drawn while the rest computed
    _drawn_matches_row(descent_pane)


def _run(rows: np.ndarray, kinds: list[str]) -> Run:
    from autograd_viz.core.descent.paths import Caption

    return Run("sgd", rows, None, [Caption(k, k, None) for k in kinds])


def test_users_wide_surface_is_framed_on_the_paths() -> None:
    ws = bs = np.linspace(-60, 60, 121)
    grid = (ws[None, :] - 1) ** 2 + (bs[:, None] - 1) ** 2
    steps = np.linspace(0, 1, 11)
    converging = np.column_stack([0.5 + 0.5 * steps, 0.5 * steps + 0.5, np.zeros(11)])
    diverging = np.column_stack([0.5 + 50 * steps, 0.5 - 50 * steps, np.zeros(11)])
    sweep = Sweep(
        ("user",),
        "function",
        [0.1, 2.0],
        {"sgd": _run(np.stack([converging, diverging]), ["converges", "diverges"])},
        ws,
        bs,
        grid,
        [],
        None,
        None,
    )
    (w0, w1), (b0, b1) = view_of(sweep, (0.5, 0.5))
    assert w0 < 0.5 and w1 > 1.0 and b0 < 0.5 and b1 > 1.0  # start, minimum and path inside
    assert w1 - w0 < 10 and b1 - b0 < 10  # not ±60: the path is not a dot


def test_readout_keeps_each_symbol_whole(descent_pane) -> None:
    lines = readout_lines(descent_pane.sweep, descent_pane.rate_slider.value(), 3, {"sgd": "SGD"})
    for width in (120, 160, 200, 260):
        document = QTextDocument()
        document.setDefaultFont(descent_pane.readout.font())
        document.setPlainText(lines[0])
        document.setTextWidth(width)
        document.size()  # lays the text out
        block = document.begin()
        layout = block.layout()
        for i in range(layout.lineCount()):
            line = layout.lineAt(i)
            text = block.text()[line.textStart() : line.textStart() + line.textLength()]
            assert not text.rstrip().endswith("∂L/")


def test_small_dark_window_keeps_everything_readable(qtbot) -> None:
    descent_pane = DescentPane()
    descent_pane.resize(1000, 600)  # the tab's share of a 1000×650 window
    qtbot.addWidget(descent_pane)
    descent_pane.show()
    descent_pane.set_dark(True)
    qtbot.waitUntil(lambda: descent_pane.sweep is not None, timeout=60_000)
    assert descent_pane.loss_plot.height() >= 150
    legend = descent_pane.paths.legend
    assert legend.opts["brush"].color().lightness() < 80  # no white box on the dark plot
    for label in ("one step", "bounces", "diverges"):
        assert descent_pane.rate_ticks.colour(label).lightness() > 120  # readable on #1e1e1e
    # Rosenbrock with three optimizers: the legend sits away from where the paths start.
    with qtbot.waitSignal(descent_pane.sweep_ready, timeout=60_000):
        descent_pane.set_function("rosenbrock")
    with qtbot.waitSignal(descent_pane.sweep_ready, timeout=60_000):
        descent_pane.set_optimizers(["sgd", "momentum", "adam"])
    assert legend.isVisible()
    # The theme changed while the legend shows: its names are redrawn in the theme's colour.
    for dark, colour in ((False, "#0f172a"), (True, DARK_PLOT[1])):
        descent_pane.set_dark(dark)
        for _, label in legend.items:
            html = label.item.toHtml().lower()
            assert QColor(colour).name() in html, (dark, html)
    # Three captions and readouts scroll; the loss chart keeps its height, inside the pane.
    assert descent_pane.loss_plot.height() >= 150
    assert (
        descent_pane.loss_plot.mapTo(descent_pane, descent_pane.loss_plot.rect().bottomLeft()).y()
        <= descent_pane.height()
    )
    box = descent_pane.surface_plot.getViewBox()
    start = box.mapViewToScene(pg_point(*FUNCTIONS["rosenbrock"].start))
    assert not legend.sceneBoundingRect().contains(start)


def pg_point(x: float, y: float):
    """A QPointF in view coordinates."""
    from PySide6.QtCore import QPointF

    return QPointF(x, y)


def test_a_pane_deleted_mid_sweep_stops_its_thread_quietly(qtbot, monkeypatch) -> None:
    """The pane (its Sweeper with it) is deleted while the sweep thread still computes
    rates: the thread stops at its next stage and never emits on the deleted object
    (which raised in the thread, or crashed the process when the two met)."""
    import threading

    import shiboken6

    from autograd_viz.ui.descent import _sweeper

    pulled: list[int] = []
    go = threading.Event()
    errors: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    real_stages = _sweeper.sweep_stages

    def slow_stages(*args, **kwargs):
        for number, sweep in enumerate(real_stages(*args, **kwargs)):
            pulled.append(number)
            go.wait(10)  # the pane is deleted while the first stage is in hand
            yield sweep

    monkeypatch.setattr(_sweeper, "sweep_stages", slow_stages)
    sweeper = _sweeper.Sweeper()
    mailbox = sweeper._mailbox
    sweeper.builtin("bowl", ["sgd"], FUNCTIONS["bowl"].start, 50, None, first_rate=0.1)
    qtbot.waitUntil(lambda: pulled == [0])
    shiboken6.delete(sweeper)
    assert mailbox.generation == -1  # closed with the Sweeper
    go.set()
    qtbot.waitUntil(
        lambda: not any(t.name == "descent-sweep" for t in threading.enumerate()), timeout=10_000
    )
    assert errors == []
    assert pulled == [0]  # it stopped instead of computing every rate for nobody
