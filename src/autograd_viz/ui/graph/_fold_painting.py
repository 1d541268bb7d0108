"""Painting a folded picture's frames and boxes, in screen pixels, from the rectangles the
layout gave them (so they nest and never overlap at any zoom)."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen, QTransform

from autograd_viz.core.graph.fold_tree import ITERATION, LOOP, MIDDLE, REPEAT
from autograd_viz.core.graph.graph_model import DrawnGraph
from autograd_viz.core.graph.node_look import LOOP_COLOUR
from autograd_viz.core.playback.player import Frame
from autograd_viz.ui.graph._card_text import card_rows, title_scale, without_call_count
from autograd_viz.ui.graph._graph_style import CanvasColours

_STACKED = (REPEAT, LOOP, MIDDLE)  # drawn as a stack of cards: several of one thing
MIN_FRAME_PX = 8.0  # frames smaller than this on screen are not drawn
MANY_FRAMES = 120  # past this many frames in view, plain lines
MIN_TITLED_ROW_PX = 22.0  # rows closer than this leave no room for frames' titles
MIN_TITLED_FRAME_PX = 36.0  # narrower than this, a frame's title is centred over it
MIN_NARROW_TITLED_PX = 20.0  # a frame narrower than this has no title at all
OVERHANG_PX = 12.0  # how far past a narrow frame's corner a short title may reach


def screen_rect(transform: QTransform, rect: tuple[float, float, float, float]) -> QRectF:
    """A layout rectangle (left, bottom, right, top) in screen pixels."""
    left, bottom, right, top = rect
    return transform.mapRect(QRectF(QPointF(left, bottom), QPointF(right, top))).normalized()


def _frame_arrays(graph: DrawnGraph) -> tuple[list[str], np.ndarray]:
    """The graph's frames as keys and an (n, 4) array, made once per graph."""
    cached = graph.__dict__.get("_frame_arrays")
    if cached is None:
        keys = list(graph.frames)
        rects = np.array([graph.frames[k] for k in keys], dtype=float).reshape(-1, 4)
        cached = graph.__dict__["_frame_arrays"] = (keys, rects)
    return cached


def box_gap(rect: QRectF, ux: float, uy: float) -> float:
    """How far from a box's centre its border is, going in direction (ux, uy): where an
    edge into or out of the box starts or ends."""
    hw, hh = rect.width() / 2, rect.height() / 2
    across = hw / abs(ux) if abs(ux) > 1e-9 else math.inf
    down = hh / abs(uy) if abs(uy) > 1e-9 else math.inf
    return min(across, down) + 2


def _tint(colour: QColor, background: QColor, share: float) -> QColor:
    """`colour` laid over `background` at `share`, as one opaque colour."""
    return QColor(
        round(background.red() + (colour.red() - background.red()) * share),
        round(background.green() + (colour.green() - background.green()) * share),
        round(background.blue() + (colour.blue() - background.blue()) * share),
    )


def _kind_colour(kind: str, colours: CanvasColours) -> QColor:
    return QColor(LOOP_COLOUR if kind in (LOOP, ITERATION, MIDDLE) else colours.group)


def _shown_frames(
    transform: QTransform, graph: DrawnGraph, view: QRectF
) -> list[tuple[str, QRectF]]:
    """The frames big enough to see and inside `view`, in screen pixels."""
    keys, rects = _frame_arrays(graph)
    # Every frame mapped at once (a long loop opened in full has thousands); one a few
    # pixels wide says nothing at this zoom, and one outside the view is not drawn.
    x0 = transform.m11() * rects[:, 0] + transform.dx()
    x1 = transform.m11() * rects[:, 2] + transform.dx()
    y0 = transform.m22() * rects[:, 3] + transform.dy()  # the top edge, rows going down
    y1 = transform.m22() * rects[:, 1] + transform.dy()
    left, right = np.minimum(x0, x1), np.maximum(x0, x1)
    top, bottom = np.minimum(y0, y1), np.maximum(y0, y1)
    keep = (right - left >= MIN_FRAME_PX) & (bottom - top >= MIN_FRAME_PX)
    keep &= (right >= view.left()) & (left <= view.right())
    keep &= (bottom >= view.top()) & (top <= view.bottom())
    return [
        (keys[i], QRectF(left[i], top[i], right[i] - left[i], bottom[i] - top[i]))
        for i in np.flatnonzero(keep)
    ]


