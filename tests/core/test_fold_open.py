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


def test_a_module_that_deep_copies_its_layers_is_built_in_one_step() -> None:
    # nn.TransformerEncoder deep-copies its layer: torch's own `.data` reads were history
    # breaks, `t12.data — the result has no autograd history`, each a step of its own
    # between the construction's steps ("building a module ran clone()").
    code = (
        "import torch\nfrom torch import nn\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)\n"
        "        self.enc = nn.TransformerEncoder(layer, 2)\n"
        "net = Net()\nw = torch.ones(2, requires_grad=True)\nv = w.detach()\n"
    )
    trace = run_source(code)
    steps = Player(trace, drawn_graph(trace)).steps_in(FORWARD)
    captions = [s.caption for s in steps]
    assert [c for c in captions if c.startswith("line 8:")] == [steps[0].caption]
    # Its 24 parameters, which torch's deep copy made: the step listed none of them.
    assert captions[0].startswith("line 8: building net created 24 parameters: net.enc.layers.0.")
    assert not [c for c in captions if ".data" in c]
    # The user's own cut is still one.
    assert "line 10: w.detach() → v = [1.0, 1.0] — the result has no autograd history" in captions


def test_a_deep_copy_of_a_model_is_one_step_that_gives_the_copy_its_numbers() -> None:
    # It was six steps (`m.lin.weight.data — …`, `clone(m.lin.weight.data) → clone(…)`),
    # and the copy's weights had no value until their first use.
    from autograd_viz.core.playback.run_view import prepare_run

    code = (
        "import copy, torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "m = nn.Linear(3, 1)\nm2 = copy.deepcopy(m)\ny = m2(torch.ones(3)).sum()\n"
    )
    trace = run_source(code)
    player = prepare_run(trace).player
    player.set_mode(FORWARD)
    captions = [s.caption for s in player.steps]
    copied = [i for i, c in enumerate(captions) if c.startswith("line 5:")]
    assert len(copied) == 1
    assert captions[copied[0]].startswith(
        "line 5: building m2 created 2 parameters: m2.weight [1, 3], m2.bias [1]"
    )
    player.seek(copied[0])
    plain: dict = {}
    exec(code, plain)
    weight = trace.tensor_named("m2.weight").id
    assert player.value_at(weight).data == plain["m2"].weight.tolist()
