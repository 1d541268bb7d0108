"""The app's picture of a run as SVG: the same layout (the drawn graph's positions, frames
and folded boxes), the same shapes and colours, labels elided to the room they have.

Every element a replay changes carries a data attribute: a node's `data-i` (its place in
`DrawnGraph.nodes`), an edge's `data-e` (its place in `DrawnGraph.edges`), so the page's
player finds them without parsing ids. All text is escaped: a trace is untrusted input.
"""

from __future__ import annotations

import math
from html import escape
from itertools import pairwise

from autograd_viz.core.graph.fold_tree import ITERATION, LOOP, MIDDLE, REPEAT
from autograd_viz.core.graph.graph_model import (
    ACCUMULATE,
    OPERATION,
    UNTRACKED,
    DrawnGraph,
    DrawnNode,
)
from autograd_viz.core.graph.module_groups import MODULE
from autograd_viz.core.graph.node_look import (
    BACKGROUND,
    CURRENT_COLOUR,
    CUT_COLOUR,
    DETAIL_COLOUR,
    EDGE_COLOUR,
    GRAD_COLOUR,
    GROUP_COLOUR,
    LOOP_COLOUR,
    OP_COLOUR,
    STYLES,
    TITLE_COLOUR,
)

SX, SY = 120.0, 100.0  # pixels per layout unit, across and down (labels hang below marks)
MARGIN = 60.0
FONT_PX = 12.0
CHAR_PX = 6.9  # an average character of the page's sans-serif at FONT_PX
LINE_PX = 14.0
_STACKED = (REPEAT, LOOP, MIDDLE)  # drawn as a stack of cards: several of one thing
_LOOPISH = (LOOP, ITERATION, MIDDLE)


def _a(text: str) -> str:
    """Text escaped for an attribute or an element's content."""
    return escape(text, quote=True)


def elided(text: str, px: float) -> str:
    """`text` cut to about `px` pixels of the page's font, ending in "…" when cut."""
    most = max(2, int(px / CHAR_PX))
    return text if len(text) <= most else text[: most - 1].rstrip("…") + "…"


def _mark(kind: str) -> str:
    """A node kind's mark, centred on the origin (the app's shape and colour)."""
    style = STYLES[kind]
    r = style.size / 2
    paint = f'class="m" fill="{style.fill}" stroke="{style.outline}"'
    if style.symbol == "o":
        return f'<circle {paint} r="{r:g}"/>'
    if style.symbol == "h":
        points = " ".join(
            f"{r * math.cos(math.pi / 3 * k):.1f},{r * math.sin(math.pi / 3 * k):.1f}"
            for k in range(6)
        )
        return f'<polygon {paint} points="{points}"/>'
    if style.symbol == "t1":  # a triangle pointing up
        return f'<polygon {paint} points="0,{-r:g} {r:g},{r * 0.8:g} {-r:g},{r * 0.8:g}"/>'
    return f'<rect {paint} x="{-r:g}" y="{-r:g}" width="{2 * r:g}" height="{2 * r:g}"/>'


def legend_mark(kind: str) -> str:
    """A kind's mark scaled to fit a legend's 20-unit square."""
    return f'<g transform="scale({16 / STYLES[kind].size:.3f})">{_mark(kind)}</g>'


def _xy(x: float, y: float) -> tuple[float, float]:
    return x * SX, -y * SY


def _label(node: DrawnNode, short: str | None) -> str:
    """The lines under a mark: an op's name, or a tensor's name, value and .grad."""
    below = STYLES[node.kind].size / 2 + 4
    room = SX - 10
    if node.kind in (OPERATION, ACCUMULATE, UNTRACKED):
        lines = [("t op", node.title, OP_COLOUR)]
    else:
        lines = [
            ("t title", short or node.title, TITLE_COLOUR),
            ("t v", node.detail, DETAIL_COLOUR),
            ("t g", node.grad, GRAD_COLOUR),
        ]
    out = []
    for i, (cls, text, colour) in enumerate(lines):
        y = below + FONT_PX + i * LINE_PX
        out.append(
            f'<text class="{cls}" y="{y:g}" fill="{colour}" data-room="{room:g}">'
            f"{_a(elided(text, room))}</text>"
        )
    return "".join(out)


def _frame(key: str, rect: tuple[float, float, float, float], graph: DrawnGraph) -> str:
    info = graph.folds.get(key)
    colour = LOOP_COLOUR if info is not None and info.kind in _LOOPISH else GROUP_COLOUR
    left, top = _xy(rect[0], rect[3])
    right, bottom = _xy(rect[2], rect[1])
    width, height = right - left, bottom - top
    depth = info.depth if info is not None else 1
    heading = info.heading if info is not None else key
    title = elided(heading, width - 20)
    return (
        f'<g class="frame"><rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" '
        f'height="{height:.1f}" rx="6" fill="{colour}" '
        f'fill-opacity="{min(0.3, 0.055 * depth):.3f}" '
        f'stroke="{colour}" stroke-dasharray="5 3"/>'
        f'<text x="{left + 10:.1f}" y="{top + 4:.1f}" fill="{colour}" class="ft" '
        f'stroke="{BACKGROUND}" stroke-width="4" paint-order="stroke">'
        f"{_a(title)}<title>{_a(heading)}</title></text></g>"
    )


