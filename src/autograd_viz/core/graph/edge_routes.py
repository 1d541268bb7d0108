"""Edges that would run straight through other marks go around them instead.

Both layouts put each node in a column and draw an edge as a straight line between two
marks. An edge that skips columns (a residual `x + f(x)`, a weight tied to two layers, an
input used again far later) then lies along whatever sits between its ends: drawn under
the chain it skips, it is invisible, and the picture says `y` depends on `x` only through
that chain. Such an edge gets waypoints: it leaves its source into the gap after the
source's column, runs along a lane clear of every mark, label and box it passes, and
comes back down in the gap before its target's column. Lanes are tried nearest first,
above before below; an edge for which no lane nearby is clear stays straight.

Coordinates are the layout's data units (y up): columns one unit apart, a mark at its
node's position with its label hanging below it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import pairwise
from typing import Any

import numpy as np

# graph_model.DrawnGraph, which calls route_edges (not imported: the two would import
# each other): its nodes (with x, y), edges, boxes and frames.
DrawnGraph = Any

Point = tuple[float, float]

# A node's mark and the label under it, in layout units around its position. Whether a
# straight edge is in the way is decided by the inner part of a mark alone: an edge
# grazing a mark's rim or a label's corner reads right, and a detour around it did not.
MARK = 0.2
PLACE_LEFT, PLACE_RIGHT, PLACE_BOTTOM, PLACE_TOP = -0.42, 0.42, -0.72, 0.32
HALF_GAP = 0.5  # a column's edge: half-way to the next column
LANE_STEP = 0.25  # lanes are tried this far apart (the folded grid's finest step)
MOST_LANES = 24  # on each side of each end: past that an edge stays straight
# Past these a picture's edges stay straight: at thousands of nodes no edge is read one
# by one, and routing costs about half a millisecond an edge (1,206 nodes and 598 routes:
# 0.36 s, measured), on top of the layout.
ROUTED_AT_MOST = 400
NODES_AT_MOST = 2_000
BORDER_CLEARANCE = 0.08  # a lane keeps this far from a frame's border
# Where a vertical run may go in the gap between two columns (its middle is a grid line;
# marks and labels reach to within 0.08 of it): the middle, else just beside it.
RUN_SHIFTS = (0.0, -0.07, 0.07)
LANE_GAP = 0.3  # lanes of two sources on one line keep this far apart end to end
TITLE_CLEARANCE = 0.2  # and this far from its top, where its title sits on the border


class _Obstacles:
    """Every mark (with its label) and box of a picture, sorted by the left edge."""

    def __init__(self, graph: DrawnGraph) -> None:
        keys: list[str] = []
        rects: list[tuple[float, float, float, float]] = []
        for key, node in graph.nodes.items():
            box = graph.boxes.get(key)
            x, y = node.x, node.y
            keys.append(key)
            rects.append(box or (x + PLACE_LEFT, y + PLACE_BOTTOM, x + PLACE_RIGHT, y + PLACE_TOP))
        order = sorted(range(len(keys)), key=lambda i: rects[i][0])
        self.keys = [keys[i] for i in order]
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.rects = np.array([rects[i] for i in order], dtype=float).reshape(-1, 4)
        self.boxed = np.array([k in graph.boxes for k in self.keys], dtype=bool)
        nodes = graph.nodes
        self.centres = np.array([(nodes[k].x, nodes[k].y) for k in self.keys]).reshape(-1, 2)
        self.lefts = self.rects[:, 0].tolist()
        widest = self.rects[:, 2] - self.rects[:, 0]
        self.widest = float(widest.max()) if len(widest) else 0.0

    def in_the_way(self, a: Point, b: Point, which: np.ndarray) -> np.ndarray:
        """Per obstacle in `which`, whether segment a→b runs through it: within MARK of a
        mark's centre (a round mark; a corner grazed is not in the way), or across a box."""
        boxed = self.boxed[which]
        hit = _crosses(a, b, self.rects[which]) & boxed
        centres = self.centres[which]
        (x0, y0), (x1, y1) = a, b
        dx, dy = x1 - x0, y1 - y0
        length2 = dx * dx + dy * dy or 1.0
        t = np.clip(((centres[:, 0] - x0) * dx + (centres[:, 1] - y0) * dy) / length2, 0, 1)
        gap = np.hypot(centres[:, 0] - (x0 + t * dx), centres[:, 1] - (y0 + t * dy))
        return hit | (~boxed & (gap < MARK))

    def near(self, left: float, right: float) -> np.ndarray:
        """Indices of the obstacles that may reach into [left, right] across."""
        start = bisect_left(self.lefts, left - self.widest)
        stop = bisect_right(self.lefts, right)
        return np.arange(start, stop)


