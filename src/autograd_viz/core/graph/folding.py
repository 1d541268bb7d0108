"""Which groups of a picture are folded, and the graph drawn for a choice of folds.

A `Folding` belongs to one trace's graph: its fold tree, and a layout that remembers the
blocks it laid out, so that opening a box and closing it again costs little and puts
everything back where it was.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import networkx as nx

from autograd_viz.core.graph.fold_layout import BOX_W, FoldLayout, Placed
from autograd_viz.core.graph.fold_tree import (
    IDLE,
    ITERATION,
    LOOP,
    MIDDLE,
    MODULE,
    REPEAT,
    ROOT,
    FoldTree,
    Group,
    fold_tree,
)
from autograd_viz.core.graph.picture_graph import PictureGraph
from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.events import OpEvent
from autograd_viz.core.trace.value_text import format_number

BUDGET = 150  # about this many items drawn when a picture first opens
# A first picture wider than this many layers has its deepest open level folded, and the
# next, until it is not: the graph pane of the default window (about 870 px) fits 48
# layers at the least spacing that still names the tensors (SPARSE_DX_PX, 18 px).
READABLE_WIDTH = 48.0
READABLE_HEIGHT = 16.0  # rows, likewise: its graph pane holds 16 at names' 28 px a row
# A module with more drawn items of its own than this (an nn.GRU or nn.LSTM, whose time
# steps unroll inside the one module: 79-305 in the fidelity suite) opens on demand. Open
# at first look it was a heap of overlapping marks in the default window (a GRU of 88 made
# a 150-item picture "fit" the budget); attention's 31-49 stay open.
DENSE_OWN = 60
_STAYS_FOLDED = (REPEAT, LOOP, MIDDLE)  # opened by the learner, not by the budget


@dataclass(frozen=True)
class FoldInfo:
    """What the views need to know of one group (a breadcrumb entry, a frame's title)."""

    key: str
    kind: str
    title: str  # as drawn: `layers.0`, `for t in range(300):`
    detail: str  # `TransformerEncoderLayer`, `×300`

    @property
    def heading(self) -> str:
        """The title of its frame: `layers.0 · TransformerEncoderLayer`, `for t in
        range(300): ×300`, `iteration 1 of 300`."""
        if not self.detail:
            return self.title
        return (
            f"{self.title} · {self.detail}"
            if self.kind == MODULE
            else f"{self.title} {self.detail}"
        )

    parent: str | None
    depth: int
    children: tuple[str, ...]
    size: int  # drawn nodes inside, when open all the way


def box_id(key: str) -> str:
    """The drawn id of a folded group's box."""
    return f"m:{key}"


class Folding:
    """The fold tree of one trace's graph and a layout with its cache."""

    def __init__(self, trace: Trace, g: nx.MultiDiGraph) -> None:
        self.trace, self.base = trace, g
        self.tree: FoldTree = fold_tree(trace, g)
        self.layout = FoldLayout(self.tree, g)
        self.sizes = self.tree.sizes()
        self.info = {k: self._info(k) for k in self.tree.walk() if k != ROOT}

    @property
    def foldable(self) -> bool:
        """Whether anything can fold (a module call, a loop): else the plain layout."""
        return len(self.tree.groups) > 1

    def _info(self, key: str) -> FoldInfo:
        grp = self.tree.groups[key]
        return FoldInfo(
            key,
            grp.kind,
            short_title(self.tree, grp),
            grp.detail,
            grp.parent or None,
            self.tree.depth(key),
            tuple(grp.children),
            self.sizes[key],
        )

    def default_folded(self, budget: int = BUDGET, choices: Mapping[str, bool] = {}) -> set[str]:
        """The groups drawn folded when a picture opens: none when the whole graph fits in
        `budget` items; else the outer levels open, widest first, while they fit, with
        repeats and loops kept folded. Modules no forward called, and modules of more
        than DENSE_OWN items of their own, stay folded. `choices` (key -> opened)
        override it."""
        tree = self.tree
        folded = set(self.info)
        if self.sizes[ROOT] <= budget:
            folded = set()
        else:
            root = tree.groups[ROOT]
            shown = len(root.own) + len(root.children)
            queue = deque(root.children)
            while queue:
                grp = tree.groups[queue.popleft()]
                if grp.kind in _STAYS_FOLDED:
                    continue
                cost = len(grp.own) + len(grp.children) - 1
                if shown + cost <= budget:
                    folded.discard(grp.key)
                    shown += cost
                    queue.extend(grp.children)
        # Parameters no forward used (the template layer a TransformerEncoder copies) are
        # one card however small the graph: open, they were a heap of unused leaves as
        # big as the model.
        folded |= {k for k, grp in tree.groups.items() if grp.detail == IDLE and k in self.info}
        folded |= {
            k
            for k, grp in tree.groups.items()
            if grp.kind == MODULE and len(grp.own) > DENSE_OWN and k in self.info
        }
        for key, opened in choices.items():
            if key in self.info:
                (folded.discard if opened else folded.add)(key)
        return folded

    def folded_at_depth(self, depth: int) -> set[str]:
        """Groups deeper than `depth` levels folded (0: every top-level group a box)."""
        return {k for k, info in self.info.items() if info.depth > depth}

    def contract(
        self, folded: Iterable[str]
    ) -> tuple[nx.MultiDiGraph, dict[str, str], dict[str, str], set[str]]:
        """The graph drawn with `folded` groups as boxes (those inside a folded one stay
        folded, hidden): the graph, member -> box id, box id -> group key, and the groups
        folded in the end (a fold that would close a loop stays open)."""
        folded = set(folded) & set(self.info)
        while True:
            g, alias, boxes = self._contracted(folded)
            # The base graph is a DAG: only a box can close a loop (and find_cycle on a
            # 10,000-node multigraph costs seconds where this costs a tenth).
            if not boxes or nx.is_directed_acyclic_graph(g):
                return g, alias, boxes, folded
            cycle = nx.find_cycle(g)
            opened = {boxes[v] for edge in cycle for v in edge[:2] if v in boxes}
            if not opened:  # the base graph is a DAG: a loop always runs through a box
                return g, alias, boxes, folded
            folded -= opened

    def _contracted(
        self, folded: set[str]
    ) -> tuple[nx.MultiDiGraph, dict[str, str], dict[str, str]]:
        tree = self.tree
        boxes: dict[str, str] = {}
        alias: dict[str, str] = {}
        for key in tree.walk():
            if key in folded and not any(a in folded for a in tree.ancestors(key)):
                box = box_id(key)
                boxes[box] = key
                alias.update(dict.fromkeys(tree.members(key), box))
        base = self.base
        g = PictureGraph()
        g.graph.update(base.graph)
        for v, data in base.nodes(data=True):
            if v not in alias:
                g.add_node(v, **data)
        for box in boxes:
            g.add_node(box, item=None)  # the caller makes its item
        seen: set[tuple[str, str]] = set()
        for u, v in base.edges():
            a, b = alias.get(u, u), alias.get(v, v)
            if a == b:
                continue
            if a in boxes or b in boxes:
                if (a, b) in seen:
                    continue
                seen.add((a, b))
            g.add_edge(a, b)
        styles = base.graph.get("edge_styles", {})
        g.graph["edge_styles"] = {
            (alias.get(u, u), alias.get(v, v)): s
            for (u, v), s in styles.items()
            if alias.get(u, u) != alias.get(v, v)
        }
        g.graph["event_nodes"] = {
            i: alias.get(uid, uid) for i, uid in base.graph.get("event_nodes", {}).items()
        }
        return g, alias, boxes

    def place(
        self, g: nx.MultiDiGraph, boxes: Mapping[str, str], text: Mapping[str, list[str]]
    ) -> Placed:
        """Positions, frames and box rectangles for a contracted graph; each box as wide
        as its longest line of `text` wants, within reason."""
        shown = set(self.info) - set(boxes.values())
        hidden = {k for key in boxes.values() for k in self.tree.walk(key)}
        widths = {box: box_cells(text.get(box, [])) for box in boxes}
        titles = {k: len(self.info[k].title) * CHAR_CELLS + 0.3 for k in shown - hidden}
        return self.layout.place(g, shown - hidden, boxes, widths, titles)


CHAR_CELLS = 8.5 / 80  # a label character's width, in cells, at the zoom that fits labels


def box_cells(lines: list[str]) -> int:
    """How many cells wide a box should be to show its lines at the labels' zoom."""
    longest = max((len(line) for line in lines), default=0)
    return max(BOX_W, min(4, math.ceil(longest * CHAR_CELLS + 0.3)))


def short_title(tree: FoldTree, grp: Group) -> str:
    """A group's name as its frame or box shows it: a module's path less the path of the
    module it ran in (`layers.0` inside `model.1`), a loop's header, an iteration's number."""
    if grp.kind == MODULE and grp.path:
        parent = grp.parent
        while parent and tree.groups[parent].path is None:
            parent = tree.groups[parent].parent
        outer = tree.groups[parent].path if parent else None
        if outer and grp.path.startswith(outer + "."):
            suffix = grp.key[len(grp.path) :]  # `#2` for a second call
            short = grp.path[len(outer) + 1 :]
            if short.isdigit():  # `0` says little: `model.0`, `layers.0`
                short = grp.path.rsplit(".", 2)[-2] + "." + short
            return short + suffix
        return grp.key
    return grp.title


def box_lines(folding: Folding, key: str, g: nx.MultiDiGraph) -> list[str]:
    """What a folded group's box says: its name; its class or count; the shapes going in
    and coming out; its parameters and, after a backward pass, their gradient's norm."""
    trace, tree = folding.trace, folding.tree
    grp = tree.groups[key]
    info = folding.info[key]
    lines = [info.title]
    if grp.kind == MODULE:
        lines.append(grp.detail or "module")
    elif grp.kind == ITERATION:
        lines.append("one pass of the loop")
    else:
        lines.append(grp.detail if grp.kind != REPEAT else _ends(folding, grp))
    ordered = list(tree.members(key))  # walked once: a card's members can be thousands
    members = set(ordered)
    # networkx's adjacency dicts, read directly: the RNN's loop card has 16,000 members.
    pred, succ = folding.base._pred, folding.base._succ
    ins = _shapes(folding, [u for m in members for u in pred[m] if u not in members])
    # What leaves it, or ends there (a loop whose last iteration made the loss).
    outs = _shapes(folding, [m for m in members if not succ[m] or not members.issuperset(succ[m])])
    if ins or outs:  # one side alone without a dot standing for the other (`· → scalar`)
        lines.append(f"{ins} → {outs}".strip())
    tensors = trace.index.tensors
    params = [
        t for v in ordered if (t := tensors.get(v)) is not None and t.is_leaf and t.requires_grad
    ]
    if params:
        count = sum(math.prod(t.shape) for t in params)
        text = f"{_count(count)} param{'s' if count != 1 else ''}"
        norms = [t.grad.norm for t in params if t.grad is not None and t.grad.norm is not None]
        if norms:
            text += f" · ‖grad‖ {format_number(math.sqrt(sum(n * n for n in norms)))}"
        lines.append(text)
    elif grp.kind == MODULE and grp.path:
        # Its weights drawn outside it (a model called in each pass of a loop: they are
        # every pass's), counted all the same, as the run's module table has them.
        count = (trace.modules.get(grp.path) or {}).get("parameters") or 0
        if count:
            lines.append(f"{_count(count)} param{'s' if count != 1 else ''}")
    return lines


def _ends(folding: Folding, grp: Group) -> str:
    """`layers.0 … layers.3`: the first and last of a repeat's blocks."""
    first, last = (folding.info[k].title for k in (grp.children[0], grp.children[-1]))
    return f"{first} … {last}"


def _shapes(folding: Folding, ids: Iterable[str]) -> str:
    """The distinct shapes of what the drawn items `ids` carry on (a tensor's; a node's
    output's, as the op that made it recorded it), parameters left out."""
    shapes: list[str] = []
    for v in dict.fromkeys(ids):
        shape = _shape_of(folding, v)
        if shape is not None:
            text = "[" + ", ".join(str(d) for d in shape) + "]" if shape else "scalar"
            if text not in shapes:
                shapes.append(text)
    if len(shapes) > 2:
        return f"{shapes[0]} +{len(shapes) - 1}"
    return ", ".join(shapes)


def _shape_of(folding: Folding, v: str) -> list[int] | None:
    trace = folding.trace
    index = trace.index
    t = index.tensors.get(v)
    if t is not None:
        if t.is_leaf and t.requires_grad and "." in (t.name or ""):
            return None  # a module's parameter: its count says more
        return list(t.shape)
    if v not in index.nodes:
        return None
    leaf = index.nodes[v].variable
    if leaf:  # an AccumulateGrad stands for its leaf (a weight, when its loop is folded)
        return _shape_of(folding, leaf) if leaf in index.tensors else None
    made = folding.tree.made_by.get(v)  # the op that made the node recorded its output
    e = index.event(made) if made is not None else None
    if isinstance(e, OpEvent) and v in e.grad_fn:
        at = list(e.grad_fn).index(v)
        value = e.values[at] if at < len(e.values) else None
        if value is not None:
            return list(value.shape)
    node = index.nodes[v]
    t = index.tensors.get(node.tensor or "")
    return list(t.shape) if t is not None else None


def _count(n: int) -> str:
    """1,234 → 1.2k; 11,689,512 → 11.7M."""
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{n / 1e3:.0f}k"
    if n >= 1_000:
        return f"{n / 1e3:.1f}k"
    return str(n)
