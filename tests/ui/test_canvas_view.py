"""Where the canvas looks: the wheel zooms toward the pointer, Fit graph shows every drawn
item, a minimap pans big graphs, and zooming in on a big graph labels what is in view."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QImage, QTransform, QWheelEvent
from PySide6.QtWidgets import QApplication

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.resources import EXAMPLES
from autograd_viz.ui.graph._fold_painting import (
    _row_px,
    _shown_frames,
    _title_plate,
    frame_title_rects,
)
from autograd_viz.ui.graph._graph_style import LIT_GROW_PX, LIT_PEN_PX, STYLES
from autograd_viz.ui.graph._minimap import MINIMAP_MIN_NODES
from autograd_viz.ui.graph.graph_canvas import GraphCanvas
from tests.ui.test_graph_canvas import _Recording

RNN = """
import torch
torch.manual_seed(0)
w = torch.randn(4, 4, requires_grad=True)
h = torch.zeros(4)
x = torch.randn({steps}, 4)
for t in range({steps}):
    h = torch.tanh(w @ h + x[t])
loss = h.sum()
loss.backward()
"""
WIDE = RNN.format(steps=60)  # a long chain: ~180 layers, a few rows
TALL = """
import torch
w = torch.randn(3, requires_grad=True)
xs = [torch.randn(3) for _ in range(30)]
loss = torch.stack([(x * w).sum() for x in xs]).sum()
loss.backward()
"""


class _Texts(_Recording):
    """Also keeps where each text went (its box, from the painter's font at the time)."""

    def __init__(self, device) -> None:
        super().__init__(device)
        self.text_rects: list[QRectF] = []

    def drawText(self, *args) -> None:  # Qt's own name
        if isinstance(args[0], QPointF):
            metrics = QFontMetricsF(self.font())
            p = args[0]
            width = metrics.horizontalAdvance(str(args[-1]))
            self.text_rects.append(QRectF(p.x(), p.y() - metrics.ascent(), width, metrics.height()))
        super().drawText(*args)


def _canvas(qtbot, size=(900, 600)) -> GraphCanvas:
    canvas = GraphCanvas()
    canvas.resize(*size)
    qtbot.addWidget(canvas)
    canvas.show()
    qtbot.waitExposed(canvas)
    return canvas


def _show(qtbot, canvas: GraphCanvas, source: str, open_all: bool = False) -> None:
    trace = run_source(source, max_nodes=50_000, max_events=200_000)
    with qtbot.waitSignal(canvas.trace_drawn, timeout=60_000):
        canvas.show_trace(trace)
    if open_all:  # every node drawn, not the loop folded to one box
        with qtbot.waitSignal(canvas.layout_changed, timeout=60_000):
            canvas.view.open_all()


def _view_rect(canvas: GraphCanvas) -> QRectF:
    """The view box's area in the canvas's widget pixels."""
    box = canvas.getViewBox()
    rect = QRectF(canvas.mapFromScene(box.sceneBoundingRect()).boundingRect())
    return rect.translated(QPointF(canvas.viewport().pos()))


def _drawn_rects(canvas: GraphCanvas) -> tuple[list[QRectF], list[QRectF], list[QRectF]]:
    """What a paint of the current view draws, in widget pixels: marks, texts, frames."""
    canvas.grab()  # a paint, as the screen would do: it picks the level of labels
    overlay = canvas._overlay
    screen = {k: QPointF(canvas.widget_position(k)) for k in canvas.graph.nodes}
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32)
    painter = _Texts(image)
    # The whole overlay (frames, edges, cards, labels) as the screen paints it, in the
    # widget's pixels.
    corner = canvas.viewport().pos()
    to_widget = QTransform.fromTranslate(corner.x(), corner.y())
    painter.setTransform(overlay.deviceTransform(canvas.viewportTransform()) * to_widget)
    overlay.paint(painter)
    painter.end()
    marks = []
    for key, p in screen.items():
        size = STYLES[canvas.graph.nodes[key].kind].size
        marks.append(QRectF(p.x() - size / 2, p.y() - size / 2, size, size))
    return marks, painter.text_rects, painter.boxes


