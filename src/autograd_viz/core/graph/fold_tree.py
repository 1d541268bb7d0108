"""The picture's nesting: module calls, repeated blocks and loop iterations as a tree of
groups, each of which can fold to one box.

A group owns the drawn nodes made inside it. Module calls nest as they ran (the op events'
module stacks and call numbers); among one group's direct parts, a run of parts that
repeat (the same ops on the same lines, or calls of modules of one class and structure)
becomes a loop or a repeat group with one child per repetition. Nothing here guesses at
autograd: the tree only says which drawn nodes sit together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.events import OpEvent

ROOT = ""  # the key of the tree's root: the script itself
MODULE, REPEAT, LOOP, ITERATION, MIDDLE = "module", "repeat", "loop", "iteration", "middle"
MIN_REPEATS = 2  # a loop or a repeat needs this many repetitions with nodes drawn
MAX_PERIOD = 400  # longest repetition looked for, in parts (ops and module calls)


@dataclass
class Group:
    """One foldable part of the picture."""

    key: str  # stable across runs of edited code: `model.0`, `cell#3`, `loop@7`, `loop@7/2`
    kind: str  # MODULE, REPEAT, LOOP, ITERATION or MIDDLE (a loop's inner iterations)
    title: str  # `model.layers.0`, `for t in range(30):`, `iteration 2`
    detail: str = ""  # `Linear`, `TransformerEncoderLayer ×4`, `×30`
    parent: str | None = None
    children: list[str] = field(default_factory=list)
    own: list[str] = field(default_factory=list)  # drawn nodes directly in it
    count: int = 1  # repetitions (a loop's or a repeat's), else 1
    path: str | None = None  # the module path of a module call
    first_event: int = 0  # where it began in the trace's events (for order)


@dataclass
class FoldTree:
    """Groups by key, the root (the script) first; `owner` gives each drawn node's group."""

    groups: dict[str, Group]
    owner: dict[str, str]
    made_by: dict[str, int] = field(default_factory=dict)  # node -> op event that made it

    def ancestors(self, key: str) -> list[str]:
        """The group's parents up to the root, nearest first (the root included)."""
        out = []
        parent = self.groups[key].parent
        while parent is not None:
            out.append(parent)
            parent = self.groups[parent].parent
        return out

    def depth(self, key: str) -> int:
        """0 for the root, 1 for its children, …"""
        return len(self.ancestors(key))

    def members(self, key: str) -> list[str]:
        """Every drawn node inside the group, its children's included."""
        out: list[str] = []
        stack = [key]
        while stack:
            g = self.groups[stack.pop()]
            out.extend(g.own)
            stack.extend(g.children)
        return out

    def sizes(self) -> dict[str, int]:
        """Per group, how many drawn nodes it holds in all."""
        size: dict[str, int] = {}
        for key in reversed(list(self.walk())):
            g = self.groups[key]
            size[key] = len(g.own) + sum(size[c] for c in g.children)
        return size

    def walk(self, key: str = ROOT) -> Iterable[str]:
        """Keys from `key` down, parents before children, in order."""
        stack = [key]
        while stack:
            k = stack.pop()
            yield k
            stack.extend(reversed(self.groups[k].children))

    def foldable(self) -> list[str]:
        """Every group but the root."""
        return [k for k in self.walk() if k != ROOT]


# ---- building ----------------------------------------------------------------------
@dataclass
class _Part:
    """One direct part of a group while the tree is built: an op or a child group."""

    signature: Any
    event: int
    op: int | None = None  # index of the op event, for an op
    group: str | None = None  # key, for a child group


