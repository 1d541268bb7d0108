"""nn.Module calls as groups of graph nodes, each of which can collapse to one box."""

from __future__ import annotations

from collections import defaultdict

import networkx as nx

from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.events import OpEvent

MODULE = "module"  # the kind of a collapsed module's box


def module_groups(trace: Trace, g: nx.MultiDiGraph) -> dict[str, set[str]]:
    """Innermost module path → the drawn nodes it owns: the grad_fn nodes of the ops that
    ran inside it, its parameters (`model.0.weight`) and their AccumulateGrad nodes."""
    groups: dict[str, set[str]] = defaultdict(set)
    for _, e in trace.index.each(OpEvent):
        if e.modules:
            groups[e.modules[-1]].update(n for n in e.grad_fn if n in g)
    for t in trace.tensors:
        if t.name and t.id in g and "." in t.name:
            path = t.name.rsplit(".", 1)[0]
            if path in groups:
                groups[path].add(t.id)
    for n in trace.nodes:
        if n.variable and n.id in g:
            owner = next((p for p, members in groups.items() if n.variable in members), None)
            if owner is not None:
                groups[owner].add(n.id)
    # Nodes a module's op made inside torch (F.linear's TBackward0) sit between its
    # members without an op event of their own: a node all of whose neighbours are in
    # one group belongs to it.
    owner = {m: path for path, members in groups.items() for m in members}
    changed = True
    while changed:
        changed = False
        for v in g:
            if v in owner or not str(v).startswith("n"):  # only autograd nodes, never inputs
                continue
            near = {owner.get(u) for u in (*g.predecessors(v), *g.successors(v))}
            if len(near) == 1 and None not in near:
                (path,) = near
                groups[path].add(v)
                owner[v] = path
                changed = True
    # A module without parameters (nn.ReLU, nn.Flatten) owns just the one node its op
    # made: framed all the same, as its op ran inside it. Only a module whose ops made
    # no node of the drawn graph (an identity, a no_grad call) has no frame.
    return {path: members for path, members in groups.items() if members}


def collapse(
    g: nx.MultiDiGraph, groups: dict[str, set[str]], collapsed: set[str], make_item
) -> dict[str, str]:
    """Replace each collapsed group by one node (in place). Returns member → box id.
    A group whose collapse would close a loop stays open."""
    alias: dict[str, str] = {}
    for path in sorted(collapsed):
        members = groups.get(path, set()) & set(g)
        if not members:
            continue
        box = f"m:{path}"
        inbound = [(u, v) for v in members for u in g.predecessors(v) if u not in members]
        outbound = [(u, v) for u in members for v in g.successors(u) if v not in members]
        candidate = g.copy()
        candidate.remove_nodes_from(members)
        candidate.add_node(box)
        candidate.add_edges_from((u, box) for u, _ in dict.fromkeys(inbound))
        candidate.add_edges_from((box, v) for _, v in dict.fromkeys(outbound))
        if not nx.is_directed_acyclic_graph(candidate):
            continue
        g.remove_nodes_from(members)
        g.add_node(box, item=make_item(box, path, len(members)))
        for u in dict.fromkeys(u for u, _ in inbound):
            g.add_edge(u, box)
        for v in dict.fromkeys(v for _, v in outbound):
            g.add_edge(box, v)
        alias.update(dict.fromkeys(members, box))
    return alias