def _wheel(canvas: GraphCanvas, at: QPointF, notches: int = 1) -> None:
    event = QWheelEvent(
        at,
        canvas.viewport().mapToGlobal(at),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(canvas.viewport(), event)


def _data_at(canvas: GraphCanvas, at: QPointF) -> QPointF:
    return canvas.getViewBox().mapSceneToView(canvas.mapToScene(at.toPoint()))


def _widget_at(canvas: GraphCanvas, data: QPointF) -> QPointF:
    scene = canvas.getViewBox().mapViewToScene(data)
    return QPointF(canvas.mapFromScene(scene))


@pytest.mark.parametrize("source", [WIDE, "small"])
def test_the_wheel_zooms_toward_the_pointer(qtbot, source) -> None:
    canvas = _canvas(qtbot)
    if source == "small":
        source = (EXAMPLES / "first_graph.py").read_text(encoding="utf-8")
    _show(qtbot, canvas, source)
    at = QPointF(220, 170)  # well away from the centre (450, 300)
    under = _data_at(canvas, at)
    before = canvas.getViewBox().viewRange()
    for notches in (1, 2, -1):
        with qtbot.waitSignal(canvas.getViewBox().sigRangeChanged):
            _wheel(canvas, at, notches)
        moved = _widget_at(canvas, under) - at
        assert abs(moved.x()) <= 1.5 and abs(moved.y()) <= 1.5, (notches, moved)
    assert canvas.getViewBox().viewRange() != before and not canvas.follows_fit


def _assert_fitted(canvas: GraphCanvas) -> None:
    view = _view_rect(canvas).adjusted(-1, -1, 1, 1)
    marks, texts, frames = _drawn_rects(canvas)
    for kind, rects in (("mark", marks), ("text", texts), ("frame", frames)):
        outside = [r for r in rects if not view.contains(r)]
        assert not outside, f"{len(outside)} {kind}s outside {view}: {outside[:3]}"
    legend = canvas.legend.sceneBoundingRect()
    legend = QRectF(canvas.mapFromScene(legend).boundingRect())
    assert not [r for r in marks + texts if r.intersects(legend)], "the legend covers the graph"
    minimap = QRectF(canvas.minimap.geometry())
    if canvas.minimap.isVisible():
        assert not [r for r in marks + texts if r.intersects(minimap)], "the minimap covers it"


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_fit_shows_every_drawn_item_of_each_example(qtbot, example) -> None:
    canvas = _canvas(qtbot)
    _show(qtbot, canvas, (EXAMPLES / example).read_text(encoding="utf-8"))
    canvas.fit()
    _assert_fitted(canvas)


@pytest.mark.parametrize("source", [WIDE, TALL], ids=["wide", "tall"])
@pytest.mark.parametrize("size", [(900, 600), (500, 700)])
def test_fit_shows_every_drawn_item_of_a_wide_or_tall_graph(qtbot, source, size) -> None:
    canvas = _canvas(qtbot, size)
    _show(qtbot, canvas, source)
    canvas.fit()
    _assert_fitted(canvas)


def test_the_minimap_shows_past_500_nodes_follows_the_view_and_pans(qtbot) -> None:
    canvas = _canvas(qtbot)
    _show(qtbot, canvas, WIDE)
    assert len(canvas.graph.nodes) < MINIMAP_MIN_NODES and not canvas.minimap.isVisible()
    _show(qtbot, canvas, RNN.format(steps=200), open_all=True)
    assert len(canvas.graph.nodes) >= MINIMAP_MIN_NODES and canvas.minimap.isVisible()
    minimap = canvas.minimap
    assert QRectF(canvas.rect()).contains(QRectF(minimap.geometry()))
    box = canvas.getViewBox()
    with qtbot.waitSignal(box.sigRangeChanged):
        box.setRange(xRange=(100, 160), yRange=(-1, 1), padding=0)
    (x0, x1), (y0, _) = box.viewRange()
    r = minimap.view_rect
    assert (r.left(), r.right()) == pytest.approx((x0, x1)) and r.top() == pytest.approx(y0)
    drawn = minimap.view_rect_px()
    left, right = minimap.to_widget(x0, 0).x(), minimap.to_widget(x1, 0).x()
    assert drawn.left() == pytest.approx(left) and drawn.right() == pytest.approx(right)
    # A click near the right end centres the view there, keeping its zoom.
    click = QPoint(minimap.width() - 20, minimap.height() // 2)
    target_x, target_y = minimap.to_data(QPointF(click))
    with qtbot.waitSignal(box.sigRangeChanged):
        qtbot.mouseClick(minimap, Qt.MouseButton.LeftButton, pos=click)
    (a, b), (c, d) = box.viewRange()
    assert (a + b) / 2 == pytest.approx(target_x) and (c + d) / 2 == pytest.approx(target_y)
    assert b - a == pytest.approx(x1 - x0) and target_x > 400
    assert not canvas.follows_fit  # the learner's view now: a resize keeps it


def test_zooming_in_on_a_big_graph_labels_the_nodes_in_view(qtbot) -> None:
    """The 1,500-node RNN loop of issue 16: rows hundreds of pixels apart, layers a tenth
    of a pixel. Wheeling in at a node reaches a zoom where the nodes in view get labels,
    and the node stays under the pointer."""
    canvas = _canvas(qtbot, (1200, 800))
    _show(qtbot, canvas, RNN.format(steps=500), open_all=True)
    assert len(canvas.graph.nodes) >= 1500
    canvas.grab()
    assert not canvas._overlay.labels_fit()  # fitted: far too dense to label
    key = next(k for k, n in canvas.graph.nodes.items() if 240 < n.x < 260)
    at = QPointF(canvas.widget_position(key))
    under = _data_at(canvas, at)
    for _ in range(60):
        with qtbot.waitSignal(canvas.getViewBox().sigRangeChanged):
            _wheel(canvas, at, 3)
        canvas.grab()
        if canvas._overlay.labels_fit() and not canvas._overlay.compact():
            break  # full names: both axes have room
    assert canvas._overlay.labels_fit(), canvas._overlay.last_spacing_px
    assert (_widget_at(canvas, under) - at).manhattanLength() <= 3
    view = _view_rect(canvas)
    in_view = [k for k in canvas.graph.nodes if view.contains(QPointF(canvas.widget_position(k)))]
    assert len(in_view) >= 5
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32)
    painter = _Texts(image)
    canvas._overlay._paint_labels(
        painter, {k: QPointF(canvas.widget_position(k)) for k in canvas.graph.nodes}
    )
    painter.end()
    labelled = {canvas.graph.nodes[k].title for k in in_view}
    assert labelled and all(any(t.startswith(s[:3]) for s in painter.texts) for t in labelled)
    # Another step in zooms both axes alike (labels already fit on both).
    (x0, x1), (y0, y1) = canvas.getViewBox().viewRange()
    with qtbot.waitSignal(canvas.getViewBox().sigRangeChanged):
        _wheel(canvas, at, 1)
    (a, b), (c, d) = canvas.getViewBox().viewRange()
    assert (b - a) / (x1 - x0) == pytest.approx((d - c) / (y1 - y0), rel=1e-3)


def _label_rects(canvas: GraphCanvas) -> list[QRectF]:
    """Where the node labels and the edges' gradient plates of one paint go (widget px)."""
    canvas.grab()  # a paint: the level of labels, the edges' texts
    overlay = canvas._overlay
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32)
    painter = _Texts(image)
    corner = canvas.viewport().pos()
    transform = overlay.deviceTransform(canvas.viewportTransform())
    transform *= QTransform.fromTranslate(corner.x(), corner.y())
    painter.setTransform(transform)
    overlay.paint(painter)  # sets the edges' texts for this view and moment
    painter.end()
    painter = _Texts(image)
    screen = {k: QPointF(canvas.widget_position(k)) for k in canvas.graph.nodes}
    if overlay.labels_visible and overlay.labels_fit():
        overlay._paint_labels(painter, screen, transform)
    else:
        overlay._paint_edge_labels(painter)
    painter.end()
    # The frames' titles, painted under the labels: a name alone may touch one's padding
    # (a line's leading), never its text.
    titles = frame_title_rects(transform, canvas.graph, overlay._op_font, QRectF(image.rect()))
    return painter.text_rects + [rect.adjusted(2, 3, -2, -3) for _, rect in titles]


