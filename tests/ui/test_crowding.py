"""Markers shrink where the fitted zoom brings a column's rows closer than they are tall."""

from __future__ import annotations

import numpy as np

from autograd_viz.core.graph.node_look import STYLES
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.ui.graph._crowding import GAP_PX, SMALLEST, column_pitch, crowd_share
from autograd_viz.ui.graph.graph_canvas import GraphCanvas

# Twelve weights feed one sum: they stand in one column, a row apart.
MANY = (
    "import torch\n"
    + "".join(f"w{i} = torch.ones(2, requires_grad=True)\n" for i in range(12))
    + "loss = sum(w.sum() for w in ["
    + ", ".join(f"w{i}" for i in range(12))
    + "])\n"
)


def test_pitch_and_share() -> None:
    xs, ys = np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, 1.5, 0.5, 0.2])
    assert column_pitch(xs, ys) == 0.5
    assert column_pitch(np.array([0.0, 1.0]), np.array([0.0, 0.0])) is None
    assert crowd_share(1.0, 40.0, 26) == 1.0  # 40 px a row: a 26 px circle fits
    assert crowd_share(1.0, 20.0, 26) == 0.65  # 20 / 29, rounded down to a twentieth
    assert crowd_share(1.0, 2.0, 26) == SMALLEST
    assert crowd_share(None, 2.0, 26) == 1.0


def _canvas(qtbot, height: int) -> GraphCanvas:
    canvas = GraphCanvas()
    canvas.resize(700, height)
    qtbot.addWidget(canvas)
    canvas.show()
    canvas.show_trace(run_source(MANY))
    qtbot.wait(20)
    return canvas


def _leaves(canvas: GraphCanvas) -> tuple[list[float], list[int]]:
    """The weights' marker sizes and their centres' heights on screen."""
    keys = [k for k, n in canvas.graph.nodes.items() if n.title.startswith("w")]
    data = canvas._markers.data
    index = {d: i for i, d in enumerate(data["data"])}
    sizes = [float(data["size"][index[k]]) for k in keys]
    return sizes, sorted(canvas.widget_position(k).y() for k in keys)


def test_a_tight_column_draws_smaller_markers_apart_and_a_roomy_one_full_size(qtbot) -> None:
    tight = _canvas(qtbot, 330)
    sizes, ys = _leaves(tight)
    assert len(ys) == 12
    pitch = min(np.diff(ys))
    assert max(sizes) < STYLES["leaf"].size  # shrunk ...
    assert max(sizes) + GAP_PX <= pitch + 1  # ... so that each weight is a circle of its own
    roomy = _canvas(qtbot, 1100)
    sizes, ys = _leaves(roomy)
    assert min(np.diff(ys)) >= STYLES["leaf"].size + GAP_PX
    assert sizes == [STYLES["leaf"].size] * 12
