"""Real models fold: modules nest, repeats and loops fold to ×N, frames never overlap, the
player lights a box for what runs inside it. torch is the oracle for every count."""

from __future__ import annotations

import pytest
import torch

from autograd_viz.core.graph.fold_tree import LOOP, MIDDLE, REPEAT
from autograd_viz.core.graph.folding import (
    BUDGET,
    DENSE_OWN,
    READABLE_HEIGHT,
    READABLE_WIDTH,
    box_id,
)
from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, EVERYTHING, FORWARD, Player
from autograd_viz.core.playback.run_view import RunView, prepare_run
from autograd_viz.resources import EXAMPLES
from tests.core.fidelity_cases import CASES

TRANSFORMER = """
import torch
from torch import nn
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
model = nn.Sequential(
    nn.Linear(8, 16),
    nn.TransformerEncoder(layer, num_layers=LAYERS, enable_nested_tensor=False),
    nn.Linear(16, 1),
)
X = torch.randn(2, 5, 8)
loss = model(X).pow(2).mean()
loss.backward()
"""

RNN = """
import torch
torch.manual_seed(0)
W = torch.randn(8, 8, requires_grad=True)
U = torch.randn(8, 8, requires_grad=True)
x = torch.randn(STEPS, 8)
h = torch.zeros(8)
for t in range(STEPS):
    h = torch.tanh(x[t] @ W + h @ U)
loss = h.sum()
loss.backward()
"""

CNN = """
import torch
from torch import nn
torch.manual_seed(0)

class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(x + self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))

model = nn.Sequential(nn.Conv2d(1, 4, 3), Block(4), Block(4), Block(4), nn.Flatten(),
                      nn.LazyLinear(10))
loss = nn.functional.cross_entropy(model(torch.randn(2, 1, 8, 8)), torch.tensor([1, 7]))
loss.backward()
"""


def _run(code: str, **sizes: int):
    for name, value in sizes.items():
        code = code.replace(name, str(value))
    return run_source(code), code


def _torch_count(code: str, name: str, node: str) -> int:
    """How many `node` grad_fns torch's own graph behind variable `name` holds."""
    namespace: dict = {}
    exec(code, namespace)
    seen, stack, count = set(), [namespace[name].grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        count += type(fn).__name__ == node
        stack.extend(f for f, _ in fn.next_functions)
    return count


def _check_frames(drawn) -> None:
    """Frames nest or stand apart, boxes overlap nothing but the frames they are in, and
    every node is inside exactly the frames of the groups that hold it."""
    folds = drawn.folds

    def holds(outer: str, inner: str) -> bool:
        key = folds[inner].parent
        while key:
            if key == outer:
                return True
            key = folds[key].parent
        return False

    def apart(a, b) -> bool:
        return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]

    def within(inner, outer) -> bool:
        return (
            outer[0] < inner[0]
            and inner[2] < outer[2]
            and outer[1] < inner[1]
            and inner[3] < outer[3]
        )

    frames = drawn.frames
    keys = sorted(frames)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            if holds(a, b):
                assert within(frames[b], frames[a]), (a, b)
            elif holds(b, a):
                assert within(frames[a], frames[b]), (b, a)
            else:
                assert apart(frames[a], frames[b]), (a, b)
    for box, rect in drawn.boxes.items():
        key = box[2:]
        for other, frame in frames.items():
            assert within(rect, frame) if holds(other, key) else apart(rect, frame), (box, other)
        for other, rect2 in drawn.boxes.items():
            assert other == box or apart(rect, rect2), (box, other)
    for v, node in drawn.nodes.items():
        for key, frame in frames.items():
            inside = frame[0] < node.x < frame[2] and frame[1] < node.y < frame[3]
            assert inside == (v in drawn.groups[key]), (v, key)
    positions = [(n.x, n.y) for n in drawn.nodes.values()]
    assert len(set(positions)) == len(positions)
    assert all(drawn.nodes[u].x < drawn.nodes[v].x for u, v in drawn.edges)


def test_a_transformer_folds_its_layers_to_one_box_times_the_layers() -> None:
    for layers in (2, 4):
        trace, code = _run(TRANSFORMER, LAYERS=layers)
        drawn = drawn_graph(trace, None)
        repeats = [k for k, f in drawn.folds.items() if f.kind == REPEAT]
        assert len(repeats) == 1
        info = drawn.folds[repeats[0]]
        namespace: dict = {}
        exec(code, namespace)
        assert len(info.children) == len(namespace["model"][1].layers) == layers
        assert info.title == f"TransformerEncoderLayer ×{layers}"
        assert box_id(repeats[0]) in drawn.nodes  # over the budget: folded at first
        assert len(drawn.nodes) <= BUDGET
        _check_frames(drawn)
        for depth in range(0, 6):
            _check_frames(drawn_graph(trace, drawn.folding.folded_at_depth(depth)))
        _check_frames(drawn_graph(trace, frozenset()))


