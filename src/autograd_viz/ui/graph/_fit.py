"""Where the canvas's view goes to show a whole graph: its labels, frames and legend."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from autograd_viz.core.graph.graph_model import CONSTANT, LEAF, DrawnGraph
from autograd_viz.ui.graph._edges_item import SPARSE_DX_PX
from autograd_viz.ui.graph._graph_style import STYLES
from autograd_viz.ui.graph._label_paint import BESIDE_GAP_PX

MAX_MEASURED_INPUTS = 400
MIN_SPAN = 3.0  # fit never zooms in further than this many layers or rows
FRAME_PAD_PX = 10.0  # a module's frame, drawn this far outside its members' labels
FRAME_TITLE_PX = 10.0  # the half of a frame's title above its top edge, and a gap
MARK_PAD_PX = 5.0  # beyond a mark's half size: the ring of the lit node
FULLER_MARGIN_PX = 0.5  # rows this much closer than a fuller level of labels needs

Range = tuple[tuple[float, float], tuple[float, float]]


def reach_px(
    graph: DrawnGraph, unit_px: float, half_widths: Callable[[Iterable[str]], dict[str, float]]
) -> dict[str, float]:
    """How far (in pixels) left and right of each node what is drawn for it reaches.

    Where the zoom leaves room for labels, every node's widest label line. Where it does
    not, no label is drawn (and measuring every label of a big graph on the GUI thread
    would be wasted), but a module's frame still wraps its members' full labels.
    """
    nodes = graph.nodes
    framed = {m for members in graph.groups.values() for m in members if m in nodes}
    # An input outside every frame may have its name left of its mark (the canvas puts
    # it there when the row below is taken: a column of a model's weights): room for it,
    # at every zoom that draws labels at all.
    fed = {v for _, v in graph.edges}
    inputs = {k for k, n in nodes.items() if n.kind in (LEAF, CONSTANT) and k not in fed | framed}
    half = half_widths(nodes.keys() if unit_px >= SPARSE_DX_PX else framed | inputs)
    reach = {k: px + (FRAME_PAD_PX if k in framed else 0.0) for k, px in half.items()}
    for key in inputs & half.keys():
        beside = 2 * half[key] + STYLES[nodes[key].kind].size / 2 + BESIDE_GAP_PX
        reach[key] = max(reach[key], beside)
    # Every mark too, ringed as the player lights it: at a far zoom the end layers are
    # less than a mark apart from the view's edge.
    for key, node in nodes.items():
        mark = STYLES[node.kind].size / 2 + MARK_PAD_PX
        if reach.get(key, 0.0) < mark:
            reach[key] = mark
    return reach


def fitted_range(
    graph: DrawnGraph,
    size_px: tuple[float, float],
    half_widths: Callable[[Iterable[str]], dict[str, float]],
    legend_px: float = 0.0,
    reach_y_px: Sequence[tuple[float, tuple[float, float]]] = (),
) -> Range:
    """The x and y ranges that show every node of a non-empty graph with what it draws.

    `legend_px`: the height the legend takes at the bottom of the view. `reach_y_px`: per
    level of labelling, fullest first, the least row spacing (pixels) at which the canvas
    draws that level and how far above and below a node's centre its mark, labels and
    frame then reach (the labels under the lowest row and the legend under them must not
    overlap). The first level whose fit leaves rows that far apart is used, else the last.
    """
    width_px, height_px = (max(1.0, float(v)) for v in size_px)
    xs = [n.x for n in graph.nodes.values()]
    ys = [n.y for n in graph.nodes.values()]
    # A folded picture's frames and boxes reach past its nodes: their corners count too.
    for left, bottom, right, top in graph.frames.values():
        xs += [left + 0.4, right - 0.4]
        ys += [bottom + 0.3, top - 0.3]
    for left, bottom, right, top in graph.boxes.values():  # whole: a card's title is at its top
        xs += [left, right]
        ys += [bottom, top]
    for points in graph.routes.values():  # an edge drawn around marks, above or below them
        ys += [y for _, y in points]

    def span(low: float, high: float) -> tuple[float, float]:
        extra = max(0.0, MIN_SPAN - (high - low)) / 2
        return low - extra, high + extra

    # Room for the labels under the lowest row and for the legend below them; above
    # the top row, for the title of a module's frame.
    x_low, x_high = span(min(xs) - 0.9, max(xs) + 0.7)
    if not reach_y_px:
        below, above = (1.5, 0.75) if graph.groups else (1.3, 0.4)
        y_low, y_high = span(min(ys) - below, max(ys) + above)
    else:
        # Rows too close for a level's lines do not draw them: no room is kept for them.
        fuller = None  # the row spacing at which the canvas draws the level tried before
        for min_dy_px, reach in reach_y_px:
            y_low, y_high = _vertical(min(ys), max(ys), height_px, reach, legend_px)
            if height_px / (y_high - y_low) >= min_dy_px:
                break
            fuller = min_dy_px
        if fuller is not None and height_px / (y_high - y_low) >= fuller:
            # Room kept for this level's lines only, yet rows far enough apart that the
            # canvas would draw the fuller level's: the bottom row's value and .grad lines
            # went under the legend. Rows just closer than that keep the two consistent.
            extra = height_px / (fuller - FULLER_MARGIN_PX) - (y_high - y_low)
            y_low, y_high = y_low - extra / 2, y_high + extra / 2
    # A label wider than the margin (`[4×1×3×3] -0.319…0.301`) widens it; widening makes
    # a pixel fewer units, so a few rounds settle where every label and frame fits.
    reach = reach_px(graph, width_px / (x_high - x_low), half_widths)
    low, high = x_low, x_high
    for _ in range(4) if reach else ():
        unit_px = width_px / (high - low)
        nodes = [(graph.nodes[k], px / unit_px) for k, px in reach.items()]
        reach_left = max(half - (n.x - x_low) for n, half in nodes)
        reach_right = max(n.x + half - x_high for n, half in nodes)
        low = x_low - (max(0.0, reach_left) + (0.1 if reach_left > 0 else 0.0))
        high = x_high + (max(0.0, reach_right) + (0.1 if reach_right > 0 else 0.0))
    if graph.frames:  # a frame's title sits on its top edge, half a line above it
        top = max(t for *_, t in graph.frames.values())
        need = top + FRAME_TITLE_PX * (y_high - y_low) / height_px
        y_high = max(y_high, need)
    return (low, high), (y_low, y_high)


def _vertical(
    low: float, high: float, height_px: float, reach_y_px: tuple[float, float], legend_px: float
) -> tuple[float, float]:
    """The y range that puts the top row's frame titles and the bottom row's labels, with
    the legend under them, inside `height_px` pixels; margins are pixels, not layers, so
    they hold at every zoom."""
    above_px, below_px = reach_y_px
    margin_px = above_px + below_px + legend_px
    usable = max(height_px - margin_px, height_px / 4)  # a tiny canvas: overlap, not nothing
    unit_px = min(usable / max(high - low, 1e-9), height_px / MIN_SPAN)
    slack = (height_px - margin_px - (high - low) * unit_px) / unit_px / 2
    return (
        low - (below_px + legend_px) / unit_px - max(0.0, slack),
        high + above_px / unit_px + max(0.0, slack),
    )
