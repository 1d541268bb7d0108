"""The canvas draws what the trace holds, and the picture has real pixels in it."""

from __future__ import annotations

import gc

import pytest
from PySide6.QtCore import QPointF, QRectF, QSizeF
from PySide6.QtGui import QColor, QFontDatabase, QFontInfo, QFontMetricsF, QPainter
from PySide6.QtWidgets import QApplication

from autograd_viz.core.graph.graph_model import ACCUMULATE, LEAF, OPERATION
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.platform.gc_pause import freeze_loaded_objects
from autograd_viz.resources import DEFAULT_EXAMPLE
from autograd_viz.ui.graph._describe import describe
from autograd_viz.ui.graph._edges_item import _room_beside, short_op_name
from autograd_viz.ui.graph._graph_style import LEGEND_ORDER, STYLES
from autograd_viz.ui.graph.graph_canvas import GraphCanvas
from autograd_viz.ui.graph.player_bar import SLIDER_MIN_WIDTH


class _Recording(QPainter):
    """A real painter that also keeps the texts and rounded boxes it was asked to draw."""

    def __init__(self, device) -> None:
        super().__init__(device)
        self.texts: list[str] = []
        self.boxes: list = []
        self.placed: list[tuple[QRectF, str]] = []  # each text's rectangle, in pixels

    def drawText(self, *args) -> None:  # Qt's own name
        self.texts.append(str(args[-1]))
        if isinstance(args[0], QPointF):
            metrics = QFontMetricsF(self.font())
            top_left = args[0] - QPointF(0, metrics.ascent())
            size = QSizeF(metrics.horizontalAdvance(str(args[-1])), metrics.height())
            self.placed.append((QRectF(top_left, size), str(args[-1])))
        super().drawText(*args)

    def drawRoundedRect(self, rect, *args) -> None:  # Qt's own name
        self.boxes.append(rect)
        super().drawRoundedRect(rect, *args)


def _canvas(qtbot) -> GraphCanvas:
    canvas = GraphCanvas()
    canvas.resize(900, 600)
    qtbot.addWidget(canvas)
    canvas.show()
    return canvas


def test_a_real_font_is_available(qapp: QApplication) -> None:
    # Without fonts Qt renders every glyph as a box and says nothing.
    assert QFontDatabase.families()
    assert QFontInfo(qapp.font()).family() != ""


def test_draws_one_marker_per_tensor_and_node(qtbot) -> None:
    trace = run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8"))
    canvas = _canvas(qtbot)
    with qtbot.waitSignal(canvas.graph_drawn) as drawn:
        canvas.show_trace(trace)
    expected = len(trace.tensors) + len(trace.nodes)
    assert drawn.args == [expected] and canvas.marker_count() == expected
    assert canvas.graph.count(LEAF) == 2


def test_leaf_pixels_are_violet(qtbot) -> None:
    trace = run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8"))
    canvas = _canvas(qtbot)
    canvas.show_trace(trace)
    qtbot.wait(50)
    image = canvas.grab().toImage()
    leaf = next(n for n in canvas.graph.nodes.values() if n.title == "x")
    pixel = canvas.widget_position(leaf.id)
    colour = QColor(image.pixel(pixel.x(), pixel.y()))
    assert colour.name() == QColor(STYLES[LEAF].fill).name()
    # And the background away from any node is the canvas colour.
    assert QColor(image.pixel(5, image.height() - 5)).name() == "#ffffff"


def test_labels_are_painted_when_zoom_allows(qtbot) -> None:
    trace = run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8"))
    canvas = _canvas(qtbot)
    canvas.show_trace(trace)
    canvas.grab()
    assert canvas._overlay.labels_fit()


def test_empty_trace_says_so(qtbot) -> None:
    canvas = _canvas(qtbot)
    canvas.show_trace(run_source("import torch\nx = torch.ones(3)\n"))
    assert canvas.marker_count() == 0
    assert "nothing to draw" in canvas._message.toPlainText()


def test_tooltip_describes_tensor_and_node() -> None:
    trace = run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8"))
    x = trace.tensor_named("x")
    text = describe(trace, x.id)
    assert "x  () float32 on cpu" in text and ".grad: 60.0" in text
    mul = next(n for n in trace.nodes if n.name == "MulBackward0")
    assert "AccumulateGrad" in describe(trace, mul.id)


def test_find_and_center(qtbot) -> None:
    trace = run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8"))
    canvas = _canvas(qtbot)
    canvas.show_trace(trace)
    out = trace.tensor_named("out").id
    assert canvas.find("OUT")[0] == out  # tensors first, exact name first
    assert {canvas.graph.nodes[k].title for k in canvas.find("backward")} == {
        "MulBackward0",
        "AddBackward0",
        "PowBackward0",
    }
    assert canvas.find("nothing-like-this") == [] and canvas.find("  ") == []
    canvas.center_on(out)
    (x0, x1), (y0, y1) = canvas.getViewBox().viewRange()
    node = canvas.graph.nodes[out]
    assert abs((x0 + x1) / 2 - node.x) < 1e-6 and abs((y0 + y1) / 2 - node.y) < 1e-6


