"""Laying out a folded graph: each open group is a block laid out on its own, then placed
in its parent's grid as one item, so frames nest and never overlap.

Every level is a small layered layout on a grid of cells (one column per layer, one row
per node) in which a node takes one cell and every group, folded or open, BOX_W × BOX_H
cells: the level's layout does not depend on which of its groups are open, and is cached.
The grid is then stretched for the groups bigger than that (a wide card, an open group's
block with a margin for its frame and title): each such group's extra width is inserted
as columns at its right edge, its extra height as rows at its bottom edge. Inserting
space never makes two items overlap and keeps every edge going left to right, so opening
a group moves nothing before it in its level (left of its right edge, above its bottom),
moves everything else by a whole translation (right, down, or both), and does the same to
its parent's level in turn; closing it again gives back the same positions.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import accumulate

import networkx as nx

from autograd_viz.core.graph.fold_tree import ROOT, FoldTree

# The grid is finer than one layer or one row: SUB steps to a cell, so a frame's margin
# costs a quarter of a layer, not a whole one (nested frames would spread a model wide).
SUB = 4
BOX_W, BOX_H = 2, 2  # a folded group's box, in cells
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 1, 2, 1  # around an open group's parts, in steps
FRAME_INSET = 0.1  # a frame is drawn this far inside its block's margin (layout units)
MARK_DOWN = 0.3  # a node's mark sits this far down its cell; its label hangs below
BOX_INSET_X, BOX_INSET_Y = 0.08, 0.12

NODE_CELL = (SUB, SUB)  # a node's place in a level's grid, in steps
GROUP_CELL = (BOX_W * SUB, BOX_H * SUB)  # a group's, folded or open, before stretching

Rect = tuple[float, float, float, float]  # left, bottom, right, top (data units, y up)


@dataclass
class _Block:
    """One open group laid out: its items' cells relative to its content's top left, and
    its content's size in cells."""

    cells: dict[str, tuple[int, int]]  # item -> (column, row) of its top-left step
    width: int  # in steps (SUB to a cell)
    height: int


@dataclass
class Placed:
    """Where everything of a folded picture goes, in data units (y up)."""

    positions: dict[str, tuple[float, float]] = field(default_factory=dict)
    frames: dict[str, Rect] = field(default_factory=dict)  # open group -> its frame
    boxes: dict[str, Rect] = field(default_factory=dict)  # folded group's box id -> rect


