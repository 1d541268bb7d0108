"""The descent pane on the user's own code, computed in a real kernel."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograd_viz.core.descent.paths import descend, describe_path
from autograd_viz.session import KernelSession, KernelState
from autograd_viz.ui.descent.descent_pane import DescentPane

pytestmark = pytest.mark.kernel

LOSS = "import torch\ndef loss(w, b):\n    return (w - 1) ** 2 + 4 * (b + 0.5) ** 2\n"
MODEL = """import torch
from torch import nn

torch.manual_seed(0)
x = torch.linspace(-2, 2, 32).unsqueeze(1)
y = torch.sin(2 * x)
model = nn.Sequential(nn.Linear(1, 6), nn.Tanh(), nn.Linear(6, 1))


def loss_fn():
    return nn.functional.mse_loss(model(x), y)
"""


@pytest.fixture
def pane(qtbot):
    session = KernelSession()
    with qtbot.waitSignal(session.kernel_info, timeout=60_000):
        session.start()
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=10_000)
    widget = DescentPane(session)
    widget.resize(1100, 650)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: widget.sweep is not None, timeout=60_000)
    yield widget
    session.shutdown()


def _run(qtbot, pane: DescentPane, code: str, signal) -> list:
    """Run code in the kernel like Ctrl+Enter; the pane recomputes on its own."""
    with qtbot.waitSignal(signal, timeout=60_000) as got:
        pane.session.run(code)
    return got.args


def test_users_loss_is_swept_in_the_kernel(qtbot, pane) -> None:
    with qtbot.waitSignal(pane.sweep_failed, timeout=30_000) as failed:
        pane.set_function("user")
    assert failed.args[0] == "Run your code first: no function loss(w, b) in the kernel"
    assert pane.message.text() == failed.args[0] and pane.sweep is None

    _run(qtbot, pane, LOSS, pane.sweep_ready)
    assert pane.sweep.key[0] == "user" and pane.sweep.device in ("cpu", "cuda:0")
    pane.set_learning_rate(0.1)
    namespace: dict = {}
    exec(LOSS, namespace)
    expected = descend(namespace["loss"], (0.5, 1.0), 0.1, 50)
    xs, ys = pane.path_data("sgd")
    assert np.allclose(xs, expected[:, 0].numpy()) and np.allclose(ys, expected[:, 1].numpy())
    assert pane.caption_texts["sgd"] == describe_path(expected, 0.1, None).text
    # Hessian diag(2, 8) at the start: one step at 1/8, bounces at 2/8.
    assert [(m.label, m.rate) for m in pane.rate_ticks.marks] == [
        ("one step", pytest.approx(0.125)),
        ("bounces", pytest.approx(0.25)),
    ]
    assert "start" in pane.rate_ticks.toolTip()
    w = pane.sweep.ws[5]
    b = pane.sweep.bs[9]
    assert pane.sweep.grid[9, 5] == pytest.approx((w - 1) ** 2 + 4 * (b + 0.5) ** 2)

    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.set_optimizers(["sgd", "momentum", "adam"])
    assert list(pane.sweep.runs) == ["sgd", "momentum", "adam"]  # as ticked, as built-ins
    legend = [label.text for _, label in pane.paths.legend.items]
    assert legend == ["SGD", "Momentum", "Adam"]

    (message,) = _run(qtbot, pane, "def loss(w, b):\n    return w / 0 + 1 / 0\n", pane.sweep_failed)
    assert message.startswith("Your code raised ZeroDivisionError")
    assert "ZeroDivisionError" in pane.message.toolTip()  # the traceback, for the curious


def test_model_landscape_from_the_kernel(qtbot, pane) -> None:
    _run(qtbot, pane, MODEL, pane.session.run_finished)
    pane.steps.setValue(10)
    pane.set_learning_rate(0.3)
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.set_function("model")
    sweep = pane.sweep
    assert sweep.kind == "model" and sweep.rates == [0.3]
    assert not pane.optimizer_boxes["adam"].isEnabled() and pane.span.isVisible()
    namespace: dict = {}
    exec(MODEL, namespace)
    start_loss = namespace["loss_fn"]().item()
    path = pane.current_path()
    assert path.shape == (11, 3) and tuple(path[0, :2]) == (0.0, 0.0)
    assert path[0, 2] == pytest.approx(start_loss, rel=1e-6)
    centre = len(sweep.ws) // 2
    assert sweep.grid[centre, centre] == pytest.approx(start_loss, rel=1e-6)
    assert pane.caption_kind == "converges" and "the loss fell from" in pane.caption.text()
    assert "α =" in pane.readout.text() and "(19 parameters" in pane.readout.text()
    assert pane.surface_plot.getPlotItem().getAxis("bottom").labelText.startswith("α")
    # The path depends on the rate: moving the slider asks the kernel again.
    with qtbot.waitSignal(pane.sweep_ready, timeout=60_000):
        pane.set_learning_rate(0.05)
    assert pane.sweep.rates == [0.05]
    assert not np.allclose(pane.current_path(), path)
    assert torch.isfinite(torch.tensor(pane.current_path())).all()


POINT_BY_POINT = (
    "import torch\n"
    "def loss(w, b):\n"
    "    if w.item() > 50:\n"  # a Python if on one value: torch cannot take a batch
    "        return w * 0\n"
    "    return (w - 1) ** 2 + 4 * (b + 0.5) ** 2\n"
)


def test_a_loss_run_point_by_point_arrives_in_parts_the_pane_counts(qtbot, pane) -> None:
    """The kernel answers the slider's rate and a spread of the others first, then the rest
    in parts; the caption counts them in, and the finished sweep is torch's, rate by rate."""
    pane.set_learning_rate(0.1)
    seen: list[int] = []
    pane.sweeper.ready.connect(
        lambda sweep: seen.append(len(sweep.rates) if sweep.complete else int(sweep.computed.sum()))
    )
    with qtbot.waitSignal(pane.sweep_failed, timeout=30_000):
        pane.set_function("user")
    with qtbot.waitSignal(pane.sweep_ready, timeout=120_000):
        pane.session.run(POINT_BY_POINT)
    count = len(pane.sweep.rates)
    assert len(seen) >= 4 and seen == sorted(seen) and seen[-1] == count
    assert seen[0] < count / 4  # the first picture did not wait for every rate
    assert pane.sweep.extra["evaluation"] == "point by point"

    namespace: dict = {}
    exec(POINT_BY_POINT, namespace)

    def point_by_point(w, b):
        return torch.stack([namespace["loss"](wi, bi) for wi, bi in zip(w, b, strict=True)])

    for index in (0, 57, count // 2, count - 1):
        lr = pane.sweep.rates[index]
        expected = descend(point_by_point, (0.5, 1.0), lr, 50).numpy()
        assert np.allclose(pane.sweep.runs["sgd"].paths[index], expected, equal_nan=True)
        assert pane.sweep.runs["sgd"].captions[index] == describe_path(
            torch.from_numpy(expected), lr, None
        )