def test_double_click_collapses_a_module_and_back(qtbot) -> None:

    from autograd_viz.resources import EXAMPLES

    trace = run_source((EXAMPLES / "linear_step.py").read_text(encoding="utf-8"))
    canvas = _canvas(qtbot)
    canvas.show_trace(trace)
    weight = trace.tensor_named("model.0.weight").id
    point = canvas.widget_position(weight) - canvas.viewport().pos()
    with qtbot.waitSignal(canvas.layout_changed):
        _double_click(qtbot, canvas, point)
    assert canvas.collapsed == {"model.0"} and "m:model.0" in canvas.graph.nodes
    assert "inside" not in canvas._tooltip(0, 0, "m:model.0")
    box = canvas.widget_position("m:model.0") - canvas.viewport().pos()
    with qtbot.waitSignal(canvas.layout_changed):
        _double_click(qtbot, canvas, box)
    assert canvas.collapsed == set() and weight in canvas.graph.nodes


def _double_click(qtbot, canvas, point) -> None:
    """What a mouse sends for a double-click: press, release, double-click, release."""
    from PySide6.QtCore import Qt

    left = Qt.MouseButton.LeftButton
    viewport = canvas.viewport()
    qtbot.mousePress(viewport, left, pos=point)
    qtbot.mouseRelease(viewport, left, pos=point)
    qtbot.mouseDClick(viewport, left, pos=point)
    qtbot.mouseRelease(viewport, left, pos=point)


VIT_LOOP = """import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchEmbed(nn.Module):
    def __init__(self, patch=4, dim=16):
        super().__init__()
        self.proj = nn.Conv2d(1, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class TinyViT(nn.Module):
    def __init__(self, dim=16, depth=2, classes=3):
        super().__init__()
        self.embed = PatchEmbed(dim=dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=32, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        tokens = self.embed(x)
        cls = self.cls.expand(x.shape[0], -1, -1)
        h = self.blocks(torch.cat([cls, tokens], dim=1))
        return self.head(h[:, 0])


model = TinyViT()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
images = torch.randn(4, 1, 8, 8)
labels = torch.tensor([0, 1, 2, 1])
for step in range(2):
    opt.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    opt.step()
"""
BIG = (
    "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\n"
    "for _ in range({n}):\n    y = y * 1.0001\n"
)


def test_a_big_graph_is_laid_out_off_the_gui_thread(qtbot, request) -> None:
    from PySide6.QtCore import QElapsedTimer, QTimer

    trace = run_source(BIG.format(n=8000))
    canvas = _canvas(qtbot)
    # As the app does once it has loaded (ui/app.py): what is alive now stays out of the
    # collector's full scans, so a collection of torch's objects and earlier tests' cannot
    # land on the GUI thread mid-layout and pass for a layout that blocks it.
    gc.collect()
    freeze_loaded_objects()
    request.addfinalizer(gc.unfreeze)
    ticks: list[int] = []
    clock = QElapsedTimer()
    clock.start()
    timer = QTimer()
    # Ticks that land while the layout is still running show the event loop kept going.
    timer.timeout.connect(lambda: canvas.laying_out and ticks.append(clock.elapsed()))
    timer.start(20)
    with qtbot.waitSignal(canvas.trace_drawn, timeout=60_000) as drawn:
        canvas.show_trace(trace)
        assert canvas.laying_out  # show_trace returned before the layout finished
    timer.stop()
    assert drawn.args == [trace]
    # The loop is folded to one box (with the leaf before it and the result after).
    assert canvas.marker_count() == len(canvas.graph.nodes) == 3
    assert canvas.graph.box_text["m:loop@4"][:2] == ["for _ in range(8000):", "×8000"]
    # The event loop kept running while the layout was computed. (One tick, not a rate: on
    # a loaded 2-core machine the layout thread and the collector leave the GUI thread
    # few 20 ms slots; what matters is that it is not blocked until the layout is done.)
    assert ticks


def test_a_mid_sized_graph_is_laid_out_on_a_worker_without_a_message(qtbot) -> None:
    """Past BACKGROUND_LAYOUT_SIZE (a ResNet step's 134 nodes held the GUI thread past
    50 ms) the layout runs on a worker; below BIG_LAYOUT_SIZE it says nothing meanwhile
    (no "Laying out…" flashing for a tenth of a second) and comes with its player ready."""
    from autograd_viz.ui.graph._layout_job import BACKGROUND_LAYOUT_SIZE, BIG_LAYOUT_SIZE

    small, mid = run_source(BIG.format(n=10)), run_source(BIG.format(n=300))
    assert len(small.nodes) + len(small.tensors) <= BACKGROUND_LAYOUT_SIZE
    assert BACKGROUND_LAYOUT_SIZE < len(mid.nodes) + len(mid.tensors) <= BIG_LAYOUT_SIZE
    canvas = _canvas(qtbot)
    canvas.show_trace(small)  # a lesson-sized graph: drawn before show_trace returns
    assert canvas.trace is small and not canvas.laying_out
    messages: list[str] = []
    canvas.view.message_changed.connect(messages.append)
    with qtbot.waitSignal(canvas.trace_drawn, timeout=30_000) as drawn:
        canvas.show_trace(mid)
        assert canvas.laying_out and canvas.trace is small  # the old picture stays meanwhile
    assert drawn.args == [mid] and canvas.trace is mid and not canvas.laying_out
    assert not any("Laying out" in m for m in messages)
    assert canvas.view.run.player.ready  # its steps were made on the worker too
    assert canvas.marker_count() == len(canvas.graph.nodes) == 3  # the loop's card


