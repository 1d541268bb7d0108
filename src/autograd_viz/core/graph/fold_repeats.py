"""Runs of repeating parts of a group become a loop or a repeat group: the same ops on
the same lines (a loop's iterations), or calls of modules of one class and structure (a
model's layers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from autograd_viz.core.graph.fold_groups import (
    ITERATION,
    LOOP,
    MAX_PERIOD,
    MIN_REPEATS,
    REPEAT,
    ROOT,
    Group,
    Part,
)
from autograd_viz.core.trace import Trace


def fold_repeats(
    trace: Trace, groups: dict[str, Group], parts: dict[str, list[Part]], key: str, within: int = 0
) -> None:
    """Turn runs of repeating parts of group `key` into loop or repeat groups (in place).
    `within`: the line of the loop statement `key` is an iteration of; a loop found in it
    must be a statement inside that one (an RNN step's two matmuls are no loop)."""
    seq = parts[key]
    signatures = [p.signature for p in seq]
    out: list[Part] = []
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
        if not _is_loop(trace, groups, parts, seq[i : i + period * reps], reps, within):
            out.append(seq[i])
            i += 1
            continue
        out.append(_make_fold(trace, groups, parts, key, seq[i : i + period * reps], period))
        i += period * reps
    parts[key] = out


def _make_fold(
    trace: Trace,
    groups: dict[str, Group],
    parts: dict[str, list[Part]],
    parent: str,
    seq: list[Part],
    period: int,
) -> Part:
    """A loop (or repeat) group over `seq`, with one iteration group per period."""
    reps = len(seq) // period
    is_repeat = _is_repeat(trace, groups, parts, seq, reps)
    lines = _lines_of(trace, parts, seq)
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
    if loop is not None:
        fold.line = loop.get("line", 0)
    if is_repeat:
        fold.period = period
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
        parts[key].append(Part(None, it.first_event, group=it.key))
    # The parent's children: the folded ones leave it, the fold joins it where they were.
    moved = {p.group for p in seq if p.group is not None}
    siblings = groups[parent].children
    at = min((siblings.index(k) for k in moved if k in siblings), default=len(siblings))
    siblings[:] = [k for k in siblings if k not in moved]
    siblings.insert(min(at, len(siblings)), key)
    return Part(("fold", tuple(p.signature for p in seq[:period])), seq[0].event, group=key)


def _is_loop(
    trace: Trace,
    groups: dict[str, Group],
    parts: dict[str, list[Part]],
    seq: list[Part],
    reps: int,
    within: int = 0,
) -> bool:
    """Whether repeating parts are worth a fold: calls of distinct modules, each feeding
    the next (a repeat), ops inside a `for`/`while` of the script, or three repetitions or
    more (a function called in a loop runs its own lines, not the loop's). In a pass of
    the loop on line `within`, only ops of a loop statement inside that one."""
    if _distinct_calls(groups, seq):
        return _is_repeat(trace, groups, parts, seq, reps)  # else heads side by side
    loop = _enclosing_loop(trace, _lines_of(trace, parts, seq))
    if within:
        return loop is not None and loop.get("line", 0) > within
    if loop is not None:
        return True
    return reps >= 3 and not _bound_apart(trace, seq, reps)


def _bound_apart(trace: Trace, seq: list[Part], reps: int) -> bool:
    """Whether the repetitions bind their results to different names: one statement's
    ops side by side (`Q, K, V = x @ Wq, x @ Wk, x @ Wv`), not a loop's passes, which
    bind the same names each time (a function called in a loop: `h = step(h)`)."""
    period = len(seq) // reps
    names = {
        tuple(
            trace.events[p.op].get("assigned")
            for p in seq[r * period : (r + 1) * period]
            if p.op is not None
        )
        for r in range(reps)
    }
    return len(names) > 1 and all(any(n) for n in names)


def _is_repeat(
    trace: Trace,
    groups: dict[str, Group],
    parts: dict[str, list[Part]],
    seq: list[Part],
    reps: int,
) -> bool:
    """Whether `seq` is a stack of layers: calls of distinct modules, each repetition
    using what the one before it made. Two heads called on the same input
    (`self.mu(h), self.logvar(h)`) are side by side, not `Linear ×2`."""
    if not _distinct_calls(groups, seq):
        return False
    period = len(seq) // reps
    made_before: set[str] = set()
    for r in range(reps):
        made, used = _tensors_of(trace, parts, seq[r * period : (r + 1) * period])
        if r and not used & made_before:
            return False
        made_before = made
    return True


def _distinct_calls(groups: dict[str, Group], seq: list[Part]) -> bool:
    """Whether every part of `seq` is a call, each of a module of its own."""
    calls = [groups[p.group].path for p in seq if p.group is not None]
    return len(calls) == len(seq) and len(set(calls)) == len(calls)


def _tensors_of(
    trace: Trace, parts: dict[str, list[Part]], chunk: list[Part]
) -> tuple[set[str], set[str]]:
    """The tensors the ops in `chunk` (calls' ops included) made and used."""
    made: set[str] = set()
    used: set[str] = set()
    for op, _inner in _ops_of(parts, chunk):
        e = trace.events[op]
        made.update(e["outputs"])
        used.update(e["inputs"])
    return made, used


def _ops_of(parts: dict[str, list[Part]], chunk: list[Part]) -> Iterator[tuple[int, bool]]:
    """The op events of `chunk` and of the groups in it, each with whether it ran inside
    one of those groups (a module call)."""
    stack = [(p, False) for p in chunk]
    while stack:
        p, inner = stack.pop()
        if p.op is not None:
            yield p.op, inner
        elif p.group is not None:
            stack.extend((q, True) for q in parts.get(p.group, ()))


def _lines_of(trace: Trace, parts: dict[str, list[Part]], seq: list[Part]) -> list[int]:
    """The script lines that place the ops of `seq` in the script's loops: each op's own,
    and of the ops inside its module calls those in some loop's body. A call of a torch
    module records the calling line (`logits = model(X)`); a call of a module the script
    defines, its `forward`'s lines, which say nothing of the loop that called it."""
    lines = []
    for op, inner in _ops_of(parts, seq):
        line = trace.events[op].get("line")
        if line and (not inner or _in_a_loop(trace, line)):
            lines.append(line)
    return lines


def _in_a_loop(trace: Trace, line: int) -> bool:
    return any(loop.get("line", 0) < line <= loop.get("end", -1) for loop in trace.loops)


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
