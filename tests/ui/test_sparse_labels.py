"""Layers closer than operation names need (a 24-layer VAE step fitted in the default
window: 34 px a layer) still name their tensors where the names collide with nothing;
before, nothing at all was labelled."""

from __future__ import annotations

from autograd_viz.core.graph.graph_model import ACCUMULATE, OPERATION
from autograd_viz.ui.graph._edges_item import COMPACT_DX_PX, SPARSE_DX_PX
from tests.ui.test_canvas_view import _canvas, _label_rects, _show, _Texts

VAE = """import torch
from torch import nn
torch.manual_seed(0)
enc = nn.Linear(10, 4)
dec = nn.Linear(2, 10)
x = torch.rand(8, 10)
stats = enc(x)
mu, logvar = stats.chunk(2, dim=1)
std = torch.exp(0.5 * logvar)
z = mu + std * torch.randn_like(std)
recon = torch.sigmoid(dec(z))
bce = nn.functional.binary_cross_entropy(recon, x, reduction="sum")
kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
loss = bce + kl
loss.backward()
"""


def test_a_dense_fit_names_the_tensors_and_no_operation(qtbot) -> None:
    canvas = _canvas(qtbot, (870, 450))
    _show(qtbot, canvas, VAE)
    canvas.grab()
    overlay = canvas._overlay
    across, _ = overlay.last_spacing_px
    assert SPARSE_DX_PX <= across < COMPACT_DX_PX, across  # the case this is about
    assert overlay.labels_fit() and overlay.sparse() and overlay.names_only()
    image = canvas.grab().toImage()  # held: the painter draws on it
    painter = _Texts(image)
    screen = {k: canvas.widget_position(k) for k in canvas.graph.nodes}
    overlay._paint_labels(painter, {k: p.toPointF() for k, p in screen.items()})
    painter.end()
    nodes = canvas.graph.nodes.values()
    ops = {n.title for n in nodes if n.kind in (OPERATION, ACCUMULATE)}
    named = set(painter.texts)
    assert {"mu", "logvar", "std", "z", "recon", "bce", "kl", "loss"} <= named, named
    assert not named & ops and not any("Backward" in t for t in named)
    rects = _label_rects(canvas)
    for i, a in enumerate(rects):
        assert not any(a.intersects(b) for b in rects[i + 1 :])