def test_only_the_latest_of_two_big_traces_is_drawn(qtbot) -> None:
    first, second = run_source(BIG.format(n=3000)), run_source(BIG.format(n=3500))
    canvas = _canvas(qtbot)
    drawn: list = []
    canvas.trace_drawn.connect(drawn.append)
    canvas.show_trace(first)
    canvas.show_trace(second)
    qtbot.waitUntil(lambda: not canvas.laying_out, timeout=60_000)
    assert drawn == [second] and canvas.trace is second


def test_an_op_label_is_shortened_only_where_it_would_run_into_its_neighbour() -> None:
    row, other_row = 10, 60
    points = {
        "a": QPointF(0, row),
        "b": QPointF(90, row),
        "c": QPointF(300, row),
        "d": QPointF(90, other_row),
    }
    half = {"a": 40.0, "b": 45.0, "c": 20.0, "d": 80.0}
    room = _room_beside(points, half)
    assert room["a"] == 90 / 2 - 2  # b's full label leaves less: a gets half the gap
    assert room["b"] == 90 - 40 - 4  # a's label leaves more than half, and c is far
    assert room["d"] == float("inf")  # alone on its row: any length fits


def test_fit_keeps_wide_labels_and_module_titles_in_view(qtbot) -> None:
    from tests.core.test_module_groups import CNN

    canvas = _canvas(qtbot)
    canvas.show_trace(run_source(CNN))
    qtbot.wait(50)
    (x_low, x_high), (y_low, y_high) = canvas.getViewBox().viewRange()
    unit_px = canvas.getViewBox().width() / (x_high - x_low)
    half = canvas._overlay.label_half_widths(canvas.graph.nodes)
    for key, node in canvas.graph.nodes.items():  # labels are centred under their node
        assert x_low <= node.x - half[key] / unit_px, node.title
        assert node.x + half[key] / unit_px <= x_high, node.title
    # A frame's title sits on its top edge: half its line reaches above it, in view.
    tops = [top for *_, top in canvas.graph.frames.values()]
    unit_py = canvas.getViewBox().height() / (y_high - y_low)
    half_line = QFontMetricsF(canvas._overlay._op_font).height() / 2
    assert (y_high - max(tops)) * unit_py >= half_line


def _texts_at(qtbot, trace, width: int, height: int) -> tuple[GraphCanvas, list[str]]:
    """A canvas of this size showing `trace`, and the texts its overlay paints."""
    canvas = _canvas(qtbot)
    canvas.resize(width, height)
    canvas.show_trace(trace)
    return canvas, _paint_overlay(canvas).texts


def _paint_overlay(canvas: GraphCanvas) -> _Recording:
    """Paint the canvas's edges, frames, boxes and labels as the screen would, recorded."""
    from PySide6.QtGui import QImage

    canvas.grab()  # lays the view out and paints, as the screen would
    image = QImage(canvas.viewport().size(), QImage.Format.Format_ARGB32)
    painter = _Recording(image)
    overlay = canvas._overlay
    painter.setTransform(overlay.deviceTransform(canvas.viewportTransform()))
    overlay.paint(painter)
    painter.end()
    return painter


def test_a_module_without_parameters_gets_a_titled_frame_and_folds(qtbot) -> None:
    from tests.core.test_module_groups import SEQUENTIAL

    trace = run_source(SEQUENTIAL)
    canvas = _canvas(qtbot)
    canvas.show_trace(trace)
    relu = next(n.id for n in trace.nodes if n.name == "ReluBackward0")
    assert canvas.module_of(relu) == "model.1"
    assert "inside model.1 (double-click to fold)" in canvas._tooltip(0, 0, relu)
    texts = _paint_overlay(canvas).texts
    # A one-node frame is too narrow for "model.1 · ReLU": its name stays, its class goes.
    for heading in ("model · Sequential", "model.0 · Linear", "model.1", "model.2 · Linear"):
        assert heading in texts
    point = canvas.widget_position(relu) - canvas.viewport().pos()
    with qtbot.waitSignal(canvas.layout_changed):
        _double_click(qtbot, canvas, point)
    assert canvas.collapsed == {"model.1"} and relu not in canvas.graph.nodes
    assert canvas._tooltip(0, 0, "m:model.1").startswith("nn.Module model.1, folded: ReLU · 1 node")
    # The card says what it folds; a double-click anywhere on it (here a corner) opens it.
    assert canvas.graph.box_text["m:model.1"][:2] == ["model.1", "ReLU"]
    assert "model.1" in _paint_overlay(canvas).texts
    left, _bottom, _right, top = canvas.graph.boxes["m:model.1"]
    corner = canvas.getViewBox().mapViewToScene(QPointF(left + 0.05, top - 0.05))
    point = canvas.mapFromScene(corner)
    with qtbot.waitSignal(canvas.layout_changed):
        _double_click(qtbot, canvas, point)
    assert canvas.collapsed == set() and relu in canvas.graph.nodes


def _everything_in_view(canvas: GraphCanvas) -> None:
    """Every node's mark and label, every frame and the whole legend lie inside the view."""
    box = canvas.getViewBox()
    (x_low, x_high), _ = box.viewRange()
    unit_px = box.width() / (x_high - x_low)
    reach = canvas._reach_px(unit_px)
    for key, node in canvas.graph.nodes.items():
        half = max(reach.get(key, 0.0), STYLES[node.kind].size / 2) / unit_px
        assert x_low <= node.x - half and node.x + half <= x_high, node.title
    shown = box.sceneBoundingRect()
    legend = canvas.legend
    assert shown.contains(legend.sceneBoundingRect())
    for sample, label in legend.items:
        assert shown.contains(label.sceneBoundingRect()), label.text
        assert label.boundingRect().width() >= label.item.boundingRect().width()  # not cut
        assert shown.contains(sample.sceneBoundingRect())
    assert [label.text for _s, label in legend.items] == [STYLES[k].legend for k in LEGEND_ORDER]


