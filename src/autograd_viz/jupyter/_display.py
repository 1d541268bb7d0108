"""What a traced cell shows inline: one display_data bundle. The picture is the app's own
(core.share), as SVG; where the front end runs HTML, the replay page plays in an iframe."""

from __future__ import annotations

import html
from typing import Any

from autograd_viz.core.kernel.notebook import NOTEBOOK_RUN_MIME, CellRun, announcement
from autograd_viz.core.playback.run_view import ShownRun
from autograd_viz.core.share import run_page, run_picture, shown_run

# A notebook saves its outputs: a replay page bigger than this (a long training loop's
# every step) is left out, and the picture alone is shown; the attached app replays it.
MAX_PAGE_CHARS = 2_000_000
PAGE_HEIGHT_PX = 560


def summary(run: CellRun) -> str:
    """One line: the cell, how many autograd nodes it built, its ops and backward passes."""
    trace = run.trace
    ops = sum(1 for e in trace.events if e.get("kind") == "op")
    passes = sum(1 for e in trace.events if e.get("kind") == "backward")
    where = f"cell [{run.cell}]" if run.cell is not None else "this cell"
    words = (
        f"autograd-viz: {where} built {len(trace.nodes)} autograd nodes "
        f"({ops} ops, {passes} backward pass{'es' if passes != 1 else ''})"
    )
    if trace.error is not None:
        words += f"; it stopped with {trace.error['type']}"
    return words


def _replay_html(run: CellRun, shown: ShownRun, words: str) -> str | None:
    """The replay page in a sandboxed iframe (its scripts run; it reaches nothing else),
    under the summary line; None when the page is too big to keep in a notebook."""
    where = f"cell [{run.cell}]" if run.cell is not None else "a notebook cell"
    page = run_page(shown, title=f"autograd-viz: {where}")
    if len(page) > MAX_PAGE_CHARS:
        return None
    return (
        f"<div><code>{html.escape(words)}</code></div>"
        f'<iframe srcdoc="{html.escape(page, quote=True)}" sandbox="allow-scripts"'
        f' style="width: 100%; height: {PAGE_HEIGHT_PX}px; border: 1px solid #8884;'
        f' border-radius: 4px;" title="autograd-viz replay of {html.escape(where)}"></iframe>'
    )


def display_bundle(run: CellRun) -> dict[str, Any]:
    """The cell's MIME bundle: text any front end shows, the app's picture (SVG), the
    replay page where HTML runs, and the announcement an attached app reads
    (NOTEBOOK_RUN_MIME, a few hundred bytes; front ends ignore a type they do not know).
    The trace itself stays in the kernel."""
    words = summary(run)
    shown = shown_run(run.trace)  # laid out once for the picture and the page
    bundle: dict[str, Any] = {
        "text/plain": words,
        "image/svg+xml": run_picture(shown),
        NOTEBOOK_RUN_MIME: announcement(run),
    }
    page = _replay_html(run, shown, words)
    if page is not None:
        bundle["text/html"] = page
    return bundle