def _box(i: int, key: str, rect: tuple[float, float, float, float], graph: DrawnGraph) -> str:
    info = graph.folds.get(key[2:])
    colour = LOOP_COLOUR if info is not None and info.kind in _LOOPISH else GROUP_COLOUR
    left, top = _xy(rect[0], rect[3])
    right, bottom = _xy(rect[2], rect[1])
    width, height = right - left, bottom - top
    cards = ""
    if info is not None and info.kind in _STACKED:  # two cards behind: several of one thing
        cards = "".join(
            f'<rect class="card" x="{left + d:.1f}" y="{top - d:.1f}" width="{width:.1f}" '
            f'height="{height:.1f}" rx="6" fill="{BACKGROUND}" stroke="{colour}"/>'
            for d in (6, 3)
        )
    lines = graph.box_text.get(key) or [graph.nodes[key].title]
    text = []
    y = top + 3
    for n, line in enumerate(lines):
        y += FONT_PX + 2
        if n and y > bottom - 3:
            break  # no room for more: the title is always drawn
        colour_n = TITLE_COLOUR if n == 0 else DETAIL_COLOUR
        weight = ' font-weight="600"' if n == 0 else ""
        text.append(
            f'<text x="{left + 6:.1f}" y="{y:.1f}" fill="{colour_n}"{weight}>'
            f"{_a(elided(line, width - 12))}</text>"
        )
    tip = "\n".join(lines)
    return (
        f'<g class="n box" data-i="{i}" data-key="{_a(key)}">{cards}'
        f'<rect class="m" x="{left:.1f}" y="{top:.1f}" '
        f'width="{width:.1f}" height="{height:.1f}" rx="6" fill="{colour}" fill-opacity="0.22" '
        f'stroke="{colour}"/>{"".join(text)}<title>{_a(tip)}</title></g>'
    )


