"""The descent pane: move the learning rate, the path and the caption follow real torch."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QStyle, QStyleOptionSlider

from autograd_viz.ui.descent.descent_pane import DescentPane


def _slider_option(slider) -> QStyleOptionSlider:
    option = QStyleOptionSlider()
    slider.initStyleOption(option)
    return option


@pytest.fixture
def pane(descent_pane) -> DescentPane:
    descent_pane.resize(1100, 600)  # this file's tests were written at 1100×600
    return descent_pane


def test_lesson_rate_converges_in_38_steps(pane) -> None:
    pane.set_learning_rate(0.1)
    assert pane.learning_rate == 0.1 and pane.rate_box.value() == pytest.approx(0.1)
    assert pane.caption_texts == {
        "sgd": "lr = 0.10 — steady convergence toward (w=3, b=−2) in 38 steps"
    }
    assert "steady convergence" in pane.caption.text()
    xs, ys = pane.path_data("sgd")
    assert (xs[0], ys[0]) == (0.5, 1.0) and (xs[1], ys[1]) == pytest.approx((1.0, 0.4))
    assert "∂L/∂w" in pane.readout.text().replace("\u2060", "")  # the joiner keeps it whole


def test_moving_the_slider_changes_path_and_caption(pane, qtbot) -> None:
    pane.set_learning_rate(0.1)
    before = np.array(pane.path_data())
    pane.set_learning_rate(1.0)
    assert pane.caption_kind == "bounces"
    after = np.array(pane.path_data())
    assert not np.array_equal(before, after)
    pane.rate_slider.setValue(pane.rate_slider.maximum())  # lr = 2
    assert pane.caption_kind == "diverges" and pane.rate_box.value() == pytest.approx(2.0)


def test_other_function_and_optimizer_recompute(pane, qtbot) -> None:
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.optimizer_boxes["sgd"].setChecked(False)  # the last one: stays ticked
        pane.optimizer_boxes["adam"].setChecked(True)
    assert pane.sweep.key[2] == ("sgd", "adam")
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.optimizer_boxes["sgd"].setChecked(False)
    assert pane.optimizers == ["adam"] and list(pane.sweep.runs) == ["adam"]
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.set_function("rosenbrock")
    assert pane.sweep.key[1] == "rosenbrock" and pane.sweep.minimum == (1.0, 1.0)
    assert pane.surface_plot.contour_items  # contour lines drawn for the new surface
    # Rosenbrock's ticks: from its Hessian at (1, 1), λmax ≈ 1001.6; 1/λmax is off the slider
    assert [m.label for m in pane.rate_ticks.marks] == ["bounces"]
    assert pane.rate_ticks.marks[0].rate == pytest.approx(2 / 1001.6006, rel=1e-6)
    assert "not quadratic" in pane.rate_ticks.toolTip() and "one step at lr" in (
        pane.rate_ticks.toolTip()
    )


def test_threshold_ticks_sit_under_the_slider(pane) -> None:
    ticks = pane.rate_ticks
    assert [(m.rate, m.label) for m in ticks.marks] == [(0.5, "one step"), (1.0, "bounces")]
    assert ticks.diverges_from == 1.0
    assert "eigenvalues 2, 2" in ticks.toolTip()
    # The "one step" tick sits where the slider's handle is at lr = 0.5.
    pane.set_learning_rate(0.5)
    handle = pane.rate_slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider,
        _slider_option(pane.rate_slider),
        QStyle.SubControl.SC_SliderHandle,
        pane.rate_slider,
    )
    centre = ticks.mapFrom(pane, pane.rate_slider.mapTo(pane, handle.center())).x()
    assert ticks.x_of(0.5) == pytest.approx(centre, abs=1.5)
    assert ticks.x_of(0.5) < ticks.x_of(1.0) < ticks.x_of(2.0)
    labels = ticks.label_rects()
    assert [text for text, _ in labels] == ["one step", "bounces", "diverges"]
    for i, (_, a) in enumerate(labels):
        assert a.left() >= 0 and a.right() <= ticks.width() and a.bottom() <= ticks.height()
        assert not any(a.intersects(b) for _, b in labels[i + 1 :])
    image = ticks.grab().toImage()
    x = round(ticks.x_of(0.5))
    assert image.pixelColor(x, 2).name() == "#15803d"  # the green "one step" tick is drawn


def test_compare_optimizers_each_with_its_path_and_caption(pane, qtbot) -> None:
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.set_optimizers(["sgd", "momentum", "adam"])
    pane.set_learning_rate(0.1)
    from autograd_viz.core.descent.paths import FUNCTIONS, descend, describe_path

    bowl = FUNCTIONS["bowl"]
    for name in ("sgd", "momentum", "adam"):
        expected = descend(bowl.fn, bowl.start, 0.1, 50, name).numpy()
        xs, ys = pane.path_data(name)
        assert np.allclose(xs, expected[:, 0]) and np.allclose(ys, expected[:, 1])
        assert (
            pane.caption_texts[name]
            == describe_path(descend(bowl.fn, bowl.start, 0.1, 50, name), 0.1, bowl.minimum).text
        )
    assert pane.caption_kinds["sgd"] == "converges"
    assert pane.caption.text().count("<br>") == 2 and "Momentum" in pane.caption.text()
    legend = [label.text for _, label in pane.paths.legend.items]
    assert legend == ["SGD", "Momentum", "Adam"]
    # Side by side at the current step: a row per optimizer, torch's numbers in it.
    table = pane.readout.text()
    assert table.count("<tr>") == 4 and table.index("SGD") < table.index("Adam")
    at = pane.step_slider.value()
    for name, title in (("sgd", "SGD"), ("momentum", "Momentum"), ("adam", "Adam")):
        w, b, loss = descend(bowl.fn, bowl.start, 0.1, 50, name).numpy()[at]
        row = table[table.index(title) :].split("</tr>")[0]
        assert all(f">{v:.4g}</td>" in row for v in (w, b, loss)), (name, row)
    pane.set_learning_rate(1.0)
    assert pane.caption_kinds["sgd"] == "bounces"
    assert pane.caption_texts["adam"] != pane.caption_texts["sgd"]


def test_kernel_sources_without_a_kernel_say_so(pane, qtbot) -> None:
    with qtbot.waitSignal(pane.sweep_failed, timeout=10_000) as failed:
        pane.set_function("user")
    assert "No kernel" in failed.args[0] and pane.message.isVisible()
    assert pane.sweep is None and pane.path_data("sgd")[0].size == 0
    assert "loss(w, b)" in pane.help.text() and pane.help.isVisible()
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.set_function("bowl")
    assert not pane.message.isVisible() and pane.caption_kind == "converges"


def test_step_buttons_walk_the_path(pane, qtbot) -> None:
    pane.set_learning_rate(0.1)
    buttons = pane.step_controls.buttons
    qtbot.mouseClick(buttons["first"], Qt.MouseButton.LeftButton)
    assert pane.step_slider.value() == 0
    assert "step 0: w = 0.5, b = 1" in pane.readout.text()
    assert not buttons["back"].isEnabled() and buttons["forward"].isEnabled()
    qtbot.mouseClick(buttons["forward"], Qt.MouseButton.LeftButton)
    assert pane.step_slider.value() == 1
    assert "step 1: w = 1, b = 0.4" in pane.readout.text()  # 0.5 + 0.1·2·2.5, 1 − 0.1·2·3
    qtbot.mouseClick(buttons["back"], Qt.MouseButton.LeftButton)
    assert pane.step_slider.value() == 0
    qtbot.mouseClick(buttons["last"], Qt.MouseButton.LeftButton)
    assert pane.step_slider.value() == pane.step_slider.maximum()
    assert not buttons["last"].isEnabled()


def test_step_buttons_draw_the_styles_icons_and_say_what_they_do(qtbot) -> None:
    from PySide6.QtWidgets import QSlider

    from autograd_viz.ui._step_buttons import StepControls

    controls = StepControls(QSlider(Qt.Orientation.Horizontal))
    qtbot.addWidget(controls)
    for name, button in controls.buttons.items():
        icon = button.icon()
        assert not icon.isNull() and button.text() == "", name  # no glyph a font may lack
        image = icon.pixmap(16, 16).toImage()
        assert any(  # it paints something, not an empty square
            image.pixelColor(x, y).alpha() > 0 for x in range(16) for y in range(16)
        ), name
        assert button.toolTip() and button.accessibleName() == button.toolTip(), name


class _Click:
    """What the scene's sigMouseClicked hands on, as far as the pane reads it."""

    def __init__(self, pos) -> None:
        self._pos = pos

    def button(self):
        return Qt.MouseButton.LeftButton

    def scenePos(self):
        return self._pos


