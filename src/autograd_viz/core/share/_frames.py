"""Every moment of a run's replay, taken from the app's own Player and written compactly:
per view (Forward, Backward) and step, what the canvas lights, what it shows as visited or
freed, each tensor label's text, the gradients on the edges and the bar's caption.

Numbers, not strings: a node is its place in `DrawnGraph.nodes`, an edge its place in
`DrawnGraph.edges`, a text its place in one shared table (the RNN's 8,000 backward steps
say one of 2,300 captions). What changes rarely is written as a timeline of changes: a
label by the positions where it reads differently, `freed` by the position each backward
pass's freeing shows from, `visited` by the step each node first lights. Positions count
as the app's do: -1 is a view's start, 0 its first step.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from autograd_viz.core.graph.graph_model import CONSTANT, LEAF, RESULT
from autograd_viz.core.playback.bar_text import caption_now, end_caption
from autograd_viz.core.playback.freeing import freed_at
from autograd_viz.core.playback.player import BACKWARD, FORWARD, Player
from autograd_viz.core.playback.run_view import MODE_NAMES, ShownRun

PAGE_MODES = (FORWARD, BACKWARD)
_TENSORS = (LEAF, CONSTANT, RESULT)


class _Texts:
    """A table of distinct strings; each is written once and named by its place."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        at = self._at.get(text)
        if at is None:
            at = self._at[text] = len(self.table)
            self.table.append(text)
        return at


def replay_frames(run: ShownRun) -> dict[str, Any]:
    """The replay of `run` as the page's player reads it (plain JSON types only)."""
    graph, player = run.graph, run.player
    node_at = {key: i for i, key in enumerate(graph.nodes)}
    edge_at: dict[tuple[str, str], int] = {}
    for i, edge in enumerate(graph.edges):
        edge_at.setdefault(edge, i)
    texts = _Texts()
    end_freed = freed_at(player.freeing, len(run.trace.events))
    data: dict[str, Any] = {
        "version": 1,
        "nodes": len(graph.nodes),
        "targets": [node_at[v] for _, v in graph.edges],  # an edge fades with its target
        "styled": [edge_at[e] for e in graph.edge_styles if e in edge_at],
        "end": {"caption": texts(end_caption(player)), "freed": _ints(end_freed, node_at)},
        "modes": {},
    }
    for mode in PAGE_MODES:
        data["modes"][mode] = _mode_frames(player, mode, node_at, edge_at, texts)
    data["texts"] = texts.table
    return data


def _ints(keys, node_at: dict[str, int]) -> list[int]:
    return sorted(node_at[k] for k in keys if k in node_at)


def _mode_frames(
    player: Player,
    mode: str,
    node_at: dict[str, int],
    edge_at: dict[tuple[str, str], int],
    texts: _Texts,
) -> dict[str, Any]:
    player.set_mode(mode)
    steps = player.steps
    captions: list[int] = []
    lit: list[list[int]] = []
    grads: dict[int, list[list[int]]] = {}
    for step in steps:
        player.seek(step.number)
        captions.append(texts(caption_now(player)))
        lit.append(_ints(step.lit, node_at))
        carried = [
            [edge_at[edge], texts(f"∂ {grad}")]
            for edge, grad in step.edge_grads.items()
            if edge in edge_at and edge not in player.graph.edge_styles
        ]
        if carried:
            grads[step.number] = carried
    player.seek(-1, force=True)
    # The moment each position shows (position p is moments[p + 1]).
    moments = [player.start_index(mode), *(s.event_index for s in steps)]
    return {
        "name": MODE_NAMES[mode],
        "count": len(steps),
        "start": texts(caption_now(player)),
        "captions": captions,
        "lit": lit,
        "grads": grads,
        "first": sorted([node_at[k], n] for k, n in player.first_lit(mode).items() if k in node_at),
        "freed": _freed_timeline(player, moments, node_at),
        "labels": _label_timelines(player, moments, node_at, texts),
    }


def _position_of(moments: list[int], event: int) -> int | None:
    """The first position whose moment has seen `event` (None: none has)."""
    if moments != sorted(moments):  # never in a trace's order; be safe, not fast
        found = [k for k, m in enumerate(moments) if m >= event]
        return found[0] - 1 if found else None
    k = bisect_left(moments, event)
    return k - 1 if k < len(moments) else None


def _freed_timeline(player: Player, moments: list[int], node_at: dict[str, int]) -> list[list[Any]]:
    """[position, nodes] for each backward pass: from that position on, its nodes show freed."""
    out: list[list[Any]] = []
    for end, _, nodes in player.freeing:
        position = _position_of(moments, end)
        drawn = _ints(nodes, node_at)
        if position is not None and drawn:
            out.append([position, drawn])
    return out


def _label_timelines(
    player: Player, moments: list[int], node_at: dict[str, int], texts: _Texts
) -> list[list[Any]]:
    """Per drawn tensor: [node, [position, value text, grad text], …] at each position where
    its label reads differently from the position before (the first at the view's start)."""
    out: list[list[Any]] = []
    for key, i in node_at.items():
        if player.graph.nodes[key].kind not in _TENSORS or key not in player.trace.index.tensors:
            continue
        positions = {-1}
        for event in player.label_changes(key):
            position = _position_of(moments, event)
            if position is not None:
                positions.add(position)
        timeline: list[Any] = [i]
        last = None
        for position in sorted(positions):
            value, grad = player.label_at(key, moments[position + 1])
            if (value, grad) != last:
                timeline.append([position, texts(value), texts(grad)])
                last = value, grad
        out.append(timeline)
    return out
