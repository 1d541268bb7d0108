"""Layers closer than operation names need (a 24-layer VAE step fitted in the default
window: 34 px a layer) still name their tensors where the names collide with nothing;
before, nothing at all was labelled. Closer still (a decoder layer opened in full), the
named tensors keep their names where they clear every mark and lie inside the view."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QImage

from autograd_viz.core.graph.graph_model import ACCUMULATE, OPERATION
from autograd_viz.ui.graph._edges_item import COMPACT_DX_PX, SPARSE_DX_PX, THIN_DX_PX
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


def _painted_labels(canvas) -> tuple[_Texts, QImage, dict[str, QPointF]]:
    """One paint of the node labels at the canvas's view: the painter (its texts and their
    rectangles), the image it drew on, and each node's position in widget pixels."""
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32)
    painter = _Texts(image)
    screen = {k: QPointF(canvas.widget_position(k)) for k in canvas.graph.nodes}
    canvas._overlay._paint_labels(painter, screen)
    painter.end()
    return painter, image, screen


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


DECODER = """import torch
from torch import nn
torch.manual_seed(0)
layer = nn.TransformerDecoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
tgt = torch.randn(1, 5, 16)
memory = torch.randn(1, 7, 16)
out = layer(tgt, memory)
loss = out.pow(2).mean()
loss.backward()
"""


def test_a_picture_too_dense_for_names_still_names_its_inputs_and_result(qtbot) -> None:
    canvas = _canvas(qtbot, (870, 440))
    _show(qtbot, canvas, DECODER)
    canvas.grab()
    overlay = canvas._overlay
    across, _ = overlay.last_spacing_px
    assert THIN_DX_PX <= across < SPARSE_DX_PX, across  # the case this is about
    assert overlay.labels_fit() and overlay.thin()
    painter, image, screen = _painted_labels(canvas)
    named = set(painter.texts)
    # The inputs sit left of the layer's frame, one above the other: `tgt`'s row below
    # is taken by the frame's title, so its name goes left of its mark.
    assert {"tgt", "memory", "loss"} <= named, named
    nodes = canvas.graph.nodes.values()
    titles = {n.title for n in nodes}
    assert named <= titles | {canvas.graph.short.get(k, "") for k in canvas.graph.nodes}
    assert not any("Backward" in t or t == "(leaf)" for t in named), named
    view = QRectF(image.rect())
    assert all(view.contains(rect) for rect in painter.text_rects)
    for i, a in enumerate(painter.text_rects):  # no two names overlap, nor a name a mark
        assert not any(a.intersects(b) for b in painter.text_rects[i + 1 :])
        for key, centre in screen.items():
            node = canvas.graph.nodes[key]
            if node.kind in (OPERATION, ACCUMULATE):
                assert not a.intersects(QRectF(centre.x() - 6, centre.y() - 6, 12, 12)), key


WEIGHTS = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
X = torch.randn(6, 4)
for step in range(3):
    loss = model(X).pow(2).mean()
    loss.backward()
"""


def test_a_column_of_weights_is_named_in_full_left_of_its_marks(qtbot) -> None:
    # The weights sit in one column, one row apart: under each mark the next one's was in
    # the way, and the names were cut short ("mod…") or written across the next mark.
    canvas = _canvas(qtbot, (870, 450))
    _show(qtbot, canvas, WEIGHTS)
    canvas.grab()
    painter, image, _ = _painted_labels(canvas)
    weights = {n.title for n in canvas.graph.nodes.values() if n.title.startswith("model.")}
    assert len(weights) == 6 and weights <= set(painter.texts), painter.texts
    view = QRectF(image.rect())
    for text, rect in zip(painter.texts, painter.text_rects, strict=True):
        assert view.contains(rect), text
    for i, a in enumerate(painter.text_rects):
        assert not any(a.intersects(b) for b in painter.text_rects[i + 1 :])


MIXTURE = """import torch
import torch.nn as nn
torch.manual_seed(0)
experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(4)])
gate = nn.Linear(4, 4)
opt = torch.optim.SGD(list(experts.parameters()) + list(gate.parameters()), lr=0.1)
x = torch.randn(8, 4)
for step in range(3):
    opt.zero_grad()
    weights = torch.softmax(gate(x), dim=-1)
    out = torch.zeros(8, 4)
    for e in range(4):
        out = out + weights[:, e:e + 1] * experts[e](x)
    loss = out.pow(2).mean()
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize("size", [(876, 440), (870, 460), (1000, 520)])
def test_no_name_is_printed_over_a_card(qtbot, size) -> None:
    """A training loop over a mixture of experts: the last pass's `weights` was written
    across its folded `for e in range(4)` card, over the card's own `×4` (a name alone
    could cross a mark, and a card counted as one)."""
    from PySide6.QtGui import QTransform

    from autograd_viz.ui.graph._fold_painting import screen_rect

    canvas = _canvas(qtbot, size)
    _show(qtbot, canvas, MIXTURE)
    canvas.grab()
    assert canvas.graph.boxes  # the inner loops are cards
    corner = canvas.viewport().pos()
    transform = canvas._overlay.deviceTransform(canvas.viewportTransform())
    transform *= QTransform.fromTranslate(corner.x(), corner.y())
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32)
    painter = _Texts(image)
    screen = {k: QPointF(canvas.widget_position(k)) for k in canvas.graph.nodes}
    canvas._overlay._paint_labels(painter, screen, transform)  # as the canvas paints them
    painter.end()
    cards = [screen_rect(transform, r) for r in canvas.graph.boxes.values()]
    assert painter.text_rects
    for text, rect in zip(painter.texts, painter.text_rects, strict=True):
        inner = rect.adjusted(1, 1, -1, -1)  # as drawn, a pixel wider than as placed
        assert not any(inner.intersects(card) for card in cards), text
