"""A folded module-building step opens into the ops torch ran, and folds back."""

from __future__ import annotations

from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import FORWARD, Player

SCRIPT = """\
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
x = torch.randn(4, 3)
loss = model(x).sum()
loss.backward()
"""


def _player() -> Player:
    trace = run_source(SCRIPT)
    player = Player(trace, drawn_graph(trace))
    player.set_mode(FORWARD)
    return player


def test_opening_the_folded_step_shows_each_op_and_folding_returns() -> None:
    player = _player()
    folded = next(s for s in player.steps if s.folded)
    count = len(player.steps)
    player.seek(folded.number)
    assert player.fold_at() == folded.folded
    ops = [player.trace.events[i]["op"] for i in folded.folded]
    assert "kaiming_uniform" in ops and "empty" in ops  # what nn.Linear's __init__ ran

    player.toggle_fold()
    assert len(player.steps) == count + len(folded.folded) - 1
    assert player.current.event_index == folded.folded[0]  # on the statement's first op
    opened = [s for s in player.steps if s.opened_from]
    assert [s.event_index for s in opened] == list(folded.folded)
    empty = next(s for s in opened if player.trace.events[s.event_index]["op"] == "empty")
    assert "uninitialised" in empty.caption  # never the memory's garbage numbers
    # Stepping through the ops, the weight gets torch's own initial values.
    weight = player.trace.tensor_named("model.weight")
    player.seek(opened[-1].number)
    assert player.value_at(weight.id).data == weight.value.data

    player.seek(opened[1].number)
    player.toggle_fold()
    assert len(player.steps) == count
    assert player.current.folded == folded.folded


def test_a_step_that_folds_nothing_does_not_toggle() -> None:
    player = _player()
    plain = next(s for s in player.steps if not s.folded)
    player.seek(plain.number)
    count = len(player.steps)
    player.toggle_fold()
    assert player.fold_at() == () and len(player.steps) == count
