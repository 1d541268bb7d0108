"""A big graph's markers are kept as an image between playback frames: a step repaints only
the markers it restyled, and the picture is the one a full paint makes, pixel for pixel."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, Player
from autograd_viz.ui.graph import _marker_item
from autograd_viz.ui.graph.graph_canvas import GraphCanvas

LOOP = """
import torch
torch.manual_seed(0)
x = torch.randn(4, requires_grad=True)
ws = [torch.randn(4, requires_grad=True) for _ in range(4)]
h = x
for i in range(200):
    h = torch.tanh(h * ws[i % 4] + h)
h.sum().backward()
"""


def _pixels(canvas: GraphCanvas) -> np.ndarray:
    image = canvas.viewport().grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1).copy()


def test_a_step_repaints_a_few_markers_and_the_picture_is_a_full_paints(qtbot) -> None:
    canvas = GraphCanvas()
    canvas.resize(900, 600)
    qtbot.addWidget(canvas)
    canvas.show()
    qtbot.waitExposed(canvas)  # else a repaint paints nothing
    trace = run_source(LOOP, max_nodes=50_000)
    with qtbot.waitSignal(canvas.trace_drawn, timeout=60_000):
        canvas.show_trace(trace)
    canvas.view.open_all()
    qtbot.waitUntil(lambda: not canvas.laying_out, timeout=60_000)
    markers = canvas._markers
    canvas.viewport().update()
    qtbot.waitUntil(lambda: markers._image is not None)  # the view has settled and painted
    assert canvas.marker_count() >= _marker_item.LAYER_MIN_MARKERS  # the layer is in use
    player = Player(trace, canvas.graph)
    player.set_mode(BACKWARD)
    counts = []
    # Forward and back: markers lit, then plain again, or faded again.
    for n in range(40):
        if n % 5 == 4:
            player.step_back()
        else:
            player.step_forward()
        canvas.show_frame(player.frame())
        canvas.viewport().repaint()
        counts.append(markers.repainted)
    kept = _pixels(canvas)
    markers._image = None  # what a first paint of this moment draws
    fresh = _pixels(canvas)
    assert markers.repainted >= canvas.marker_count() // 2  # that was a full paint
    assert np.array_equal(kept, fresh)
    # Most steps repainted a small share of the markers (those restyled and their
    # neighbours in a stack), not all of them.
    assert np.median(counts) < canvas.marker_count() / 4