def _crosses(a: Point, b: Point, rects: np.ndarray) -> np.ndarray:
    """Per rect (left, bottom, right, top), whether segment a→b passes through it
    (Liang–Barsky clipping, all rects at once)."""
    (x0, y0), (x1, y1) = a, b
    dx, dy = x1 - x0, y1 - y0
    low = np.zeros(len(rects))
    high = np.ones(len(rects))
    inside = np.ones(len(rects), dtype=bool)
    for p, q_low, q_high in (
        (dx, rects[:, 0] - x0, rects[:, 2] - x0),
        (dy, rects[:, 1] - y0, rects[:, 3] - y0),
    ):
        if abs(p) < 1e-12:
            inside &= (q_low < 0) & (q_high > 0)
            continue
        t0, t1 = q_low / p, q_high / p
        enter, leave = np.minimum(t0, t1), np.maximum(t0, t1)
        low = np.maximum(low, enter)
        high = np.minimum(high, leave)
    return inside & (low < high)


def _clear(points: list[Point], rects: np.ndarray) -> bool:
    return not any(_crosses(a, b, rects).any() for a, b in pairwise(points))


def route_edges(graph: DrawnGraph) -> dict[int, tuple[Point, ...]]:
    """Waypoints (between the two ends) for each edge, by its place in `graph.edges`,
    that a straight line would draw through another mark or box; other edges have none."""
    if len(graph.edges) < 2 or not 3 <= len(graph.nodes) <= NODES_AT_MOST:
        return {}
    obstacles = _Obstacles(graph)
    nodes, boxes = graph.nodes, graph.boxes
    frames = np.array(list(graph.frames.values()), dtype=float).reshape(-1, 4)
    routes: dict[int, tuple[Point, ...]] = {}
    # Lanes in use: (source, y, left, right). An edge from another source never shares
    # one (which source a drop came from would be lost); one source's edges may (a bus).
    taken: list[tuple[str, float, float, float]] = []
    # Vertical runs in use, (source, target, x, low, high): two edges of other sources
    # into other targets never share one (which lane led to which target would be lost).
    uprights: list[tuple[str, str, float, float, float]] = []
    for i, (u, v) in enumerate(graph.edges):
        a, b = nodes[u], nodes[v]
        if b.x - a.x <= 1.01:  # neighbouring columns: nothing stands between them
            continue
        near = obstacles.near(a.x, b.x)
        own = {obstacles.index[u], obstacles.index[v]}
        near = np.array([j for j in near.tolist() if j not in own], dtype=np.intp)
        if not len(near):
            continue
        start, end = (a.x, a.y), (b.x, b.y)
        if not obstacles.in_the_way(start, end, near).any():
            continue
        others = [lane[1:] for lane in taken if lane[0] != u]
        # Runs of the same source, or into the same target, may share a line: they
        # still say where each edge goes.
        crossing = [run[2:] for run in uprights if run[0] != u and run[1] != v]
        route = _route(
            start,
            end,
            boxes.get(u),
            boxes.get(v),
            obstacles.rects[near],
            frames,
            others,
            crossing,
        )
        if route is not None:
            routes[i] = route
            (xa, lane), (xb, _) = route[1:3] if len(route) == 4 else route
            taken.append((u, lane, min(xa, xb), max(xa, xb)))
            if len(route) == 4:  # its two vertical runs
                (x, ya), (_, yb), _, _ = route
                uprights.append((u, v, x, min(ya, yb), max(ya, yb)))
                _, _, (x, ya), (_, yb) = route
                uprights.append((u, v, x, min(ya, yb), max(ya, yb)))
            if len(routes) >= ROUTED_AT_MOST:
                break
    return routes


