"""The player reads every state off the recorded trace: forward, backward, and back again."""

from __future__ import annotations

import pytest
import torch

from autograd_viz.core.graph.graph_model import build_graph, drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD, FORWARD, Player
from tests.core.fidelity_cases import CASES


def player_for(case: str) -> Player:
    trace = run_source(CASES[case])
    return Player(trace, drawn_graph(trace))


def test_forward_lights_ops_in_execution_order() -> None:
    player = player_for("lab_loss")
    trace = player.trace
    assert player.mode == FORWARD and player.current is None
    lit = []
    while player.step_forward():
        lit.append(player.current.lit)
    names = {n.id: n.name for n in trace.nodes}
    ops = [next(iter(sorted(k for k in s if k in names)), None) for s in lit]
    assert [names[k] for k in ops if k] == [
        "MulBackward0",
        "AddBackward0",
        "SubBackward0",
        "PowBackward0",
    ]
    assert player.current.line == 6
    assert trace.tensor_named("loss").id in player.current.lit


def test_values_appear_only_once_computed() -> None:
    player = player_for("lab_loss")
    loss = player.trace.tensor_named("loss").id
    player.seek(0)
    assert player.frame().labels[loss][0] == "…"
    player.to_end()
    assert player.frame().labels[loss][0] == "4.0"


def test_backward_accumulates_eight_then_sixteen_and_steps_back() -> None:
    player = player_for("lab_two_rounds")
    player.set_mode(BACKWARD)
    w = player.trace.tensor_named("w").id
    shown = []
    while player.step_forward():
        shown.append(player.frame().labels[w][1])
    assert shown[0] == "grad None" and shown[-1] == "grad 16.0"
    assert "grad 8.0" in shown
    first_eight = shown.index("grad 8.0")
    player.seek(first_eight)
    assert player.frame().labels[w][1] == "grad 8.0"
    player.step_back()
    assert player.frame().labels[w][1] == "grad None"  # stepping back restores the state


def test_chain_rule_caption_and_edge_gradients() -> None:
    player = player_for("leaf_example")
    player.set_mode(BACKWARD)
    step = next(s for s in player.steps if s.caption.startswith("MulBackward0"))
    assert "incoming 14.0 × local 3.0 = 42.0 → x.grad" in step.caption
    assert "incoming 14.0 × local 2.0 = 28.0 → w.grad" in step.caption
    assert sorted(step.edge_grads.values()) == ["28.0", "42.0"]
    for source, target in step.edge_grads:
        assert (source, target) in player.graph.edges


def test_resets_and_errors_are_steps() -> None:
    player = player_for("lab_zero_between")
    player.set_mode(BACKWARD)
    captions = [s.caption for s in player.steps]
    assert any("w.grad.zero_()" in c and "8.0 → 0.0" in c for c in captions)
    assert any("b.grad = None" in c and "4.0 → None" in c for c in captions)
    failing = player_for("second_backward_error")
    failing.set_mode(BACKWARD)
    last = failing.steps[-1]
    assert last.kind == "error" and last.line == 6
    assert "backward through the graph a second time" in last.caption


def test_retained_grad_is_twelve_as_torch_says() -> None:
    player = player_for("retain_grad")
    player.set_mode(BACKWARD)
    player.to_end()
    z = player.trace.tensor_named("z").id
    assert player.frame().labels[z][1] == "grad 12.0"


def test_visited_grows_and_shrinks_with_position() -> None:
    player = player_for("first_graph") if "first_graph" in CASES else player_for("lab_loss")
    player.set_mode(BACKWARD)
    sizes = []
    while player.step_forward():
        sizes.append(len(player.frame().visited))
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]
    player.to_start()
    assert player.frame().visited == set()


def test_position_signal_and_bounds() -> None:
    player = player_for("lab_loss")
    seen: list[int] = []
    player.position_changed.connect(seen.append)
    player.step_back()  # already at the start: nothing happens
    player.to_end()
    assert not player.step_forward()
    player.seek(10_000)
    assert seen == [len(player.steps) - 1]


