"""Replay frames that agree with torch where one write reaches other tensors (aliases,
views, tied weights, a grad held elsewhere), where torch writes without saying so (a batch
norm's running statistics, an optimizer's grads, a hook inside backward), and where a
tensor comes from somewhere no mode sees (`nn.Parameter(t)`, `m.T`). Plain torch is the
oracle throughout."""

from __future__ import annotations

import pytest
import torch

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, EVERYTHING, FORWARD
from autograd_viz.core.playback.run_view import prepare_run
from autograd_viz.core.trace.value_text import format_number


def _plain_and_forward(code: str, mode: str = FORWARD):
    """What plain torch left (the oracle), the trace, and its player in `mode`."""
    plain: dict = {}
    exec(code, plain)
    trace = run_source(code)
    player = prepare_run(trace).player
    player.set_mode(mode)
    return plain, trace, player


def _captions(code: str, mode: str = FORWARD) -> list[str]:
    """The caption of each step of `code`'s replay in `mode`."""
    return _steps(_plain_and_forward(code, mode)[2])


def _steps(player) -> list:
    """The caption of each step of the view, the player left at the end."""
    seen = []
    while player.step_forward():
        seen.append(player.current.caption)
    return seen


@pytest.mark.parametrize(
    "alias",
    ["w.detach()", "w.data", "torch.from_numpy(w.detach().numpy())", "w.detach().t()"],
)
def test_a_write_through_an_alias_shows_on_the_tensor_that_shares_its_memory(alias) -> None:
    """`d = w.detach(); d.mul_(10)` changes w in torch: its storage is w's. The replay
    kept w's old numbers to the end, since only views (`_base`) were followed."""
    code = (
        "import torch\nw = torch.tensor([2.0, 3.0], requires_grad=True)\n"
        f"d = {alias}\nd.mul_(10)\nwith torch.no_grad():\n    w.add_(1)\ny = w * 1\n"
    )
    plain, trace, player = _plain_and_forward(code)
    w, d = trace.tensor_named("w").id, trace.tensor_named("d").id
    captions = []
    while player.step_forward():
        captions.append(player.current.caption)
        if player.current.caption.startswith("line 4:"):
            assert player.value_at(w).data == [20.0, 30.0]  # what torch's w held then
            assert "also changes " in player.current.caption
            assert player.current.caption.endswith(" w (same memory)")
        if player.current.caption.startswith("line 6:"):
            assert player.value_at(d).data == plain["d"].tolist() == [21.0, 31.0]
    assert any(c.startswith("line 4:") for c in captions)
    assert any(c.startswith("line 6:") for c in captions)
    assert player.value_at(w).data == plain["w"].tolist()


def test_a_state_dict_entry_written_in_place_shows_on_the_models_parameter() -> None:
    code = (
        "import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(2, 1)\n"
        "sd = model.state_dict()\nsd['weight'].fill_(0.5)\ny = model(torch.ones(1, 2))\n"
    )
    plain, trace, player = _plain_and_forward(code)
    weight = trace.tensor_named("model.weight").id
    while player.step_forward():
        if player.current.caption.startswith("line 5:"):
            break
    assert player.value_at(weight).data == plain["model"].weight.tolist() == [[0.5, 0.5]]


def test_an_augmented_assignment_to_grad_or_data_is_one_step_with_its_true_before() -> None:
    """`w.grad += 1` is an in-place add, then `w.grad = <the same tensor>`; the second
    part changes nothing, yet it was a step reading ".grad [5.0, 7.0] → [5.0, 7.0]"."""
    code = (
        "import torch\nw = torch.tensor([2.0, 3.0], requires_grad=True)\n"
        "(w * w).sum().backward()\nw.grad += 1\nw.data -= 0.1 * w.grad\n"
    )
    plain, trace, player = _plain_and_forward(code)
    w = trace.tensor_named("w").id
    steps = {}
    while player.step_forward():
        line = player.current.caption.split(":")[0]
        steps.setdefault(line, []).append(player.current.caption)
    assert len(steps["line 4"]) == 1 and steps["line 4"][0].endswith("w.grad = [5.0, 7.0]")
    assert steps["line 5"][-1].startswith("line 5: sub(w.data")
    assert player.value_at(w).data == plain["w"].tolist()


