"""The picture's nesting: module calls, repeated blocks and loop iterations as a tree of
groups, each of which can fold to one box.

A group owns the drawn nodes made inside it. Module calls nest as they ran (the op events'
module stacks and call numbers); among one group's direct parts, a run of parts that
repeat (the same ops on the same lines, or calls of modules of one class and structure)
becomes a loop or a repeat group with one child per repetition. Nothing here guesses at
autograd: the tree only says which drawn nodes sit together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx

from autograd_viz.core.graph.fold_groups import (  # noqa: F401 (the tree's face)
    ITERATION,
    LOOP,
    MIDDLE,
    MODULE,
    REPEAT,
    ROOT,
    FoldTree,
    Group,
    Part,
)
from autograd_viz.core.graph.fold_prune import pruned
from autograd_viz.core.graph.fold_repeats import fold_repeats
from autograd_viz.core.graph.picture_graph import topological_order
from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.events import OpEvent

# The detail of a group holding a module variable's parameters that no forward used.
IDLE = "never called"


def fold_tree(trace: Trace, g: nx.MultiDiGraph) -> FoldTree:
    """The groups of the drawn graph `g` (built from `trace`)."""
    ops = [(i, e) for i, e in trace.index.each(OpEvent)]
    groups: dict[str, Group] = {ROOT: Group(ROOT, MODULE, "script")}
    call_key = _module_calls(ops, trace, groups)
    _idle_modules(trace, g, groups, len(trace.events))
    # Which group each op ran in, and the parts of each group in the order they ran.
    parts: dict[str, list[Part]] = {k: [] for k in groups}
    op_group: dict[int, str] = {}
    for i, e in ops:
        key = call_key.get(i, ROOT)
        op_group[i] = key
        parts[key].append(Part(("op", e.line, e.op), i, op=i))
    for key, group in groups.items():
        if group.parent is not None:
            parts[group.parent].append(Part(None, group.first_event, group=key))
    for members in parts.values():
        members.sort(key=lambda p: p.event)
    # Signatures bottom-up: a call is known by its class and what ran inside it.
    for key in sorted(groups, key=lambda k: -_depth(groups, k)):
        for p in parts[key]:
            if p.group is not None:
                child = groups[p.group]
                inner = tuple(q.signature for q in parts[p.group])
                size = trace.modules.get(child.path or "", {}).get("parameters")
                p.signature = ("call", child.detail, size, hash(inner))
    made = _owners(trace, g, groups, op_group)
    # An op that made nothing drawn has no place in the picture, nor in its loops (a run
    # capped at 20,000 nodes made 50,000 ops of which the picture draws none).
    drawn_ops = {m for m in made.values() if isinstance(m, int)}
    for key, members in parts.items():
        parts[key] = [p for p in members if p.op is None or p.op in drawn_ops]
    _fold_all_repeats(trace, groups, parts)
    _assign(groups, parts, made, g, trace.index.tensors)
    tree = pruned(FoldTree(groups, {}), g)
    tree.made_by = {v: m for v, m in made.items() if isinstance(m, int)}
    return tree


def _fold_all_repeats(trace: Trace, groups: dict[str, Group], parts: dict[str, list[Part]]) -> None:
    """Folds the repeats of every group, and then of each loop's iterations: a loop
    statement inside a loop (a training loop's `for e in range(4)` over a mixture's
    experts) folds inside each pass of the outer one; its passes were drawn side by side.
    The passes of one loop run the same parts, so where the first folds nothing, neither
    does the rest (an RNN's 2,000 steps are not each looked through)."""
    pending: list[tuple[str, int]] = [(key, 0) for key in groups]
    for key, within in pending:  # in the order the groups were made, and those added
        before = len(groups)
        fold_repeats(trace, groups, parts, key, within)
        for loop in list(groups)[before:]:
            fold = groups[loop]
            if fold.kind != LOOP or not fold.line or not fold.children:
                continue
            first, made = fold.children[0], len(groups)
            fold_repeats(trace, groups, parts, first, fold.line)
            if len(groups) > made:  # the rest of its passes, and what was made in the first
                pending.extend((k, fold.line) for k in fold.children[1:])
                pending.extend(
                    (k, groups[groups[k].parent].line)
                    for k in list(groups)[made:]
                    if groups[k].kind == ITERATION
                )


def _depth(groups: dict[str, Group], key: str) -> int:
    depth, parent = 0, groups[key].parent
    while parent is not None:
        depth, parent = depth + 1, groups[parent].parent
    return depth


def _module_calls(
    ops: Sequence[tuple[int, OpEvent]], trace: Trace, groups: dict[str, Group]
) -> dict[int, str]:
    """A group per module call; returns each op's innermost call's key."""
    calls_of: dict[str, set[Any]] = {}
    ids: list[list[Any]] = []
    previous: list[Any] = []
    for _, e in ops:
        stack = list(e.modules)
        if e.calls is not None and len(e.calls) == len(stack):
            here = [(p, c) for p, c in zip(stack, e.calls, strict=True)]
        else:  # older traces: a call is a run of ops under the same stack prefix
            here = []
            for d, p in enumerate(stack):
                same = d < len(previous) and previous[d][0] == p and here == previous[:d]
                here.append(previous[d] if same else (p, ("op", len(ids), d)))
        previous = here
        ids.append(here)
        for p, c in here:
            calls_of.setdefault(p, set()).add(c)
    numbering: dict[tuple[str, Any], str] = {}
    seen: dict[str, int] = {}
    key_of: dict[int, str] = {}
    for (i, _), here in zip(ops, ids, strict=True):
        parent = ROOT
        for p, c in here:
            key = numbering.get((p, c))
            if key is None:
                seen[p] = seen.get(p, 0) + 1
                key = p if len(calls_of[p]) == 1 else f"{p}#{seen[p]}"
                numbering[(p, c)] = key
                info = trace.modules.get(p, {})
                groups[key] = Group(
                    key, MODULE, p, info.get("class", ""), parent, path=p, first_event=i
                )
                groups[parent].children.append(key)
            parent = key
        if here:
            key_of[i] = parent
    return key_of


def _idle_modules(trace: Trace, g: nx.MultiDiGraph, groups: dict[str, Group], end: int) -> None:
    """A group for the parameters of a module variable no forward called (the template
    layer an `nn.TransformerEncoder` copies): one card, not a heap of loose leaves."""
    called = {grp.path for grp in groups.values() if grp.path}
    idle: dict[str, int] = {}
    for tid in g:
        t = trace.index.tensors.get(tid)
        if t is None or not t.is_leaf or not t.name or "." not in t.name:
            continue
        if t.parameter is False:  # `model.w` of a hand-written class: no module's
            continue
        parts = t.name.split(".")
        if any(".".join(parts[:i]) in called for i in range(1, len(parts))):
            continue
        idle[parts[0]] = idle.get(parts[0], 0) + 1
    for var, count in idle.items():
        if count >= 2 and var not in groups:
            groups[var] = Group(var, MODULE, var, IDLE, ROOT, path=var, first_event=end)
            groups[ROOT].children.append(var)


def _owners(
    trace: Trace, g: nx.MultiDiGraph, groups: dict[str, Group], op_group: dict[int, str]
) -> dict[str, Any]:
    """Where each drawn node was made: the op event index that made it, or, for a module's
    parameter and its AccumulateGrad, the module path (placed once the calls are known)."""
    made: dict[str, Any] = {}
    index = trace.index
    for i, e in index.each(OpEvent):
        for n in e.grad_fn:
            if n is not None and n in g:
                made.setdefault(n, i)
        for t in e.outputs:
            if t in g:
                made.setdefault(t, i)
    for i, uid in g.graph.get("event_nodes", {}).items():
        made[uid] = i
    tensors = index.tensors
    for n in trace.nodes:
        if n.id not in g:
            continue
        if n.id not in made and n.tensor in made and n.tensor in g:
            made[n.id] = made[n.tensor]
    paths = {grp.path for grp in groups.values() if grp.path}
    for tid in list(g):
        t = tensors.get(tid)
        if t is not None and t.name and "." in t.name and t.is_leaf:
            # A parameter belongs to its module, or to the nearest one above it that ran
            # (MultiheadAttention reads `out_proj.weight` without calling out_proj).
            path = t.name.rsplit(".", 1)[0]
            while path not in paths and "." in path:
                path = path.rsplit(".", 1)[0]
            if path in paths:
                made[tid] = ("param", path)
    for n in trace.nodes:
        if n.variable and n.id in g and n.variable in made:
            made[n.id] = made[n.variable]  # an AccumulateGrad sits with its leaf
    return made


def _assign(
    groups: dict[str, Group],
    parts: dict[str, list[Part]],
    made: dict[str, Any],
    g: nx.MultiDiGraph,
    tensors: Mapping[str, Any],
) -> None:
    """Give every drawn node a group: the one its op ran in, a parameter the lowest group
    holding every call of its module, anything else the lowest group holding its
    neighbours. A parameter stays outside the loops that call its module; a result the
    script named, outside the module calls that made it."""
    op_group: dict[int, str] = {}
    for key, members in parts.items():
        for p in members:
            if p.op is not None:
                op_group[p.op] = key
    calls_of: dict[str, list[str]] = {}
    for grp in groups.values():
        if grp.path:
            calls_of.setdefault(grp.path, []).append(grp.key)
    where: dict[str, str] = {}
    for v in g:
        m = made.get(v)
        if isinstance(m, int):
            where[v] = op_group.get(m, ROOT)
        elif isinstance(m, tuple):
            # Made where the module was built, not in the loop that calls it: a training
            # loop's or an RNN's weights sit outside its frame and feed every iteration.
            key = _lowest_common(groups, calls_of.get(m[1], [ROOT]))
            while groups[key].kind in (LOOP, ITERATION, MIDDLE) and groups[key].parent:
                key = groups[key].parent
            where[v] = key if groups[key].kind not in (LOOP, ITERATION, MIDDLE) else ROOT
    # Nodes no op event made (F.linear's inner TBackward0, matmul's inner MmBackward0)
    # join the lowest group holding what they feed; failing that, what feeds them (a
    # weight's AccumulateGrad, outside a loop, feeds every iteration's inner node).
    order = topological_order(g)
    for v in reversed(order):
        if v not in where:
            near = [where[u] for u in g.successors(v) if u in where]
            if near:
                where[v] = _lowest_common(groups, near)
    for v in order:
        if v not in where:
            near = [where[u] for u in g.predecessors(v) if u in where]
            where[v] = _lowest_common(groups, near) if near else ROOT
    # A result the script bound to a name of its own (`lossG = bce(D(fake), ones)`) is the
    # script's: it sits after the module call that made it, not inside its card, where
    # folding hid it.
    # Not out of a call that goes on using it, though (a VAE's `mu, logvar = …`, which
    # its reparameterisation uses inside the call): the call's frame would close a loop
    # through it, and the whole model's frame was dissolved.
    tree = FoldTree(groups, {})  # (for its ancestors)
    for v, key in where.items():
        t = tensors.get(v)
        if t is not None and t.name and "." not in t.name and not t.is_leaf:
            while groups[key].kind == MODULE and groups[key].parent is not None:
                users = [where.get(u, ROOT) for u in g.successors(v)]
                if any(u == key or key in tree.ancestors(u) for u in users):
                    break
                key = groups[key].parent
            where[v] = key
    for v, key in where.items():
        groups[key].own.append(v)


def _lowest_common(groups: dict[str, Group], keys: Sequence[str]) -> str:
    """The deepest group that is, or holds, every one of `keys`."""
    if not keys:
        return ROOT
    chains = []
    for k in dict.fromkeys(keys):
        chain = [k]
        while groups[chain[-1]].parent is not None:
            chain.append(groups[chain[-1]].parent)
        chains.append(chain[::-1])
    common = ROOT
    for level in zip(*chains, strict=False):
        if len(set(level)) != 1:
            break
        common = level[0]
    return common
