"""The picture's graph: tensors and autograd nodes as one DAG, laid out in layers.

Edges follow the forward pass (inputs on the left, the loss on the right); the
backward pass walks them right to left. Each trace tensor and each trace node is
drawn exactly once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import networkx as nx

from autograd_viz.core.graph.edge_routes import route_edges
from autograd_viz.core.graph.fit_room import nearest_fit, overflow
from autograd_viz.core.graph.fold_layout import Placed
from autograd_viz.core.graph.folding import READABLE_HEIGHT, READABLE_WIDTH, Folding, box_lines
from autograd_viz.core.graph.layered_layout import layered_layout
from autograd_viz.core.graph.module_groups import MODULE
from autograd_viz.core.graph.picture_graph import topological_order
from autograd_viz.core.graph.trace_graph import (  # noqa: F401 (the picture's kinds, here too)
    ACCUMULATE,
    CONSTANT,
    LEAF,
    OPERATION,
    RESULT,
    UNTRACKED,
    DrawnNode,
    add_outside_autograd,
    build_graph,
    reachable_nodes,
)
from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.trace import Trace

# Formatting moved to value_text.py (event captions use it too); views import it from here.
from autograd_viz.core.trace.value_text import (  # noqa: F401
    UNINITIALISED,
    format_number,
    format_value,
)

MAX_KEY_TAIL = 80  # a stable key names what a node feeds in full up to this length


@dataclass
class DrawnGraph:
    """Nodes with positions and forward-direction edges, ready for a view to draw."""

    nodes: dict[str, DrawnNode] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)
    # (node id, index into its `next`) -> the drawn id the edge into that node starts at
    feeds: dict[tuple[str, int], str] = field(default_factory=dict)
    # Edges that are not autograd's: "untracked" (into/out of a no_grad op) and "cut"
    # (a history break such as .detach()); the text says how.
    edge_styles: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    event_nodes: dict[int, str] = field(default_factory=dict)  # op event index -> drawn id
    groups: dict[str, list[str]] = field(default_factory=dict)  # open module path -> members
    alias: dict[str, str] = field(default_factory=dict)  # member of a collapsed module -> box
    keys: dict[str, str] = field(default_factory=dict)  # drawn id -> key stable across runs
    # Folding (module calls, repeats, loops; see folding.py). `collapsed`: the groups
    # drawn as boxes; `frames`: each open group's frame (left, bottom, right, top in
    # layout units); `boxes`: each box's rectangle; `box_text`: the lines a box shows;
    # `short`: labels drawn shorter than the title (a parameter inside its module's
    # frame: `weight`); `folds`: every group of the picture, open or not.
    collapsed: frozenset[str] = frozenset()
    frames: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    boxes: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    box_text: dict[str, list[str]] = field(default_factory=dict)
    short: dict[str, str] = field(default_factory=dict)
    folds: dict[str, Any] = field(default_factory=dict)
    # Waypoints of the edges drawn around marks they would cross (by place in `edges`).
    routes: dict[int, tuple[tuple[float, float], ...]] = field(default_factory=dict)
    folding: Any = field(default=None, repr=False, compare=False)

    def heights(self) -> dict[str, float]:
        """Stable key -> y, to keep this picture's order in the next one."""
        return {self.keys[k]: n.y for k, n in self.nodes.items() if k in self.keys}

    def count(self, *kinds: str) -> int:
        """How many drawn nodes are of the given kinds (all when none given)."""
        return sum(1 for n in self.nodes.values() if not kinds or n.kind in kinds)