def test_a_narrower_canvas_fits_again_and_wraps_its_legend(qtbot) -> None:
    from tests.core.test_module_groups import CNN

    canvas = _canvas(qtbot)
    canvas.show_trace(run_source(CNN))
    qtbot.waitUntil(lambda: canvas.getViewBox().width() > 800)
    _everything_in_view(canvas)
    before = canvas.getViewBox().viewRange()[0]
    with qtbot.waitSignal(canvas.getViewBox().sigResized):
        canvas.resize(520, 600)  # what the inspector opening beside it does
    qtbot.waitUntil(lambda: canvas.getViewBox().viewRange()[0] != before)
    _everything_in_view(canvas)
    assert canvas.legend.columnCount < len(LEGEND_ORDER)  # wrapped, not cut


def test_after_a_zoom_by_hand_a_resize_keeps_the_learners_view(qtbot) -> None:
    canvas = _canvas(qtbot)
    canvas.show_trace(run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8")))
    box = canvas.getViewBox()
    box.scaleBy((0.5, 0.5))
    box.sigRangeChangedManually.emit(box.state["mouseEnabled"])  # as the wheel does
    assert not canvas.follows_fit
    zoomed = box.viewRange()
    with qtbot.waitSignal(box.sigResized):
        canvas.resize(600, 600)
    assert box.viewRange()[0] == pytest.approx(zoomed[0])
    canvas.fit()
    assert canvas.follows_fit


def test_opening_the_inspector_keeps_the_graph_and_legend_in_view(qtbot, tmp_path) -> None:
    from autograd_viz.core.learning.progress import load_progress
    from autograd_viz.ui.main_window import MainWindow
    from tests.core.test_module_groups import CNN

    window = MainWindow(progress=load_progress(tmp_path / "progress.json"))  # no kernel
    qtbot.addWidget(window)
    window.resize(1400, 860)
    window.show()
    canvas = window.canvas
    trace = run_source(CNN)
    with qtbot.waitSignal(canvas.trace_drawn):
        canvas.show_trace(trace)
    qtbot.waitUntil(lambda: canvas.getViewBox().width() > 100)
    assert window.inspector.isHidden()
    width = canvas.width()
    weight = next(t for t in trace.tensors if t.name == "model.0.weight")
    with qtbot.waitSignal(canvas.getViewBox().sigResized, timeout=5000):
        window.run_view.inspect(weight.id)  # what a click on it does
    assert window.inspector.isVisible() and canvas.width() < width
    qtbot.waitUntil(lambda: canvas.follows_fit)
    _everything_in_view(canvas)
    window.close()


def test_legend_columns_are_the_most_that_fit() -> None:
    from autograd_viz.ui.graph._legend import legend_columns

    widths = [100.0, 80.0, 120.0, 90.0, 140.0]
    assert legend_columns(widths, 1000) == 5
    # A grid: each column as wide as its widest entry. Four to a row: 140|80|120|90.
    assert legend_columns(widths, 430) == 4
    # Three to a row: 100|90, 80|140, 120 make 360 px, not the 300 of the first row.
    assert legend_columns(widths, 429) == 3
    assert legend_columns(widths, 359) == 2  # 100|120|140 and 80|90: 230 px
    assert legend_columns(widths, 229) == 1
    assert legend_columns(widths, 10) == 1  # never none


def test_a_1000_by_650_window_fits_every_tab_and_the_inspector(qtbot, tmp_path) -> None:
    """No pane may ask for more width than a small laptop window has: a Lab column that
    did made the Graph tab's canvas refuse to give room to the inspector."""
    from autograd_viz.core.learning.progress import load_progress
    from autograd_viz.ui.main_window import MainWindow

    window = MainWindow(progress=load_progress(tmp_path / "progress.json"))  # no kernel
    qtbot.addWidget(window)
    hint = window.minimumSizeHint()
    assert hint.width() <= 1000 and hint.height() <= 650
    window.resize(1000, 650)
    window.show()
    qtbot.waitExposed(window)
    canvas = window.canvas
    trace = run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8"))
    with qtbot.waitSignal(canvas.trace_drawn):
        canvas.show_trace(trace)
    width = canvas.width()
    x = next(t for t in trace.tensors if t.name == "x")
    window.run_view.inspect(x.id)
    qtbot.waitUntil(lambda: window.inspector.isVisible() and canvas.width() < width)
    assert window.width() <= 1000
    assert window.player_bar.slider.width() >= SLIDER_MIN_WIDTH  # a timeline, not a dot
    window.close()


def test_frames_are_the_layouts_at_every_zoom_and_never_overlap(qtbot) -> None:
    """Frames are drawn where the layout put them (around their labels' room at any zoom),
    so siblings never overlap, zoomed in or out."""
    from tests.core.test_module_groups import SEQUENTIAL

    canvas = _canvas(qtbot)
    canvas.show_trace(run_source(SEQUENTIAL))
    for scale in (1.0, 0.3):
        canvas.getViewBox().scaleBy((1 / scale, 1 / scale))
        frames = _paint_overlay(canvas).boxes[: len(canvas.graph.frames)]
        assert len(frames) == 4  # model and its three layers
        inner = frames[1:]
        for i, a in enumerate(inner):
            assert frames[0].contains(a)
            assert not any(a.intersects(b) for b in inner[i + 1 :])


def test_rows_too_close_for_values_still_show_every_name(qtbot) -> None:
    """A 1000x650 window leaves the graph ~350 px: rows too close for a tensor's value
    and .grad lines still draw each node's name (and fit keeps room for just that)."""
    from PySide6.QtGui import QImage

    from autograd_viz.resources import EXAMPLES

    canvas = _canvas(qtbot)
    canvas.show_trace(run_source((EXAMPLES / "linear_step.py").read_text(encoding="utf-8")))
    # The picture is about five rows tall (y_true sits above the model's frame): at 300 px
    # its rows have room for names alone.
    with qtbot.waitSignal(canvas.getViewBox().sigResized):
        canvas.resize(620, 300)
    qtbot.waitUntil(lambda: canvas.follows_fit)
    canvas.grab()  # a paint, as the screen would do
    overlay = canvas._overlay
    assert overlay.labels_fit() and overlay.names_only(), overlay.last_spacing_px
    image = QImage(620, 300, QImage.Format.Format_ARGB32)
    painter = _Recording(image)
    overlay._paint_labels(
        painter, {k: QPointF(canvas.widget_position(k)) for k in canvas.graph.nodes}
    )
    painter.end()
    short = canvas.graph.short  # `weight` inside model.0's frame
    titles = {short.get(n.id, n.title) for n in canvas.graph.nodes.values()}
    tensors = [n for n in canvas.graph.nodes.values() if n.kind not in (OPERATION, ACCUMULATE)]
    assert {short.get(n.id, n.title) for n in tensors} <= set(painter.texts)
    assert not {n.detail for n in tensors if n.detail} & set(painter.texts)
    assert set(painter.texts) <= titles | {short_op_name(t) for t in titles}


def test_opening_a_big_folded_loop_is_laid_out_off_the_gui_thread(qtbot) -> None:
    from PySide6.QtCore import QTimer

    trace = run_source(BIG.format(n=3000))
    canvas = _canvas(qtbot)
    with qtbot.waitSignal(canvas.trace_drawn, timeout=60_000):
        canvas.show_trace(trace)
    assert "m:loop@4" in canvas.graph.nodes and len(canvas.graph.nodes) == 3
    ticks: list[bool] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(canvas.laying_out))
    timer.start(10)
    with qtbot.waitSignal(canvas.layout_changed, timeout=60_000):
        canvas.view.open_all()
        assert canvas.laying_out and canvas.view.message == "Laying out…"
    timer.stop()
    assert True in ticks  # the event loop ran while the layout did
    assert canvas.marker_count() == len(trace.tensors) + len(trace.nodes)
    assert canvas.view.message == "" and not canvas.collapsed


