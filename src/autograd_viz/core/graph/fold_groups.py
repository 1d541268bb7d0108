"""The fold tree's types: a group (a module call, a repeat, a loop, an iteration) and
the tree of them (see fold_tree.py for how it is built)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

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
    period: int = 1  # a repeat's calls per repetition (`Linear, Tanh ×2` has 2)
    path: str | None = None  # the module path of a module call
    first_event: int = 0  # where it began in the trace's events (for order)
    line: int = 0  # a loop's `for`/`while` line in the script (0: none known)


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
class Part:
    """One direct part of a group while the tree is built: an op or a child group."""

    signature: Any
    event: int
    op: int | None = None  # index of the op event, for an op
    group: str | None = None  # key, for a child group