def test_an_rnn_loop_folds_to_its_steps_and_opens_at_both_ends() -> None:
    trace, code = _run(RNN, STEPS=40)
    drawn = drawn_graph(trace, None)
    (loop,) = [k for k, f in drawn.folds.items() if f.kind == LOOP]
    info = drawn.folds[loop]
    assert info.title == "for t in range(40):" and info.detail == "×40"
    tanh = _torch_count(code, "loss", "TanhBackward0")
    assert tanh == 40
    first, middle, last = info.children
    assert drawn.folds[middle].kind == MIDDLE and drawn.folds[middle].detail == f"×{tanh - 2}"
    assert len(drawn.nodes) < 12 and box_id(loop) in drawn.nodes
    # Each iteration holds exactly one step's tanh; the loop holds all of torch's.
    opened = drawn_graph(trace, drawn.collapsed - {loop}, folding=drawn.folding)
    assert {box_id(first), box_id(middle), box_id(last)} <= set(opened.nodes)
    names = {n.id: n.name for n in trace.nodes}
    inside = drawn.folding.tree.members
    assert sum(names.get(v) == "TanhBackward0" for v in inside(first)) == 1
    assert sum(names.get(v) == "TanhBackward0" for v in inside(loop)) == tanh
    everything = drawn_graph(trace, frozenset())
    _check_frames(everything)
    assert len(everything.frames) == 1 + tanh + 1  # the loop, each iteration, the middle


def test_opening_then_folding_again_puts_everything_back() -> None:
    trace, _ = _run(TRANSFORMER, LAYERS=3)
    first = drawn_graph(trace, None)
    folding = first.folding
    for key in sorted(first.collapsed)[:6]:
        opened = drawn_graph(trace, first.collapsed - {key}, folding=folding)
        again = drawn_graph(trace, opened.collapsed | {key}, folding=folding)
        assert {k: (n.x, n.y) for k, n in again.nodes.items()} == {
            k: (n.x, n.y) for k, n in first.nodes.items()
        }
        assert again.frames == first.frames


@pytest.mark.parametrize("mode", [FORWARD, BACKWARD, EVERYTHING])
def test_a_box_lights_for_every_op_inside_it(mode: str) -> None:
    """The player's lit set on a folded graph is the union of the inner ops' lit sets,
    each mapped to the box that stands for it."""
    trace, _ = _run(TRANSFORMER, LAYERS=2)
    open_graph = drawn_graph(trace, frozenset())
    folded = drawn_graph(trace, None)
    full, part = Player(trace, open_graph), Player(trace, folded)
    full.set_mode(mode)
    part.set_mode(mode)
    assert [s.event_index for s in full.steps] == [s.event_index for s in part.steps]
    alias = folded.alias
    for a, b in zip(full.steps, part.steps, strict=True):
        assert b.lit == {alias.get(k, k) for k in a.lit}
    lit = set().union(*(s.lit for s in part.steps))
    assert any(k.startswith("m:") for k in lit)


def test_a_cnn_of_repeated_blocks_folds_and_its_frames_hold() -> None:
    trace, code = _run(CNN)
    drawn = drawn_graph(trace, None)
    repeats = [f for f in drawn.folds.values() if f.kind == REPEAT]
    namespace: dict = {}
    exec(code, namespace)
    blocks = sum(type(m).__name__ == "Block" for m in namespace["model"])
    assert [len(f.children) for f in repeats] == [blocks] and repeats[0].title == "Block ×3"
    for depth in range(0, 5):
        _check_frames(drawn_graph(trace, drawn.folding.folded_at_depth(depth)))
    _check_frames(drawn_graph(trace, frozenset()))


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_fidelity_case_lays_out_with_true_frames(case: str) -> None:
    trace = run_source(CASES[case])
    for collapsed in (None, frozenset()):
        drawn = drawn_graph(trace, collapsed)
        if drawn.folds:
            _check_frames(drawn)


def test_the_lessons_small_graphs_stay_open() -> None:
    for path in sorted(EXAMPLES.glob("*.py")):
        drawn = drawn_graph(run_source(path.read_text(encoding="utf-8")), None)
        assert not drawn.collapsed, path.name