def test_opening_a_box_zooms_to_what_it_opened(qtbot) -> None:
    from tests.core.test_folding import TRANSFORMER

    canvas = _canvas(qtbot)
    with qtbot.waitSignal(canvas.trace_drawn, timeout=30_000):  # laid out on a worker
        canvas.show_trace(run_source(TRANSFORMER.replace("LAYERS", "4")))
    (repeat,) = [k for k, f in canvas.graph.folds.items() if f.kind == "repeat"]
    with qtbot.waitSignal(canvas.layout_changed):
        canvas.toggle_module(repeat)
    with qtbot.waitSignal(canvas.layout_changed):
        canvas.toggle_module("model.1.layers.0")
    left, bottom, right, top = canvas.graph.frames["model.1.layers.0"]
    (x0, x1), (y0, y1) = canvas.getViewBox().viewRange()
    assert x0 <= left and right <= x1 and y0 <= bottom and top <= y1  # all of it in view
    assert (right - left) > 0.6 * (x1 - x0)  # and large: not the whole model shrunk
    assert not canvas.follows_fit
    canvas.fit()  # Ctrl+0 still fits everything
    assert canvas.follows_fit


def _outlined(boxes) -> bool:
    """Whether one rounded rectangle drawn is another grown by 4 px each side."""
    return any(
        abs(o.width() - c.width() - 8) < 0.5
        and abs(o.height() - c.height() - 8) < 0.5
        and (o.center() - c.center()).manhattanLength() < 0.5
        for o in boxes
        for c in boxes
    )


def test_a_selected_card_is_outlined_and_no_ring_covers_its_text(qtbot) -> None:
    """Selecting a folded box drew the marks' ring at its centre, over its lines."""
    from tests.core.test_module_groups import SEQUENTIAL

    canvas = _canvas(qtbot)
    canvas.show_trace(run_source(SEQUENTIAL))
    with qtbot.waitSignal(canvas.layout_changed):
        canvas.toggle_module("model.1")
    assert "m:model.1" in canvas.graph.boxes
    canvas.select(["m:model.1"])
    assert canvas.selected == ["m:model.1"] and len(canvas._selection.data) == 0
    assert _outlined(_paint_overlay(canvas).boxes)
    canvas.select([])
    assert not _outlined(_paint_overlay(canvas).boxes)