def test_a_custom_backwards_ops_are_not_forward_steps_and_its_pass_nests() -> None:
    from autograd_viz.core.playback.freeing import freeing
    from tests.core.recorder_regressions import REGRESSIONS

    trace = run_source(REGRESSIONS["checkpoint_reentrant_inner_pass"])
    player = Player(trace, drawn_graph(trace))
    forward = [trace.events[s.event_index] for s in player._build_steps(FORWARD)]
    assert [e["op"] for e in forward if e["kind"] == "op"] == [
        "tensor", "tensor", "matmul", "tanh", "sum"
    ]  # fmt: skip
    recomputed = [e for e in trace.events if e.get("in_backward")]
    assert [e["op"] for e in recomputed] == ["matmul", "tanh"]
    outer_end = max(i for i, e in enumerate(trace.events) if e["kind"] == "backward_end")
    ends = [end for end, _, _ in freeing(trace)]
    # The outer pass ends just before its backward_end, after the inner pass and the
    # CheckpointFunctionBackward node that ran it.
    assert outer_end - 1 in ends
    assert trace.events[outer_end - 1]["kind"] == "accumulate"


def test_an_inner_pass_and_a_threads_pass_say_so() -> None:
    from autograd_viz.core.playback.player import BACKWARD
    from tests.core.recorder_regressions import REGRESSIONS

    for case, words in (
        ("checkpoint_reentrant_inner_pass", "a backward pass run inside the one before it"),
        ("backward_on_a_thread", "on thread Thread-"),
    ):
        trace = run_source(REGRESSIONS[case])
        player = Player(trace, drawn_graph(trace))
        player.set_mode(BACKWARD)
        captions = [s.caption for s in player._build_steps(BACKWARD) if s.kind == "backward"]
        assert any(words in c for c in captions), (case, captions)


def test_a_compiled_call_is_one_step_that_lights_the_nodes_it_made() -> None:
    import torch

    from tests.core.recorder_regressions import REGRESSIONS

    torch._dynamo.reset()
    trace = run_source(REGRESSIONS["torch_compile_eager_backend"])
    compiled = [e for e in trace.events if e["kind"] == "op" and e["op"].startswith("compiled")]
    assert [e["op"] for e in compiled] == ["compiled <lambda>"] * 4
    first = compiled[0]
    assert first["compiled"]["ops"] == 2  # a * b, then + a
    assert first["values"][0]["data"] == [1.5, 0.0, 9.0]
    later = compiled[-1]  # with w: the call built MulBackward0 and AddBackward0 (drawn)
    names = {n.id: n.name for n in trace.nodes}
    assert sorted(names[n] for n in later["compiled"]["nodes"]) == [
        "AddBackward0", "MulBackward0"
    ]  # fmt: skip
    by_name = {names[n]: n for n in later["compiled"]["nodes"]}
    scale = later["inputs"][1]  # the second argument fed a * b only
    assert later["compiled"]["feeds"][scale] == [by_name["MulBackward0"]]
    player = Player(trace, drawn_graph(trace))
    step = next(
        s for s in player._build_steps(FORWARD) if s.event_index == trace.events.index(later)
    )
    assert set(later["compiled"]["nodes"]) <= step.lit
    torch._dynamo.reset()
    trace = run_source(
        "import torch\n"
        "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "scale = torch.tensor([0.5, -1.0])\n"
        "f = torch.compile(lambda a, b: (a * b + a).sum(), backend='eager')\n"
        "loss = f(w, scale)\n"
    )
    names = {n.id: n.name for n in trace.nodes}
    graph = build_graph(trace)
    fed = [names[n] for n in graph.successors(trace.tensor_named("scale").id)]
    assert fed == ["MulBackward0"]  # what took it inside the call, not the call's sum