def test_fold_choices_survive_a_rerun_of_edited_code() -> None:
    view = RunView()
    trace, _ = _run(TRANSFORMER, LAYERS=2)
    view.show(prepare_run(trace))
    (repeat,) = [k for k, f in view.folds().items() if f.kind == REPEAT]
    view.toggle_module(repeat)  # open the ×2 box: its two layers are boxes now
    assert repeat not in view.collapsed and box_id("model.1.layers.0") in view.graph.nodes
    edited, _ = _run(TRANSFORMER.replace("torch.randn(2, 5, 8)", "torch.randn(3, 5, 8)"), LAYERS=2)
    view.show(prepare_run(edited, choices=view.fold_choices))
    assert repeat not in view.collapsed and box_id("model.1.layers.0") in view.graph.nodes
    assert view.breadcrumb(box_id("model.1.layers.0")) == [
        "model",
        "model.1",
        repeat,
        "model.1.layers.0",
    ]
    view.open_to_depth(1)
    assert {k for k, f in view.folds().items() if f.depth <= 1} & view.collapsed == set()
    view.fold_all()
    assert set(view.graph.nodes) & {box_id("model")}
    view.open_all()
    assert not view.collapsed and not any(k.startswith("m:") for k in view.graph.nodes)
    assert torch.is_grad_enabled()


def test_a_step_inside_a_folded_card_says_which_card() -> None:
    trace, _ = _run(TRANSFORMER, LAYERS=2)
    folded = drawn_graph(trace, None)
    player = Player(trace, folded)
    player.set_mode(BACKWARD)
    (repeat,) = [k for k, f in folded.folds.items() if f.kind == REPEAT]
    inside = [s for s in player.steps if box_id(repeat) in s.lit]
    assert inside
    for step in inside:
        assert step.caption.endswith(f"  · inside {folded.folds[repeat].title}"), step.caption


def test_opening_one_layer_moves_nothing_before_it_and_the_rest_only_by_translations() -> None:
    trace, _ = _run(TRANSFORMER, LAYERS=4)
    first = drawn_graph(trace, None)
    folding = first.folding
    (repeat,) = [k for k, f in first.folds.items() if f.kind == REPEAT]
    layer = first.folds[repeat].children[1]  # model.1.layers.1: one of four layer cards
    before = drawn_graph(trace, first.collapsed - {repeat}, folding=folding)
    after = drawn_graph(trace, before.collapsed - {layer}, folding=folding)
    _check_frames(before)
    _check_frames(after)
    card = before.boxes[box_id(layer)]  # left, bottom, right, top
    chain = {layer, *folding.tree.ancestors(layer)}

    def moved(a, b) -> tuple[float, float]:
        return (round(b[0] - a[0], 9), round(b[1] - a[1], 9))

    kept = sorted(set(before.nodes) & set(after.nodes))
    shift = {
        k: moved((before.nodes[k].x, before.nodes[k].y), (after.nodes[k].x, after.nodes[k].y))
        for k in kept
    }
    # What comes before the card in the flow (left of it, not below it) has not moved
    # at all: the input, the first Linear's marks, the first layer's card.
    earlier = [k for k in kept if before.nodes[k].x < card[0] and before.nodes[k].y > card[1]]
    assert box_id(first.folds[repeat].children[0]) in earlier
    assert len(earlier) >= 8 and all(shift[k] == (0.0, 0.0) for k in earlier)
    # The rest moved right and/or down as whole pieces: each by one of a few translations,
    # never left or up, and nothing arranged anew inside any frame or card.
    assert all(dx >= 0 and dy <= 0 for dx, dy in shift.values())
    assert len(set(shift.values())) <= 4
    assert shift[box_id(first.folds[repeat].children[2])][0] > 0  # layers.2 made room
    for key in set(before.frames) & set(after.frames) - chain:
        frame_shift = moved(before.frames[key][:2], after.frames[key][:2])
        assert moved(before.frames[key][2:], after.frames[key][2:]) == frame_shift
        assert {shift[k] for k in before.groups[key] if k in shift} <= {frame_shift}
    for box in set(before.boxes) & set(after.boxes):
        box_shift = moved(before.boxes[box][:2], after.boxes[box][:2])
        assert box_shift == moved(before.boxes[box][2:], after.boxes[box][2:]) == shift[box]
    # The frames that hold the opened layer keep their top left and only grow.
    for key in chain & set(before.frames):
        (l0, b0, r0, t0), (l1, b1, r1, t1) = before.frames[key], after.frames[key]
        assert (l1, t1) == (l0, t0) and r1 >= r0 and b1 <= b0
    # Its own frame starts where its card was.
    assert after.frames[layer][0] == pytest.approx(card[0], abs=0.3)
    assert after.frames[layer][3] == pytest.approx(card[3], abs=0.3)
    # And closing it puts everything back.
    again = drawn_graph(trace, after.collapsed | {layer}, folding=folding)
    assert {k: (n.x, n.y) for k, n in again.nodes.items()} == {
        k: (n.x, n.y) for k, n in before.nodes.items()
    }
    assert again.frames == before.frames and again.boxes == before.boxes