def test_what_a_post_accumulate_grad_hook_does_is_replayed_after_its_accumulate() -> None:
    """An optimizer fused into backward (`w.register_post_accumulate_grad_hook(step)`):
    torch runs the hook with every mode off, so its update went unrecorded and the replay
    kept the old weight to the end."""
    code = (
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "def step(p):\n    with torch.no_grad():\n        p.sub_(0.25 * p.grad)\n"
        "    p.grad = None\n"
        "w.register_post_accumulate_grad_hook(step)\n(w ** 2).sum().backward()\n"
    )
    plain, trace, player = _plain_and_forward(code)
    w = trace.tensor_named("w").id
    player.set_mode(EVERYTHING)
    seen = []
    while player.step_forward():
        grad = player.grad_at(w)
        seen.append((player.current.caption, player.value_at(w).data, grad and grad.data))
    accumulate = next(i for i, (c, _, _) in enumerate(seen) if "(AccumulateGrad adds)" in c)
    assert seen[accumulate][1:] == ([1.0, 2.0], [2.0, 4.0])  # written, the hook not begun
    update = next(i for i, (c, _, _) in enumerate(seen) if c.startswith("line 5: sub(w"))
    assert update > accumulate and seen[update][1] == [0.5, 1.0]
    assert seen[-1][0].startswith("line 6: w.grad = None")
    assert seen[-1][1:] == (plain["w"].tolist(), None) and plain["w"].grad is None


def test_a_training_batch_norm_updates_its_running_statistics() -> None:
    """Torch writes a training batch norm's running mean and variance in place, without a
    version bump or an in-place name: the replay kept them at zeros and ones."""
    code = (
        "import torch\nimport torch.nn.functional as F\nrm = torch.zeros(1)\nrv = torch.ones(1)\n"
        "y = F.batch_norm(torch.tensor([[1.0], [3.0]]), rm, rv, training=True)\nz = rm * 1\n"
    )
    plain, trace, player = _plain_and_forward(code)
    mean, var = trace.tensor_named("rm").id, trace.tensor_named("rv").id
    while player.step_forward():
        if "batch_norm(" in player.current.caption:
            break
    assert player.current.caption.endswith(
        "· updates rm, rv  · nothing drawn: it ran on "
        "tensors that need no grad, so it is not part of the graph"
    )
    assert player.value_at(mean).data == pytest.approx(plain["rm"].tolist())
    assert player.value_at(var).data == pytest.approx(plain["rv"].tolist())
    assert plain["rm"].tolist() != [0.0]


@pytest.mark.parametrize("call", ["emb(torch.tensor([0]))", "bag(torch.tensor([[0]]))"])
def test_an_embedding_with_max_norm_renormalises_its_weight_at_that_step(call) -> None:
    """`nn.Embedding(..., max_norm=1.0)` rescales the rows it looks up inside the weight
    itself (torch.embedding_renorm_, with every mode off): the replay kept row 0 at
    [3, 4] to the end while the caption's result read 0.6…0.8."""
    code = (
        "import torch\nemb = torch.nn.Embedding(2, 2, max_norm=1.0)\n"
        "bag = torch.nn.EmbeddingBag(2, 2, max_norm=1.0, mode='sum')\n"
        "with torch.no_grad():\n    emb.weight.copy_(torch.tensor([[3.0, 4.0], [0.1, 0.1]]))\n"
        "    bag.weight.copy_(torch.tensor([[3.0, 4.0], [0.1, 0.1]]))\n"
        f"e = {call}\ny = e * 1\n"
    )
    plain, trace, player = _plain_and_forward(code)
    module = call.split("(")[0]
    weight = trace.tensor_named(f"{module}.weight").id
    while player.step_forward():
        if "embedding" in player.current.caption:
            break
    assert player.current.caption.endswith(f"· updates {module}.weight")
    assert player.value_at(weight).data == plain[module].weight.tolist()
    assert plain[module].weight[0].tolist() == pytest.approx([0.6, 0.8])
    # Without max_norm nothing is written, and nothing is claimed.
    plain, trace, player = _plain_and_forward(code.replace(", max_norm=1.0", ""))
    assert not any("updates" in caption for caption in _steps(player))


