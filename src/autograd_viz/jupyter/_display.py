"""What a traced cell shows inline: one display_data bundle, small enough for a notebook."""

from __future__ import annotations

from typing import Any

from autograd_viz.core.kernel.notebook import NOTEBOOK_RUN_MIME, CellRun, announcement


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


def display_bundle(run: CellRun) -> dict[str, Any]:
    """The cell's MIME bundle: text any front end shows, and the announcement an attached
    app reads (NOTEBOOK_RUN_MIME, a few hundred bytes; front ends ignore a type they do
    not know). The trace itself stays in the kernel."""
    return {"text/plain": summary(run), NOTEBOOK_RUN_MIME: announcement(run)}
