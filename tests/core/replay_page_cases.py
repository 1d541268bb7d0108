"""Traces the replay page tests share, and the app's own answer for any moment of them:
what its Player lights and what its player bar says."""

from __future__ import annotations

import functools

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.bar_text import caption_now
from autograd_viz.core.playback.run_view import prepare_run
from autograd_viz.core.trace import Trace
from autograd_viz.resources import EXAMPLES

# The lesson examples the issue names: the first graph, and the linear layer's step.
EXAMPLE_FILES = ("first_graph", "linear_step")


@functools.cache
def example_trace(name: str) -> Trace:
    """The trace of resources/examples/NAME.py, run once per test session."""
    code = (EXAMPLES / f"{name}.py").read_text(encoding="utf-8")
    return run_source(code, "<editor>", {"__name__": "__main__"})


def app_moment(trace: Trace, mode: str, position: int) -> tuple[set[str], str]:
    """What the app shows at `position` of view `mode`: the lit drawn ids and the caption."""
    player = prepare_run(trace).player
    player.set_mode(mode)
    player.seek(position, force=True)
    step = player.current
    return set(step.lit if step is not None else ()), caption_now(player)