def test_parameters_no_forward_used_open_as_one_card() -> None:
    # nn.TransformerEncoder deep-copies the layer it is given: the template's parameters
    # are leaves no forward used. Small as the graph is, they are one folded card; the
    # learner may still open it.
    trace, _ = _run(TRANSFORMER, LAYERS=2)
    drawn = drawn_graph(trace, collapsed=None)  # as a picture first opens
    idle = [k for k, info in drawn.folds.items() if "never called" in info.detail]
    assert idle == ["layer"]
    assert "layer" in drawn.collapsed
    box = next(b for b, lines in drawn.box_text.items() if lines and lines[0] == "layer")
    assert drawn.nodes[box].title == "layer"
    opened = drawn_graph(trace, collapsed=None, choices={"layer": True})
    assert "layer" not in opened.collapsed
    assert "layer" in opened.frames


GRU_AND_ATTENTION = """
import torch
from torch import nn
torch.manual_seed(0)
gru = nn.GRU(4, 6, batch_first=True)
mha = nn.MultiheadAttention(6, 2, batch_first=True)
x = torch.randn(2, 5, 4)
h, _ = gru(x)
a, _ = mha(h, h, h)
a.sum().backward()
"""


def test_a_module_dense_with_its_own_ops_opens_on_demand() -> None:
    # An nn.GRU's five time steps unroll inside the one module: open at first look they
    # were a heap of overlapping marks even though the whole picture was under the budget.
    # Attention's few dozen ops stay open; the learner may still open the GRU.
    trace = run_source(GRU_AND_ATTENTION)
    drawn = drawn_graph(trace, collapsed=None)
    tree = drawn.folding.tree
    own = {k: len(tree.groups[k].own) for k in ("gru", "mha")}
    assert own["gru"] > DENSE_OWN >= own["mha"], own
    assert drawn.folding.sizes[""] <= BUDGET  # the script: under the budget all the same
    assert "gru" in drawn.collapsed and box_id("gru") in drawn.nodes
    assert "mha" not in drawn.collapsed and "mha" in drawn.frames
    opened = drawn_graph(trace, collapsed=None, choices={"gru": True})
    assert "gru" not in opened.collapsed and "gru" in opened.frames


ACCUMULATE = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
X, Y = torch.randn(8, 3), torch.randn(8, 1)
for i in range(MICRO):
    xb, yb = X[2 * i:2 * i + 2], Y[2 * i:2 * i + 2]
    loss = ((model(xb) - yb) ** 2).mean() / MICRO
    loss.backward()
"""


def test_a_gradient_accumulation_loop_folds_to_one_loop_with_its_weights_outside() -> None:
    # `xb, yb = X[…], Y[…]` binds two no-grad slices in one statement: each iteration's
    # are drawn where they feed it (they were only in the last, which split the loop
    # into "×3" and "×2" with the last micro-batch outside both), and the Linear's
    # weights, made before the loop, sit outside its frame and feed every iteration.
    trace, code = _run(ACCUMULATE, MICRO=4)
    drawn = drawn_graph(trace, frozenset())
    tree = drawn.folding.tree
    (loop,) = [k for k, f in drawn.folds.items() if f.kind == LOOP]
    assert drawn.folds[loop].title == "for i in range(4):" and drawn.folds[loop].detail == "×4"
    iterations = [k for k in tree.walk(loop) if tree.groups[k].kind == "iteration"]
    assert len(iterations) == 4
    names = {t.id: t.name for t in trace.tensors}
    assigned = {o: e["assigned"] for e in trace.events if e.get("assigned") for o in e["outputs"]}
    for n, key in enumerate(iterations, 1):
        said = sorted(
            assigned.get(v) or names.get(v) or "" for v in tree.members(key) if v in names
        )
        assert said == (["loss", "xb", "yb"] if n == 4 else ["xb", "yb"]), (key, said)
    for v, owner in tree.owner.items():
        if names.get(v) in ("model.weight", "model.bias"):
            assert owner == "", (v, owner)
    _check_frames(drawn)
    namespace: dict = {}
    exec(code, namespace)  # the oracle: how many times the loop ran
    assert namespace["i"] + 1 == len(iterations)
    # Side by side in the order they ran (independent of each other, they sorted by a
    # topological order's whim: iteration 4 drew first).
    lefts = [drawn.frames[k][0] for k in iterations]
    assert lefts == sorted(lefts) and len(set(lefts)) == len(lefts), lefts


HEADS = """
import torch
from torch import nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8))
        self.mu, self.logvar, self.gate = nn.Linear(8, 2), nn.Linear(8, 2), nn.Linear(8, 2)
    def forward(self, x):
        h = self.body(x)
        return self.mu(h), self.logvar(h), self.gate(h)