def stable_keys(g: nx.MultiDiGraph) -> dict[str, str]:
    """Names for drawn nodes that survive an edit and a re-run (trace ids and line numbers
    do not): a tensor's variable name; otherwise the node's title and the key of the
    node it feeds (`SubBackward0>PowBackward0>tensor:loss`), so a node is known by where
    its result goes."""
    keys: dict[str, str] = {}
    used: dict[str, int] = {}
    for v in reversed(topological_order(g)):
        item: DrawnNode = g.nodes[v]["item"]
        if item.kind in (LEAF, CONSTANT, RESULT) and item.title and item.title != "(leaf)":
            base = f"tensor:{item.title}"
        else:
            after = min((keys[s] for s in g.successors(v)), default=None)
            if after is None:
                base = f"{item.title}|{item.detail}"
            elif len(after) <= MAX_KEY_TAIL:
                base = f"{item.title}>{after}"
            else:  # a long chain's keys would grow with it (10,000 deep: 0.7 s of strings)
                base = f"{item.title}>#{hashlib.blake2b(after.encode(), digest_size=8).hexdigest()}"
        used[base] = used.get(base, 0) + 1
        keys[v] = base if used[base] == 1 else f"{base}#{used[base]}"
    return keys


def drawn_graph(
    trace: Trace,
    collapsed: Iterable[str] | None = frozenset(),
    previous: dict[str, float] | None = None,
    folding: Folding | None = None,
    choices: Mapping[str, bool] | None = None,
    readable_width: float = READABLE_WIDTH,
    readable_height: float = READABLE_HEIGHT,
) -> DrawnGraph:
    """Everything a canvas needs to draw a trace's graph; groups in `collapsed` (module
    paths such as `model.0`, loops such as `loop@7`) are drawn as one box each; None
    folds what a first look needs (the picture's budget, `choices` of the learner's
    applied on top). `previous` maps stable keys to the heights they had in the last
    picture, to keep that picture's order. `folding`: the one an earlier picture of this
    trace made (it keeps the blocks it laid out). `readable_width`: how many layers wide
    a first picture may be before it folds more (the canvas's width, in layers);
    `readable_height`, how many rows tall."""
    # The graph is tens of thousands of small objects built beside a trace of as many:
    # at the collector's default thresholds its full passes cost a tenth of a 10,000-node
    # layout (measured), the more so once the trace's events are typed.
    with collections_postponed():
        if folding is None or folding.trace is not trace:
            g = build_graph(trace)
            add_outside_autograd(trace, g)
            folding = Folding(trace, g)
        if folding.foldable:
            if collapsed is None:
                room = (readable_width, readable_height)
                return _first_look(trace, folding, choices or {}, room)
            return _folded_graph(trace, folding, set(collapsed))
        return _drawn_graph(trace, folding.base.copy(), previous, folding)


def _first_look(
    trace: Trace, folding: Folding, choices: Mapping[str, bool], room: tuple[float, float]
) -> DrawnGraph:
    """The picture a trace opens with: the budget's folds, the learner's `choices` from
    earlier runs on top; without choices, while it is wider or taller than `room` (layers,
    rows), the deepest open level folded too (a 3-step CNN training loop opened in full
    was 60 layers of unnamed marks under a web of edges; a lesson's 25 steps of descent,
    35 rows of unlabelled tiles)."""
    if any(key in folding.info for key in choices):  # (not another script's)
        return _folded_graph(trace, folding, folding.default_folded(choices=choices))
    collapsed = folding.default_folded()
    layout = _placement(folding, collapsed)
    open_fit = overflow(layout[-1], room, layout[4])
    if max(open_fit) > 1:
        # The deepest level whose folding fits; when none does (a small window), the
        # deepest near the best (fit_room.py). A fully open picture was worst of all: a
        # 3-step CNN loop opened whole at 1000×650, its cards a little too tall.
        tried = [(layout, open_fit)]
        depths = [folding.info[k].depth for k in folding.info if k not in layout[3]]
        for depth in range(max(depths, default=0) - 1, -1, -1):
            narrower = _placement(folding, collapsed | folding.folded_at_depth(depth))
            tried.append((narrower, overflow(narrower[-1], room, narrower[4])))
            if max(tried[-1][1]) <= 1:
                break
        layout = nearest_fit(tried)
    return _finished(trace, folding, *layout)


def _folded_graph(trace: Trace, folding: Folding, collapsed: set[str]) -> DrawnGraph:
    """The picture of a graph with groups: nested frames and boxes, laid out by level."""
    return _finished(trace, folding, *_placement(folding, collapsed))


