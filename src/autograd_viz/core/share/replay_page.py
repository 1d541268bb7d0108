"""A run's replay as one self-contained HTML page: the app's picture as SVG, every step's
frame from the app's own Player, and a small player in plain JavaScript, all inline.
Nothing is fetched: no network, no CDN; the page opens from a file anywhere.

The trace is untrusted input: every text goes into the SVG escaped, and the frame data
goes in a `<script type="application/json">` whose `<`, `>` and `&` are JSON escapes, so
no variable name or caption can close the element or start markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape

from autograd_viz.core.graph.graph_model import DrawnGraph
from autograd_viz.core.graph.node_look import LEGEND_ORDER, STYLES
from autograd_viz.core.playback.freeing import freed_at
from autograd_viz.core.playback.run_view import ShownRun, prepare_run
from autograd_viz.core.share._frames import PAGE_MODES, replay_frames
from autograd_viz.core.share._picture import EDGE_CSS, PICTURE_CSS, graph_svg, legend_mark
from autograd_viz.core.share._player_script import PAGE_CSS, SCRIPT
from autograd_viz.core.trace import Trace

DEFAULT_TITLE = "autograd-viz replay"


def shown_run(trace: Trace, collapsed: Iterable[str] | None = None) -> ShownRun:
    """The run as the app shows it: its layout (`collapsed` None: the app's first look)
    and a player of its own."""
    return prepare_run(trace, None if collapsed is None else frozenset(collapsed))


def picture_svg(trace: Trace, collapsed: Iterable[str] | None = None) -> str:
    """The app's picture of `trace` as a standalone SVG document (the state at the end of
    the run: the nodes backward freed dashed), laid out by the app's own layout."""
    return run_picture(shown_run(trace, collapsed))


def run_picture(run: ShownRun) -> str:
    """`picture_svg` of a run already laid out (one layout for a picture and a page)."""
    freed = frozenset(freed_at(run.player.freeing, len(run.trace.events)))
    return graph_svg(run.graph, freed=freed, styled=True)


def _json_for_html(data: object) -> str:
    """JSON that is safe inside a <script> element: no `<`, `>` or `&` left literal."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _legend(graph: DrawnGraph) -> str:
    kinds = [k for k in LEGEND_ORDER if any(n.kind == k for n in graph.nodes.values())]
    rows = [
        f'<div><svg width="16" height="16" viewBox="-10 -10 20 20">{legend_mark(kind)}</svg>'
        f"{escape(STYLES[kind].legend)}</div>"
        for kind in kinds
    ]
    return f'<div id="legend">{"".join(rows)}</div>' if rows else ""


def run_page(run: ShownRun, title: str = DEFAULT_TITLE) -> str:
    """The page of a run already laid out (the one a window shows). The run's player is
    moved through every step of both views and left at its start."""
    data = replay_frames(run)
    modes = "".join(
        f'<button data-mode="{mode}">{escape(data["modes"][mode]["name"])}</button>'
        for mode in PAGE_MODES
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="autograd-viz">
<title>{escape(title)}</title>
<style>{PAGE_CSS}{PICTURE_CSS}{EDGE_CSS}</style>
</head><body>
<div id="bar"><h1>{escape(title)}</h1>{modes}
<button data-action="start" title="To the start (Home)">&#x21E4; Start</button>
<button data-action="back" title="Step back (&#x2190;)">&#x2190; Back</button>
<button data-action="play" id="play" title="Play / pause (Space)">&#x25B6; Play</button>
<button data-action="step" title="Step forward (&#x2192;)">Step &#x2192;</button>
<button data-action="end" title="To the end (End)">End &#x21E5;</button>
<input id="slider" type="range" min="-1" max="-1" value="-1" title="Timeline: drag to any step">
<span id="position"></span>
<button data-action="fit" title="Fit the whole graph">Fit</button>
<span id="help">Space play/pause · &#x2190; &#x2192; step · Home End · wheel zoom · drag pan</span>
</div>
<div id="stage">{graph_svg(run.graph)}{_legend(run.graph)}</div>
<div id="caption"></div>
<script type="application/json" id="replay-data">{_json_for_html(data)}</script>
<script>{SCRIPT}</script>
</body></html>
"""


def page_html(
    trace: Trace, title: str = DEFAULT_TITLE, collapsed: Iterable[str] | None = None
) -> str:
    """The replay page of `trace`: the app's picture (its folds: `collapsed`, None for
    the app's first look) and both views' steps, with the app's keys and captions."""
    return run_page(shown_run(trace, collapsed), title)