net = Net()
mu, logvar, gate = net(torch.randn(3, 8))
loss = (mu ** 2).sum() + logvar.exp().sum() + gate.sum()
loss.backward()
"""


def test_heads_side_by_side_are_not_a_stack_of_layers() -> None:
    # `self.mu(h), self.logvar(h)`: two Linears of one shape on the same input were
    # folded as "Linear ×2", which reads as two layers one after the other.
    trace, _ = _run(HEADS)
    drawn = drawn_graph(trace, frozenset())
    repeats = {f.title: f for f in drawn.folds.values() if f.kind == REPEAT}
    assert list(repeats) == ["Linear ×3"]  # the body: each layer feeds the next
    assert [drawn.folds[c].title for c in repeats["Linear ×3"].children] == [
        "body.0",
        "body.1",
        "body.2",
    ]
    heads = ("net.mu", "net.logvar", "net.gate")
    assert {drawn.folds[k].parent for k in heads if k in drawn.folds} == {"net"}
    assert not [f.title for f in drawn.folds.values() if f.kind == LOOP]  # nor a loop


TRAIN_CNN = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(8 * 2 * 2, 3),
)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X = torch.randn(6, 1, 8, 8)
y = torch.tensor([0, 1, 2, 0, 1, 2])
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
"""


def _width(drawn) -> float:
    xs = [n.x for n in drawn.nodes.values()]
    xs += [x for r in (*drawn.frames.values(), *drawn.boxes.values()) for x in r[::2]]
    return max(xs) - min(xs)


def test_a_first_picture_too_wide_to_read_folds_its_deepest_open_level() -> None:
    # Under the item budget, a 3-step CNN training loop opened in full: 60 layers of
    # unnamed marks under a web of edges in the default window. It opens with each
    # iteration's model call a card, fed by the same X.
    trace, code = _run(TRAIN_CNN)
    everything = drawn_graph(trace, frozenset())
    assert everything.folding.sizes[""] <= BUDGET and _width(everything) > READABLE_WIDTH
    first = drawn_graph(trace, None)
    assert _width(first) <= READABLE_WIDTH
    namespace: dict = {}
    exec(code, namespace)  # the oracle: the loop's count and the input's shape
    cards = [k for k in first.folding.tree.groups if box_id(k) in first.nodes]
    models = [k for k in cards if first.folds[k].title.startswith("model")]
    assert len(models) == namespace["step"] + 1
    shape = "[" + ", ".join(str(d) for d in namespace["X"].shape) + "]"
    for key in models:
        assert first.box_text[box_id(key)][2].startswith(shape + " → "), first.box_text[box_id(key)]
    # The loop and its iterations stay open, the learner's choices still win.
    assert not any(first.folds[k].kind in (LOOP, "iteration") for k in cards)
    chosen = drawn_graph(trace, None, choices={models[0]: True})
    assert models[0] not in chosen.collapsed


def test_a_repeat_of_several_calls_counts_its_repetitions_not_its_calls() -> None:
    # [Linear, Tanh] twice was titled "Linear ×4": four Linears, where the model has two.
    code = """import torch
from torch import nn
model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
loss = model(torch.randn(6, 4)).pow(2).mean()
loss.backward()
"""
    trace = run_source(code)
    drawn = drawn_graph(trace, frozenset())
    (repeat,) = [f for f in drawn.folds.values() if f.kind == REPEAT]
    assert repeat.title == "Linear, Tanh ×2"
    namespace: dict = {}
    exec(code, namespace)  # the oracle: the calls the repeat holds
    model = namespace["model"]
    titles = [drawn.folds[c].title for c in repeat.children]  # model.0, model.1, …
    held = [type(model[int(t.rsplit(".", 1)[-1])]).__name__ for t in titles]
    assert held == ["Linear", "Tanh", "Linear", "Tanh"]


def test_the_width_a_first_picture_may_take_is_the_canvass() -> None:
    trace, _ = _run(TRAIN_CNN)
    wide = drawn_graph(trace, None, readable_width=1000.0)
    assert wide.collapsed == drawn_graph(trace, frozenset()).collapsed  # the budget's alone
    narrow = drawn_graph(trace, None, readable_width=10.0)
    assert len(narrow.collapsed) > len(drawn_graph(trace, None).collapsed) > len(wide.collapsed)
    assert _width(narrow) <= 10.0
    # Choices the learner made in another script's picture do not turn it off.
    elsewhere = drawn_graph(trace, None, choices={"decoder.layers.0": True})
    assert elsewhere.collapsed == drawn_graph(trace, None).collapsed


