"""Laying out a folded graph: each open group is a block laid out on its own, then placed
in its parent's grid as one item, so frames nest and never overlap.

Every level is a small layered layout on a grid of cells (one column per layer, one row
per node): a node takes one cell, a folded group's box BOX_W × BOX_H cells, an open group
its own block plus a margin for its frame and title. An item is put where no other item
is, so nothing drawn at one level can land inside another's frame. A block's layout
depends only on what is inside it, and is cached: opening one module re-lays out the
levels that hold it, and closing it again gives back the same positions.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import networkx as nx

from autograd_viz.core.graph.fold_tree import ROOT, FoldTree
from autograd_viz.core.graph.picture_graph import topological_order

# The grid is finer than one layer or one row: SUB steps to a cell, so a frame's margin
# costs a quarter of a layer, not a whole one (nested frames would spread a model wide).
SUB = 4
BOX_W, BOX_H = 2, 2  # a folded group's box, in cells
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 1, 2, 1  # around an open group's parts, in steps
FRAME_INSET = 0.1  # a frame is drawn this far inside its block's margin (layout units)
MARK_DOWN = 0.3  # a node's mark sits this far down its cell; its label hangs below
BOX_INSET_X, BOX_INSET_Y = 0.08, 0.12

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

    def __init__(self, tree: FoldTree) -> None:
        self.tree = tree
        self._cache: dict[tuple, tuple[list[tuple[int, int]], int, int]] = {}

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
                known = (key,) if parent is None else (*chain(parent), key)  # noqa: F821 (del'd below)
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
        order = _first_seen(g, home, tree)
        widths = box_widths or {}
        sizes: dict[str, tuple[int, int]] = {
            v: (widths.get(v, BOX_W) * SUB, BOX_H * SUB) for v in box_ids
        }
        blocks: dict[str, _Block] = {}

        def block(key: str) -> _Block:
            for k in items[key]:
                if k in open_groups and k not in blocks:
                    blocks[k] = block(k)  # noqa: F821 (del'd below)
                    # At least as wide as its title, where the zoom shows titles.
                    least = math.ceil((title_widths or {}).get(k, 0.0) * SUB)
                    sizes[k] = (
                        max(blocks[k].width, least) + 2 * MARGIN_X,
                        blocks[k].height + MARGIN_TOP + MARGIN_BOTTOM,
                    )
            members = sorted(items[key], key=lambda k: order.get(k, 0))
            # Blocks of the same shape (a loop's iterations, a model's layers) share one
            # layout: the key is the level's structure, not its ids.
            at = {v: i for i, v in enumerate(members)}
            shape = (
                tuple(sizes.get(k, (SUB, SUB)) for k in members),
                tuple(sorted((at[a], at[b]) for a, b in level_edges[key])),
            )
            cached = self._cache.get(shape)
            if cached is None:
                cached = self._cache[shape] = _lay_out_level(*shape)
            cells, width, height = cached
            return _Block({members[i]: cell for i, cell in enumerate(cells)}, width, height)

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
                    put(item, blocks[item], x + MARGIN_X / SUB, y + MARGIN_TOP / SUB)  # noqa: F821
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
        # The three call themselves, each a cycle through its closure cell that would hold
        # this layout (and its tree) until the cyclic collector ran: broken here, so the
        # picture goes with its last reference (see PictureGraph).
        del chain, block, put
        return placed


def _first_seen(g: nx.MultiDiGraph, home: Mapping[str, str], tree: FoldTree) -> dict[str, int]:
    """An order for items: drawn nodes by where they are in a topological order, groups
    by when they began in the run (so a model reads in the order its modules ran)."""
    order: dict[str, int] = {}
    for i, v in enumerate(topological_order(g)):
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
