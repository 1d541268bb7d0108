"""Fit graph and the canvas agree on which label lines are drawn: a fit that kept room
only for names, with rows far enough apart that the canvas drew values and .grad too,
put the bottom row's value lines under the legend (a 1200×700 window, a training loop)."""

from __future__ import annotations

import pytest

from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.ui.graph._edges_item import LABEL_MIN_DY_PX, NAMES_MIN_DY_PX
from autograd_viz.ui.graph._fit import fitted_range

TRAINING = """import torch
from torch import nn
torch.manual_seed(0)
X = torch.randn(64, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
"""
# What the window's fonts reach above and below a node (measured in a 1200×700 window):
# values and .grad, names only, marks only.
LEVELS = [(LABEL_MIN_DY_PX, (31.8, 57.5)), (NAMES_MIN_DY_PX, (31.8, 32.8)), (0.0, (31.8, 14.0))]


@pytest.mark.parametrize("height", range(300, 461, 8))
def test_the_rows_fit_leaves_draw_only_the_lines_it_kept_room_for(height: int) -> None:
    graph = drawn_graph(run_source(TRAINING))
    legend = 72.0
    _, (low, high) = fitted_range(
        graph, (746, height), lambda keys: {k: 40.0 for k in keys}, legend, LEVELS
    )
    unit_px = height / (high - low)
    drawn = next(reach for min_dy, reach in LEVELS if unit_px >= min_dy)  # the canvas's choice
    lowest = min(n.y for n in graph.nodes.values())
    below_px = (lowest - low) * unit_px
    assert below_px >= drawn[1] + legend - 0.5, (unit_px, below_px)
    top_px = (high - max(n.y for n in graph.nodes.values())) * unit_px
    assert top_px >= drawn[0] - 0.5