@pytest.mark.parametrize(
    "write", ["w.grad.data = torch.tensor([7.0, 8.0])", "m.double()", "m.half()"]
)
def test_a_grads_data_set_anew_shows_as_that_leafs_grad(write) -> None:
    """`w.grad.data = t` (and `Module.half()`, `.double()`, which set each grad's `.data`)
    changes w.grad in torch. The replay kept the old grad and captioned a change of an
    unnamed `t4`, "not in the picture"."""
    code = (
        "import torch\nm = torch.nn.Linear(2, 1, bias=False)\nw = m.weight\n"
        "with torch.no_grad():\n    w.copy_(torch.tensor([[1.0, 2.0]]))\n"
        "(w * 3).sum().backward()\n"
        f"{write}\ny = m.weight * 1\n"
    )
    plain, trace, player = _plain_and_forward(code, EVERYTHING)
    captions = _steps(player)
    leaf = trace.tensor_named("w").id
    assert any(c.startswith("line 7: m.weight.grad set — .grad [1×2] 3.0…3.0 → ") for c in captions)
    assert player.grad_at(leaf).data == plain["w"].grad.tolist()
    assert not any("nothing drawn: what it touched" in c for c in captions)


def test_a_grad_bound_to_a_name_has_the_grads_values() -> None:
    """`g = w.grad` meets no op: g had no value at any step (the inspector fell back to
    its end value, even before backward). It is w's grad object: its numbers are w.grad's,
    from the backward that made it, through the accumulation into it."""
    code = (
        "import torch\nw = torch.ones(2, requires_grad=True)\n(w * 3).sum().backward()\n"
        "g = w.grad\n(w * 2).sum().backward()\n"
    )
    plain, trace, player = _plain_and_forward(code, EVERYTHING)
    g = trace.tensor_named("g")
    assert g.grad_of == trace.tensor_named("w").id
    seen = []
    while player.step_forward():
        value = player.value_at(g.id)
        seen.append(None if value is None else value.data)
    assert seen[0] is None and [3.0, 3.0] in seen
    assert seen[-1] == plain["g"].tolist() == [5.0, 5.0]
    # Once w.grad is set to None a later grad is another object: g keeps its own.
    code += "w.grad = None\n(w * 4).sum().backward()\ng = w.grad\n"
    plain, trace, player = _plain_and_forward(code, EVERYTHING)
    _steps(player)
    g = trace.tensor_named("g").id
    assert player.value_at(g).data == plain["g"].tolist() == [4.0, 4.0]
    assert player.value_at(g, trace.events.index(trace.events[4])) is None


def test_a_parameter_made_from_a_tensor_has_its_value_from_its_first_use() -> None:
    """`nn.Parameter(t)` is made where no mode sees: its numbers were known at the end of
    the run only, never at a step."""
    code = "import torch\np = torch.nn.Parameter(torch.ones(2) * 3)\nq = p * 2\n"
    plain, trace, player = _plain_and_forward(code)
    p = trace.tensor_named("p").id
    captions = _steps(player)
    assert captions[-1].startswith("line 3: mul(p) → q")
    assert player.value_at(p).data == plain["p"].tolist() == [3.0, 3.0]


def test_a_backward_that_raises_keeps_what_it_added_to_a_retained_grad() -> None:
    code = (
        "import torch\na = torch.tensor([1.0, 2.0], requires_grad=True)\nb = a * a\n"
        "b.retain_grad()\nb.sum().backward()\nb.sum().backward()\n"
    )
    trace = run_source(code)  # (plain torch raises: it is run by hand below)
    player = prepare_run(trace).player
    player.set_mode(EVERYTHING)
    b = trace.tensor_named("b").id
    captions = _steps(player)
    assert "RuntimeError" in captions[-1]
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b_torch = a * a
    b_torch.retain_grad()
    b_torch.sum().backward()
    with pytest.raises(RuntimeError):
        b_torch.sum().backward()
    assert player.grad_at(b).data == b_torch.grad.tolist() == [2.0, 2.0]