def fold_tree(trace: Trace, g: nx.MultiDiGraph) -> FoldTree:
    """The groups of the drawn graph `g` (built from `trace`)."""
    ops = [(i, e) for i, e in trace.index.each(OpEvent)]
    groups: dict[str, Group] = {ROOT: Group(ROOT, MODULE, "script")}
    call_key = _module_calls(ops, trace, groups)
    _idle_modules(trace, g, groups, len(trace.events))
    # Which group each op ran in, and the parts of each group in the order they ran.
    parts: dict[str, list[_Part]] = {k: [] for k in groups}
    op_group: dict[int, str] = {}
    for i, e in ops:
        key = call_key.get(i, ROOT)
        op_group[i] = key
        parts[key].append(_Part(("op", e.line, e.op), i, op=i))
    for key, group in groups.items():
        if group.parent is not None:
            parts[group.parent].append(_Part(None, group.first_event, group=key))
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
    for key in list(groups):
        _fold_repeats(trace, groups, parts, key)
    _assign(groups, parts, made, g)
    tree = _pruned(FoldTree(groups, {}), g)
    tree.made_by = {v: m for v, m in made.items() if isinstance(m, int)}
    return tree


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
        parts = t.name.split(".")
        if any(".".join(parts[:i]) in called for i in range(1, len(parts))):
            continue
        idle[parts[0]] = idle.get(parts[0], 0) + 1
    for var, count in idle.items():
        if count >= 2 and var not in groups:
            groups[var] = Group(var, MODULE, var, "never called", ROOT, path=var, first_event=end)
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


def _fold_repeats(
    trace: Trace, groups: dict[str, Group], parts: dict[str, list[_Part]], key: str
) -> None:
    """Turn runs of repeating parts of group `key` into loop or repeat groups (in place)."""
    seq = parts[key]
    signatures = [p.signature for p in seq]
    out: list[_Part] = []
    i, n = 0, len(seq)
    next_at: dict[Any, list[int]] = {}
    for j, s in enumerate(signatures):
        next_at.setdefault(s, []).append(j)
    pointer = {s: 0 for s in next_at}
    while i < n:
        s = signatures[i]
        where = next_at[s]
        while pointer[s] < len(where) and where[pointer[s]] <= i:
            pointer[s] += 1
        found = None
        for j in where[pointer[s] : pointer[s] + 8]:  # a few candidate periods
            period = j - i
            if period > MAX_PERIOD:
                break
            unit = signatures[i : i + period]
            reps = 1
            while signatures[i + reps * period : i + (reps + 1) * period] == unit:
                reps += 1
            # The period that covers most wins (an RNN step's two matmuls are no loop).
            if reps >= MIN_REPEATS and (found is None or period * reps > found[0] * found[1]):
                found = (period, reps)
        if found is None:
            out.append(seq[i])
            i += 1
            continue
        period, reps = found
        if not _is_loop(trace, groups, seq[i : i + period * reps], reps):
            out.append(seq[i])
            i += 1
            continue
        out.append(_make_fold(trace, groups, parts, key, seq[i : i + period * reps], period))
        i += period * reps
    parts[key] = out


def _make_fold(
    trace: Trace,
    groups: dict[str, Group],
    parts: dict[str, list[_Part]],
    parent: str,
    seq: list[_Part],
    period: int,
) -> _Part:
    """A loop (or repeat) group over `seq`, with one iteration group per period."""
    reps = len(seq) // period
    calls = [p for p in seq if p.group is not None]
    paths = [groups[p.group].path for p in calls]
    is_repeat = len(calls) == len(seq) and len(set(paths)) == len(paths)
    lines = [trace.events[p.op]["line"] for p in seq if p.op is not None]
    loop = _enclosing_loop(trace, lines)
    if is_repeat:
        first = groups[seq[0].group]
        key = f"repeat@{first.key}"
        title = f"{first.detail or first.title} ×{reps}"
        detail = ""  # the title says it (`TransformerEncoderLayer ×4`); the card its ends
        kind = REPEAT
    else:
        start = loop["line"] if loop else (min(lines) if lines else 0)
        base = f"loop@{start}" if parent == ROOT else f"{parent}/loop@{start}"
        key, n = base, 1
        while key in groups:
            n += 1
            key = f"{base}#{n}"
        where = (
            f"lines {min(lines)}–{max(lines)}"
            if lines and min(lines) != max(lines)
            else (f"line {lines[0]}" if lines else "repeated calls")
        )
        title = loop["text"] if loop else f"repeated, {where}"
        detail = f"×{reps}"
        kind = LOOP
    fold = Group(key, kind, title, detail, parent, count=reps, first_event=seq[0].event)
    groups[key] = fold
    parts[key] = []
    for r in range(reps):
        chunk = seq[r * period : (r + 1) * period]
        if is_repeat and period == 1:  # the calls themselves are the repetitions
            child = groups[chunk[0].group]
            child.parent = key
            fold.children.append(child.key)
            parts[key].append(chunk[0])
            continue
        it = Group(
            f"{key}/{r + 1}",
            ITERATION,
            f"iteration {r + 1}",
            f"of {reps}",
            key,
            first_event=chunk[0].event,
        )
        groups[it.key] = it
        fold.children.append(it.key)
        parts[it.key] = chunk
        for p in chunk:
            if p.group is not None:
                groups[p.group].parent = it.key
                it.children.append(p.group)
        parts[key].append(_Part(None, it.first_event, group=it.key))
    # The parent's children: the folded ones leave it, the fold joins it where they were.
    moved = {p.group for p in seq if p.group is not None}
    siblings = groups[parent].children
    at = min((siblings.index(k) for k in moved if k in siblings), default=len(siblings))
    siblings[:] = [k for k in siblings if k not in moved]
    siblings.insert(min(at, len(siblings)), key)
    return _Part(("fold", tuple(p.signature for p in seq[:period])), seq[0].event, group=key)