def _placement(
    folding: Folding, collapsed: set[str]
) -> tuple[nx.MultiDiGraph, dict[str, str], dict[str, str], set[str], dict, Placed]:
    """The contracted graph of `collapsed` and where its items go."""
    g, alias, boxes, folded = folding.contract(collapsed)
    for box, key in boxes.items():
        info = folding.info[key]
        members = len(folding.tree.members(key))
        nodes = "1 node" if members == 1 else f"{members:,} nodes"
        detail = f"{info.detail} · {nodes}" if info.detail else nodes
        g.nodes[box]["item"] = DrawnNode(box, MODULE, folding.tree.groups[key].title, detail)
    box_text = {box: box_lines(folding, key, g) for box, key in boxes.items()}
    return g, alias, boxes, folded, box_text, folding.place(g, boxes, box_text)


def _finished(
    trace: Trace,
    folding: Folding,
    g: nx.MultiDiGraph,
    alias: dict[str, str],
    boxes: dict[str, str],
    folded: set[str],
    box_text: dict,
    placed: Placed,
) -> DrawnGraph:
    """The drawn graph of a placement."""
    drawn = DrawnGraph()
    drawn.keys = stable_keys(g)
    for v, data in g.nodes(data=True):
        # A copy: the base graph's nodes are shared by every picture of this folding,
        # and placing them in this one must not move them in another (one on screen
        # while this one is laid out on a worker thread).
        item: DrawnNode = replace(data["item"])
        item.x, item.y = placed.positions[v]
        drawn.nodes[v] = item
    drawn.edges = [(u, v) for u, v, _ in g.edges(keys=True)]
    drawn.feeds = dict(folding.base.graph.get("feeds", {}))
    drawn.edge_styles = dict(g.graph.get("edge_styles", {}))
    drawn.event_nodes = dict(g.graph.get("event_nodes", {}))
    drawn.alias = alias
    drawn.collapsed = frozenset(folded)  # the hidden ones too: opening a box opens one level
    drawn.frames = placed.frames
    drawn.boxes = placed.boxes
    drawn.box_text = box_text
    drawn.folds = folding.info
    drawn.folding = folding
    tree = folding.tree
    groups: dict[str, list[str]] = {key: [] for key in placed.frames}
    for v in drawn.nodes:
        key = tree.groups[boxes[v]].parent if v in boxes else tree.owner.get(v)
        while key:  # every open group it sits in, the root left out
            if key in groups:
                groups[key].append(v)
            key = tree.groups[key].parent
    drawn.groups = {key: sorted(members) for key, members in groups.items()}
    for v, item in drawn.nodes.items():
        home = tree.owner.get(v)
        path = tree.groups[home].path if home in tree.groups else None
        if path and item.title.startswith(path + ".") and item.kind in (LEAF, CONSTANT):
            drawn.short[v] = item.title[len(path) + 1 :]
    drawn.routes = route_edges(drawn)
    return drawn


def _drawn_graph(
    trace: Trace,
    g: nx.MultiDiGraph,
    previous: dict[str, float] | None,
    folding: Folding,
) -> DrawnGraph:
    keys = stable_keys(g)
    hint = None
    if previous:
        hint = {v: previous[keys[v]] for v in g.nodes if keys[v] in previous}
    positions = layered_layout(g, hint=hint)
    drawn = DrawnGraph()
    drawn.keys = keys
    for v, data in g.nodes(data=True):
        item: DrawnNode = replace(data["item"])  # its own, as above
        item.x, item.y = positions[v]
        drawn.nodes[v] = item
    drawn.edges = [(u, v) for u, v, _ in g.edges(keys=True)]
    drawn.feeds = dict(g.graph.get("feeds", {}))
    drawn.edge_styles = dict(g.graph.get("edge_styles", {}))
    drawn.event_nodes = dict(g.graph.get("event_nodes", {}))
    drawn.folding = folding
    drawn.routes = route_edges(drawn)
    return drawn