def test_requires_grad_on_a_detached_tensor_changes_nothing_else() -> None:
    code = (
        "import torch\nx = torch.tensor([1.0, 2.0])\nd = x.detach()\nd.requires_grad_()\n"
        "y = d * 2\n"
    )
    captions = _captions(code)
    assert not any("also changes" in c for c in captions)


def test_a_grad_bound_to_a_name_follows_what_accumulate_grad_adds_into_it() -> None:
    """`g = w.grad; g.zero_()`, then a backward: AccumulateGrad adds into that very
    tensor, so g is [5.0] in torch; the replay kept it at [0.0]."""
    code = (
        "import torch\nw = torch.tensor([1.0], requires_grad=True)\n(w * 3).sum().backward()\n"
        "g = w.grad\ng.zero_()\n(w * 5).sum().backward()\nn = g * 1\n"
    )
    _plain, trace, player = _plain_and_forward(code, EVERYTHING)
    g = trace.tensor_named("g").id
    values = []
    while player.step_forward():
        value = player.value_at(g)
        values.append((player.current.caption, value and value.data))
    adds = [v for c, v in values if c.startswith("w.grad: [0.0] → [5.0]")]
    assert adds == [[5.0]]
    assert values[-1][0].startswith("line 7: mul(g) → n = [5.0]") and values[-1][1] == [5.0]


def test_requires_grad_says_which_way_and_deepcopy_names_only_what_it_copied() -> None:
    code = (
        "import torch, copy\nw = torch.tensor([1.0, 2.0])\nw.requires_grad_(True)\n"
        "a = torch.tensor([1.0])\nb = copy.deepcopy(a)\nc = copy.deepcopy(b)\n"
    )
    captions = _captions(code)
    assert "line 3: requires_grad(w, True) → w = [1.0, 2.0]" in captions
    assert any(c.startswith("line 5: deepcopy(a) → b = [1.0]") for c in captions)
    assert any(c.startswith("line 6: deepcopy(b) → c = [1.0]") for c in captions)


def test_a_modules_buffers_are_named_by_path_and_not_drawn() -> None:
    code = (
        "import torch\nbn = torch.nn.BatchNorm1d(1)\nx = torch.tensor([[1.0], [3.0]])\n"
        "y = bn(x).sum()\n"
    )
    plain, trace, player = _plain_and_forward(code)
    captions = _steps(player)
    assert any(
        "batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias)" in c
        and c.endswith("· updates bn.running_mean, bn.running_var")
        for c in captions
    )
    mean = trace.tensor_named("bn.running_mean")
    assert mean.buffer and mean.value.data == pytest.approx(plain["bn"].running_mean.tolist())
    drawn = prepare_run(trace).graph
    assert mean.id not in drawn.nodes and trace.tensor_named("bn.weight").id in drawn.nodes


def test_a_view_read_as_an_attribute_is_a_step_with_its_numbers() -> None:
    """`t = m.T`, `re = z.real`: torch makes a view, and the replay had no step for it, so
    `re` read "…" until written, and a write to it did not reach z."""
    code = (
        "import torch\nm = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
        "t = m.T\nz = torch.tensor([1 + 1j, 2 - 1j])\nre = z.real\nre.mul_(10)\n"
    )
    plain, trace, player = _plain_and_forward(code)
    captions = _steps(player)
    assert captions[1].startswith("line 3: m.T → t = ")
    assert player.value_at(trace.tensor_named("t").id).data == plain["t"].tolist()
    assert any(c.startswith("line 5: z.real → re = [1.0, 2.0]") for c in captions)
    assert player.value_at(trace.tensor_named("re").id).data == plain["re"].tolist()
    assert player.value_at(trace.tensor_named("z").id).data == [[10.0, 1.0], [20.0, -1.0]]


