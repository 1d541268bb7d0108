"""Node labels and the gradients written on edges, painted so that none collide: the
label half of the graph overlay (GraphOverlayItem mixes this in)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QTransform

from autograd_viz.core.graph.graph_model import ACCUMULATE, MODULE, OPERATION, UNTRACKED
from autograd_viz.ui.graph._fold_painting import frame_title_rects, screen_rect
from autograd_viz.ui.graph._graph_style import LIT_GROW_PX, LIT_PEN_PX, STYLES
from autograd_viz.ui.graph._label_measure import (
    _keep_inside,
    _Measure,
    _room_beside,
    short_op_name,
)
from autograd_viz.ui.graph._label_placing import LabelPlacer
from autograd_viz.ui.graph._screen_geometry import ScreenPositions

_NO_PEN = Qt.PenStyle.NoPen  # looked up once (each lookup is slow)
ABOVE_GAP_PX = 6.0  # see _paint_labels

BESIDE_GAP_PX = 3.0  # between a mark and a name written left of it
# Where a label goes: under its mark (first choice), left of it (a tensor's name), over it.
_BELOW, _LEFT, _ABOVE = "below", "left", "above"


class LabelPainting:
    """Labels and edge texts for GraphOverlayItem: it has the graph, fonts, frame and
    colours, and says the zoom's level of labels (compact, names_only)."""

    @property
    def measure(self) -> _Measure:
        """The item's text measurer (made on first use)."""
        m = self.__dict__.get("_measure")
        if m is None:
            m = self.__dict__["_measure"] = _Measure()
        return m

    def label_half_widths(self, keys) -> dict[str, float]:
        """Half the width of each node's widest label line, as drawn in full."""
        w = self.measure.width
        op, title, detail = self._op_font, self._title_font, self._detail_font
        half: dict[str, float] = {}
        for key in keys:
            node = self._graph.nodes[key]
            if node.kind == MODULE:
                half[key] = 0.0  # its text is inside its box, which the fit holds anyway
            elif node.kind in (OPERATION, ACCUMULATE):
                half[key] = w(op, node.title) / 2
            else:
                texts = (node.detail, node.grad)
                if self.frame is not None and key in self.frame.labels:
                    texts = self.frame.labels[key]  # what this moment of playback shows
                lines = [w(title, self._graph.short.get(key, node.title))]
                lines += [w(detail, t) for t in texts if t]
                half[key] = max(lines) / 2
        return half

    def _paint_edge_labels(
        self, painter: QPainter, placer: LabelPlacer | None = None, lit: Sequence[QRectF] = ()
    ) -> None:
        """The gradient each hot edge carries (and a cut's `✂ detach()`), on a plate on its
        edge: at its middle, or further along it where that is taken by another label or
        a mark (two gradients into one node would cover each other). Where every spot is
        taken, never under `lit`, the marks the step rings: they are drawn over the plate
        (`∂ [2×10] -1.47…1.42` went under the lit AddmmBackward0 of a crowded frame)."""
        metrics = QFontMetricsF(self._grad_font)
        painter.setFont(self._grad_font)
        height = metrics.height()
        for n, (line, text, colour) in enumerate(self._edge_texts):
            x1, y1, x2, y2 = (float(v) for v in line)
            width = self.measure.width(self._grad_font, text)
            # Along the edge, then a plate's height above or below it: a short edge
            # between two marks leaves no room on the line itself.
            spots = [
                QRectF(
                    x1 + (x2 - x1) * t - width / 2 - 3,
                    y1 + (y2 - y1) * t - height - 4 + lift * (height + 4),
                    width + 6,
                    height + 2,
                )
                for lift in (0, -1, 1, -2, 2)  # two plates off: past a lit node's ring
                for t in (0.5, 0.35, 0.65, 0.22, 0.78)
            ]
            # Clear of marks and labels; else of labels and the lit marks; else of the lit
            # marks; else at the middle, all the same.
            owner = f"edge{n}"
            if placer is None:
                chosen = 0
            else:
                chosen = next((i for i, r in enumerate(spots) if placer.free(owner, r)), None)
                if chosen is None:
                    clear = [
                        i for i, r in enumerate(spots) if not any(r.intersects(m) for m in lit)
                    ]
                    chosen = next(
                        (i for i in clear if placer.free(owner, spots[i], marks=False)),
                        clear[0] if clear else 0,
                    )
                placer.take(owner, spots[chosen])
            box = spots[chosen]
            painter.setPen(_NO_PEN)
            painter.setBrush(QColor(*self.colours.label_box))
            painter.drawRoundedRect(box, 3, 3)
            painter.setPen(QColor(colour))
            painter.drawText(QPointF(box.x() + 3, box.y() + 1 + metrics.ascent()), text)

    def _framed(self) -> set[str]:
        """The drawn nodes inside some open group's frame, once per picture (not per
        paint: a 10,000-node picture opened in full has as many)."""
        graph = self._graph
        if getattr(self, "_framed_of", None) is not graph:
            self._framed_of = graph
            self._framed_set = {m for members in graph.groups.values() for m in members}
        return self._framed_set

    def _frame_of(self) -> dict[str, str]:
        """Each framed node's innermost frame, once per picture."""
        graph = self._graph
        if getattr(self, "_frame_of_graph", None) is not graph:
            frames = graph.frames
            area = {k: abs((r[2] - r[0]) * (r[3] - r[1])) for k, r in frames.items()}
            owner: dict[str, str] = {}
            for key, members in graph.groups.items():
                if key not in frames:
                    continue
                for m in members:
                    known = owner.get(m)
                    if known is None or area[key] < area[known]:
                        owner[m] = key
            self._frame_of_graph, self._frame_of_map = graph, owner
        return self._frame_of_map

    def _paint_labels(
        self,
        painter: QPainter,
        screen: Mapping[str, QPointF],
        transform: QTransform | None = None,
    ) -> None:
        view = painter.viewport()
        measure = self.measure
        title_metrics = measure.metrics(self._title_font)
        detail_metrics = measure.metrics(self._detail_font)
        op_metrics = measure.metrics(self._op_font)
        compact, names, sparse = self.compact(), self.names_only(), self.sparse()
        thin = self.thin()
        framed = self._framed()
        c = self.colours
        reach = view.adjusted(-200, -100, 200, 100)
        # Only the nodes near the view are measured and labelled (a big graph zoomed in
        # shows a few dozen of its thousands).
        if isinstance(screen, ScreenPositions):
            shown = screen.inside(QRectF(reach))
        else:
            shown = {k: p for k, p in screen.items() if reach.contains(p.toPoint())}
        half = self.label_half_widths(shown)
        room = _room_beside(shown, half)
        short = self._graph.short
        nodes = self._graph.nodes
        # Every mark in reach, and every card, is taken before any label is placed.
        marks = []
        # The node a step runs is drawn bigger and ringed, over the labels: a gradient's
        # plate beside it must clear its ring, not its usual mark (`∂ [1.0, 0.5]` was half
        # hidden under a lit AddBackward0).
        step = self.frame.step if self.frame is not None else None
        lit = step.lit if step is not None else frozenset()
        for key, centre in shown.items():
            size = STYLES[nodes[key].kind].size
            if key in lit:
                size += LIT_GROW_PX + LIT_PEN_PX
            marks.append((key, QRectF(centre.x() - size / 2, centre.y() - size / 2, size, size)))
        if transform is not None:  # the cards, where the layout's rectangles are known
            marks += [(k, screen_rect(transform, r)) for k, r in self._graph.boxes.items()]
        if transform is not None:
            # The frames' titles, painted under the labels: a label with its value lines
            # keeps clear of them (y_true's, above the model's frame, was written over
            # its title); a name alone may touch one, as it may a mark.
            titles = frame_title_rects(transform, self._graph, self._op_font, QRectF(view))
            marks += [(f"frame {key}", rect) for key, rect in titles]
        placer = LabelPlacer(marks)
        for rect in self.covered() if transform is not None else ():
            placer.take("covered", transform.mapRect(rect))  # not even a name alone goes there
        # Nor over a card, whose text a name would print over (`weights` across a folded
        # loop's `×4`): the layout's rectangles, where they are known.
        for key, rect in marks:
            if key in self._graph.boxes:
                placer.take(key, rect)
        # A framed node's label stays inside its innermost frame, moved along its row if
        # it would hang over the border (`weight` under a layer's first weight).
        frame_of = self._frame_of() if transform is not None else {}
        frame_rects: dict[str, QRectF] = {}  # each frame mapped once, when a label needs it
        # The op the step runs keeps its name: the gradients placed next go around it
        # (MulBackward0's own ∂ plates took the spot under it, and its name was dropped).
        # Below its mark, or above it where below would take a tensor's value lines (a
        # lit AccumulateGrad's `Acc` under it took the row its leaf's label needs: the
        # embedding's weight lost its value and .grad at the very step that wrote it).
        wanted: list[QRectF] | None = None
        above_lit: set[str] = set()  # lit ops whose name is kept above their ring
        for key in step.lit if step is not None and not sparse else ():
            node, centre = nodes.get(key), shown.get(key)
            if node is not None and centre is not None and node.kind in (OPERATION, ACCUMULATE):
                grown = (STYLES[node.kind].size + LIT_GROW_PX + LIT_PEN_PX) / 2
                top = centre.y() + grown + 3
                # As wide as the name it is drawn with below (`Acc` where `AccumulateGrad`
                # does not fit): the full width took the leaf's label beside it away.
                title = node.title
                if compact or half.get(key, 0.0) > room.get(key, float("inf")):
                    title = short_op_name(title)
                lines = [(title, self._op_font, op_metrics, c.op)]
                rect = self._lines_rect(lines, centre.x(), top)
                if not names:
                    if wanted is None:
                        wanted = self._value_rects(shown, lit, (title_metrics, detail_metrics))
                    if any(rect.intersects(r) for r in wanted):
                        above = QRectF(rect)
                        above.moveBottom(centre.y() - grown - 3)
                        if QRectF(view).contains(above) and not any(
                            above.intersects(r) for r in wanted
                        ):
                            rect = above
                            above_lit.add(key)
                placer.take(key, rect)
        lit_marks = [rect for key, rect in marks if key in lit]
        self._paint_edge_labels(painter, placer, lit_marks)  # the gradients first: the step
        # Names before operations, left to right: where two collide, a tensor keeps its
        # label and an op name is shortened or left to the tooltip.
        ordered = sorted(
            shown.items(),
            key=lambda kv: (nodes[kv[0]].kind in (OPERATION, ACCUMULATE), kv[1].x(), kv[1].y()),
        )
        for key, centre in ordered:
            node = nodes[key]
            if node.kind == MODULE:
                continue  # a card's text is inside it
            op = node.kind in (OPERATION, ACCUMULATE, UNTRACKED)
            if op and (thin or (sparse and node.kind == UNTRACKED)):
                continue  # layers too close: the tensors' names only
            if thin and (not node.title or node.title == "(leaf)"):
                continue  # closer still: only a name says more than the mark
            y = centre.y() + STYLES[node.kind].size / 2 + 3
            if key in lit:  # under its ring
                y += (LIT_GROW_PX + LIT_PEN_PX) / 2
            if node.kind in (OPERATION, ACCUMULATE):
                title = node.title
                # Shortened at low zoom, or where the full name would run into the label
                # of the next node on its row (AccumulateGrad beside AddmmBackward0).
                if compact or half[key] > room[key]:
                    title = short_op_name(title)
                lines = [(title, self._op_font, op_metrics, c.op)]
            else:
                detail, grad = node.detail, node.grad
                if self.frame is not None and key in self.frame.labels:
                    detail, grad = self.frame.labels[key]
                title = short.get(key, node.title)  # `weight` inside model.0's frame
                too_wide = measure.width(self._title_font, title) / 2 > room[key]
                if node.kind == UNTRACKED and too_wide:
                    # `kaiming_uniform (no_grad)` beside `zero_ (no_grad)`: the grey box and
                    # its dotted edges already say no_grad; then elide what still collides.
                    title = title.removesuffix(" (no_grad)")
                    width = max(2 * room[key], measure.width(self._title_font, "m…"))
                    title = measure.elided(self._title_font, title, width)
                lines = [(title, self._title_font, title_metrics, c.title)]
                if names:  # rows too close for more: the value and .grad are in the tooltip
                    detail = grad = ""
                if detail:
                    lines.append((detail, self._detail_font, detail_metrics, c.detail))
                if grad:
                    lines.append((grad, self._detail_font, detail_metrics, c.grad))
            # The fullest form that collides with nothing: every line, the name with its
            # .grad or its value, the name alone, the name shortened; else none (the
            # tooltip still says it all).
            title_line = lines[0]
            name, font, metrics, colour = title_line
            shorter = short_op_name(name) if node.kind in (OPERATION, ACCUMULATE) else name
            tight = measure.elided(font, shorter, 48.0)
            variants = [lines, [title_line]]
            if len(lines) == 3:
                # Where value and .grad together are too wide, one of them still reads,
                # the .grad first (a weight in a narrow frame, a column from the next op,
                # showed its name alone).
                variants[1:1] = [[title_line, lines[2]], [title_line, lines[1]]]
            variants += [[(text, font, metrics, colour)] for text in (shorter, tight)]
            places = [(v, _BELOW) for v in variants]
            # A tensor's name alone may also go left of its mark, whole, before it is cut
            # short below: an input at the left edge of a dense picture (a decoder's `tgt`
            # and `memory`, a column of weights) has room there when the row below it is
            # taken. Not in a frame: it would cross its border.
            if node.kind not in (OPERATION, ACCUMULATE, UNTRACKED) and key not in framed:
                places.insert(len(variants) - 2, ([title_line], _LEFT))
            elif node.kind in (OPERATION, ACCUMULATE):
                # An op whose row below is taken (its neighbours' names, a tensor's value
                # lines) names itself above its square, where there is room.
                places += [(variant, _ABOVE) for variant in variants[1:]]
                if key in above_lit:  # where its name was kept for it
                    places.insert(0, ([title_line], _ABOVE))
            # At the thinnest zoom a name crossing a mark is noise, and so is an op's
            # where layers are too close for every op's name: each says its short name
            # only where that clears everything, below or above its square (a CNN's
            # Conv, Relu and MaxPool squares went unnamed over an empty canvas).
            crossing = not thin and not (sparse and op)
            if crossing:
                places.append(([title_line], _BELOW))  # the name may cross a mark, not a label
            chosen = None
            half_mark = STYLES[node.kind].size / 2
            for i, (variant, where) in enumerate(places):  # measured only until one fits
                rect = self._lines_rect(variant, centre.x(), y)
                if where == _LEFT:
                    rect.moveTopRight(
                        QPointF(
                            centre.x() - half_mark - BESIDE_GAP_PX, centre.y() - rect.height() / 2
                        )
                    )
                elif where == _ABOVE:  # as far over the mark as `y` is under it
                    rect.moveBottom(2 * centre.y() - y)
                frame = frame_of.get(key) if where != _LEFT else None
                if frame is not None:
                    box = frame_rects.get(frame)
                    if box is None:
                        box = frame_rects[frame] = screen_rect(transform, self._graph.frames[frame])
                    _keep_inside(rect, box)
                if (thin or where != _BELOW) and not QRectF(view).contains(rect):
                    continue  # the fit keeps no room for it: cut at the edge, it misleads
                # Above its mark, a name keeps a line's gap from what is over it: `Acc`
                # under one triangle and `Acc` over the next read as one label of two.
                gap = where == _ABOVE and key not in above_lit  # (a lit op's place is kept)
                probe = rect.adjusted(0, -ABOVE_GAP_PX, 0, 0) if gap else rect
                if placer.free(key, probe, marks=not crossing or i < len(places) - 1):
                    placer.take(key, rect)
                    chosen = rect, variant, where
                    break
            if chosen is None:
                continue
            rect, lines, where = chosen
            top = rect.top()
            for text, font, metrics, colour in lines:
                painter.setFont(font)
                painter.setPen(QColor(colour))
                width = measure.width(font, text)
                x = rect.right() - width if where == _LEFT else rect.center().x() - width / 2
                painter.drawText(QPointF(x, top + metrics.ascent()), text)
                top += metrics.height()

    def _value_rects(
        self, shown: Mapping[str, QPointF], lit: frozenset[str], metrics
    ) -> list[QRectF]:
        """Where each shown tensor's label would go with its value lines, under its mark:
        the rows a lit op's name keeps clear of when it can."""
        title_metrics, detail_metrics = metrics
        nodes, labels = self._graph.nodes, self.frame.labels if self.frame is not None else {}
        rects = []
        for key, centre in shown.items():
            node = nodes[key]
            if node.kind in (OPERATION, ACCUMULATE, UNTRACKED, MODULE):
                continue
            detail, grad = labels.get(key, (node.detail, node.grad))
            texts = [t for t in (detail, grad) if t]
            if not texts:
                continue
            y = centre.y() + STYLES[node.kind].size / 2 + 3
            if key in lit:
                y += (LIT_GROW_PX + LIT_PEN_PX) / 2
            title = self._graph.short.get(key, node.title)
            width = max(
                self.measure.width(self._title_font, title),
                *(self.measure.width(self._detail_font, t) for t in texts),
            )
            height = title_metrics.height() + len(texts) * detail_metrics.height()
            rects.append(QRectF(centre.x() - width / 2, y, width, height))
        return rects

    def _lines_rect(self, lines, x: float, y: float) -> QRectF:
        """Where label lines centred on `x`, starting at `y`, are drawn."""
        width = max(self.measure.width(font, text) for text, font, _, _ in lines)
        height = sum(metrics.height() for _, _, metrics, _ in lines)
        return QRectF(x - width / 2, y, width, height)
