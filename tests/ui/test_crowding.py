"""Markers shrink where the fitted zoom brings a column's rows closer than they are tall."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from autograd_viz.core.graph.node_look import STYLES
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.ui.graph._crowding import (
    GAP_PX,
    SMALLEST,
    column_pitch,
    crowd_share,
    room_share,
    row_room,
)
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


def _canvas(qtbot, height: int, width: int = 700) -> GraphCanvas:
    canvas = GraphCanvas()
    canvas.resize(width, height)
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
    # Roomy both ways: its row of 24 sums and adds, 42 layers long, also needs the width.
    roomy = _canvas(qtbot, 1100, 1600)
    sizes, ys = _leaves(roomy)
    assert min(np.diff(ys)) >= STYLES["leaf"].size + GAP_PX
    assert sizes == [STYLES["leaf"].size] * 12


def test_row_room_is_the_tightest_rows_distance_over_what_its_markers_need() -> None:
    xs, ys = np.array([0.0, 0.6, 1.1, 5.0]), np.array([0.0, 0.0, 0.0, 1.0])
    sizes = np.array([26.0, 18.0, 18.0, 18.0])
    # 0.6 apart for 22 + 3 px, 0.5 apart for 18 + 3 px: the second is tighter.
    assert row_room(xs, ys, sizes) == pytest.approx(0.5 / 21)
    assert row_room(np.array([0.0, 1.0]), np.array([0.0, 1.0]), sizes[:2]) is None
    assert room_share(0.5 / 21, 42.0) == 1.0 and room_share(0.5 / 21, 21.0) == 0.5
    assert room_share(0.5 / 21, 1.0) == SMALLEST and room_share(None, 1.0) == 1.0


def test_a_long_row_of_ops_fitted_into_a_narrow_canvas_keeps_its_squares_apart(qtbot) -> None:
    # 16 different ops one after another: one row, fitted into 560 px.
    chain = "".join(
        f".{op}()"
        for op in (
            "sin", "cos", "exp", "tanh", "sigmoid", "neg", "abs", "relu",
            "square", "atan", "asinh", "sinh", "cosh", "erf", "expm1", "reciprocal",
        )
    )  # fmt: skip
    canvas = GraphCanvas()
    canvas.resize(560, 400)
    qtbot.addWidget(canvas)
    canvas.show()
    canvas.show_trace(
        run_source(f"import torch\nx = torch.ones(2, requires_grad=True)\ny = x{chain}\n")
    )
    qtbot.wait(20)
    data = canvas._markers.data
    index = {d: i for i, d in enumerate(data["data"])}
    ops = [k for k, n in canvas.graph.nodes.items() if n.kind == "operation"]
    assert len(ops) == 16
    row = sorted((canvas.widget_position(k).x(), float(data["size"][index[k]])) for k in ops)
    assert max(size for _, size in row) < STYLES["operation"].size  # shrunk ...
    for (x0, s0), (x1, s1) in itertools.pairwise(row):
        assert x1 - x0 >= (s0 + s1) / 2 + GAP_PX - 1  # ... each square a square of its own