def test_an_optimizer_step_on_a_weight_moves_the_weight_tied_to_it() -> None:
    """`dec.weight = nn.Parameter(enc.weight.t())` shares enc.weight's memory: SGD's step
    on enc.weight moves dec.weight in torch; the replay kept dec.weight as it was."""
    code = (
        "import torch\ntorch.manual_seed(8)\nenc = torch.nn.Linear(3, 2, bias=False)\n"
        "dec = torch.nn.Linear(2, 3, bias=False)\ndec.weight = torch.nn.Parameter(enc.weight.t())\n"
        "x = torch.randn(2, 3)\nloss = (dec(enc(x)) - x).pow(2).mean()\nloss.backward()\n"
        "opt = torch.optim.SGD(enc.parameters(), lr=0.1)\nopt.step()\n"
    )
    plain, trace, player = _plain_and_forward(code, EVERYTHING)
    captions = _steps(player)
    assert captions[-1].endswith("· also changes dec.weight (same memory)")
    tied = player.value_at(trace.tensor_named("dec.weight").id).data
    assert torch.tensor(tied).allclose(plain["dec"].weight.detach())
    assert not torch.tensor(tied).allclose(
        plain["dec"].weight.detach() + 0.1 * plain["enc"].weight.grad.t()
    )


def test_a_gradient_a_custom_backward_was_handed_is_called_by_its_parameter() -> None:
    """`def backward(ctx, g): return g * 2 * x`: the caption read `mul(t5)`."""
    code = (
        "import torch\nclass Square(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n"
        "        return g * 2 * x\nw = torch.tensor([1.0, 3.0], requires_grad=True)\n"
        "Square.apply(w).sum().backward()\n"
    )
    _plain, trace, player = _plain_and_forward(code, EVERYTHING)
    captions = _steps(player)
    assert any(c.startswith("line 10: mul(g) → ") for c in captions), captions
    assert player.grad_at(trace.tensor_named("w").id).data == [2.0, 6.0]


@pytest.mark.parametrize(
    ("code", "line", "claim"),
    [
        # a's old view b is not on a's memory once a.set_(c); c is.
        (
            "a = torch.zeros(3)\nb = a.view(3)\nc = torch.ones(3)\na.set_(c)\na.add_(1)\n",
            6,
            "also changes c (same memory)",
        ),
        # a's write leaves the other chunk b as it was.
        ("x = torch.zeros(4)\na, b = x.chunk(2)\na.fill_(1)\n", 4, "also changes x (same memory)"),
        # The running statistics held in a view write its base.
        (
            "import torch.nn.functional as F\nstats = torch.zeros(2, 2)\n"
            "x = torch.tensor([[1.0, 2.0], [3.0, 6.0]])\n"
            "y = F.batch_norm(x, stats[0], stats[1], training=True, momentum=0.5)\n",
            5,
            "also changes stats (same memory)",
        ),
    ],
)
def test_a_write_names_exactly_the_other_tensors_it_changed(code, line, claim) -> None:
    code = "import torch\n" + code
    plain, trace, player = _plain_and_forward(code)
    captions = [c for c in _steps(player) if c.startswith(f"line {line}:")]
    assert claim in captions[-1], captions
    assert captions[-1].count("also changes") == 1 and ", " not in claim
    for name, t in plain.items():
        info = trace.tensor_named(name) if isinstance(t, torch.Tensor) else None
        if info is not None and player.value_at(info.id) is not None:
            assert torch.tensor(player.value_at(info.id).data).allclose(t.float()), name


def test_a_batch_norm_with_momentum_zero_claims_no_update() -> None:
    code = (
        "import torch\nbn = torch.nn.BatchNorm1d(2, momentum=0.0)\n"
        "y = bn(torch.tensor([[1.0, 2.0], [3.0, 6.0]]))\n"
    )
    _plain, _trace, player = _plain_and_forward(code)
    assert not any("updates" in c for c in _steps(player))