def test_a_result_the_script_named_stays_outside_the_module_call_that_made_it() -> None:
    # `lossG = bce(D(fake), ones)`: lossG sat inside bce's frame, and Fold all hid it in a
    # card that read "[4, 1] → ·", as if nothing came out.
    code = """import torch
from torch import nn
torch.manual_seed(0)
D = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
bce = nn.BCEWithLogitsLoss()
lossG = bce(D(torch.randn(4, 2)), torch.ones(4, 1))
lossG.backward()
"""
    trace = run_source(code)
    loss = trace.tensor_named("lossG").id
    drawn = drawn_graph(trace, frozenset())
    assert drawn.folding.tree.owner[loss] == ""
    assert not any(loss in members for members in drawn.groups.values())
    folded = drawn_graph(trace, set(drawn.folding.info), folding=drawn.folding)  # Fold all
    assert loss in folded.nodes
    plain: dict = {}
    exec(code, plain)  # the oracle: what D hands on
    shape = "[" + ", ".join(str(d) for d in plain["D"](torch.zeros(4, 2)).shape) + "]"
    for box, lines in folded.box_text.items():
        assert not lines[2].endswith(("→ ·", "→")), (box, lines)
    assert folded.box_text[box_id("D")][2].endswith("→ " + shape)


def test_a_first_picture_too_tall_to_read_folds_too() -> None:
    # The lesson's "Descent by hand": 25 independent steps under the item budget opened
    # in full, 35 rows of unlabelled tiles. It opens with the loop's first iteration, one
    # card for the ones between, and its last.
    code = """import torch
w = torch.tensor(0.5, requires_grad=True)
for step in range(25):
    w.grad = None
    loss = (w - 3.0) ** 2
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
"""
    trace = run_source(code)
    everything = drawn_graph(trace, frozenset())
    assert everything.folding.sizes[""] <= BUDGET
    first = drawn_graph(trace, None)
    ys = [n.y for n in first.nodes.values()]
    ys += [y for r in (*first.frames.values(), *first.boxes.values()) for y in r[1::2]]
    assert max(ys) - min(ys) <= READABLE_HEIGHT
    (loop,) = [k for k, f in first.folds.items() if f.kind == LOOP]
    namespace: dict = {}
    exec(code, namespace)  # the oracle: how many steps ran
    assert first.folds[loop].detail == f"×{namespace['step'] + 1}"
    cards = [first.folds[k].title for k in first.folds if box_id(k) in first.nodes]
    assert cards == ["iteration 1 of 25", "iterations 2–24", "iteration 25 of 25"], cards


def test_a_first_picture_no_level_fits_opens_at_the_deepest_level_near_the_best() -> None:
    """In a small window even the cards of a 3-step CNN loop are a little too tall (its
    ten weights stand in one column however much is folded). It opened fully instead: 60
    layers of unnamed marks under a web of edges. Now it opens with the model calls as
    cards, as in a big window, not fully open and not folded to one loop card either."""
    code = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
    nn.Conv2d(4, 8, 3), nn.BatchNorm2d(8), nn.ReLU(),
    nn.Flatten(), nn.Linear(8 * 4 * 4, 10),
)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(4, 1, 8, 8)
y = torch.randint(0, 10, (4,))
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
"""
    trace = run_source(code)
    roomy = drawn_graph(trace, None, readable_width=48, readable_height=16)
    small = drawn_graph(trace, None, readable_width=24, readable_height=8)
    cards = sorted(k for k in small.folds if box_id(k) in small.nodes)
    assert cards == ["model#1", "model#2", "model#3"]
    assert small.collapsed == roomy.collapsed
    xs = [n.x for n in small.nodes.values()]
    assert max(xs) - min(xs) <= 24  # its width fits; only the weights' column is too tall


def test_one_statements_similar_ops_are_no_loop_but_a_functions_in_a_loop_are() -> None:
    """`Q, K, V = x @ Wq, x @ Wk, x @ Wv` was framed "repeated, line 6 ×3" with three
    "iterations": a learner would believe a loop ran. Each result is bound to a name of
    its own; a function called in a loop binds the same name each pass."""
    qkv = (
        "import torch\nx = torch.randn(3, 4)\nWq = torch.randn(4, 4, requires_grad=True)\n"
        "Wk = torch.randn(4, 4, requires_grad=True)\nWv = torch.randn(4, 4, requires_grad=True)\n"
        "Q, K, V = x @ Wq, x @ Wk, x @ Wv\n"
        "loss = (Q + K + V).sum()\nloss.backward()\n"
    )
    folded = drawn_graph(run_source(qkv), None)
    assert not [k for k, info in folded.folding.info.items() if info.kind == LOOP]
    stepped = (
        "import torch\nW = torch.randn(4, 4, requires_grad=True)\n"
        "def step(h):\n    return torch.tanh(h @ W)\n"
        "h = torch.randn(1, 4)\nh = step(h)\nh = step(h)\nh = step(h)\nh.sum().backward()\n"
    )
    folded = drawn_graph(run_source(stepped), None)
    loops = [info for info in folded.folding.info.values() if info.kind == LOOP]
    assert [info.detail for info in loops] == ["×3"]


@pytest.mark.parametrize("model", ["nn.Sequential(nn.Linear(4, 8), nn.ReLU())", "Net()"])
def test_a_training_loop_of_module_calls_is_titled_by_its_for_statement(model: str) -> None:
    """A pass of `for step in range(3)` that only calls modules (`model(X)`,
    `loss_fn(...)`) has no op of its own on the loop's lines: its frame read "repeated,
    repeated calls ×3". The calls' ops name the loop: a torch module's by the calling
    line, a script's own module's `forward` lines being no loop's are left out."""
    code = (
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 8)\n"
        "    def forward(self, x):\n        return torch.relu(self.fc(x))\n"
        f"model = {model}\nX = torch.randn(16, 4)\nloss_fn = nn.MSELoss()\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step in range(3):\n    opt.zero_grad()\n    out = model(X)\n"
        "    loss = loss_fn(out, torch.zeros(16, 8))\n    loss.backward()\n    opt.step()\n"
    )
    folded = drawn_graph(run_source(code), None)
    loops = [info for info in folded.folding.info.values() if info.kind == LOOP]
    assert [(info.title, info.detail) for info in loops] == [("for step in range(3):", "×3")]