def _title_plate(
    info, box: QRectF, metrics: QFontMetricsF, row_px: float
) -> tuple[str, QRectF] | None:
    # The title sits on the frame's top edge, as a fieldset's legend does: the rows leave
    # half a row between frames and what they hold, so it fits at every zoom that leaves
    # a row more than about a line of text.
    if info is None or row_px < MIN_TITLED_ROW_PX or box.width() < MIN_NARROW_TITLED_PX:
        return None
    # The fullest form that fits: the name and class, else the name (`model.1`), else the
    # class (`ReLU`, `×300`); a narrow frame says one of them rather than nothing (a CNN's
    # ReLU, MaxPool2d and Flatten frames were untitled).
    # Then the name without its call count (`D.0#1` → `D.0`: the frame around says which
    # call); where none fits, the shortest of them is cut (a GAN's `Li…` read `D.0`).
    name = without_call_count(info.title)
    bare = (name,) if name is not None else ()
    forms = (info.heading, info.title, *bare, info.detail) if info.detail else (info.title, *bare)
    top = box.y() - metrics.height() / 2
    if box.width() < MIN_TITLED_FRAME_PX:
        # Too narrow to start the title inside it: its shortest form, whole, centred over
        # the frame and reaching past both corners (a 32 px `ReLU` frame was untitled).
        heading = min(forms, key=metrics.horizontalAdvance)
        width = metrics.horizontalAdvance(heading) + 6
        if width > box.width() + 2 * OVERHANG_PX:
            return None
        return heading, QRectF(box.center().x() - width / 2, top, width, metrics.height())
    room = box.width() - 16
    fits = [f for f in forms if metrics.horizontalAdvance(f) <= room]
    heading = fits[0] if fits else min(forms, key=metrics.horizontalAdvance)
    # A short name a little wider than the room overhangs the frame's corner whole
    # rather than read `…`; a longer one is cut, and one cut to nothing is left out.
    if metrics.horizontalAdvance(heading) <= room + OVERHANG_PX:
        room += OVERHANG_PX
    text = metrics.elidedText(heading, Qt.TextElideMode.ElideRight, room)
    if not text or text == "…":
        return None
    width = metrics.horizontalAdvance(text)
    return text, QRectF(box.x() + 8, top, width + 6, metrics.height())


def _plates(
    transform: QTransform, graph: DrawnGraph, metrics: QFontMetricsF, view: QRectF
) -> list[tuple[str, QRectF, str | None, QRectF]]:
    """Each shown frame with its box and, where it has one, its title and the title's plate.
    A plate that would cover one placed before it is left out: those of frames wide
    enough to hold their titles are placed first, then the narrow frames' centred ones."""
    row_px = _row_px(transform)
    shown = [
        (key, box, _title_plate(graph.folds.get(key), box, metrics, row_px))
        for key, box in _shown_frames(transform, graph, view)
    ]
    placed: list[QRectF] = []
    titles: dict[str, tuple[str, QRectF]] = {}
    for narrow in (False, True):
        for key, box, plate in shown:
            if plate is None or (box.width() < MIN_TITLED_FRAME_PX) != narrow:
                continue
            if not any(plate[1].intersects(other) for other in placed):
                placed.append(plate[1])
                titles[key] = plate
    return [
        (key, box, *(titles[key] if key in titles else (None, QRectF()))) for key, box, _ in shown
    ]


def _row_px(transform: QTransform) -> float:
    return abs(transform.map(QPointF(0, 0)).y() - transform.map(QPointF(0, 1)).y())


def frame_title_rects(
    transform: QTransform, graph: DrawnGraph, font: QFont, view: QRectF
) -> list[tuple[str, QRectF]]:
    """Where the frames' titles are drawn, in screen pixels: node labels keep clear of them
    (y_true's value line, above the model's frame, was written over its title)."""
    if not graph.frames:
        return []
    plates = _plates(transform, graph, QFontMetricsF(font), view)
    return [(key, rect) for key, _box, text, rect in plates if text is not None]