def _end(node: DrawnNode, rect, towards: tuple[float, float]) -> tuple[float, float]:
    """Where an edge meets a mark's rim (a folded box's border) coming from `towards`."""
    x, y = _xy(node.x, node.y)
    dx, dy = towards[0] - x, towards[1] - y
    length = math.hypot(dx, dy) or 1.0
    if rect is not None:
        (left, top), (right, bottom) = _xy(rect[0], rect[3]), _xy(rect[2], rect[1])
        half_w, half_h = (right - left) / 2, (bottom - top) / 2
        t = min(half_w / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
        return x + dx * min(t, 1.0), y + dy * min(t, 1.0)
    r = STYLES[node.kind].size / 2 + 3
    return x + dx / length * r, y + dy / length * r


def _edge(i: int, graph: DrawnGraph, u: str, v: str) -> str:
    a, b = graph.nodes[u], graph.nodes[v]
    # An edge drawn around marks (edge_routes.py) goes through its waypoints.
    via = [_xy(x, y) for x, y in graph.routes.get(i, ())]
    x1, y1 = _end(a, graph.boxes.get(u), via[0] if via else _xy(b.x, b.y))
    x2, y2 = _end(b, graph.boxes.get(v), via[-1] if via else _xy(a.x, a.y))
    style, text = graph.edge_styles.get((u, v), ("", ""))
    cls = f"e {style}".rstrip()
    bends = "".join(f"L{x:.1f},{y:.1f}" for x, y in via)
    path = f'<path class="{cls}" data-e="{i}" d="M{x1:.1f},{y1:.1f}{bends}L{x2:.1f},{y2:.1f}"/>'
    if style == "cut" and text:
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        if len(via) >= 2:  # on its lane, clear of the marks it goes around
            (ax, ay), (bx, by) = max(
                pairwise(via),
                key=lambda p: math.hypot(p[1][0] - p[0][0], p[1][1] - p[0][1]),
            )
            mx, my = (ax + bx) / 2, (ay + by) / 2
        path += f'<text class="cutl" x="{mx:.1f}" y="{my - 4:.1f}">{_a(text)}</text>'
    return path


def _arrow(name: str, colour: str, opacity: float) -> str:
    return (
        f'<marker id="{name}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        f'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        f'<path d="M0,0L10,5L0,10z" fill="{colour}" fill-opacity="{opacity:g}"/></marker>'
    )


def picture_bounds(graph: DrawnGraph) -> tuple[float, float, float, float]:
    """The picture's extent in page pixels: left, top, width, height (labels included)."""
    xs: list[float] = []
    ys: list[float] = []
    for node in graph.nodes.values():
        x, y = _xy(node.x, node.y)
        xs += [x - SX / 2, x + SX / 2]
        ys += [y - 30, y + 4 * LINE_PX + 20]
    for points in graph.routes.values():
        ys += [_xy(x, y)[1] for x, y in points]
    for rect in (*graph.frames.values(), *graph.boxes.values()):
        (left, top), (right, bottom) = _xy(rect[0], rect[3]), _xy(rect[2], rect[1])
        xs += [left, right + 8]
        ys += [top - 12, bottom]
    if not xs:
        return 0.0, 0.0, 400.0, 200.0
    left, top = min(xs) - MARGIN, min(ys) - MARGIN
    return left, top, max(xs) + MARGIN - left, max(ys) + MARGIN - top


def graph_svg(graph: DrawnGraph, freed: frozenset[str] = frozenset(), styled: bool = False) -> str:
    """The drawn graph as one SVG element (edges under frames' titles under marks); the
    nodes in `freed` drawn as freed (the state at the end of the run). `styled`: the SVG
    carries its own style rules (a picture on its own, not in the replay page)."""
    left, top, width, height = picture_bounds(graph)
    index = {key: i for i, key in enumerate(graph.nodes)}
    frames = "".join(_frame(k, r, graph) for k, r in graph.frames.items())
    edges = "".join(_edge(i, graph, u, v) for i, (u, v) in enumerate(graph.edges))
    marks: list[str] = []
    for key, node in graph.nodes.items():
        i = index[key]
        if node.kind == MODULE and key in graph.boxes:
            marks.append(_box(i, key, graph.boxes[key], graph))
            continue
        x, y = _xy(node.x, node.y)
        tip = "\n".join(t for t in (node.title, node.detail, node.grad) if t)
        state = " freed" if key in freed else ""
        marks.append(
            f'<g class="n k-{node.kind}{state}" data-i="{i}" data-key="{_a(key)}" '
            f'transform="translate({x:.1f},{y:.1f})">'
            f'{_mark(node.kind)}<g class="lb">{_label(node, graph.short.get(key))}</g>'
            f"<title>{_a(tip)}</title></g>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="picture" '
        f'viewBox="{left:.1f} {top:.1f} {width:.1f} {height:.1f}" '
        f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="{FONT_PX:g}">'
        f"<defs>{_arrow('arrow', EDGE_COLOUR, 1)}{_arrow('arrow-faded', EDGE_COLOUR, 0.24)}"
        f"{_arrow('arrow-hot', GRAD_COLOUR, 1)}{_arrow('arrow-cut', CUT_COLOUR, 1)}</defs>"
        + (f"<style>{PICTURE_CSS}{EDGE_CSS}</style>" if styled else "")
        + f'<g id="frames">{frames}</g><g id="edges">{edges}</g>'
        f'<g id="edge-grads"></g><g id="nodes">{"".join(marks)}</g></svg>'
    )


# The picture's own rules: the page holds them once; a standalone picture (a notebook's
# image/svg+xml, `picture_svg`) carries them inside, where no page's style reaches.
PICTURE_CSS = f"""
.n .m {{ stroke-width: 1.6; }}
.n.faded .m {{ fill-opacity: 0.2; stroke-opacity: 0.27; }}
.n.faded .lb {{ opacity: 0.45; }}
.n.freed .m {{ fill-opacity: 0.35; stroke-dasharray: 4 3; }}
.n.lit .m {{ stroke: {CURRENT_COLOUR}; stroke-width: 3.5; transform: scale(1.3); }}
.n.box .m {{ stroke-width: 1.4; }}
.n.box.faded .m {{ fill-opacity: 0.11; stroke-opacity: 0.35; }}
.n.box.faded text {{ opacity: 0.55; }}
.n.box.lit .m {{ stroke: {CURRENT_COLOUR}; stroke-width: 3; transform: none; }}
.t.op {{ text-anchor: middle; }}
.t {{ text-anchor: middle; paint-order: stroke; stroke: {BACKGROUND}; stroke-width: 3px; }}
.t.title {{ font-weight: 600; }}
.ft {{ font-size: 12px; }}
.gl rect {{ fill: rgba(255,255,255,.9); }}
.gl text {{ fill: {GRAD_COLOUR}; text-anchor: middle; font-size: 11px; }}
"""

EDGE_CSS = f"""
.e {{ stroke: {EDGE_COLOUR}; stroke-width: 1.4; fill: none; marker-end: url(#arrow); }}
.e.faded {{ stroke-opacity: 0.24; marker-end: url(#arrow-faded); }}
.e.hot {{ stroke: {GRAD_COLOUR}; stroke-width: 2.6; stroke-opacity: 1;
  marker-end: url(#arrow-hot); }}
.e.untracked {{ stroke-dasharray: 2 3; stroke-width: 1.2; }}
.e.cut {{ stroke: {CUT_COLOUR}; stroke-dasharray: 6 4; stroke-width: 1.6;
  marker-end: url(#arrow-cut); }}
.cutl {{ fill: {CUT_COLOUR}; text-anchor: middle; }}
"""
