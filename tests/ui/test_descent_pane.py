"""The descent pane: move the learning rate, the path and the caption follow real torch."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_viz.ui.descent_pane import DescentPane


@pytest.fixture
def pane(qtbot) -> DescentPane:
    widget = DescentPane()
    widget.resize(1100, 600)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: widget.sweep is not None, timeout=60_000)
    return widget


def test_lesson_rate_converges_in_38_steps(pane) -> None:
    pane.set_learning_rate(0.1)
    assert pane.learning_rate == 0.1 and pane.rate_box.value() == pytest.approx(0.1)
    assert pane.caption.text() == "lr = 0.10 — steady convergence toward (w=3, b=−2) in 38 steps"
    xs, ys = pane.path_item.getData()
    assert (xs[0], ys[0]) == (0.5, 1.0) and (xs[1], ys[1]) == pytest.approx((1.0, 0.4))
    assert "∂L/∂w" in pane.readout.text()


def test_moving_the_slider_changes_path_and_caption(pane, qtbot) -> None:
    pane.set_learning_rate(0.1)
    before = np.array(pane.path_item.getData())
    pane.set_learning_rate(1.0)
    assert pane.caption_kind == "bounces"
    after = np.array(pane.path_item.getData())
    assert not np.array_equal(before, after)
    pane.rate_slider.setValue(pane.rate_slider.maximum())  # lr = 2
    assert pane.caption_kind == "diverges" and pane.rate_box.value() == pytest.approx(2.0)


def test_other_function_and_optimizer_recompute(pane, qtbot) -> None:
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.optimizer.setCurrentText("adam")
    assert pane.sweep.key[1] == "adam"
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.function.setCurrentIndex(pane.function.findData("rosenbrock"))
    assert pane.sweep.key[0] == "rosenbrock" and pane.sweep.minimum == (1.0, 1.0)
    assert pane.contour_items  # contour lines drawn for the new surface
