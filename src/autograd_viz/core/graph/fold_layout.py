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
its parent's level in turn; closing it again gives back the same positions. Parts of a
level that no edge joins are laid out apart, one under the other, the biggest first, so
a group opening in one moves the others only down (fold_grid.py lays out one level).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import networkx as nx

from autograd_viz.core.graph.fold_grid import SUB, components, lay_out_level, stretched
from autograd_viz.core.graph.fold_tree import ITERATION, MIDDLE, ROOT, FoldTree
from autograd_viz.core.graph.picture_graph import topological_order

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
                known = (key,) if parent is None else (*chain(parent), key)  # noqa: F821 (del'd below)
                chain_of[key] = known
            return known

        items: dict[str, list[str]] = {k: [] for k in open_groups | {ROOT}}
        for v in g:
            items[home[v]].append(v)
        for k in open_groups:
            if k != ROOT:
                items[tree.groups[k].parent].append(k)
        # A leaf's AccumulateGrad sits in the column after it, beside it. What else takes
        # the leaf straight (an op under no_grad: an eval pass, `w -= lr * w.grad`) is laid
        # out as if it took the AccumulateGrad, a column further: it took that column's
        # rows, and the weights' triangles moved up beside other weights.
        beside = {
            u: v
            for u, v in g.edges()
            if _kind_of(g, v) == _ACCUMULATE and home.get(u) == home.get(v)
        }
        # Each edge joins two items of the deepest open group holding both ends.
        level_edges: dict[str, set[tuple[str, str]]] = {k: set() for k in items}
        for u, v in g.edges():
            if u in beside and v != beside[u] and _kind_of(g, v) != _ACCUMULATE:
                u = beside[u]
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
                    blocks[k] = block(k)  # noqa: F821 (del'd below)
                    # At least as wide as its title, where the zoom shows titles.
                    least = math.ceil((title_widths or {}).get(k, 0.0) * SUB)
                    sizes[k] = (
                        max(blocks[k].width, least) + 2 * MARGIN_X,
                        blocks[k].height + MARGIN_TOP + MARGIN_BOTTOM,
                    )
            members = sorted(items[key], key=lambda k: order.get(boxes.get(k, k), 0))
            # A loop's iterations in the order they ran: independent of each other, they
            # sorted by where a topological order met them (iteration 4 of 4 came first).
            turns = [i for i, k in enumerate(members) if _kind(tree, boxes.get(k, k)) in _TURNS]
            if len(turns) > 1:
                ran = sorted(
                    (members[i] for i in turns),
                    key=lambda k: tree.groups[boxes.get(k, k)].first_event,
                )
                for i, k in zip(turns, ran, strict=True):
                    members[i] = k
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
            for part, part_edges in components(edges, weights):
                shape = (tuple(grid[v] for v in part), part_edges)
                cached = self._cache.get(shape)
                if cached is None:
                    cached = self._cache[shape] = lay_out_level(*shape)
                part_cells, part_width, part_height = stretched(
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


_TURNS = (ITERATION, MIDDLE)
_ACCUMULATE = "accumulate"  # graph_model.ACCUMULATE (which imports this module)


def _kind_of(g: nx.MultiDiGraph, v: str) -> str | None:
    return getattr(g.nodes[v].get("item"), "kind", None)


def _kind(tree: FoldTree, key: str) -> str | None:
    grp = tree.groups.get(key)
    return grp.kind if grp is not None else None


def _ranks(base: nx.MultiDiGraph, tree: FoldTree) -> tuple[dict[str, int], dict[str, int]]:
    """Each node's place in a topological order of the whole graph, and each group's:
    that of its first node (so a model reads in the order its modules ran); and how many
    nodes each group holds."""
    rank: dict[str, int] = {}
    weight: dict[str, int] = {}
    for i, v in enumerate(topological_order(base)):
        rank[v] = i
        key = tree.owner.get(v, ROOT)
        while key is not None:
            rank[key] = min(rank.get(key, i), i)
            weight[key] = weight.get(key, 0) + 1
            key = tree.groups[key].parent
    return rank, weight


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