class _Hover:
    """What pyqtgraph's hover event tells a scatter: where, in its own coordinates."""

    exit = False

    def __init__(self, x: float, y: float) -> None:
        self._pos = QPointF(x, y)

    def pos(self) -> QPointF:
        return self._pos


def test_hovering_a_card_draws_no_ring_over_its_text_but_a_mark_still_rings(qtbot) -> None:
    from tests.core.test_module_groups import SEQUENTIAL

    canvas = _canvas(qtbot)
    canvas.show_trace(run_source(SEQUENTIAL))
    with qtbot.waitSignal(canvas.layout_changed):
        canvas.toggle_module("model.1")
    markers = canvas.markers
    keys = list(markers.data["data"])
    card = canvas.graph.nodes["m:model.1"]
    markers.hoverEvent(_Hover(card.x, card.y))
    assert not markers.data["hovered"][keys.index("m:model.1")]
    leaf = next(n for n in canvas.graph.nodes.values() if n.kind == LEAF)
    markers.hoverEvent(_Hover(leaf.x, leaf.y))
    assert markers.data["hovered"][keys.index(leaf.id)]


def test_an_op_whose_row_below_is_taken_names_itself_above(qtbot) -> None:
    """Masked in-place writes (`out[mask] += …`) put ops in a tight row: 5 of the 17 op
    squares had no name (the row under each held its neighbours' names) though the row
    above was empty. Each op now says what it is, above its square when not below."""
    from autograd_viz.core.graph.graph_model import ACCUMULATE, OPERATION

    trace = run_source(
        "import torch\ntorch.manual_seed(0)\nw = torch.randn(3, requires_grad=True)\n"
        "x = torch.randn(4, 3)\nout = torch.zeros(4)\nmask = x[:, 0] > 0\n"
        "out[mask] += (x[mask] * w).sum(1)\nout[~mask] += (x[~mask] * w * 2).sum(1)\n"
        "out[0] += w.sum()\nloss = out.pow(2).mean()\nloss.backward()\n"
    )
    canvas = _canvas(qtbot)
    canvas.show_trace(trace)
    texts = _paint_overlay(canvas).texts
    ops = [n for n in canvas.graph.nodes.values() if n.kind in (OPERATION, ACCUMULATE)]
    names = [t for t in texts if any(t in (n.title, short_op_name(n.title)) for n in ops)]
    assert len(ops) == 17 and len(names) == len(ops)
    assert names.count("CopySlices") == 2 and "Acc" in names


def test_rows_closer_than_a_name_line_still_name_the_weights_where_they_fit(qtbot) -> None:
    """An MLP's training loop in a 1000×650 window: rows 27.5 px apart, under the 28 px a
    name under each row needs, and no label was drawn at all, though the weights' names
    fit left of their column. Such rows now name what clears everything."""
    trace = run_source(
        "import torch, torch.nn as nn\ntorch.manual_seed(0)\n"
        "X = torch.randn(16, 4); y = torch.randint(0, 3, (16,))\n"
        "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
        "opt = torch.optim.Adam(model.parameters(), lr=1e-2)\nloss_fn = nn.CrossEntropyLoss()\n"
        "for step in range(3):\n    opt.zero_grad()\n    logits = model(X)\n"
        "    loss = loss_fn(logits, y)\n    loss.backward()\n    opt.step()\n"
    )
    canvas, texts = _texts_at(qtbot, trace, 650, 330)
    assert canvas._overlay.last_spacing_px[1] < 28
    for name in ("X", "y", "model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"):
        assert name in texts


def test_a_narrow_frame_keeps_the_shortest_title_that_says_which_module(qapp) -> None:
    """A GAN's discriminator calls: each layer's frame too narrow for `D.0#1 · Linear`
    read `Li…`. The call count goes first (the frame around says which call), then the
    shortest form is cut."""
    from types import SimpleNamespace

    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFont

    from autograd_viz.ui.graph._fold_painting import (
        MIN_TITLED_FRAME_PX,
        MIN_TITLED_ROW_PX,
        _title_plate,
    )

    metrics = QFontMetricsF(QFont())
    info = SimpleNamespace(heading="D.0#1 · Linear", title="D.0#1", detail="Linear")

    def shown(width: float) -> str:
        plate = _title_plate(info, QRectF(0, 0, width, 40), metrics, MIN_TITLED_ROW_PX + 1)
        assert plate is not None
        return plate[0]

    assert shown(metrics.horizontalAdvance("D.0#1 · Linear") + 20) == "D.0#1 · Linear"
    assert shown(metrics.horizontalAdvance("D.0") + 17) == "D.0"
    assert shown(MIN_TITLED_FRAME_PX).startswith("D")  # never `Li…`


class _Placed(QPainter):
    """A real painter that keeps each text with where it was drawn."""

    def __init__(self, device) -> None:
        super().__init__(device)
        self.placed: list[tuple[str, QPointF]] = []

    def drawText(self, *args) -> None:  # Qt's own name
        if len(args) == 2 and isinstance(args[0], QPointF):
            self.placed.append((str(args[1]), QPointF(args[0])))
        super().drawText(*args)