class FoldLayout:
    """Lays out pictures of one fold tree, remembering each block it laid out."""

    def __init__(self, tree: FoldTree, base: nx.MultiDiGraph | None = None) -> None:
        self.tree = tree
        self._cache: dict[tuple, tuple[list[tuple[int, int]], int, int]] = {}
        # Items sort in one order whatever is folded: a node by its place in a topological
        # order of the whole graph, a group (folded or open) where its first node is.
        self._rank: dict[str, int] = {}
        self._weight: dict[str, int] = {}  # nodes inside a group, open all the way
        if base is not None:
            self._rank, self._weight = _ranks(base, tree)

    def place(
        self,
        g: nx.MultiDiGraph,
        open_groups: set[str],
        boxes: Mapping[str, str],
        box_widths: Mapping[str, int] | None = None,
        title_widths: Mapping[str, float] | None = None,
    ) -> Placed:
        """Positions for the drawn graph `g`: `open_groups` are drawn as frames around
        their parts, `boxes` (drawn id -> group key) are folded groups drawn as one box."""
        tree = self.tree
        box_ids = set(boxes)
        # The open group each drawn item sits directly in.
        home: dict[str, str] = {}
        for v in g:
            key = tree.groups[boxes[v]].parent if v in box_ids else tree.owner.get(v, ROOT)
            while key not in open_groups and key != ROOT:  # inside a folded one: its box
                key = tree.groups[key].parent
            home[v] = key
        chain_of: dict[str, tuple[str, ...]] = {}

        def chain(key: str) -> tuple[str, ...]:
            """Open groups from the root down to `key`."""
            known = chain_of.get(key)
            if known is None:
                parent = tree.groups[key].parent
                known = (key,) if parent is None else (*chain(parent), key)
                chain_of[key] = known
            return known

        items: dict[str, list[str]] = {k: [] for k in open_groups | {ROOT}}
        for v in g:
            items[home[v]].append(v)
        for k in open_groups:
            if k != ROOT:
                items[tree.groups[k].parent].append(k)
        # Each edge joins two items of the deepest open group holding both ends.
        level_edges: dict[str, set[tuple[str, str]]] = {k: set() for k in items}
        for u, v in g.edges():
            cu, cv = chain(home[u]), chain(home[v])
            depth = 0
            while depth < min(len(cu), len(cv)) and cu[depth] == cv[depth]:
                depth += 1
            level = cu[depth - 1]
            a = cu[depth] if depth < len(cu) else u
            b = cv[depth] if depth < len(cv) else v
            if a != b:
                level_edges[level].add((a, b))
        order = self._rank or _first_seen(g, home, tree)
        widths = box_widths or {}
        sizes: dict[str, tuple[int, int]] = {
            v: (widths.get(v, BOX_W) * SUB, BOX_H * SUB) for v in box_ids
        }
        blocks: dict[str, _Block] = {}

        def block(key: str) -> _Block:
            for k in items[key]:
                if k in open_groups and k not in blocks:
                    blocks[k] = block(k)
                    # At least as wide as its title, where the zoom shows titles.
                    least = math.ceil((title_widths or {}).get(k, 0.0) * SUB)
                    sizes[k] = (
                        max(blocks[k].width, least) + 2 * MARGIN_X,
                        blocks[k].height + MARGIN_TOP + MARGIN_BOTTOM,
                    )
            members = sorted(items[key], key=lambda k: order.get(boxes.get(k, k), 0))
            # Blocks of the same shape (a loop's iterations, a model's layers) share one
            # layout: the key is the level's structure, not its ids, nor what is open.
            at = {v: i for i, v in enumerate(members)}
            grid = tuple(
                GROUP_CELL if k in box_ids or k in open_groups else NODE_CELL for k in members
            )
            edges = sorted((at[a], at[b]) for a, b in level_edges[key])
            cells: list[tuple[int, int]] = [(0, 0)] * len(members)
            width = top = 0
            # Parts not joined to each other are laid out and stretched apart, one under
            # the other: opening a group in one moves nothing of another sideways.
            weights = [self._weight.get(boxes.get(k, k), 1) for k in members]
            for part, part_edges in _components(edges, weights):
                shape = (tuple(grid[v] for v in part), part_edges)
                cached = self._cache.get(shape)
                if cached is None:
                    cached = self._cache[shape] = _lay_out_level(*shape)
                part_cells, part_width, part_height = _stretched(
                    *cached, shape[0], [sizes.get(members[v], NODE_CELL) for v in part]
                )
                for v, (c, r) in zip(part, part_cells, strict=True):
                    cells[v] = (c, r + top)
                width, top = max(width, part_width), top + part_height
            return _Block({members[i]: cell for i, cell in enumerate(cells)}, width, top)

        root = block(ROOT)
        placed = Placed()

        def put(key: str, b: _Block, left: float, top: float) -> None:
            for item, (col, row) in b.cells.items():
                x, y = left + col / SUB, top + row / SUB  # its top left, rows going down
                w, h = (d / SUB for d in sizes.get(item, (SUB, SUB)))
                if item in blocks:
                    placed.frames[item] = (
                        x + FRAME_INSET,
                        -(y + h - FRAME_INSET),
                        x + w - FRAME_INSET,
                        -(y + FRAME_INSET),
                    )
                    put(item, blocks[item], x + MARGIN_X / SUB, y + MARGIN_TOP / SUB)
                elif item in box_ids:
                    rect = (
                        x + BOX_INSET_X,
                        -(y + h - BOX_INSET_Y),
                        x + w - BOX_INSET_X,
                        -(y + BOX_INSET_Y),
                    )
                    placed.boxes[item] = rect
                    placed.positions[item] = ((rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2)
                else:
                    placed.positions[item] = (x + 0.5, -(y + MARK_DOWN))

        put(ROOT, root, 0.0, 0.0)
        return placed


def _ranks(base: nx.MultiDiGraph, tree: FoldTree) -> tuple[dict[str, int], dict[str, int]]:
    """Each node's place in a topological order of the whole graph, and each group's:
    that of its first node (so a model reads in the order its modules ran); and how many
    nodes each group holds."""
    rank: dict[str, int] = {}
    weight: dict[str, int] = {}
    for i, v in enumerate(nx.topological_sort(base)):
        rank[v] = i
        key = tree.owner.get(v, ROOT)
        while key is not None:
            rank[key] = min(rank.get(key, i), i)
            weight[key] = weight.get(key, 0) + 1
            key = tree.groups[key].parent
    return rank, weight


def _components(
    edges: list[tuple[int, int]], weights: list[int]
) -> list[tuple[list[int], tuple[tuple[int, int], ...]]]:
    """A level's items in parts joined by its edges (each part's items and its edges, by
    index within the part); the items joined to nothing make one last part (laid out in
    rows under the rest). The part holding the most nodes goes first (the model), the
    others under it in the order they ran."""
    n = len(weights)
    parent = list(range(n))

    def root(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    joined = [False] * n
    for a, b in edges:
        if a != b:
            joined[a] = joined[b] = True
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    parts: dict[int, list[int]] = {}
    local: list[int] = [0] * n  # each item's index within its part
    for v in range(n):
        part = parts.setdefault(root(v) if joined[v] else n, [])
        local[v] = len(part)
        part.append(v)
    inner: dict[int, list[tuple[int, int]]] = {}
    for a, b in edges:
        inner.setdefault(root(a), []).append((local[a], local[b]))
    size = {key: sum(weights[v] for v in part) for key, part in parts.items()}
    order = sorted(parts, key=lambda key: (key == n, -size[key], key))
    return [(parts[key], tuple(inner.get(key, ()))) for key in order]


def _stretched(
    cells: list[tuple[int, int]],
    width: int,
    height: int,
    grid: tuple[tuple[int, int], ...],
    sizes: list[tuple[int, int]],
) -> tuple[list[tuple[int, int]], int, int]:
    """A level laid out on its grid, made room in for items bigger than their grid place:
    each one's extra width inserted as columns at its right edge, its extra height as rows
    at its bottom edge. Items keep their order across and down, so none overlap and
    every edge still goes left to right; each moves by the room inserted before it. An
    item smaller than its place keeps the whole place (its neighbours stay put)."""
    cuts_x = sorted(
        (c + gw, w - gw)
        for (c, _), (gw, _), (w, _) in zip(cells, grid, sizes, strict=True)
        if w > gw
    )
    cuts_y = sorted(
        (r + gh, h - gh)
        for (_, r), (_, gh), (_, h) in zip(cells, grid, sizes, strict=True)
        if h > gh
    )
    if not cuts_x and not cuts_y:
        return cells, width, height
    at_x, room_x = [c for c, _ in cuts_x], [0, *accumulate(d for _, d in cuts_x)]
    at_y, room_y = [r for r, _ in cuts_y], [0, *accumulate(d for _, d in cuts_y)]
    moved = [
        (c + room_x[bisect_right(at_x, c)], r + room_y[bisect_right(at_y, r)]) for c, r in cells
    ]
    return (
        moved,
        max(c + max(g[0], s[0]) for (c, _), g, s in zip(moved, grid, sizes, strict=True)),
        max(r + max(g[1], s[1]) for (_, r), g, s in zip(moved, grid, sizes, strict=True)),
    )


def _first_seen(g: nx.MultiDiGraph, home: Mapping[str, str], tree: FoldTree) -> dict[str, int]:
    """An order for items: drawn nodes by where they are in a topological order, groups
    by when they began in the run (so a model reads in the order its modules ran)."""
    order: dict[str, int] = {}
    for i, v in enumerate(nx.topological_sort(g)):
        order[v] = i
    # A group sorts where its first drawn item does.
    for v, key in home.items():
        while key != ROOT:
            if order.get(key, 1 << 60) > order[v]:
                order[key] = order[v]
            key = tree.groups[key].parent
    return order


def _lay_out_level(
    sizes: tuple[tuple[int, int], ...], edges: tuple[tuple[int, int], ...]
) -> tuple[list[tuple[int, int]], int, int]:
    """Steps for one level's items (by index, in the run's order, with their sizes and
    the edges between them): columns by longest path (an input just before what uses it),
    rows nearest the items each is joined to, no two items on one step. Returns each
    item's top-left step and the level's width and height."""
    n = len(sizes)
    if not n:
        return [], 0, 0
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        if a != b:
            preds[b].append(a)
            succs[a].append(b)
    order = _topological(preds, succs)
    if order is None:  # never for a DAG's folds; kept safe all the same
        preds = [[a for a in p if a < b] for b, p in enumerate(preds)]
        succs = [[b for b in s if b > a] for a, s in enumerate(succs)]
        order = list(range(n))
    width = [w for w, _ in sizes]
    height = [h for _, h in sizes]
    col = [0] * n
    for v in order:
        col[v] = max((col[u] + width[u] for u in preds[v]), default=0)
    # An input (a weight, a constant) sits just before the first thing that uses it.
    inputs = [v for v in range(n) if not preds[v] and succs[v]]
    for v in inputs:
        col[v] = max(0, min(col[s] for s in succs[v]) - width[v])
    taken: dict[int, set[int]] = {}
    cells: list[tuple[int, int] | None] = [None] * n

    def free(c: int, r: int, w: int, h: int) -> bool:
        rows = range(r, r + h)
        return all(x not in taken or taken[x].isdisjoint(rows) for x in range(c, c + w))

    def place(v: int, above: bool = False) -> None:
        """`above`: rows above the others are open to it (an input whose column a block
        fills from the top: just above the block beats far below it)."""
        near = [cells[u][1] + height[u] / 2 for u in (*preds[v], *succs[v]) if cells[u]]
        aim = sum(near) / len(near) - height[v] / 2 if near else 0.0
        start = round(aim) if above else max(0, round(aim))
        step = 0
        while True:
            # Below first for the others; above first for an input (nearer its user's row
            # when a block below fills the column).
            tries = (start - step, start + step) if above else (start + step, start - step)
            for r in tries if step else (start,):
                if (r >= 0 or above) and free(col[v], r, width[v], height[v]):
                    cells[v] = (col[v], r)
                    for x in range(col[v], col[v] + width[v]):
                        taken.setdefault(x, set()).update(range(r, r + height[v]))
                    return
            step += 1

    alone = [v for v in range(n) if not preds[v] and not succs[v]]
    skip = set(inputs) | set(alone)
    for v in sorted((v for v in range(n) if v not in skip), key=lambda v: (col[v], v)):
        place(v)
    for v in sorted(inputs, key=lambda v: (col[v], v)):
        place(v, above=True)
    lowest = min((cell[1] for cell in cells if cell is not None), default=0)
    if lowest < 0:  # rows start at 0 again
        cells = [None if cell is None else (cell[0], cell[1] - lowest) for cell in cells]
    _pack_alone(alone, cells, width, height)
    return (
        cells,
        max(c + width[v] for v, (c, _) in enumerate(cells)),
        max(r + height[v] for v, (_, r) in enumerate(cells)),
    )


def _topological(preds: list[list[int]], succs: list[list[int]]) -> list[int] | None:
    """A topological order of the items (Kahn's, smallest index first), None on a loop."""
    waiting = [len(p) for p in preds]
    ready = [v for v, k in enumerate(waiting) if k == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        for s in succs[v]:
            waiting[s] -= 1
            if waiting[s] == 0:
                heapq.heappush(ready, s)
    return order if len(order) == len(preds) else None


def _pack_alone(
    alone: list[int],
    cells: list[tuple[int, int] | None],
    width: list[int],
    height: list[int],
) -> None:
    """Items joined to nothing at this level (a variable's parameters no forward used)
    go in rows under everything else, as wide as the rest, not down one tall column."""
    if not alone:
        return
    placed = [(v, cell) for v, cell in enumerate(cells) if cell is not None]
    span = max(max((c + width[v] for v, (c, _) in placed), default=0), 6 * SUB)
    top = max((r + height[v] for v, (_, r) in placed), default=0)
    col = row_height = 0
    for v in alone:
        if col and col + width[v] > span:
            top, col, row_height = top + row_height, 0, 0
        cells[v] = (col, top)
        col += width[v]
        row_height = max(row_height, height[v])