@pytest.mark.parametrize("foreach", [True, False])
def test_an_optimizer_step_that_writes_the_grads_shows_it(foreach) -> None:
    """SGD with nesterov and foreach adds its momentum into each grad in place: the
    replay kept the grad backward left."""
    code = (
        "import torch\nw = torch.nn.Parameter(torch.tensor([1.0, 2.0]))\n"
        f"opt = torch.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True, foreach={foreach})\n"
        "for _ in range(2):\n    (w * 3).sum().backward()\n    opt.step()\n"
    )
    plain, trace, player = _plain_and_forward(code, EVERYTHING)
    captions = _steps(player)
    w = trace.tensor_named("w").id
    assert player.grad_at(w).data == pytest.approx(plain["w"].grad.tolist())
    assert player.value_at(w).data == pytest.approx(plain["w"].tolist())
    if foreach:  # (the single-tensor path leaves the grads alone)
        assert captions[-1].startswith("line 6: w.grad written by SGD.step() — .grad")


def test_the_backward_view_shows_what_a_hook_did_inside_the_pass() -> None:
    """A post-accumulate hook clamps the grad inside backward(): the Backward view ended
    on the unclamped grad torch never left behind."""
    code = (
        "import torch\nw = torch.tensor([1.0, -2.0], requires_grad=True)\ndef clip(p):\n"
        "    p.grad.clamp_(-0.5, 0.5)\nw.register_post_accumulate_grad_hook(clip)\n"
        "(w * 3).sum().backward()\n"
    )
    plain, trace, player = _plain_and_forward(code, BACKWARD)
    captions = _steps(player)
    assert captions[-1].startswith("line 4: clamp(w.grad) → w.grad = [0.5, 0.5]")
    assert player.grad_at(trace.tensor_named("w").id).data == plain["w"].grad.tolist()


def test_accumulate_grad_into_a_view_changes_its_base() -> None:
    code = (
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\nbuf = torch.zeros(4)\n"
        "w.grad = buf[:2]\n(w * 3).sum().backward()\n"
    )
    plain, trace, player = _plain_and_forward(code)
    player.set_mode(EVERYTHING)
    captions = _steps(player)
    assert captions[-1].startswith("w.grad: [0.0, 0.0] → [3.0, 3.0]")
    assert player.value_at(trace.tensor_named("buf").id).data == plain["buf"].tolist()
    assert plain["buf"].tolist() == [3.0, 3.0, 0.0, 0.0]


def test_a_deepcopy_of_a_leaf_is_said_to_be_a_new_leaf() -> None:
    """`copy.deepcopy([x, 3])` of an x that requires grad: the copy requires grad too (a
    new leaf); the caption said it "cannot carry a gradient"."""
    code = (
        "import torch, copy\nx = torch.ones(2, requires_grad=True)\nxs = copy.deepcopy([[x, 3]])\n"
    )
    plain, _trace, player = _plain_and_forward(code)
    assert plain["xs"][0][0].requires_grad and plain["xs"][0][0].is_leaf
    assert _steps(player)[-1].endswith(
        "its result is a new leaf, with no history back to what it copied"
    )
    # One level in, the copy is named by how to reach it, and drawn as the leaf it is.
    plain, _trace, player = _plain_and_forward(code.replace("[[x, 3]]", "[x, 3]"))
    assert _steps(player)[-1] == "line 3: deepcopy(x) → xs[0] = [1.0, 1.0]"


def test_a_grad_zeroed_by_hand_or_by_zero_grad_is_one_step_per_call() -> None:
    """`w.grad.zero_()` was two steps (the reset, then `zero(w.grad) → w.grad`), and
    `zero_grad(set_to_none=False)` added a `requires_grad(w.grad, False)` step of torch's."""
    code = (
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.1)\n(w * 3).sum().backward()\nw.grad.zero_()\n"
        "(w * 3).sum().backward()\nopt.zero_grad(set_to_none=False)\n"
    )
    plain, trace, player = _plain_and_forward(code, EVERYTHING)
    captions = _steps(player)
    assert [c for c in captions if c.startswith("line 5:")] == [
        "line 5: w.grad.zero_() — .grad [3.0, 3.0] → [0.0, 0.0]"
    ]
    assert [c for c in captions if c.startswith("line 7:")] == [
        "line 7: w.grad.zero_() — .grad [3.0, 3.0] → [0.0, 0.0]"
    ]
    assert player.grad_at(trace.tensor_named("w").id).data == plain["w"].grad.tolist()