def _is_loop(trace: Trace, groups: dict[str, Group], seq: list[_Part], reps: int) -> bool:
    """Whether repeating parts are worth a fold: calls of distinct modules (a repeat),
    ops inside a `for`/`while` of the script, or three repetitions or more (a function
    called in a loop runs its own lines, not the loop's)."""
    calls = [groups[p.group].path for p in seq if p.group is not None]
    if len(calls) == len(seq) and len(set(calls)) == len(calls):
        return True
    lines = [trace.events[p.op]["line"] for p in seq if p.op is not None]
    return reps >= 3 or _enclosing_loop(trace, [ln for ln in lines if ln]) is not None


def _enclosing_loop(trace: Trace, lines: list[int]) -> dict[str, Any] | None:
    """The innermost `for`/`while` statement of the script whose body holds all `lines`."""
    if not lines:
        return None
    low, high = min(lines), max(lines)
    best = None
    for loop in trace.loops:
        inside = loop.get("line", 0) < low and high <= loop.get("end", -1)
        if inside and (best is None or loop["line"] >= best["line"]):
            best = loop
    return best


def _assign(
    groups: dict[str, Group],
    parts: dict[str, list[_Part]],
    made: dict[str, Any],
    g: nx.MultiDiGraph,
) -> None:
    """Give every drawn node a group: the one its op ran in, a parameter the lowest group
    holding every call of its module, anything else the lowest group holding its
    neighbours."""
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
            where[v] = _lowest_common(groups, calls_of.get(m[1], [ROOT]))
    # Nodes no op event made (F.linear's inner TBackward0, matmul's inner MmBackward0)
    # join the lowest group holding what they feed; failing that, what feeds them (a
    # weight's AccumulateGrad, outside a loop, feeds every iteration's inner node).
    order = list(nx.topological_sort(g))
    for v in reversed(order):
        if v not in where:
            near = [where[u] for u in g.successors(v) if u in where]
            if near:
                where[v] = _lowest_common(groups, near)
    for v in order:
        if v not in where:
            near = [where[u] for u in g.predecessors(v) if u in where]
            where[v] = _lowest_common(groups, near) if near else ROOT
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


def _pruned(tree: FoldTree, g: nx.MultiDiGraph) -> FoldTree:
    """Without groups that hold no drawn node, and with folds of fewer than MIN_REPEATS
    drawn repetitions opened into their parent (a training loop draws its last step)."""
    groups = tree.groups
    size = tree.sizes()
    for key in list(tree.walk())[::-1]:
        if key == ROOT or key not in groups:
            continue
        grp = groups[key]
        parent = groups[grp.parent]
        if size[key] == 0:
            parent.children.remove(key)
            del groups[key]
            continue
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
    order = {v: i for i, v in enumerate(nx.topological_sort(g))}
    keys = sorted(tree.foldable(), key=lambda k: -tree.depth(k))  # innermost first
    for key in keys:
        members = set(tree.members(key))
        if not members:
            continue
        leaves = [order[m] for m in members if any(s not in members for s in g.successors(m))]
        enters = [order[m] for m in members if any(u not in members for u in g.predecessors(m))]
        if not leaves or not enters or min(leaves) >= max(enters):
            continue  # nothing leaves it before something comes in: no loop
        low, high = min(leaves), max(enters)
        if all(v in members for v in g if low < order[v] < high):
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
            grp.count = len(grp.children)
            first = groups[grp.children[0]]
            grp.title = f"{first.detail or first.title} ×{grp.count}"


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