def test_a_click_off_the_surface_sets_no_start(pane, qtbot) -> None:
    # The white under the equal-aspect surface: a start there was drawn nowhere, and the
    # paths came in from the surface's bottom edge.
    box = pane.surface_plot.getViewBox()
    (w0, w1), (b0, b1) = sorted(pane._drawn.ws[[0, -1]]), sorted(pane._drawn.bs[[0, -1]])
    before = pane.start
    pane._surface_clicked(_Click(box.mapViewToScene(QPointF((w0 + w1) / 2, b0 - (b1 - b0)))))
    assert pane.start == before and "coloured surface" in pane.caption.text()
    inside = ((w0 + w1) / 2, (b0 + b1) / 2)
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane._surface_clicked(_Click(box.mapViewToScene(QPointF(*inside))))
    assert pane.start == pytest.approx(inside)


def test_four_optimizers_words_fit_above_a_readable_chart(pane, qtbot) -> None:
    """At the tab's size in the default window, four optimizers' captions and their table
    show whole (they were cut mid-line in a scroll), and the chart keeps its height."""
    pane.resize(880, 590)
    pane.show()
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.set_optimizers(["sgd", "momentum", "rmsprop", "adam"])
    qtbot.wait(50)  # the words' new height is laid out
    assert pane.words.verticalScrollBar().maximum() == 0
    assert pane.loss_plot.height() >= 170
    bottom = pane.loss_plot.mapTo(pane, pane.loss_plot.rect().bottomLeft()).y()
    assert bottom <= pane.height()
    # The chart's title whole: its axis has room for it.
    assert not pane.loss_plot.getAxis("left").labelText.endswith("…")
