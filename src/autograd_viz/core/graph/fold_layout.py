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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

from autograd_viz.core.graph.fold_tree import ROOT, FoldTree

BOX_W, BOX_H = 2, 2  # a folded group's box, in cells
FRAME_INSET = 0.1  # a frame is drawn this far inside its block's cells
MARK_DOWN = 0.3  # a node's mark sits this far down its cell; its label hangs below
BOX_INSET_X, BOX_INSET_Y = 0.08, 0.12

Rect = tuple[float, float, float, float]  # left, bottom, right, top (data units, y up)


@dataclass
class _Block:
    """One open group laid out: its items' cells relative to its content's top left, and
    its content's size in cells."""

    cells: dict[str, tuple[int, int]]  # item -> (column, row) of its top-left cell
    width: int
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
        self._cache: dict[tuple, _Block] = {}

    def place(
        self,
        g: nx.MultiDiGraph,
        open_groups: set[str],
        boxes: Mapping[str, str],
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
        order = _first_seen(g, home, tree)
        sizes: dict[str, tuple[int, int]] = {v: (BOX_W, BOX_H) for v in box_ids}
        blocks: dict[str, _Block] = {}

        def block(key: str) -> _Block:
            for k in items[key]:
                if k in open_groups and k not in blocks:
                    blocks[k] = block(k)
                    sizes[k] = (blocks[k].width + 1, blocks[k].height + 1)
            members = sorted(items[key], key=lambda k: order.get(k, 0))
            signature = (
                key,
                tuple(members),
                tuple(sorted(level_edges[key])),
                tuple(sizes.get(k, (1, 1)) for k in members),
            )
            cached = self._cache.get(signature)
            if cached is None:
                cached = _lay_out_level(members, level_edges[key], sizes)
                self._cache[signature] = cached
            return cached

        root = block(ROOT)
        placed = Placed()

        def put(key: str, b: _Block, left: float, top: float) -> None:
            for item, (col, row) in b.cells.items():
                x, y = left + col, top + row  # the item's top-left cell, rows going down
                if item in blocks:
                    w, h = sizes[item]
                    placed.frames[item] = (
                        x + FRAME_INSET,
                        -(y + h - FRAME_INSET),
                        x + w - FRAME_INSET,
                        -(y + FRAME_INSET),
                    )
                    put(item, blocks[item], x + 0.5, y + 0.5)
                elif item in box_ids:
                    w, h = sizes[item]
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
    members: list[str], edges: Iterable[tuple[str, str]], sizes: Mapping[str, tuple[int, int]]
) -> _Block:
    """Cells for one level's items: columns by longest path (an input just before what
    uses it), rows nearest the items each is joined to, no two items on one cell."""
    if not members:
        return _Block({}, 0, 0)
    rank = {v: i for i, v in enumerate(members)}
    g = nx.DiGraph()
    g.add_nodes_from(members)
    g.add_edges_from(edges)
    if not nx.is_directed_acyclic_graph(g):  # never for a DAG's folds; kept safe all the same
        g.remove_edges_from([(u, v) for u, v in edges if rank[u] >= rank[v]])
    width = {v: sizes.get(v, (1, 1))[0] for v in members}
    height = {v: sizes.get(v, (1, 1))[1] for v in members}
    col: dict[str, int] = {}
    for v in nx.topological_sort(g):
        col[v] = max((col[u] + width[u] for u in g.predecessors(v)), default=0)
    # An input (a weight, a constant) sits just before the first thing that uses it.
    for v in members:
        if g.in_degree(v) == 0 and g.out_degree(v) > 0:
            col[v] = max(0, min(col[s] for s in g.successors(v)) - width[v])
    taken: dict[int, set[int]] = {}
    cells: dict[str, tuple[int, int]] = {}

    def free(c: int, r: int, w: int, h: int) -> bool:
        return all(
            not (taken.get(x, ()) and any(y in taken[x] for y in range(r, r + h)))
            for x in range(c, c + w)
        )

    def centre(v: str) -> float:
        return cells[v][1] + height[v] / 2

    def place(v: str) -> None:
        near = [centre(u) for u in (*g.predecessors(v), *g.successors(v)) if u in cells]
        aim = sum(near) / len(near) - height[v] / 2 if near else 0.0
        start = max(0, round(aim))
        for step in range(0, 1 << 20):
            for r in (start + step, start - step) if step else (start,):
                if r >= 0 and free(col[v], r, width[v], height[v]):
                    cells[v] = (col[v], r)
                    for x in range(col[v], col[v] + width[v]):
                        taken.setdefault(x, set()).update(range(r, r + height[v]))
                    return

    inputs = [v for v in members if g.in_degree(v) == 0 and g.out_degree(v) > 0]
    first = [v for v in members if v not in set(inputs)]
    for v in sorted(first, key=lambda v: (col[v], rank[v])):
        place(v)
    for v in sorted(inputs, key=lambda v: (col[v], rank[v])):
        place(v)
    return _Block(
        cells,
        max(c + width[v] for v, (c, _) in cells.items()),
        max(r + height[v] for v, (_, r) in cells.items()),
    )
