"""One level of a folded picture on its grid: the items of one open group (nodes, boxes,
open groups' blocks), in parts joined by the level's edges, laid out on a grid in which
every group takes one box's place, then stretched for the bigger ones (fold_layout.py
puts the levels together)."""

from __future__ import annotations

import heapq
from bisect import bisect_right
from itertools import accumulate

# The grid is finer than one layer or one row: SUB steps to a cell, so a frame's margin
# costs a quarter of a layer, not a whole one (nested frames would spread a model wide).
SUB = 4


def components(
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


def stretched(
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


def lay_out_level(
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
