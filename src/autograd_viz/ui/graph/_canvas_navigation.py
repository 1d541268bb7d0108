"""Where the canvas's view goes: fitting the whole graph, panning to a node, finding
nodes by name, and keeping the minimap, legend and labels in step with the view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, QRectF

from autograd_viz.core.graph.graph_model import ACCUMULATE, OPERATION
from autograd_viz.ui.graph._edges_item import (
    BARE,
    FULL,
    LABEL_MIN_DY_PX,
    NAMES,
    NAMES_MIN_DY_PX,
)
from autograd_viz.ui.graph._fit import fitted_range, reach_px
from autograd_viz.ui.graph._legend import wrap_legend

if TYPE_CHECKING:
    from autograd_viz.core.graph.graph_model import DrawnGraph

MINIMAP_MARGIN_PX = 8
LEGEND_GAP_PX = 10  # the legend's offset from the bottom edge, and a gap above it


class CanvasNavigation:
    """The GraphCanvas's view: what Fit graph, search and the minimap do with it. A base
    of GraphCanvas (a pg.PlotWidget), whose items (`_overlay`, `minimap`, `legend`) and
    `graph` it reads."""

    graph: DrawnGraph
    follows_fit: bool

    def find(self, text: str) -> list[str]:
        """Nodes whose name contains `text` (case-insensitive), tensors before operations."""
        needle = text.strip().lower()
        if not needle:
            return []
        hits = [n for n in self.graph.nodes.values() if needle in n.title.lower()]
        hits.sort(key=lambda n: (n.kind in (OPERATION, ACCUMULATE), n.title.lower() != needle))
        return [n.id for n in hits]

    def center_on(self, key: str) -> None:
        """Pan (keeping the zoom) so that node `key` is in the middle of the view."""
        node = self.graph.nodes.get(key)
        if node is not None:
            self._pan_to(node.x, node.y)

    def _pan_to(self, x: float, y: float) -> None:
        """Pan (keeping the zoom) so that data point (x, y) is in the middle of the view."""
        self.follows_fit = False  # the learner asked for this place, not the whole graph
        view = self.getViewBox()
        (x0, x1), (y0, y1) = view.viewRange()
        half_x, half_y = (x1 - x0) / 2, (y1 - y0) / 2
        view.setRange(xRange=(x - half_x, x + half_x), yRange=(y - half_y, y + half_y), padding=0)

    def _range_changed(self, *_args: object) -> None:
        self._overlay.view_moved()
        (x0, x1), (y0, y1) = self.getViewBox().viewRange()
        self.minimap.set_view(QRectF(x0, y0, x1 - x0, y1 - y0))

    def widget_position(self, key: str) -> QPoint:
        """Where node `key` is drawn, in this widget's pixel coordinates."""
        node = self.graph.nodes[key]
        scene = self.getViewBox().mapViewToScene(QPointF(node.x, node.y))
        return self.mapFromScene(scene) + self.viewport().pos()

    def _moved_by_hand(self, *_args: object) -> None:
        self.follows_fit = False

    def _viewport_resized(self, *_args: object) -> None:
        self._wrap_legend()
        if self.follows_fit:
            self.fit()

    def _wrap_legend(self) -> None:
        wrap_legend(self.legend, float(self.getViewBox().width()))

    def _reach_px(self, unit_px: float) -> dict[str, float]:
        """How far (in pixels) left and right of each node what is drawn for it reaches."""
        return reach_px(self.graph, unit_px, self._overlay.label_half_widths)

    def fit(self) -> None:
        """Zoom so that the whole graph, with its labels, frames and legend, is in view."""
        self.follows_fit = True
        box = self.getViewBox()
        if not self.graph.nodes:
            box.setRange(xRange=(-1, 1), yRange=(-1, 1), padding=0)
            return
        # Above the graph, room for the minimap, so it never covers a node when fitted.
        top_px = self.minimap.height() + MINIMAP_MARGIN_PX if self.minimap.isVisibleTo(self) else 0
        height = max(box.height() - top_px, box.height() / 2)
        x_range, (y_low, y_high) = fitted_range(
            self.graph,
            (box.width(), height),
            self._overlay.label_half_widths,
            legend_px=self.legend.height() + LEGEND_GAP_PX,
            reach_y_px=[
                (LABEL_MIN_DY_PX, self._overlay.vertical_reach_px(FULL)),
                (NAMES_MIN_DY_PX, self._overlay.vertical_reach_px(NAMES)),
                (0.0, self._overlay.vertical_reach_px(BARE)),
            ],
        )
        y_high += (box.height() - height) * (y_high - y_low) / height
        box.setRange(xRange=x_range, yRange=(y_low, y_high), padding=0)