def test_a_parameter_the_user_makes_has_its_numbers_from_the_line_that_made_it() -> None:
    """`w = nn.Parameter(torch.randn(3))`: no mode sees `Parameter.__new__`, so w had no
    value ("…") until its first use; and `self.w = nn.Parameter(…)` in the user's own
    module was left out of the parameters its construction step lists."""
    code = (
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "w = nn.Parameter(torch.randn(3))\nx = torch.ones(3)\n"
        "class Scale(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.s = nn.Parameter(torch.full((3,), 2.0))\n"
        "    def forward(self, v):\n        return v * self.s\n"
        "m = Scale()\ny = m(w * x).sum()\n"
    )
    plain, trace, player = _plain_and_forward(code)
    captions = _steps(player)
    shown = ", ".join(format_number(v, 3) for v in plain["w"].tolist())
    assert captions[1] == f"line 4: Parameter(randn(…)) → w = [{shown}]"
    player.seek(1)
    assert player.value_at(trace.tensor_named("w").id).data == plain["w"].tolist()
    assert any(c.startswith("line 12: building m created 1 parameter: m.s [3]") for c in captions)
    # Parameters torch makes for its own modules are not steps of their own.
    assert not [c for c in _captions("import torch\nlin = torch.nn.Linear(2, 1)\n") if "Param" in c]


def test_a_lazy_module_never_shows_the_leftover_numbers_of_its_empty_parameters() -> None:
    """`nn.LazyLinear` gives each parameter `empty()` memory by `.data =` on its first call,
    then initialises it: that step showed the garbage (`[2×3] 4.58e-41…1.28e+23`), and
    torch's own `.data` reads were steps of their own ("lazy.weight.data — …"). The
    first call's building is one step now: its `empty()` ops and `.data =` writes were four
    steps before the one that said lazy's parameters were built."""
    code = (
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\nlazy = nn.LazyLinear(2)\n"
        "y = lazy(torch.ones(1, 3)).sum()\n"
    )
    plain, trace, player = _plain_and_forward(code, EVERYTHING)
    captions = _steps(player)
    assert not [c for c in captions if ".data —" in c or ".data =" in c]
    built = [c for c in captions if c.startswith("line 5: building")]
    assert len(built) == 1, captions
    assert built[0].startswith(
        "line 5: building lazy created 2 parameters: lazy.weight [2, 3], lazy.bias [2]"
    )
    assert captions[captions.index(built[0]) + 1].startswith("line 5: linear(")
    # The write is still in the trace, and says it left no numbers to show.
    weight = trace.tensor_named("lazy.weight").id
    index = trace.index
    writes = [index.event(i) for i in index.of_kind("param_update")]
    assert [e.caption(index) for e in writes if e.tensor == weight] == [
        "line 5: .data = changed lazy.weight: [] → uninitialised (made by empty())"
    ]
    player.seek(captions.index(built[0]))
    assert player.value_at(weight).data == plain["lazy"].weight.tolist()


def test_a_parametrizations_original_has_the_numbers_torch_wrote_into_it() -> None:
    """`nn.utils.parametrize` writes `original` by `set_` from inside torch, which passed
    through unrecorded: after registering (or assigning the weight) the replay kept its
    numbers from before, beside steps that read the new ones."""
    code = (
        "import torch\nimport torch.nn.utils.parametrize as P\ntorch.manual_seed(0)\n"
        "class Sym(torch.nn.Module):\n"
        "    def forward(self, X):\n        return X.triu() + X.triu(1).T\n"
        "    def right_inverse(self, A):\n        return A.triu()\n"
        "lin = torch.nn.Linear(2, 2, bias=False)\nwith torch.no_grad():\n"
        "    lin.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))\n"
        "P.register_parametrization(lin, 'weight', Sym())\n"  # line 12
        "out = lin(torch.ones(1, 2))\n"
        "lin.weight = torch.tensor([[1.0, 5.0], [5.0, 2.0]])\n"  # line 14
        "out2 = lin(torch.ones(1, 2))\n"
    )
    plain, trace, player = _plain_and_forward(code, EVERYTHING)
    original = trace.tensor_named("lin.parametrizations.weight.original").id
    values = []
    while player.step_forward():
        value = player.value_at(original)
        if value is not None and (not values or values[-1][1] != value.data):
            values.append((player.current.line, value.data))
    assert [data for _, data in values][-3:] == [
        [[1.0, 2.0], [3.0, 4.0]],
        [[1.0, 2.0], [0.0, 4.0]],  # right_inverse(W) on registering
        [[1.0, 5.0], [0.0, 2.0]],  # and on assigning
    ]
    assert values[-1][1] == plain["lin"].parametrizations.weight.original.tolist()
    assert values[-2][0] == 12 and values[-1][0] == 14