@pytest.mark.parametrize(
    "model", ["transformer", "transformer_target", "cnn", "rnn", "linear_step"]
)
def test_no_two_labels_overlap_folded_open_or_mid_backward(qtbot, model) -> None:
    from tests.core.test_folding import CNN, TRANSFORMER
    from tests.core.test_folding import RNN as LOOP

    sources = {
        "transformer": TRANSFORMER.replace("LAYERS", "2"),
        # y_true goes just above the model's frame: its label met the frame's title
        "transformer_target": TRANSFORMER.replace("LAYERS", "2").replace(
            "loss = model(X).pow(2).mean()",
            "y_true = torch.randn(2, 5, 1)\nloss = ((model(X) - y_true) ** 2).mean()",
        ),
        "cnn": CNN,
        "rnn": LOOP.replace("STEPS", "12"),
        "linear_step": (EXAMPLES / "linear_step.py").read_text(encoding="utf-8"),
    }
    # The target's case at the graph pane's size in a 1400×860 window, where it showed.
    canvas = _canvas(qtbot, (870, 440) if model == "transformer_target" else (1000, 650))
    _show(qtbot, canvas, sources[model])
    states = ["folded", "open", "zoomed", "backward"]
    counts: dict[str, int] = {}
    for state in states:
        if state == "open":
            canvas.view.open_all()
        elif state == "zoomed":  # about eight layers and five rows around the middle node
            nodes = sorted(canvas.graph.nodes.values(), key=lambda n: (n.x, n.y))
            middle = nodes[len(nodes) // 2]
            canvas.getViewBox().setRange(
                xRange=(middle.x - 4, middle.x + 4), yRange=(middle.y - 2.5, middle.y + 2.5)
            )
        elif state == "backward":
            player = canvas.view.player
            player.set_mode("backward")
            player.seek(len(player.steps) // 2)
        rects = _label_rects(canvas)
        counts[state] = len(rects)
        for i, a in enumerate(rects):
            for b in rects[i + 1 :]:
                assert not a.intersects(b), (model, state, a, b)
    assert counts["zoomed"] > 3 and counts["backward"] > 0, counts  # labels were drawn


def test_every_frame_wide_enough_says_what_it_is(qtbot) -> None:
    # A small CNN at the graph pane's size: its ReLU, MaxPool2d and Flatten frames were too
    # narrow for "net.1 · ReLU" and showed no title at all.
    source = (
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2),\n"
        "                    nn.Flatten(), nn.Linear(36, 10))\n"
        "loss = nn.functional.cross_entropy(net(torch.randn(2, 1, 8, 8)), torch.tensor([3, 7]))\n"
        "loss.backward()\n"
    )
    canvas = _canvas(qtbot, (870, 460))
    _show(qtbot, canvas, source)
    canvas.grab()
    overlay = canvas._overlay
    corner = canvas.viewport().pos()
    transform = overlay.deviceTransform(canvas.viewportTransform())
    transform *= QTransform.fromTranslate(corner.x(), corner.y())
    titled = dict(
        frame_title_rects(transform, canvas.graph, overlay._op_font, QRectF(canvas.rect()))
    )
    assert {"net.1", "net.2", "net.3"} <= set(titled)
    metrics, row_px = QFontMetricsF(overlay._op_font), _row_px(transform)
    boxes = dict(_shown_frames(transform, canvas.graph, QRectF(canvas.rect())))
    texts = {
        key: _title_plate(canvas.graph.folds[key], boxes[key], metrics, row_px)[0]
        for key in ("net.1", "net.2", "net.3")
    }
    # Each says its class, or its name where the class does not fit (font widths vary).
    for key, cls in (("net.1", "ReLU"), ("net.2", "MaxPool2d"), ("net.3", "Flatten")):
        assert texts[key] in (cls, key) or (
            texts[key].endswith("…") and cls.startswith(texts[key][:-1])
        ), texts


def test_the_op_a_backward_step_runs_keeps_its_name_beside_its_gradients(qtbot) -> None:
    """Mid-backward, the ∂ plates of the step's edges were placed first and took the spot
    under the node that sends them: MulBackward0 lost its name exactly when the caption
    explained it. Its name is kept now, and no label overlaps another."""
    canvas = _canvas(qtbot, (870, 440))  # the graph pane's size in a 1400×860 window
    _show(
        qtbot,
        canvas,
        "import torch\n"
        "class ClampedExp(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        y = torch.exp(x.clamp(max=3.0))\n"
        "        ctx.save_for_backward(y)\n"
        "        return y\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_out):\n"
        "        (y,) = ctx.saved_tensors\n"
        "        return grad_out * y\n"
        "x = torch.tensor([0.5, 1.0, 4.0], requires_grad=True)\n"
        "w = torch.tensor([2.0, -1.0, 0.5], requires_grad=True)\n"
        "h = x * w\n"
        "y = ClampedExp.apply(h)\n"
        "loss = y.sum()\n"
        "loss.backward()\n",
    )
    player = canvas.view.player
    player.set_mode("backward")
    checked = 0
    for number, step in enumerate(player.steps):
        ops = [
            canvas.graph.nodes[k]
            for k in step.lit
            if canvas.graph.nodes[k].kind == "operation" and step.kind == "node"
        ]
        if not ops:
            continue
        player.seek(number)
        rects = _label_rects(canvas)
        for i, a in enumerate(rects):
            assert not any(a.intersects(b) for b in rects[i + 1 :]), (step.caption, a)
        # The node the step runs is drawn bigger and ringed, over the labels: no text
        # under its ring (a ∂ plate beside it was half hidden, its own name too).
        for key in step.lit:
            centre = QPointF(canvas.widget_position(key))
            size = STYLES[canvas.graph.nodes[key].kind].size + LIT_GROW_PX + LIT_PEN_PX
            ring = QRectF(centre.x() - size / 2, centre.y() - size / 2, size, size)
            assert not any(ring.intersects(r) for r in rects), (step.caption, key)
        image = QImage(canvas.size(), QImage.Format.Format_ARGB32)  # outlives the painter
        painter = _Texts(image)
        canvas._overlay._paint_labels(
            painter, {k: QPointF(canvas.widget_position(k)) for k in canvas.graph.nodes}
        )
        painter.end()
        assert all(op.title in painter.texts for op in ops), (step.caption, painter.texts)
        checked += 1
    assert checked >= 3  # SumBackward0, ClampedExpBackward, MulBackward0


def test_a_lit_accumulate_grad_leaves_room_for_its_leafs_label(qtbot) -> None:
    """At model.2.bias's AccumulateGrad step, the lit op's name was held at the width of
    "AccumulateGrad" (drawn as "Acc"), and the bias beside it lost its whole label: its
    name, its value and the .grad the step had just written."""
    source = (EXAMPLES / "linear_step.py").read_text(encoding="utf-8")
    canvas = _canvas(qtbot, (870, 480))
    _show(qtbot, canvas, source)
    plain: dict = {}
    exec(source, plain)
    grad = plain["model"][2].bias.grad.item()
    player = canvas.view.player
    player.set_mode("all")
    number = next(
        i for i, s in enumerate(player.steps) if s.caption.startswith("model.2.bias.grad: None →")
    )
    player.seek(number)
    canvas.grab()
    image = QImage(canvas.viewport().size(), QImage.Format.Format_ARGB32)
    painter = _Texts(image)
    painter.setTransform(canvas._overlay.deviceTransform(canvas.viewportTransform()))
    canvas._overlay.paint(painter)
    painter.end()
    assert painter.texts.count("bias") == 2
    assert f"grad [{grad:.3g}]" in painter.texts, painter.texts


VAE = """import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
enc = nn.Linear(10, 8); mu_head = nn.Linear(8, 2); logvar_head = nn.Linear(8, 2)
dec = nn.Linear(2, 10)
x = torch.rand(4, 10)
h = F.relu(enc(x))
mu, logvar = mu_head(h), logvar_head(h)
std = torch.exp(0.5 * logvar)
eps = torch.randn_like(std)
z = mu + eps * std
recon = torch.sigmoid(dec(z))
rec_loss = F.binary_cross_entropy(recon, x, reduction="sum")
kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
loss = rec_loss + kl
loss.backward()
"""


class _Plates(_Texts):
    """Keeps where each gradient plate's text went (widget-viewport pixels)."""

    def __init__(self, device) -> None:
        super().__init__(device)
        self.plates: list[QRectF] = []

    def drawText(self, *args) -> None:  # Qt's own name
        super().drawText(*args)
        if isinstance(args[0], QPointF) and str(args[-1]).startswith("∂"):
            self.plates.append(self.transform().mapRect(self.text_rects[-1]))


def test_no_gradient_plate_goes_under_the_node_a_backward_step_rings(qtbot) -> None:
    """In a crowded frame every spot along a short edge was taken, and the plate fell
    back to the edge's middle, under the lit AddmmBackward0 (drawn over it)."""
    canvas = _canvas(qtbot, (870, 440))
    _show(qtbot, canvas, VAE)
    player = canvas.view.player
    player.set_mode("backward")
    checked = 0
    for number, step in enumerate(player.steps):
        if step.kind != "node":
            continue
        player.seek(number)
        canvas.grab()
        image = QImage(canvas.viewport().size(), QImage.Format.Format_ARGB32)
        painter = _Plates(image)
        painter.setTransform(canvas._overlay.deviceTransform(canvas.viewportTransform()))
        canvas._overlay.paint(painter)
        painter.end()
        rects = [r.translated(QPointF(canvas.viewport().pos())) for r in painter.plates]
        for key in step.lit:
            if canvas.graph.nodes[key].kind != "operation":
                continue
            centre = QPointF(canvas.widget_position(key))
            size = STYLES[canvas.graph.nodes[key].kind].size + LIT_GROW_PX + LIT_PEN_PX
            ring = QRectF(centre.x() - size / 2, centre.y() - size / 2, size, size)
            assert not any(ring.intersects(r) for r in rects), (step.caption, key)
            checked += 1
    assert checked >= 10


def test_a_step_lighting_nothing_in_view_pans_the_view_to_it(qtbot) -> None:
    """Zoomed into one layer of a transformer, the learner stepped on through the other
    layers' backward with nothing lit on screen. When no lit item is in view, the view
    pans to the nearest one, keeping its zoom; while one is in view it stays put."""
    canvas = _canvas(qtbot)
    _show(
        qtbot,
        canvas,
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "a = w * 2\nb = a + 1\nc = b * b\nd = c.exp()\nloss = d.sum()\nloss.backward()\n",
    )
    nodes = canvas.graph.nodes
    left = min(n.x for n in nodes.values())
    box = canvas.getViewBox()
    box.setRange(xRange=(left - 0.6, left + 0.6), yRange=(-1.5, 1.5), padding=0)
    width = box.viewRange()[0][1] - box.viewRange()[0][0]
    player = canvas.view.player
    player.set_mode("forward")
    seen = 0
    while player.step_forward():
        (x0, x1), (y0, y1) = box.viewRange()
        lit = [nodes[k] for k in player.current.lit if k in nodes]
        assert any(x0 <= n.x <= x1 and y0 <= n.y <= y1 for n in lit), player.current.caption
        assert x1 - x0 == pytest.approx(width)  # panned, never zoomed
        seen += bool(lit)
    assert seen >= 5 and box.viewRange()[0][0] > left  # it followed the steps rightwards