MIXTURE = """
import torch
import torch.nn as nn
torch.manual_seed(0)
experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(EXPERTS)])
gate = nn.Linear(4, EXPERTS)
opt = torch.optim.SGD(list(experts.parameters()) + list(gate.parameters()), lr=0.1)
x = torch.randn(8, 4)
for step in range(STEPS):
    opt.zero_grad()
    weights = torch.softmax(gate(x), dim=-1)
    out = torch.zeros(8, 4)
    for e in range(EXPERTS):
        out = out + weights[:, e:e + 1] * experts[e](x)
    loss = out.pow(2).mean()
    loss.backward()
    opt.step()
"""


def test_a_loop_inside_a_loop_folds_inside_each_pass_of_the_outer_one() -> None:
    """A training loop over a mixture of experts: each pass's `for e in range(4)` drew its
    four passes side by side; it is now a loop of its own, ×4, in every outer pass. An
    RNN step's two matmuls on one line stay no loop."""
    from autograd_viz.core.graph.fit_room import CELL_PX, _title_px

    trace, _ = _run(MIXTURE, EXPERTS=4, STEPS=3)
    drawn = drawn_graph(trace, None)
    folds = drawn.folds
    outer = [k for k, f in folds.items() if f.kind == LOOP and f.title.startswith("for step")]
    assert len(outer) == 1 and folds[outer[0]].detail == "×3"
    inner = sorted(k for k, f in folds.items() if f.kind == LOOP and f.title.startswith("for e"))
    passes = folds[outer[0]].children
    assert len(inner) == 3 and [folds[k].parent for k in inner] == list(passes)
    assert all(folds[k].detail == "×4" for k in inner)
    # Each inner pass runs one expert: its Linear's node and one of the outer pass's.
    tree = drawn.folding.tree
    for k in inner:
        first, *_ = tree.groups[k].children
        calls = [g for g in tree.walk(first) if tree.groups[g].path == "experts.0"]
        assert len(calls) == 1
    # The first look still opens on the outer passes as cards whose titles read (opening
    # them drew the inner passes as 36 px cards reading `it…`): every card is wide enough
    # for its title at the room's zoom, the picture being no wider than the room.
    room_wide = 48.0
    xs = [n.x for n in drawn.nodes.values()]
    zoom = CELL_PX * room_wide / max(max(xs) - min(xs), 1.0)
    for box, rect in drawn.boxes.items():
        title = drawn.box_text[box][0]
        assert (rect[2] - rect[0]) * max(zoom, CELL_PX) >= _title_px(title) - 1e-6, title
    # Opening a pass shows its inner loop.
    opened = drawn_graph(trace, drawn.collapsed - {outer[0], passes[0]}, folding=drawn.folding)
    assert box_id(inner[0]) in opened.nodes or inner[0] in opened.frames
    rnn, _ = _run(RNN, STEPS=40)
    assert [f.title for f in drawn_graph(rnn, None).folds.values() if f.kind == LOOP] == [
        "for t in range(40):"
    ]