def test_a_framed_weights_name_stays_inside_its_layers_frame(qtbot) -> None:
    """A GAN's generator: each layer's weight sits at its frame's left edge, and its name,
    centred under it, hung over the dashed border. It now moves along its row into the
    frame (it still fits under its node)."""
    from PySide6.QtGui import QImage

    from autograd_viz.ui.graph._fold_painting import screen_rect

    trace = run_source(
        "import torch, torch.nn as nn\ntorch.manual_seed(0)\n"
        "G = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 4))\n"
        "D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))\n"
        "bce = nn.BCEWithLogitsLoss()\nreal = torch.randn(6, 4); noise = torch.randn(6, 2)\n"
        "fake = G(noise)\n"
        "d_loss = bce(D(real), torch.ones(6, 1)) + bce(D(fake.detach()), torch.zeros(6, 1))\n"
        "d_loss.backward()\ng_loss = bce(D(fake), torch.ones(6, 1))\ng_loss.backward()\n"
    )
    canvas = _canvas(qtbot)
    canvas.resize(877, 450)
    canvas.show_trace(trace)
    canvas.grab()
    image = QImage(canvas.viewport().size(), QImage.Format.Format_ARGB32)
    painter = _Placed(image)
    overlay = canvas._overlay
    transform = overlay.deviceTransform(canvas.viewportTransform())
    painter.setTransform(transform)
    overlay.paint(painter)
    painter.end()
    graph = canvas.graph
    frame = screen_rect(transform, graph.frames["G.0"])
    metrics = QFontMetricsF(overlay._title_font)
    names = [(p, metrics.horizontalAdvance(t)) for t, p in painter.placed if t == "weight"]
    assert names  # G.0's weight, named by its short name inside the frame
    for point, width in names[:1]:
        assert frame.left() <= point.x() and point.x() + width <= frame.right()


def test_layers_too_close_for_every_ops_name_still_name_the_ops_that_have_room(qtbot) -> None:
    """A small CNN fitted at 34 px a layer: every op square went unnamed over a canvas
    two-thirds empty. Each op now says its short name where that clears everything."""
    trace = run_source(
        "import torch, torch.nn as nn, torch.nn.functional as F\ntorch.manual_seed(0)\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = nn.Conv2d(1, 4, 3, padding=1)\n        self.bn = nn.BatchNorm2d(4)\n"
        "        self.drop = nn.Dropout(0.25)\n"
        "        self.fc = nn.Linear(4 * 4 * 4, 10)\n    def forward(self, x):\n"
        "        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)\n"
        "        x = self.drop(x.flatten(1))\n"
        "        return self.fc(x)\nnet = Net()\n"
        "x = torch.randn(2, 1, 8, 8); y = torch.tensor([3, 7])\n"
        "loss = F.cross_entropy(net(x), y)\nloss.backward()\n"
    )
    canvas, texts = _texts_at(qtbot, trace, 877, 450)
    assert canvas._overlay.sparse() and not canvas._overlay.thin()
    for name in ("Convolution", "Relu", "Addmm", "weight", "loss"):
        assert name in texts


def test_an_error_while_painting_labels_is_reported_once_and_the_app_lives(
    qtbot, monkeypatch, capsys
) -> None:
    """A bug in the label pass left the painter saved, and Qt then crashed the whole app
    (a segfault). It is now said once on stderr, and the frames and edges still paint."""
    from autograd_viz.ui.graph._edges_item import GraphOverlayItem

    def broken(self, painter, screen, transform=None):
        raise ValueError("a bug in the labels")

    monkeypatch.setattr(GraphOverlayItem, "_paint_labels", broken)
    canvas = _canvas(qtbot)
    canvas.show_trace(run_source(DEFAULT_EXAMPLE.read_text(encoding="utf-8")))
    for _ in range(3):
        image = canvas.grab().toImage()
    assert capsys.readouterr().err.count("ValueError: a bug in the labels") == 1
    # The picture still has its markers and edges: not one flat background colour.
    colours = {
        image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)
    }
    assert len(colours) > 3


def test_no_label_is_placed_under_the_legend(qtbot) -> None:
    # A training loop folded beside 30 parameters: the rows are thin, and the last row's
    # `labels` was named under its node, half hidden by the legend.
    trace = run_source(VIT_LOOP)
    canvas = _canvas(qtbot)
    canvas.resize(880, 560)
    canvas.show_trace(trace)
    qtbot.waitUntil(lambda: not canvas.laying_out, timeout=60_000)
    legend = canvas.mapFromScene(canvas.legend.sceneBoundingRect()).boundingRect()
    placed = _paint_overlay(canvas).placed
    assert len([text for _, text in placed if text.startswith("model.")]) >= 8
    assert [text for rect, text in placed if rect.intersects(QRectF(legend))] == []


def test_a_frame_too_narrow_to_hold_its_title_has_it_centred_over_it(qapp) -> None:
    """A net/target pair: `net.1`, 32 px wide, had no `ReLU` title while `target.1`
    beside it, 38 px wide, had one. Under 36 px the shortest form is centred over the
    frame, whole; a plate that would cover another's is left out."""
    from types import SimpleNamespace

    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFont

    from autograd_viz.ui.graph._fold_painting import (
        MIN_NARROW_TITLED_PX,
        MIN_TITLED_FRAME_PX,
        MIN_TITLED_ROW_PX,
        _title_plate,
    )

    metrics = QFontMetricsF(QFont())
    relu = SimpleNamespace(heading="net.1 · ReLU", title="net.1", detail="ReLU")
    width = MIN_TITLED_FRAME_PX - 4
    box = QRectF(100, 50, width, 40)
    plate = _title_plate(relu, box, metrics, MIN_TITLED_ROW_PX + 1)
    assert plate is not None
    text, rect = plate
    assert text == min(("net.1", "ReLU"), key=metrics.horizontalAdvance)
    assert rect.width() == metrics.horizontalAdvance(text) + 6  # whole, never cut
    assert abs(rect.center().x() - box.center().x()) < 1e-6
    narrow = QRectF(100, 50, MIN_NARROW_TITLED_PX - 1, 40)
    assert _title_plate(relu, narrow, metrics, MIN_TITLED_ROW_PX + 1) is None