def test_a_mode_change_never_shows_a_listener_the_old_position() -> None:
    """Backward has more steps than Forward here: at Backward's last step, a switch to
    Forward must not let a listener read a step past Forward's end."""
    from autograd_viz.core.graph.graph_model import drawn_graph
    from autograd_viz.core.kernel.runner import run_source
    from autograd_viz.core.playback.player import BACKWARD, FORWARD, Player

    code = "import torch\nx = torch.tensor(2.0, requires_grad=True)\n(x * x).backward()\n"
    trace = run_source(code)
    player = Player(trace, drawn_graph(trace))
    player.set_mode(BACKWARD)
    player.to_end()
    assert len(player.steps) > len(player.steps_in(FORWARD))
    seen = []
    player.mode_changed.connect(lambda _mode: seen.append(player.current))
    player.set_mode(FORWARD)
    assert seen == [None] and player.position == -1


def test_a_gradient_torch_autograd_grad_returns_is_not_said_to_reach_dot_grad() -> None:
    # torch.autograd.grad hands the gradient back and runs no AccumulateGrad: the caption
    # said "→ x.grad" while x.grad stayed None.
    from autograd_viz.core.playback.run_view import prepare_run

    source = (
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "w = torch.tensor(3.0, requires_grad=True)\n"
        "g, = torch.autograd.grad((w * x ** 2).sum(), x)\n"
        "(w * x).sum().backward()\n"
    )
    trace = run_source(source)
    player = prepare_run(trace).player
    player.set_mode("backward")
    captions = [s.caption for s in player.steps if s.kind == "node"]
    pow_step = [c for c in captions if c.startswith("PowBackward0")]
    # torch's own numbers: d/dx of sum(w * x**2) is 2 * w * x = [6, 12], handed back as g.
    assert pow_step == ["PowBackward0: [6.0, 12.0] → returned for x"], captions
    assert not any("x.grad" in c for c in captions[: captions.index(pow_step[0]) + 1])
    # The second call is a backward(): its gradients reach .grad, and the captions say so.
    assert "MulBackward0: 3.0 → w.grad;  [3.0, 3.0] → x.grad" in captions