def paint_frames(
    painter: QPainter,
    transform: QTransform,
    graph: DrawnGraph,
    colours: CanvasColours,
    font: QFont,
) -> None:
    """A dashed frame around each open group, its title in the band along its top where
    the zoom leaves room for it (and elided to the frame's width)."""
    metrics = QFontMetricsF(font)
    painter.setFont(font)
    shown = _plates(transform, graph, metrics, QRectF(painter.viewport()))
    many = len(shown) > MANY_FRAMES  # then plain lines: dashes and fills cost a frame's time
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, not many)
    for key, box, text, rect in shown:
        info = graph.folds.get(key)
        kind = info.kind if info is not None else ""
        colour = _kind_colour(kind, colours)
        if many:
            painter.setPen(QPen(colour, 0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(box)
        else:
            # An opaque tint, deeper for each level in: the same look as stacked
            # translucent fills, at a fraction of the cost of blending big areas.
            depth = info.depth if info is not None else 1
            painter.setPen(QPen(colour, 1.0, Qt.PenStyle.DashLine))
            painter.setBrush(_tint(colour, QColor(colours.background), min(0.3, 0.055 * depth)))
            painter.drawRoundedRect(box, 6, 6)
        if text is None:
            continue
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(colours.background))
        painter.drawRect(rect)
        painter.setPen(colour)
        painter.drawText(QPointF(rect.x() + 3, rect.y() + metrics.ascent()), text)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)


def _scaled(font: QFont, scale: float) -> QFont:
    """`font` at `scale` of its size."""
    smaller = QFont(font)
    if font.pointSizeF() > 0:
        smaller.setPointSizeF(font.pointSizeF() * scale)
    else:
        smaller.setPixelSize(max(1, round(font.pixelSize() * scale)))
    return smaller


def paint_boxes(
    painter: QPainter,
    transform: QTransform,
    graph: DrawnGraph,
    colours: CanvasColours,
    fonts: tuple[QFont, QFont],
    frame: Frame | None,
    selected: frozenset[str] = frozenset(),
) -> None:
    """Each folded group as a card with its name, what it is, its shapes and parameters:
    as many lines as its height holds, wrapped or cut to its width; the title always. A
    repeat or loop is a stack of cards. A box lights up while an op inside it runs; a
    selected one is outlined in the selection's colour (a ring at its centre hid its
    text)."""
    title_font, detail_font = fonts
    title_metrics, detail_metrics = QFontMetricsF(title_font), QFontMetricsF(detail_font)
    lit = frame.step.lit if frame is not None and frame.step is not None else frozenset()
    visited = frame.visited if frame is not None else None
    view = QRectF(painter.viewport())
    for box_key, rect in graph.boxes.items():
        box = screen_rect(transform, rect)
        if not box.intersects(view):
            continue
        key = box_key[2:]
        info = graph.folds.get(key)
        kind = info.kind if info is not None else ""
        colour = _kind_colour(kind, colours)
        faded = visited is not None and box_key not in visited and box_key not in lit
        fill = _tint(colour, QColor(colours.background), 0.11 if faded else 0.22)
        border = QColor(colour)
        if faded:
            border.setAlpha(90)
        if kind in _STACKED:  # two cards behind: several of one thing
            for offset in (6, 3):
                painter.setPen(QPen(border, 1.0))
                painter.setBrush(QColor(colours.background))
                painter.drawRoundedRect(box.translated(offset, -offset), 6, 6)
        pen = QPen(QColor(colours.current), 3.0) if box_key in lit else QPen(border, 1.4)
        painter.setPen(pen)
        painter.setBrush(fill)  # opaque: one pass, no blending
        painter.drawRoundedRect(box, 6, 6)
        if box_key in selected:
            painter.setPen(QPen(QColor(colours.selection), 2.5))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(box.adjusted(-4, -4, 4, 4), 8, 8)
        lines = graph.box_text.get(box_key) or [graph.nodes[box_key].title]
        inner = box.adjusted(6, 3, -6, -3)
        y = inner.y()
        both = (title_metrics, detail_metrics)
        for i, text in card_rows(lines, both, inner.width(), inner.height()):
            metrics, font = (title_metrics, title_font) if i == 0 else (detail_metrics, detail_font)
            if i == 0 and (scale := title_scale(metrics, text, inner.width())) < 1.0:
                font = _scaled(font, scale)
            painter.setFont(font)
            painter.setPen(QColor(colours.title if i == 0 else colours.detail))
            if faded:
                painter.setOpacity(0.55)
            painter.drawText(QPointF(inner.x(), y + metrics.ascent()), text)
            painter.setOpacity(1.0)
            y += metrics.height()