def test_an_empty_tensor_with_no_elements_is_not_called_uninitialised() -> None:
    """`torch.empty(0, 2)` (a KV cache before its first append) has no numbers to be left
    over: it read "keys = uninitialised"; it is [0×2]."""
    captions = _captions(
        "import torch\nkeys = torch.empty(0, 2)\nW = torch.ones(2, 2, requires_grad=True)\n"
        "keys = torch.cat([keys, W])\n",
        EVERYTHING,
    )
    assert captions[0].startswith("line 2: empty() → keys = [0×2]")
    assert torch.empty(0, 2).numel() == 0


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_what_lbfgs_moves_between_closure_calls_shows_in_the_next_call(line_search) -> None:
    """LBFGS moves the weights between its calls of the closure. The replay kept
    `w = [1.5, -0.5]` through the second and third calls, whose `sub(w, …)` read
    [0.417, -2.08], a result only torch's [1.42, -0.0833] gives. Each move is now a
    step of its own, and every call's forward reads w as torch had it."""
    code = (
        "import torch\n"
        "w = torch.tensor([1.5, -0.5], requires_grad=True)\n"
        f"opt = torch.optim.LBFGS([w], lr=0.5, max_iter=3, line_search_fn={line_search!r})\n"
        "seen = []\n"
        "def closure():\n"
        "    opt.zero_grad()\n"
        "    seen.append(w.detach().clone())\n"
        "    loss = ((w - torch.tensor([1.0, 2.0])) ** 2).sum()\n"
        "    loss.backward()\n"
        "    return loss\n"
        "opt.step(closure)\n"
    )
    plain, trace, player = _plain_and_forward(code)
    w = trace.index.tensor_named("w").id
    calls = []
    while player.step_forward():
        if player.current.caption.startswith("line 8: sub(w"):
            calls.append(player.value_at(w).data)
    assert calls == [t.tolist() for t in plain["seen"]] and len(calls) >= 3
    everything = _captions(code, EVERYTHING)
    moves = [c for c in everything if c.startswith("line 11: LBFGS.step() changed w")]
    assert len(moves) >= len(calls) - 1  # one before each call but the first, at least
    assert player.value_at(w).data == plain["w"].tolist()


@pytest.mark.parametrize(
    "end", ["opt.zero_grad()", "opt.zero_grad(set_to_none=False)", "w.grad.clamp_(-1, 1)", "pass"]
)
def test_a_functions_leaf_gone_by_the_end_keeps_the_value_and_grad_the_run_left(end) -> None:
    """`w` local to main(), trained by SGD: gone when the script ended, it was listed with
    its first value and its last accumulated .grad (the optimizer's moves and zero_grad()
    ignored), and the inspector showed that stale .grad at every step of every view."""
    code = (
        "import torch\nresult = {}\n"
        "def main():\n"
        "    w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "    opt = torch.optim.SGD([w], lr=0.1)\n"
        "    for i in range(2):\n"
        "        (w * w).sum().backward()\n"
        "        opt.step()\n"
        f"        {end}\n"
        "    result['w'] = w.detach().clone()\n"
        "    result['grad'] = None if w.grad is None else w.grad.clone()\n"
        "main()\n"
    )
    plain: dict = {}
    exec(code, plain)
    trace = run_source(code)
    (w,) = [t for t in trace.tensors if t.requires_grad and t.is_leaf]
    assert w.freed and w.value.data == plain["result"]["w"].tolist()
    grad = plain["result"]["grad"]
    assert (w.grad is None) if grad is None else (w.grad.data == grad.tolist())