HVP = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
v = torch.tensor([1.0, 0.5])
f = x[0] ** 2 * x[1] + x[1] ** 3
(g,) = torch.autograd.grad(f, x, create_graph=True)
gv = (g * v).sum()
(hv,) = torch.autograd.grad(gv, x)
"""


def test_a_gradient_autograd_grad_returned_has_its_value_from_the_moment_it_returned() -> None:
    # `g` is made by the backward engine, not by an op: no op event gave it a value, and
    # every replay frame drew it as "…" while `gv`, computed from it, had one.
    trace = run_source(HVP)
    plain: dict = {}
    exec(HVP, plain)  # the oracle
    g, hv = trace.tensor_named("g").id, trace.tensor_named("hv").id
    ends = [e for e in trace.events if e["kind"] == "backward_end"]
    assert [e["results"] for e in ends] == [[g], [hv]]
    assert ends[0]["values"][0]["data"] == plain["g"].tolist()
    player = Player(trace, drawn_graph(trace))
    player.set_mode(BACKWARD)
    captions = []
    while player.step_forward():
        captions.append(player.current.caption)
        if player.current.kind == "backward_end":
            break
    assert captions[-1] == "line 5: torch.autograd.grad() returned g = [4.0, 13.0]"
    assert g in player.current.lit
    assert player.frame().labels[g][0] == "[4.0, 13.0]"
    player.step_back()
    assert player.frame().labels[g][0] == "…"  # not before the call returned
    player.set_mode(FORWARD)
    player.to_end()
    assert player.frame().labels[g][0] == "[4.0, 13.0]"


CLIPPED = """import torch
w = torch.tensor([3.0, -4.0], requires_grad=True)
b = torch.tensor([1.0, -3.0, 0.2], requires_grad=True)
loss = (w ** 2).sum() + (b ** 3).sum()
loss.backward()
torch.nn.utils.clip_grad_norm_([w], max_norm=1.0)
b.grad.clamp_(-2.0, 2.0)
opt = torch.optim.SGD([w, b], lr=0.1)
opt.step()
"""


def test_a_gradient_changed_in_place_shows_its_new_value_from_that_step_on() -> None:
    # clip_grad_norm_ (a foreach multiply over the grads) and `b.grad.clamp_()`: the
    # replay kept showing the unclipped .grad up to the optimizer step that used the
    # clipped one, and the step that clipped it lit nothing.
    trace = run_source(CLIPPED)
    plain: dict = {}
    exec(CLIPPED, plain)  # the oracle: the grads SGD stepped with
    player = Player(trace, drawn_graph(trace))
    player.set_mode("all")
    w, b = trace.tensor_named("w").id, trace.tensor_named("b").id
    shown = {w: None, b: None}
    changed_by = []
    while player.step_forward():
        step = player.current
        if step.kind == "param_update":
            break
        for tid in (w, b):
            now = player.grad_at(tid)
            if step.kind == "op" and now != shown[tid]:  # the op that clipped it
                changed_by.append(step.line)
                assert tid in step.lit, step.caption
            shown[tid] = now
    assert step.kind == "param_update" and changed_by == [6, 7]
    for tid, name in ((w, "w"), (b, "b")):
        shown = player.grad_at(tid).data
        assert shown == pytest.approx(plain[name].grad.tolist()), (name, shown)


VIEWS = """import torch
p = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
q = p.clone()
r = q.t()
r[0].add_(1.0)
v = q[1]
q.mul_(2)
s = (q * r).sum()
"""


def test_a_write_through_a_view_shows_in_its_base_and_its_other_views() -> None:
    # `r[0].add_(1)` wrote q (r's base) and r itself; the replay showed both unchanged
    # (r until the end), and `q.mul_(2)` left its view v as it was.
    trace = run_source(VIEWS)
    player = Player(trace, drawn_graph(trace))
    ids = {name: trace.tensor_named(name).id for name in ("q", "r", "v")}
    shown: dict[int, dict[str, list]] = {}
    player.set_mode(FORWARD)
    while player.step_forward():
        values = {n: player.value_at(i) for n, i in ids.items()}
        shown[player.current.line] = {n: v.data for n, v in values.items() if v is not None}
    # The oracle: the same statements in plain torch, read after lines 5 and 7.
    p = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    q = p.clone()
    r = q.t()
    r[0].add_(1.0)
    assert shown[5]["q"] == q.tolist() and shown[5]["r"] == r.tolist()
    v = q[1]
    q.mul_(2)
    assert shown[7] == {"q": q.tolist(), "r": r.tolist(), "v": v.tolist()}


def test_an_op_lights_the_nodes_it_made_inside_itself_and_the_leaves_they_reach() -> None:
    # linear on a 3-d input makes UnsafeView, Mm and T nodes behind its result's View, and
    # the weight's AccumulateGrad hangs off T; an LSTM's weights hang off a node inside it.
    # Torch built them all in the forward pass: the forward view's end shows them built.
    trace = run_source(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "lstm = torch.nn.LSTM(3, 4, batch_first=True)\n"
        "head = torch.nn.Linear(4, 2)\n"
        "x = torch.randn(2, 5, 3)\n"
        "h, _ = lstm(x)\n"
        "out = head(h)\n"
        "out.sum().backward()\n"
    )
    player = Player(trace, drawn_graph(trace))
    first = player.first_lit(FORWARD)
    steps = player.steps_in(FORWARD)
    index = trace.index
    accumulate = {index.name_of(n.tensor): n.id for n in trace.nodes if n.variable}
    assert set(accumulate) == {
        "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0",
        "head.weight", "head.bias",
    }  # fmt: skip
    lines = {name: steps[first[key]].line for name, key in accumulate.items()}
    assert lines == {name: 6 if name.startswith("lstm") else 7 for name in accumulate}
    # Every node the forward pass made is lit by the end of the forward view.
    made_in_forward = {n for n in player.graph.nodes if n in index.nodes}
    assert made_in_forward <= set(first)
    # Before the LSTM's step, none of its weights' nodes is.
    before = {k for k, at in first.items() if at < first[accumulate["lstm.weight_ih_l0"]]}
    assert not before & {accumulate[n] for n in accumulate if n.startswith("lstm")}