def _route(
    start: Point,
    end: Point,
    source_box: tuple | None,
    target_box: tuple | None,
    rects: np.ndarray,
    frames: np.ndarray,
    taken: list[tuple[float, float, float]] = (),
    uprights: list[tuple[float, float, float]] = (),
) -> tuple[Point, ...] | None:
    """Waypoints from `start` to `end` along the nearest clear lane, or None. A lane or a
    bend never runs along a module frame's border, where it would read as the frame."""
    (x0, y0), (x1, y1) = start, end
    # Lanes on the folded grid's lines: a tenth of a unit off every frame's border
    # (frames sit 0.1 inside their blocks, whose sides are on grid lines).
    steps = np.arange(-MOST_LANES, MOST_LANES + 1)
    near_ends = [round(y / LANE_STEP) + steps for y in (y0, y1)]
    all_lanes = np.unique(np.concatenate(near_ends)) * LANE_STEP
    if y0 == y1:
        all_lanes = all_lanes[all_lanes != y0]  # the straight line itself
    out_x = source_box[2] + 0.1 if source_box else x0 + HALF_GAP
    in_x = target_box[0] - 0.1 if target_box else x1 - HALF_GAP
    if in_x - out_x < 0.2:
        return None
    # The long run along the lane first, for every lane at once: clear of every rect
    # that reaches across its span, and of the frames' top and bottom borders.
    across = rects[(rects[:, 2] > out_x) & (rects[:, 0] < in_x)]
    lanes = all_lanes[:, None]
    blocked = ((across[None, :, 1] < lanes) & (lanes < across[None, :, 3])).any(axis=1)
    spanned = frames[(frames[:, 2] > out_x) & (frames[:, 0] < in_x)]
    for border, clearance in ((spanned[:, 1], BORDER_CLEARANCE), (spanned[:, 3], TITLE_CLEARANCE)):
        blocked |= (np.abs(lanes - border[None, :]) < clearance).any(axis=1)
    used = np.array(taken, dtype=float).reshape(-1, 3)  # (y, left, right) of other lanes
    # Lanes that only touch end to end would read as one line: a gap between them too.
    used = used[(used[:, 2] > out_x - LANE_GAP) & (used[:, 1] < in_x + LANE_GAP), 0]
    blocked |= (np.abs(lanes - used[None, :]) < LANE_STEP / 2).any(axis=1)
    # Nearest both ends first; above before below when as near.
    clear = all_lanes[~blocked].tolist()
    for lane in sorted(clear, key=lambda y: (abs(y - y0) + abs(y - y1), -y)):
        ends = ([start, (out_x, lane)], [(in_x, lane), end])
        if all(_clear(piece, rects) for piece in ends):
            return (out_x, lane), (in_x, lane)
        # Up (or down) in the gap after the source's column, along, and down (or up) in
        # the gap before the target's: at the gap's middle, or beside another edge's run.
        rise = _upright(start, (out_x, y0), lane, rects, frames, uprights, after=True)
        drop = _upright(end, (in_x, y1), lane, rects, frames, uprights, after=False)
        if rise is not None and drop is not None:
            return (rise, y0), (rise, lane), (drop, lane), (drop, y1)
    return None


def _upright(
    node: Point,
    foot: Point,
    lane: float,
    rects: np.ndarray,
    frames: np.ndarray,
    uprights: list[tuple[float, float, float]],
    after: bool,
) -> float | None:
    """The x of a vertical run from `foot`'s height to `lane` in the gap beside `node`
    (after it, or before it), with the level piece joining it to `node`; None if every
    place in the gap is taken."""
    x0, y0 = foot
    for shift in RUN_SHIFTS:
        x = x0 + shift
        level = [node, (x, y0)] if after else [(x, y0), node]
        upright = [(x, y0), (x, lane)]
        if (
            _clear(level, rects)
            and _clear(upright, rects)
            and _off_borders(x, y0, lane, frames)
            and _unshared(x, y0, lane, uprights)
        ):
            return x
    return None


def _off_borders(x: float, y0: float, y1: float, frames: np.ndarray) -> bool:
    """Whether a vertical run at `x` from y0 to y1 keeps off every frame's side."""
    low, high = min(y0, y1), max(y0, y1)
    beside = frames[(frames[:, 1] < high) & (frames[:, 3] > low)]
    return not (
        (np.abs(beside[:, 0] - x) < BORDER_CLEARANCE)
        | (np.abs(beside[:, 2] - x) < BORDER_CLEARANCE)
    ).any()


def _unshared(x: float, y0: float, y1: float, uprights) -> bool:
    """Whether a vertical run at `x` from y0 to y1 stays off the runs (x, low, high)."""
    low, high = min(y0, y1), max(y0, y1)
    return not any(
        abs(x - ux) < 0.05 and low < u_high and u_low < high for ux, u_low, u_high in uprights
    )