EVAL_UNDER_NO_GRAD = """
import torch
import torch.nn.functional as F
from torch import nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 7 * 7, 10)
    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
images, labels = torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))
for i in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    opt.step()
with torch.no_grad():
    acc = (model(images).argmax(1) == labels).float().mean()
"""


@pytest.mark.parametrize(
    "collapsed", [None, ["model#1", "loop@20/…", "model#4"]], ids=["first look", "folded"]
)
def test_a_weights_accumulategrad_stays_beside_it_when_an_eval_pass_takes_the_weights(
    collapsed,
) -> None:
    """An eval pass under no_grad takes the weights straight: laid out in the
    AccumulateGrads' column, it pushed bn1's two triangles up beside conv1's weights, and
    each triangle read as another weight's .grad."""
    trace = run_source(EVAL_UNDER_NO_GRAD)
    drawn = drawn_graph(trace, collapsed=collapsed)
    pairs = [
        (drawn.nodes[u], drawn.nodes[v])
        for u, v in drawn.edges
        if drawn.nodes[u].kind == "leaf" and drawn.nodes[v].kind == "accumulate"
    ]
    assert {leaf.title for leaf, _ in pairs} == {
        f"model.{m}.{p}" for m in ("conv1", "bn1", "conv2", "fc") for p in ("weight", "bias")
    }
    assert all(acc.y == pytest.approx(leaf.y) for leaf, acc in pairs), [
        (leaf.title, leaf.y, acc.y) for leaf, acc in pairs
    ]
    assert drawn.count("untracked") >= 4  # the eval pass is drawn
    _check_frames(drawn)


def test_a_card_with_nothing_drawn_going_in_says_only_what_comes_out() -> None:
    """A training loop whose passes take only a model's weights (left to the count) read
    `· → scalar` on each pass's card, a dot standing for nothing."""
    trace = run_source(
        "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 1)\n"
        "for i in range(3):\n    model(torch.ones(1, 2)).sum().backward()\n"
    )
    drawn = drawn_graph(trace, frozenset())
    passes = [k for k, info in drawn.folding.info.items() if k.startswith("loop@4/")]
    folded = drawn_graph(trace, set(passes), folding=drawn.folding)
    shapes = [lines[2] for lines in folded.box_text.values() if len(lines) > 2]
    assert shapes and all(line == "→ scalar" for line in shapes), folded.box_text


def test_a_module_card_whose_weights_are_drawn_outside_still_counts_them() -> None:
    """A model called in each pass of a training loop: its weights stand outside the
    passes (every pass uses them), and its card in a pass read `model#1 · MiniGPT ·
    → [4, 8, 20]` with no parameter count."""
    code = (
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))\n"
        "for i in range(3):\n    model(torch.ones(4, 2)).sum().backward()\n"
    )
    trace = run_source(code)
    drawn = drawn_graph(trace, frozenset())
    calls = [k for k in drawn.folding.info if k.startswith("model#")]
    folded = drawn_graph(trace, set(calls), folding=drawn.folding)
    expected = sum(
        p.numel() for m in (torch.nn.Linear(2, 8), torch.nn.Linear(8, 1)) for p in m.parameters()
    )
    for key in calls:
        assert folded.box_text[box_id(key)][-1] == f"{expected} params", folded.box_text


def test_a_named_result_the_call_goes_on_using_stays_in_the_calls_frame() -> None:
    """A VAE's forward binds `mu, logvar` and uses them inside (the reparameterisation)
    and the script binds them too: moved out of the call, they made its frame close a
    loop through them, and the whole `vae` frame was dissolved, its ops loose among the
    loss's. A named result the call does not use again still goes outside."""
    trace = run_source(
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "class VAE(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.enc, self.mu = nn.Linear(6, 8), nn.Linear(8, 2)\n"
        "        self.logvar, self.dec = nn.Linear(8, 2), nn.Linear(2, 6)\n"
        "    def forward(self, x):\n"
        "        h = torch.relu(self.enc(x))\n"
        "        mu, logvar = self.mu(h), self.logvar(h)\n"
        "        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)\n"
        "        return torch.sigmoid(self.dec(z)), mu, logvar\n"
        "vae = VAE()\nx = torch.rand(4, 6)\nrecon, mu, logvar = vae(x)\n"
        "kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())\n"
        "loss = nn.functional.binary_cross_entropy(recon, x, reduction='sum') + kl\n"
        "loss.backward()\n"
    )
    drawn = drawn_graph(trace, frozenset())
    assert "vae" in drawn.frames
    owner = drawn.folding.tree.owner
    where = {
        t.name: owner[t.id] for t in trace.tensors if t.name in ("mu", "logvar", "recon", "kl")
    }
    assert where == {"mu": "vae", "logvar": "vae", "recon": "", "kl": ""}
    _check_frames(drawn)
