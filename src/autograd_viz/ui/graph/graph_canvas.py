"""The graph canvas: the autograd graph PyTorch built, drawn with pyqtgraph."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Signal
from PySide6.QtGui import QBrush, QPen
from PySide6.QtWidgets import QWidget

from autograd_viz.core.graph.graph_model import ACCUMULATE, MODULE, DrawnGraph
from autograd_viz.core.playback.freeing import freed_at
from autograd_viz.core.playback.player import Frame
from autograd_viz.core.playback.run_view import EMPTY_MESSAGE, RunView, ShownRun, prepare_run
from autograd_viz.core.trace import Trace
from autograd_viz.ui.graph._canvas_jobs import CanvasJobs
from autograd_viz.ui.graph._canvas_navigation import MINIMAP_MARGIN_PX, CanvasNavigation
from autograd_viz.ui.graph._clicks import CanvasClicks
from autograd_viz.ui.graph._crowding import column_pitch, row_room
from autograd_viz.ui.graph._describe import canvas_tooltip
from autograd_viz.ui.graph._edges_item import NAMES_MIN_DY_PX, SPARSE_DX_PX, GraphOverlayItem
from autograd_viz.ui.graph._graph_style import DARK, LIGHT, STYLES
from autograd_viz.ui.graph._graph_view_box import GraphViewBox
from autograd_viz.ui.graph._layout_job import BACKGROUND_LAYOUT_SIZE
from autograd_viz.ui.graph._legend import legend_in_layout, make_legend, recolour_legend
from autograd_viz.ui.graph._marker_item import MarkerItem
from autograd_viz.ui.graph._marker_styling import STATES, MarkerStyling
from autograd_viz.ui.graph._minimap import Minimap
from autograd_viz.ui.graph._saved_sizes import saved_scales

MIN_READABLE_WIDTH = 24.0  # layers a first picture may take in the narrowest canvas
MIN_READABLE_HEIGHT = 8.0  # and rows
LEGEND_ROOM_PX = 60.0  # what the legend and margins take of the canvas's height


class GraphCanvas(CanvasNavigation, MarkerStyling, pg.PlotWidget):
    """Draws the run a RunView shows, and follows it: its graph, the player's moment, the
    selection. Zoom with the wheel, pan by dragging, click a node to select it."""

    node_clicked = Signal(str)  # id of a trace tensor ("t3") or node ("n5")
    why_asked = Signal(str)  # a right-click asked why a tensor's .grad is what it is
    layout_changed = Signal()  # a module was collapsed or opened: positions moved
    graph_drawn = Signal(int)  # number of marks drawn
    trace_drawn = Signal(object)  # a trace passed to show_trace is now on screen

    def __init__(self, parent: QWidget | None = None, view: RunView | None = None) -> None:
        self.colours = LIGHT
        super().__init__(parent, background=self.colours.background, viewBox=GraphViewBox())
        self.setObjectName("graphCanvas")
        plot = self.getPlotItem()
        plot.hideAxis("left")
        plot.hideAxis("bottom")
        plot.setMenuEnabled(False)
        plot.hideButtons()
        self.view = view if view is not None else RunView()
        # Each marker's playback state (an index into STATES), as last drawn.
        self._states = np.zeros(0, dtype=np.int8)
        self._node_index: dict[str, int] = {}  # drawn id -> its marker's index
        self._kinds: list[str] = []  # each marker's node kind
        self.jobs = CanvasJobs(self.view, self)  # big layouts, replays and refolds
        self.frame: Frame | None = None
        self._looks: dict[tuple[str, str], tuple[QBrush, QPen, int]] = {}
        self.freed_at_end: set[str] = set()
        # View → Size nodes by bytes saved: each marker's size factor, or None when off.
        self.size_by_saved = False
        self._scales: np.ndarray | None = None
        # Markers smaller where the zoom brings a column's rows too close (_crowding.py):
        # the least gap between two rows of one column, the tallest marker, the share.
        self._pitch: float | None = None
        self._row_room: float | None = None  # see _crowding.row_room
        self._tallest_px = 0.0
        self._crowd = 1.0
        self._overlay = GraphOverlayItem()
        self._overlay.setZValue(-1)
        self._markers = MarkerItem(
            pxMode=True,
            hoverable=True,
            tip=self._tooltip,
            hoverPen=pg.mkPen(self.colours.current, width=2),
        )
        self.clicks = CanvasClicks(self)  # clicks on marks and cards: select, inspect, open
        self._markers.sigClicked.connect(self.clicks.on_marker)
        self._selection = pg.ScatterPlotItem(
            pxMode=True, symbol="o", brush=None, pen=pg.mkPen(self.colours.selection, width=2.5)
        )
        # The ring sits around the marker it rings: clicks go through it to the marker
        # (pyqtgraph hands a click to every item under it until one takes it).
        self._selection.mouseClickEvent = lambda event: event.ignore()
        self.selected: list[str] = []
        self._message = pg.TextItem(
            self.view.message or EMPTY_MESSAGE, color=self.colours.message, anchor=(0.5, 0.5)
        )
        self._note = pg.TextItem("", color=self.colours.note, anchor=(0, 1))
        for item in (self._overlay, self._markers, self._selection, self._message):
            plot.addItem(item)
        self._add_legend()
        # Until the learner zooms or pans by hand, the view follows the fit: a canvas made
        # narrower (the inspector opening beside it) fits again instead of cutting labels.
        self.follows_fit = True
        box = self.getViewBox()
        self.scene().sigMouseClicked.connect(self.clicks.on_scene)
        box.sigRangeChanged.connect(self._range_changed)
        self.minimap = Minimap(self.viewport())
        self.minimap.pan_requested.connect(self._pan_to)
        box.sigRangeChangedManually.connect(self._moved_by_hand)
        box.sigResized.connect(self._viewport_resized)
        self.view.refold_runner = self.jobs.refold_elsewhere
        self.view.run_changed.connect(self._run_changed)
        self.view.graph_changed.connect(self._graph_changed)
        self.view.frame_changed.connect(self._frame_changed)
        self.view.selection_changed.connect(self._selection_changed)
        self.view.message_changed.connect(self._message_changed)

    # ---- what the view shows ----------------------------------------------------
    @property
    def trace(self) -> Trace | None:
        """The trace shown (the view's)."""
        return self.view.trace

    @property
    def graph(self) -> DrawnGraph:
        """The graph drawn (the view's)."""
        return self.view.graph

    @property
    def collapsed(self) -> frozenset[str]:
        """The nn.Module paths drawn as one box."""
        return self.view.collapsed

    @property
    def freeing(self) -> list:
        """Which nodes each backward pass of the shown run freed."""
        return self.view.run.freeing if self.view.run is not None else []

    def _add_legend(self) -> None:
        self.legend = make_legend(self.getPlotItem().getViewBox(), self.colours)
        self._overlay.covered = self._legend_in_layout

    def _legend_in_layout(self) -> list[QRectF]:
        return legend_in_layout(self.legend, self.getViewBox())

    # ---- public ---------------------------------------------------------------
    @property
    def dark(self) -> bool:
        """Whether the canvas uses its dark colours."""
        return self.colours is DARK

    def set_dark(self, dark: bool) -> None:
        """Switch background, lines, labels, rings and legend to the dark or light colours."""
        c = self.colours = DARK if dark else LIGHT
        self.setBackground(c.background)
        self._overlay.set_colours(c)
        self._markers.opts["hoverPen"] = pg.mkPen(c.current, width=2)
        self._selection.setPen(pg.mkPen(c.selection, width=2.5))
        self._message.setColor(c.message)
        self._note.setColor(c.note)
        recolour_legend(self.legend, c)
        self.minimap.set_colours(c.background, c.edge, c.current)
        self._looks.clear()  # the "lit" ring is drawn in c.current
        self._states = np.zeros(0, dtype=np.int8)  # every marker takes its new look
        if self.graph.nodes:
            self.show_frame(self.frame)

    def show_trace(self, trace: Trace) -> None:
        """Lay out a trace and show it through the view (all modules open, fitted).

        A small graph (the lessons') is shown before this returns; a bigger one is laid out
        on a worker thread while the GUI stays live (past BIG_LAYOUT_SIZE the canvas says
        "Laying out…" meanwhile). Either way `trace_drawn` follows.
        """
        previous = self.graph.heights() if self.graph.nodes else None
        generation = self.jobs.new_generation()
        # A first picture as big as this canvas names its tensors in: a small window folds
        # more of it.
        box = self.getViewBox()
        room = (
            max(MIN_READABLE_WIDTH, box.width() / SPARSE_DX_PX),
            max(MIN_READABLE_HEIGHT, (box.height() - LEGEND_ROOM_PX) / NAMES_MIN_DY_PX),
        )
        if len(trace.nodes) + len(trace.tensors) <= BACKGROUND_LAYOUT_SIZE:
            choices = self.view.fold_choices
            self.view.show(
                prepare_run(
                    trace,
                    previous=previous,
                    choices=choices,
                    readable_width=room[0],
                    readable_height=room[1],
                )
            )
            return
        self.jobs.lay_out(generation, trace, previous, room)

    @property
    def laying_out(self) -> bool:
        """Whether a background layout (or a big run's replay preparation) still runs."""
        return self.jobs.running

    def toggle_module(self, path: str) -> None:
        """Collapse an open nn.Module to one box, or open a collapsed one."""
        self.view.toggle_module(path)

    def _run_changed(self, run: ShownRun | None) -> None:
        if run is None:
            self.jobs.new_generation()  # a layout still running is for a run no longer wanted
        self._draw()
        if run is not None:
            self.trace_drawn.emit(run.trace)

    def _graph_changed(self) -> None:
        self._draw()
        opened = self.view.last_opened
        if opened and opened in self.graph.frames:
            self.focus_on(opened)
        self.layout_changed.emit()

    def focus_on(self, key: str) -> None:
        """Zoom to one open group's frame (just opened: what the learner asked to see),
        when the whole graph would show it too small to read; Ctrl+0 fits everything."""
        left, bottom, right, top = self.graph.frames[key]
        box = self.getViewBox()
        (x0, x1), _ = box.viewRange()
        if (right - left) >= 0.6 * (x1 - x0):
            return  # the fit shows it large enough already
        box.setRange(xRange=(left - 0.4, right + 0.4), yRange=(bottom - 0.4, top + 0.6), padding=0)
        self.follows_fit = False

    def _frame_changed(self) -> None:
        self.show_frame(self.view.frame())

    def _message_changed(self, message: str) -> None:
        self._message.setText(message)
        self._message.setPos(0, 0)
        self._message.setVisible(bool(message))

    def _draw(self) -> None:
        run = self.view.run
        self._states = np.zeros(0, dtype=np.int8)
        self.freed_at_end = freed_at(run.freeing, len(run.trace.events)) if run else set()
        self.frame = None
        self._overlay.set_frame(None)
        self._overlay.set_graph(self.graph)
        nodes = list(self.graph.nodes.values())
        self._node_index = {n.id: i for i, n in enumerate(nodes)}
        self._kinds = [n.kind for n in nodes]
        self.minimap.set_points(np.array([(n.x, n.y) for n in nodes], dtype=float))
        self._scales = saved_scales(run, self.graph, nodes) if self.size_by_saved and run else None
        marked = [n for n in nodes if n.kind != MODULE]  # a card's marker is clear
        self._pitch = column_pitch(
            np.array([n.x for n in marked], dtype=float),
            np.array([n.y for n in marked], dtype=float),
        )
        self._tallest_px = max((STYLES[n.kind].size for n in marked), default=0)
        # An AccumulateGrad is drawn against its leaf on purpose: one glyph with it.
        apart = [n for n in marked if n.kind != ACCUMULATE]
        self._row_room = row_room(
            np.array([n.x for n in apart], dtype=float),
            np.array([n.y for n in apart], dtype=float),
            np.array([STYLES[n.kind].size for n in apart], dtype=float),
        )
        if nodes:
            looks = [self._look(n.kind, "normal") for n in nodes]
            sizes = [look[2] * self._crowd for look in looks]
            if self._scales is not None:
                sizes = (np.array(sizes, dtype=float) * self._scales).tolist()
            self._markers.setData(
                pos=np.array([(n.x, n.y) for n in nodes], dtype=float),
                symbol=[STYLES[n.kind].symbol for n in nodes],
                size=sizes,
                brush=[look[0] for look in looks],
                pen=[look[1] for look in looks],
                data=[n.id for n in nodes],
            )
            self._markers.unhovered = np.array([n.kind == MODULE for n in nodes], dtype=bool)
            self.show_frame(self.view.frame())  # at first, the end state: freed graphs dashed
        else:
            self._markers.clear()
        self._selection_changed(self.view.selection)
        self._show_note(" ".join(run.trace.notes) if run else "")
        self.fit()
        self._fit_crowd()  # a new picture whose fitted view equals the last one's too
        self.graph_drawn.emit(len(nodes))

    def show_frame(self, frame: Frame | None) -> None:
        """Paint one moment of playback: what ran so far solid, the rest faded, the current
        step ringed; None paints the state at the end of the run. No layout happens here."""
        self.frame = frame
        self._overlay.set_frame(frame)
        if not self.graph.nodes:
            return
        index = self._node_index
        codes = np.full(len(index), STATES.index("normal" if frame is None else "faded"), np.int8)

        def mark(keys: object, state: str) -> None:
            hits = [index[k] for k in keys if k in index]  # type: ignore[attr-defined]
            codes[hits] = STATES.index(state)

        if frame is None:
            mark(self.freed_at_end, "freed")
        else:
            # Later marks win: lit over freed over visited.
            mark(frame.visited, "normal")
            mark(frame.freed, "freed")
            step = frame.step
            if step is not None:
                mark(step.lit, "failed" if step.kind == "error" else "lit")
                self._keep_in_view(step.lit)
        self._restyle(codes)

    def _keep_in_view(self, keys: frozenset[str]) -> None:
        """Pan (keeping the zoom) to the drawn item of `keys` nearest the view when none
        of them is in it: zoomed into one layer, the learner stepped on through the
        others' backward with nothing lit on screen."""
        nodes = self.graph.nodes
        points = [(nodes[k].x, nodes[k].y) for k in keys if k in nodes]
        if not points:
            return
        (x0, x1), (y0, y1) = self.getViewBox().viewRange()
        if any(x0 <= x <= x1 and y0 <= y <= y1 for x, y in points):
            return
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        x, y = min(points, key=lambda p: (p[0] - cx) ** 2 + (p[1] - cy) ** 2)
        self._pan_to(x, y)

    def _range_changed(self, *args: object) -> None:
        super()._range_changed(*args)
        self._fit_crowd()

    def set_size_by_saved(self, on: bool) -> None:
        """Draw each autograd node (or folded card) bigger the more it saved for backward:
        up to 1.8× for the one that saved most; nodes that saved nothing keep their size."""
        self.size_by_saved = on
        if self.graph.nodes:
            self._draw()

    def resizeEvent(self, event) -> None:  # Qt's name
        super().resizeEvent(event)
        if getattr(self, "minimap", None) is None:
            return  # a resize during construction
        # Top right: the legend holds the bottom left, the note the graph's bottom.
        self.minimap.move(
            self.width() - self.minimap.width() - MINIMAP_MARGIN_PX, MINIMAP_MARGIN_PX
        )

    @contextmanager
    def vector_painting(self) -> Iterator[None]:
        """While open, markers paint as shapes, not cached pixmaps (for SVG export)."""
        self._markers.opts["useCache"] = False
        self._markers.update()
        try:
            yield
        finally:
            self._markers.opts["useCache"] = True
            self._markers.update()

    def select(self, keys: list[str]) -> None:
        """Select the given nodes (a click, or the nodes of the editor's current line)."""
        self.view.select(keys)

    def _selection_changed(self, keys: tuple[str, ...]) -> None:
        """Ring the selected nodes."""
        self.selected = [k for k in keys if k in self.graph.nodes]
        # A card is outlined where it is drawn (`paint_boxes`); a mark is ringed.
        boxes = self.graph.boxes
        self._overlay.selected_boxes = frozenset(k for k in self.selected if k in boxes)
        self._overlay.update()
        nodes = [self.graph.nodes[k] for k in self.selected if k not in boxes]
        self._selection.setData(
            pos=np.array([(n.x, n.y) for n in nodes], dtype=float).reshape(-1, 2),
            size=[STYLES[n.kind].size + 14 for n in nodes],
        )

    @property
    def markers(self) -> MarkerItem:
        """The item drawing every node's marker (clicks and hovers find nodes on it)."""
        return self._markers

    def marker_count(self) -> int:
        """How many node markers are on the canvas."""
        return len(self._markers.data)

    def _show_note(self, text: str) -> None:
        plot = self.getPlotItem()
        if text:
            self._note.setText(text)
            if self._note.scene() is None:
                plot.addItem(self._note)
            xs = [n.x for n in self.graph.nodes.values()] or [0.0]
            ys = [n.y for n in self.graph.nodes.values()] or [0.0]
            self._note.setPos(min(xs), min(ys) - 0.6)
        elif self._note.scene() is not None:
            plot.removeItem(self._note)

    # ---- interaction ----------------------------------------------------------
    def module_of(self, key: str) -> str | None:
        """The innermost group a node is drawn in (its own for a folded box), if any."""
        chain = self.view.breadcrumb(key)
        return chain[-1] if chain else None

    def box_at(self, point: QPointF) -> str | None:
        """The folded group's box under a point of the view (layout units), if any."""
        x, y = point.x(), point.y()
        for key, (left, bottom, right, top) in self.graph.boxes.items():
            if left <= x <= right and bottom <= y <= top:
                return key
        return None

    def _tooltip(self, x: float, y: float, data: object) -> str:
        return canvas_tooltip(self.view, str(data))
