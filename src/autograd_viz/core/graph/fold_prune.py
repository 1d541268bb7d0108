"""The fold tree tidied: groups with nothing drawn dropped, folds of fewer than two drawn
repetitions opened, groups that would close a loop dissolved, long loops given a group for
their middle iterations."""

from __future__ import annotations

import networkx as nx

from autograd_viz.core.graph.fold_groups import (
    ITERATION,
    LOOP,
    MIDDLE,
    MIN_REPEATS,
    REPEAT,
    ROOT,
    FoldTree,
    Group,
)
from autograd_viz.core.graph.picture_graph import topological_order


def pruned(tree: FoldTree, g: nx.MultiDiGraph) -> FoldTree:
    """Without groups that hold no drawn node, and with folds of fewer than MIN_REPEATS
    drawn repetitions opened into their parent (a training loop draws its last step)."""
    groups = tree.groups
    size = tree.sizes()
    # Empty groups go in one pass (a capped run of 50,000 module calls draws none of them:
    # removing them one by one from their parents' lists was quadratic).
    empty = {k for k, n in size.items() if n == 0 and k != ROOT}
    walk = [k for k in tree.walk() if k not in empty]
    for key in empty:
        del groups[key]
    for grp in groups.values():
        if empty and any(c in empty for c in grp.children):
            grp.children = [c for c in grp.children if c not in empty]
    for key in walk[::-1]:
        if key == ROOT or key not in groups:
            continue
        grp = groups[key]
        if grp.kind in (LOOP, REPEAT):
            drawn = [c for c in grp.children if size.get(c, 0) > 0]
            if len(drawn) < MIN_REPEATS:
                _dissolve(groups, key)
    for key in list(groups):  # iterations of a dissolved loop dissolve too
        grp = groups.get(key)
        if grp is not None and grp.kind == ITERATION and groups[grp.parent].kind != LOOP:
            _dissolve(groups, key)
    _open_loops(groups, g)
    _number_iterations(groups)
    for key in [k for k, grp in groups.items() if grp.kind == LOOP]:
        _fold_middle(groups, key)
    owner = {v: k for k, grp in groups.items() for v in grp.own}
    return FoldTree(groups, owner)


def _open_loops(groups: dict[str, Group], g: nx.MultiDiGraph) -> None:
    """Dissolve every group that, drawn as one box or one frame, would close a loop: a
    path leaving it and coming back into it (a double backward's nodes, made later,
    join earlier ones). A path can only come back through a node made between where it
    left and where it comes back, so only groups with such an outsider are checked in full."""
    tree = FoldTree(groups, {v: k for k, grp in groups.items() for v in grp.own})
    ordered = topological_order(g)
    order = {v: i for i, v in enumerate(ordered)}
    # networkx's adjacency dicts, read directly: a loop of 2,000 iterations asks this of
    # every member of every iteration (0.13 s through g.successors, measured).
    succ, pred = g._succ, g._pred
    keys = sorted(tree.foldable(), key=lambda k: -tree.depth(k))  # innermost first
    for key in keys:
        members = set(tree.members(key))
        if not members:
            continue
        leaves = [order[m] for m in members if not members.issuperset(succ[m])]
        enters = [order[m] for m in members if not members.issuperset(pred[m])]
        if not leaves or not enters or min(leaves) >= max(enters):
            continue  # nothing leaves it before something comes in: no loop
        low, high = min(leaves), max(enters)
        if members.issuperset(ordered[low + 1 : high]):
            continue
        if _closes_loop(g, members):
            _dissolve(groups, key)


def _closes_loop(g: nx.MultiDiGraph, members: set[str]) -> bool:
    """Whether a path runs from the group's members out and back into them."""
    starts = {s for m in members for s in g.successors(m) if s not in members}
    seen, stack = set(starts), list(starts)
    while stack:
        v = stack.pop()
        for s in g.successors(v):
            if s in members:
                return True
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return False


def _dissolve(groups: dict[str, Group], key: str) -> None:
    """Put a group's nodes and children in its parent, where it stood."""
    grp = groups.pop(key)
    parent = groups[grp.parent]
    at = parent.children.index(key)
    parent.children[at : at + 1] = grp.children
    for c in grp.children:
        groups[c].parent = parent.key
    parent.own.extend(grp.own)


def _number_iterations(groups: dict[str, Group]) -> None:
    """A loop's title counts the repetitions drawn; its iterations say which they are."""
    for grp in groups.values():
        if grp.kind == LOOP:
            grp.count = len(grp.children)
            grp.detail = f"×{grp.count}"
            for n, c in enumerate(grp.children, 1):
                if groups[c].kind == ITERATION:
                    groups[c].title = f"iteration {n} of {grp.count}"
                    groups[c].detail = ""
        elif grp.kind == REPEAT:
            # A repetition of several calls (Linear, Tanh) has its calls as children:
            # its iterations dissolved, four children are two repetitions, not four.
            period = grp.period if len(grp.children) % grp.period == 0 else 1
            grp.count = len(grp.children) // period
            one = [groups[c].detail or groups[c].title for c in grp.children[:period]]
            grp.title = f"{', '.join(dict.fromkeys(one))} ×{grp.count}"


def _fold_middle(groups: dict[str, Group], key: str) -> None:
    """A loop of more than three iterations holds its first, one group of the ones between
    (`iterations 2–299`) and its last, so opening a long loop shows its two ends."""
    loop = groups[key]
    if len(loop.children) <= 3:
        return
    inner = loop.children[1:-1]
    middle = Group(
        f"{key}/…",
        MIDDLE,
        f"iterations 2–{len(inner) + 1}",
        f"×{len(inner)}",
        key,
        children=inner,
        count=len(inner),
        first_event=groups[inner[0]].first_event,
    )
    groups[middle.key] = middle
    for c in inner:
        groups[c].parent = middle.key
    loop.children = [loop.children[0], middle.key, loop.children[-1]]
