"""A notebook cell run under the tracer (`%%autograd_viz`), and what other clients of the
same kernel (an attached app) need to find its trace.

The cell runs in the notebook's own namespace, like any cell: its variables stay, its
prints and its exception reach the notebook as usual. Its trace is kept in the kernel
(the last few, by run id), and the cell's inline display carries a small announcement
(NOTEBOOK_RUN_MIME: the run id, the cell's number and the versions) beside the picture.
Every client of a kernel receives its IOPub messages, so an app attached to the kernel
sees the announcement and asks for that run's trace (`notebook_trace_request`), which
crosses in the message's binary buffers as an editor run's does (core/kernel/wire.py):
the notebook itself never holds the trace.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from autograd_viz.core.kernel.protocol import publish_trace, versions
from autograd_viz.core.trace import Trace

NOTEBOOK_RUN_MIME = "application/vnd.autograd-viz.notebook-run+json"
# Traces of the last cells kept for an attached app to fetch; a big run's is tens of MB.
KEPT_RUNS = 4

__all__ = [
    "KEPT_RUNS",
    "NOTEBOOK_RUN_MIME",
    "CellRun",
    "announcement",
    "kept_trace",
    "kernel_notebook_trace",
    "notebook_trace_request",
    "run_cell",
]

_RUNS: OrderedDict[str, Trace] = OrderedDict()


@dataclass
class CellRun:
    """One traced cell: its run id, its number in the notebook, its trace, and the
    exception that stopped it (raised again once it is shown), if any."""

    run_id: str
    cell: int | None
    trace: Trace
    error: BaseException | None


def run_cell(
    code: str,
    namespace: dict[str, Any],
    filename: str,
    cell: int | None = None,
    script: str | None = None,
) -> CellRun:
    """Run a cell's Python `code` under the tracer in `namespace` (the notebook's) and keep
    its trace for attached apps; `script` is the cell as the learner wrote it (the trace's
    `script` when it has the same lines as `code`, which IPython's transforms keep)."""
    from autograd_viz.core.kernel.runner import run_source

    raised: list[BaseException] = []
    trace = run_source(code, filename, namespace, kept=True, raised=raised)
    trace.source = f"Cell In[{cell}]" if cell is not None else "notebook cell"
    if script is not None and script.count("\n") == code.count("\n"):
        trace.script = script
    run = CellRun(uuid.uuid4().hex, cell, trace, raised[0] if raised else None)
    _RUNS[run.run_id] = trace
    while len(_RUNS) > KEPT_RUNS:
        _RUNS.popitem(last=False)
    return run


def kept_trace(run_id: str) -> Trace | None:
    """The trace of a recent traced cell, by its run id (None once it is no longer kept)."""
    return _RUNS.get(run_id)


def announcement(run: CellRun) -> dict[str, Any]:
    """What an attached app reads in a traced cell's display (NOTEBOOK_RUN_MIME): the
    versions (checked first), the run id to fetch, the cell's number and its node count."""
    return {**versions(), "run_id": run.run_id, "cell": run.cell, "nodes": len(run.trace.nodes)}


def notebook_trace_request(run_id: str) -> str:
    """Code an attached app sends to fetch a traced cell's trace (as a run's is sent)."""
    return (
        "import autograd_viz.core.kernel.notebook as __avz\n"
        f"__avz.kernel_notebook_trace({run_id!r})\ndel __avz\n"
    )


def kernel_notebook_trace(run_id: str) -> None:
    """Runs inside the kernel: publish a kept cell's trace as an editor run's is published;
    nothing when it is no longer kept (the app then says it could not be fetched)."""
    trace = kept_trace(run_id)
    if trace is None:
        return
    publish_trace(trace, namespace="kept", run_id=run_id)
