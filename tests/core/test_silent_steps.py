"""Every forward step lights something or says why nothing is drawn, and the status bar's
count agrees with the boxes drawn (issue 14, item 8)."""

from __future__ import annotations

import re

import pytest
import torch

from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.graph.summary import graph_summary
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import EVERYTHING, FORWARD, Player
from autograd_viz.core.playback.step_text import (
    CUT_OFF,
    MADE_WITHOUT_GRAD,
    NEEDS_NO_GRAD,
    NO_GRAD_MODE,
    NO_GRADIENT,
    NOT_KEPT,
    REASONS,
)
from autograd_viz.core.trace.value_text import format_number
from autograd_viz.resources import examples


@pytest.mark.parametrize("example", examples(), ids=lambda p: p.stem)
def test_every_forward_step_lights_something_or_says_why(example) -> None:
    trace = run_source(example.read_text(), filename=str(example))
    player = Player(trace, drawn_graph(trace))
    for step in player.steps_in(FORWARD):
        if step.kind == "error":  # the error is its own caption
            continue
        assert step.lit or any(r in step.caption for r in REASONS), step.caption


def test_the_reason_comes_from_the_trace() -> None:
    code = (
        "import torch\n"
        "c = torch.ones(2) * 2\n"  # nothing needs grad
        "w = torch.ones(2, requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    v = w * 2\n"  # no_grad: an untracked op (drawn as a box of its own when kept)
        "print((w * 3).sum().item())\n"  # tracked, but nothing keeps the result
    )
    trace = run_source(code)
    captions = {s.line: s.caption for s in Player(trace, drawn_graph(trace)).steps_in(FORWARD)}
    assert captions[2].endswith(NEEDS_NO_GRAD)
    assert NOT_KEPT in captions[6]
    steps = Player(trace, drawn_graph(trace)).steps_in(FORWARD)
    (no_grad,) = [s for s in steps if s.line == 5]
    assert no_grad.lit or NO_GRAD_MODE in no_grad.caption


def test_the_status_line_counts_what_is_drawn() -> None:
    trace = run_source(
        "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 1)\n"
        "print(model(torch.ones(2)).sum().item())\n"
    )
    graph = drawn_graph(trace)
    assert len(graph.nodes) == 2  # the weight and the bias, no autograd node kept
    assert graph_summary(graph) == "graph: 2 boxes (2 tensors, 0 autograd nodes)"
    kept = drawn_graph(
        run_source("import torch\nw = torch.ones(2, requires_grad=True)\ny = w * 2\n")
    )
    assert graph_summary(kept) == "graph: 4 boxes (2 tensors, 2 autograd nodes)"


def test_the_reason_is_what_was_true_at_that_step_not_at_the_end() -> None:
    # w needed no grad when `w * 3` ran; it was given requires_grad after. The caption said
    # "its result cannot carry a gradient", reading w's flag at the end of the run.
    code = (
        "import torch\n"
        "w = torch.ones(2)\n"
        "y = w * 3\n"
        "w.requires_grad_()\n"
        "i = w.argmax()\n"  # w needs grad now, and an index carries none
        "z = torch.zeros_like(w)\n"  # w gave only its shape
    )
    trace = run_source(code)
    captions = {s.line: s.caption for s in Player(trace, drawn_graph(trace)).steps_in(FORWARD)}
    assert captions[3].endswith(NEEDS_NO_GRAD)
    assert captions[5].endswith(NO_GRADIENT)
    assert captions[6].endswith(MADE_WITHOUT_GRAD)
    # The trace says so itself (docs/trace.md), and a file from before says nothing.
    flags = [e.get("inputs_need_grad") for e in trace.events if e["kind"] == "op"]
    assert flags == [None, False, True, True, True]  # (requires_grad_: read after it ran)


def test_a_cut_a_variable_holds_is_named_with_its_value_and_not_called_lost() -> None:
    """`z = y.detach()` read "y.detach() — the result has no autograd history" and z was
    first met in the next step's `mul(z, x)`; vjp's `out` (torch detaches it) was said to
    be "not kept" though the script holds it."""
    code = (
        "import torch\nfrom torch.autograd.functional import vjp\n"
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\nz = y.detach()\n"
        "w = (z * x).sum()\nw.backward()\n"
        "out, g = vjp(lambda a: torch.sin(a) * 2, x, torch.ones(2))\n"
    )
    trace = run_source(code)
    steps = Player(trace, drawn_graph(trace)).steps_in(EVERYTHING)
    captions = [s.caption for s in steps]
    assert "line 5: y.detach() → z = [2.0, 4.0] — the result has no autograd history" in captions
    x = torch.tensor([1.0, 2.0])
    out = ", ".join(format_number(v, 3) for v in (torch.sin(x) * 2).tolist())
    (cut,) = [c for c in captions if f"→ out = [{out}]" in c]
    assert cut.endswith(CUT_OFF) and NOT_KEPT not in cut
    grads = [c for c in captions if "returned" in c and "line 8" in c]
    assert grads and not [c for c in grads if re.search(r"\bt\d+\b", c)], grads