def test_narrow_frames_side_by_side_never_print_titles_over_each_other(qtbot) -> None:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QTransform

    from autograd_viz.core.graph.graph_model import DrawnGraph
    from autograd_viz.ui.graph._fold_painting import MIN_TITLED_FRAME_PX, _plates

    trace = run_source(
        "import torch, torch.nn as nn, copy\ntorch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
        "target = copy.deepcopy(net)\nx = torch.randn(5, 3)\n"
        "loss = (net(x) - target(x).detach()).pow(2).mean()\nloss.backward()\n"
    )
    canvas = _canvas(qtbot)
    canvas.resize(900, 500)
    canvas.show_trace(trace)
    graph: DrawnGraph = canvas.graph
    assert graph.frames
    metrics = QFontMetricsF(canvas._overlay._op_font)
    # Squeezed across until every layer's frame is narrow: the titles that are shown
    # never overlap, and a narrow frame still has one where there is room.
    for across in (2.0, 6.0, 12.0, 20.0, 40.0):
        transform = QTransform(across, 0, 0, -60.0, 50, 900)
        plates = _plates(transform, graph, metrics, QRectF(-1e6, -1e6, 2e6, 2e6))
        rects = [rect for _k, _b, text, rect in plates if text is not None]
        for i, a in enumerate(rects):
            for b in rects[i + 1 :]:
                assert not a.intersects(b), (across, a, b)
        narrow_titled = [
            key
            for key, box, text, _r in plates
            if text is not None and box.width() < MIN_TITLED_FRAME_PX
        ]
        if across == 20.0:
            assert narrow_titled, plates


TIED = """
import torch
from torch import nn
torch.manual_seed(0)
class TinyLM(nn.Module):
    def __init__(self, vocab=10, d=6):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.mix = nn.Linear(d, d)
        self.out = nn.Linear(d, vocab, bias=False)
        self.out.weight = self.emb.weight
    def forward(self, idx):
        return self.out(torch.relu(self.mix(self.emb(idx))))
lm = TinyLM()
idx = torch.tensor([[1, 2, 3], [4, 5, 6]])
loss = nn.functional.cross_entropy(lm(idx).view(-1, 10), idx.view(-1))
loss.backward()
"""


def test_a_weight_keeps_its_numbers_beside_a_lit_accumulategrad_and_a_close_column(
    qtbot,
) -> None:
    """A tied embedding's last backward step rings its AccumulateGrad, whose `Acc` took
    the row under it: the weight lost its value and .grad at the very step that wrote the
    .grad. The mix layer's weight, its value and .grad together too wide for the room left
    of the next op, showed its name alone. `Acc` now goes above where below is a leaf's
    label, and a label too wide for both lines keeps one of them."""
    from autograd_viz.core.playback.player import BACKWARD, Player

    trace = run_source(TIED)
    canvas = _canvas(qtbot)
    canvas.resize(877, 440)
    canvas.show_trace(trace)
    player = Player(trace, canvas.graph)
    player.set_mode(BACKWARD)
    player.to_end()
    assert player.current.caption.startswith("lm.emb.weight.grad: None → [10×6]")
    canvas.show_frame(player.frame())
    texts = _paint_overlay(canvas).texts
    emb = trace.index.tensor_named("lm.emb.weight")
    value, grad = player.label_at(emb.id, player.event_index())
    assert value in texts and grad in texts and "Acc" in texts
    # The mix layer's weight says its .grad or its value, not its name alone.
    mix = trace.index.tensor_named("lm.mix.weight")
    assert set(player.label_at(mix.id, player.event_index())) & set(texts)


@pytest.mark.parametrize("size", [(877, 440), (877, 480), (877, 520), (900, 600)])
def test_an_op_name_above_its_mark_keeps_a_gap_from_the_label_over_it(qtbot, size) -> None:
    """A GRU cell's column of AccumulateGrads: `Acc` under one triangle and `Acc` over the
    next touched, and read as one label of two lines between two triangles."""
    trace = run_source(
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "cell = nn.GRUCell(4, 8)\nreadout = nn.Linear(8, 1)\n"
        "xs = torch.randn(20, 3, 4)\nh = torch.zeros(3, 8)\noutputs = []\n"
        "for t in range(20):\n    h = cell(xs[t], h)\n    outputs.append(readout(h))\n"
        "pred = torch.stack(outputs).squeeze(-1)\nloss = pred.pow(2).mean()\nloss.backward()\n"
    )
    canvas = _canvas(qtbot)
    canvas.resize(*size)
    with qtbot.waitSignal(canvas.trace_drawn, timeout=60_000):
        canvas.show_trace(trace)
    placed = [r for r, text in _paint_overlay(canvas).placed if text in ("Acc", "AccumulateGrad")]
    assert placed
    for i, a in enumerate(placed):
        for b in placed[i + 1 :]:
            if a.left() < b.right() and b.left() < a.right():  # one over the other
                gap = max(b.top() - a.bottom(), a.top() - b.bottom())
                assert gap >= 4, (a, b)
