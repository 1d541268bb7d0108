"""Captions name every tensor: its variable, the local it was bound to inside a function,
whose .grad it is, or the op that made it. Never "tensor" (issue 14, item 5)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograd_viz.core.graph.graph_model import drawn_graph
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import EVERYTHING, FORWARD, Player
from autograd_viz.core.trace.value_text import format_number

MLP = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(5, 3)
y = torch.randn(5, 1)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
def loss_fn(): return F.mse_loss(model(x), y)
loss_fn().backward()
"""


def _torch_mlp_loss() -> float:
    """The same loss, computed by torch directly (the oracle)."""
    return _torch_mlp()[1]


def _torch_mlp() -> tuple[torch.Tensor, float]:
    """The hidden layer's output and the loss, computed by torch directly."""
    torch.manual_seed(0)
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    hidden = model[1](model[0](x))
    return hidden.detach(), F.mse_loss(model[2](hidden), y).item()


def _captions(code: str, mode: str = EVERYTHING) -> list[str]:
    trace = run_source(code)
    return [s.caption for s in Player(trace, drawn_graph(trace)).steps_in(mode)]


def test_an_unbound_result_is_named_by_the_op_that_made_it() -> None:
    captions = _captions(MLP)
    loss = format_number(_torch_mlp_loss())
    assert f"line 8: mse_loss(linear(…)#2, y) → mse_loss(…) = {loss}" in captions
    hidden = _torch_mlp()[0]
    low, high = (format_number(v.item(), 3) for v in (hidden.min(), hidden.max()))
    assert f"line 8: relu(linear(…)) → relu(…) = [5×4] {low}…{high}" in captions
    assert "line 9: .backward() from mse_loss(…) — frees what its nodes saved" in captions
    assert not [c for c in captions if "tensor" in c.replace("tensor()", "")]


def test_a_function_local_names_its_tensor() -> None:
    code = (
        "import torch\n"
        "a = torch.tensor(2.0, requires_grad=True)\n"
        "b = torch.tensor(3.0, requires_grad=True)\n"
        "def f():\n"
        "    out = a * b\n"
        "    return out\n"
        "f().backward()\n"
    )
    captions = _captions(code)
    product = format_number((torch.tensor(2.0) * torch.tensor(3.0)).item())
    assert f"line 5: mul(a, b) → out = {product}" in captions
    assert "line 7: .backward() from out — frees what its nodes saved" in captions


def test_a_grad_is_named_by_its_leaf() -> None:
    code = (
        "import torch\n"
        "w = torch.ones(2, requires_grad=True)\n"
        "(w * 3).sum().backward()\n"
        "w.grad.zero_()\n"
    )
    trace = run_source(code)
    (zero,) = [e for e in trace.events if e["kind"] == "op" and e["op"] == "zero"]
    assert trace.index.name_of(zero["outputs"][0]) == "w.grad"
    captions = [s.caption for s in Player(trace, drawn_graph(trace)).steps_in(FORWARD)]
    assert any(c.startswith("line 4: zero(w.grad) → w.grad = [0.0, 0.0]") for c in captions)


def test_a_second_result_of_one_op_gets_a_number() -> None:
    code = "import torch\nx = torch.ones(2, requires_grad=True)\n((x * 2) * 3).sum().backward()\n"
    captions = _captions(code, FORWARD)
    assert any("mul(mul(…)) → mul(…)#2 = [6.0, 6.0]" in c for c in captions)


def test_a_drawn_result_without_a_variable_is_titled_by_what_made_it() -> None:
    """PowBackward0 saves its input, so `z.item() + b - 5` stays alive and is drawn: its
    box says what made it, as the captions do, not nothing."""
    from autograd_viz.core.graph.graph_model import RESULT

    code = (
        "import torch\n"
        "w = torch.tensor(3.0, requires_grad=True)\n"
        "b = torch.tensor(1.0, requires_grad=True)\n"
        "z = w * 2\n"
        "loss = (z.item() + b - 5) ** 2\n"
    )
    trace = run_source(code)
    graph = drawn_graph(trace)
    results = {n.title: n for n in graph.nodes.values() if n.kind == RESULT}
    assert "sub(…)" in results and "" not in results
    b = torch.tensor(1.0)
    assert results["sub(…)"].detail == format_number((6.0 + b - 5).item())


def test_a_module_called_before_it_was_attached_gets_its_path_once_it_is() -> None:
    # register_parametrization calls the parametrization before attaching it: the name
    # looked up then (its class) stuck for the whole run.
    code = """import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
class Sym(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(0, 1)
lin = nn.Linear(3, 3, bias=False)
P.register_parametrization(lin, "weight", Sym())
out = lin(torch.ones(1, 3))
"""
    trace = run_source(code)
    plain: dict = {}
    exec(code, plain)  # the oracle: where torch attached it
    paths = {f"lin.{p}" for p, _ in plain["lin"].named_modules() if p}
    triu = [e for e in trace.events if e["kind"] == "op" and e["op"] == "triu"]
    assert triu and set(triu[-1]["modules"]) <= paths | {"lin"}
    assert triu[-1]["modules"][-1] == "lin.parametrizations.weight.0"


def test_every_pass_of_a_loop_names_what_a_function_or_a_forward_returned() -> None:
    """`out = model(x)` and `loss = loss_of(out, y)` in a loop: only the last pass's
    results were named (by the namespace at the end); the first read `tanh(…)`,
    `mean(…)`. What a user's function (or a module's `forward`) returns is named by the
    line that called it, pass after pass."""
    code = (
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 1)\n    def forward(self, x):\n"
        "        return torch.tanh(self.fc(x))\n"
        "def loss_of(pred, y):\n    return ((pred - y) ** 2).mean()\n"
        "model = Net()\nx = torch.randn(4, 2)\ny = torch.randn(4, 1)\n"
        "for i in range(2):\n    out = model(x)\n    loss = loss_of(out, y)\n"
        "    z = loss_of(out, y) + 1\n"
    )
    trace = run_source(code)
    player = Player(trace, drawn_graph(trace))
    player.set_mode(FORWARD)
    captions = []
    while player.step_forward():
        captions.append(player.current.caption)
    assert sum(c.startswith("line 9: tanh(") and " → out = " in c for c in captions) == 2
    assert sum(c.startswith("line 11: mean(") and " → loss = " in c for c in captions) == 2
    # `z = loss_of(…) + 1`: the function's result is not what z holds
    assert sum(c.startswith("line 11: mean(") for c in captions) == 4
    assert sum(c.startswith("line 18: add(") and " → z = " in c for c in captions) == 2


def test_tensors_left_in_a_list_tuple_or_dict_are_named_by_how_to_reach_them() -> None:
    """`v = torch.autograd.grad(y, (a, b))` was captioned `returned t7 = …, t8 = …`, and
    results kept in a list or dict by their op (`mul(…)`)."""
    from autograd_viz.core.playback.run_view import prepare_run

    trace = run_source(
        "import torch\na = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = torch.tensor([0.5], requires_grad=True)\ny = (a * a).sum() + b.sum() * 0\n"
        "v = torch.autograd.grad(y, (a, b))\nouts = [a * 2, a * 3]\nd = {'w': a + 1}\n"
        "both = (a, b)\n"
    )
    names = {t.name for t in trace.tensors}
    assert {"v[0]", "v[1]", "outs[0]", "outs[1]", "d['w']"} <= names
    # A tensor with a name of its own keeps it: `both` adds no alias to a and b.
    assert trace.tensor_named("a").aliases == [] and "both[0]" not in names
    player = prepare_run(trace).player
    player.set_mode(EVERYTHING)
    captions = []
    while player.step_forward():
        captions.append(player.current.caption)
    assert any("returned v[0] = [2.0, 4.0], v[1] = [0.0]" in c for c in captions)


def test_a_buffer_also_bound_to_a_variable_is_named_by_its_path() -> None:
    """`s = m.stat` on the last line named the buffer `s` from the line that made it, two
    lines before s existed. A parameter is named by its path, its variables aliases; so is
    a buffer now."""
    from autograd_viz.core.playback.run_view import prepare_run

    trace = run_source(
        "import torch\nm = torch.nn.Module()\nm.register_buffer('stat', torch.zeros(2))\n"
        "with torch.no_grad():\n    m.stat.add_(1.0)\ns = m.stat\n"
    )
    stat = trace.tensor_named("m.stat")
    assert stat.aliases == ["s"]
    player = prepare_run(trace).player
    captions = []
    while player.step_forward():
        captions.append(player.current.caption)
    assert captions[0].startswith("line 3: zeros() → m.stat = [0.0, 0.0]")
    assert not any(" s = " in c or "(s)" in c for c in captions)


def test_a_detach_or_data_that_cuts_nothing_is_named_by_its_source() -> None:
    # `a` needs no grad, so its `.detach()` cuts nothing and no event says what it is:
    # the op that first uses it still calls it by its source, not by an id like t1.
    code = (
        "import torch\n"
        "a = torch.ones(3)\n"
        "b = a.detach() * 2\n"
        "c = a.data + 1\n"
        "def f(x):\n"
        "    return x.detach().exp()\n"
        "d = f(a)\n"
    )
    captions = _captions(code)
    two, e = format_number(2.0), format_number(torch.tensor(1.0).exp().item(), 3)
    assert captions[1].startswith(f"line 3: mul(a.detach()) → b = [{two}, {two}, {two}]")
    assert captions[2].startswith("line 4: add(a.data) → c = ")
    assert captions[3].startswith(f"line 6: exp(x.detach()) → d = [{e}, {e}, {e}]")
    assert not [c for c in captions if re.search(r"\bt\d+\b", c)]


def test_what_autograd_grad_returned_is_named_by_the_variables_it_went_to() -> None:
    # Every pass's gradients, not only those the variables hold at the end (`returned t2`).
    code = (
        "import torch\n"
        "x = torch.tensor(3.0, requires_grad=True)\n"
        "w = torch.tensor(2.0, requires_grad=True)\n"
        "for _ in range(2):\n"
        "    loss = (x * w) ** 2\n"
        "    gx, gw = torch.autograd.grad(loss, [x, w], create_graph=True)\n"
        "    grads = torch.autograd.grad(loss, [x, w], retain_graph=True)\n"
        "    g = torch.autograd.grad(gx, x)[0]\n"
        "    def inner():\n        return torch.autograd.grad(w * 3, w)\n"
        "    h = inner()\n"
    )
    x, w = torch.tensor(3.0, requires_grad=True), torch.tensor(2.0, requires_grad=True)
    gx, gw = (format_number(v.item()) for v in torch.autograd.grad((x * w) ** 2, [x, w]))
    returned = [c.split("  ·")[0] for c in _captions(code) if "returned" in c and "line" in c]
    assert returned == 2 * [
        f"line 6: torch.autograd.grad() returned gx = {gx}, gw = {gw}",
        f"line 7: torch.autograd.grad() returned grads[0] = {gx}, grads[1] = {gw}",
        f"line 8: torch.autograd.grad() returned g = {format_number(2 * 2.0**2)}",
        "line 10: torch.autograd.grad() returned h[0] = 3.0",  # through `return`
    ]


def test_a_gradient_no_variable_holds_is_named_by_the_call_that_returned_it() -> None:
    """A gradient penalty, `grad(y, x, create_graph=True)[0].pow(2).sum()`: the gradient
    read `returned t3` and `pow(t3)`, and the step that returned it lit nothing, though
    the node that made it is drawn (the engine made it, out of the mode's sight)."""
    code = (
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = (x ** 3).sum()\n"
        "pen = torch.autograd.grad(y, x, create_graph=True)[0].pow(2).sum()\n"
        "pen2 = torch.autograd.grad(y, x, create_graph=True)[0].sum()\n"
        "(pen + pen2).backward()\n"
    )
    trace = run_source(code)
    player = Player(trace, drawn_graph(trace))
    player.set_mode(EVERYTHING)
    captions = [s.caption for s in player.steps]
    assert "line 4: torch.autograd.grad() returned grad(…)[0] = [3.0, 12.0]" in captions
    assert "line 4: pow(grad(…)[0]) → pow(…)#2 = [9.0, 144.0]" in captions
    assert "line 5: torch.autograd.grad() returned grad(…)[0]#2 = [3.0, 12.0]" in captions
    assert not [c for c in captions if re.search(r"\bt\d+\b", c)], captions
    returned = player.steps[captions.index(next(c for c in captions if "returned grad" in c))]
    made_by = trace.index.event(returned.event_index).grad_fn
    assert made_by and made_by[0] in returned.lit  # the MulBackward0 that made it
    assert trace.index.node(made_by[0]).name == "MulBackward0"  # 3 * x**2, as torch made it
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "MulBackward0"


def test_parameters_kept_in_a_list_are_named_by_how_to_reach_them() -> None:
    # They were `t2`, `t2.grad` and "SGD.step() changed t2"; a module's keep their path.
    code = (
        "import torch\nfrom torch import nn\nparams = []\n"
        "for i in range(2):\n    params.append(nn.Parameter(torch.full((2,), float(i + 1))))\n"
        "lin = nn.Linear(2, 1)\nopt = torch.optim.SGD(params, lr=0.1)\n"
        "loss = (params[0] * 3).sum() + (params[1] * 5).sum()\nloss.backward()\nopt.step()\n"
        "both = list(lin.parameters())\n"
    )
    trace = run_source(code)
    names = {t.name for t in trace.tensors}
    assert {"params[0]", "params[1]"} <= names and "both[0]" not in names
    captions = _captions(code)
    assert "params[1].grad: None → [5.0, 5.0]  (AccumulateGrad adds)" in captions
    assert "line 10: SGD.step() changed params[0]: [1.0, 1.0] → [0.7, 0.7]" in captions


def test_tensors_held_as_plain_attributes_are_named_by_their_path() -> None:
    # A module's tensor that is no nn.Parameter was `ones(…)`, and the step that built the
    # module called it a parameter, which `m.parameters()` does not list.
    code = (
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = torch.ones(2, requires_grad=True)\n"
        "        self.lin = torch.nn.Linear(2, 1)\n"
        "    def forward(self, x):\n        return self.lin(self.w * x).sum()\n"
        "m = M()\nm(torch.tensor([1.0, 2.0])).backward()\n"
    )
    trace = run_source(code)
    assert trace.tensor_named("m.w").parameter is False
    assert trace.tensor_named("m.lin.weight").parameter is True
    (built,) = [c for c in _captions(code) if c.startswith("line 9: building m")]
    assert built.startswith(
        "line 9: building m created 2 parameters: m.lin.weight [1, 2], m.lin.bias [1];"
        " and 1 tensor that requires grad but is no nn.Parameter: m.w [2]"
    )
    assert "m.w.grad: None → [" in "\n".join(_captions(code))
    # An object of the script's own class: `model.w`, `model.b`, not `zeros(…)#2.grad`.
    code = (
        "import torch\nclass LinReg:\n    def __init__(self):\n"
        "        self.w = torch.zeros(2, requires_grad=True)\n"
        "        self.b = torch.zeros(1, requires_grad=True)\n"
        "model = LinReg()\nx = torch.ones(3, 2)\n"
        "loss = (x @ model.w + model.b).sum()\nloss.backward()\n"
    )
    captions = _captions(code)
    assert "line 4: zeros() → model.w = [0.0, 0.0]" in captions
    assert "model.b.grad: None → [3.0]  (AccumulateGrad adds)" in captions
    trace = run_source(code)
    # Not a module: no card of a module "never called" around its tensors.
    assert drawn_graph(trace).groups == {}


def test_a_tensor_torch_detaches_for_the_user_is_named_by_the_users_variable() -> None:
    # `vjp(f, x, v)` detaches x inside torch: the user's f ran `sin(t2)`.
    code = (
        "import torch\nfrom torch.autograd.functional import vjp\n"
        "def f(x):\n    return x.sin()\n"
        "x = torch.tensor([0.5, 1.0])\nout, vj = vjp(f, x, torch.ones(2))\n"
    )
    captions = _captions(code)
    assert any(c.startswith("line 4: sin(x.detach()) → sin(…) = [") for c in captions)
    assert not [c for c in captions if re.search(r"\(t2\b|\bt2\)", c)]


def test_a_gradient_taken_for_a_non_leaf_is_returned_for_it_not_sent_to_its_node() -> None:
    """`torch.autograd.grad(y, h)` for a non-leaf h: the caption said PowBackward0 sent
    the gradient "→ MulBackward0", a node torch never runs there (its hook never fires).
    With `y.backward(inputs=[h])` torch runs h's node's hooks, and it sends nothing on."""
    captured = _captions(
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\nh = x * 2\n"
        "y = (h ** 2).sum()\ngh, = torch.autograd.grad(y, h)\n"
    )
    assert "PowBackward0: [4.0, 8.0] → returned for h" in captured
    ran = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.grad_fn.register_hook(lambda *_: ran.append(True))
    torch.autograd.grad((h**2).sum(), h)
    assert not ran  # torch's own word: the node never ran
    kept = _captions(
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\nh = x * 2\n"
        "h.retain_grad()\ny = (h ** 2).sum()\ny.backward(inputs=[h])\n"
    )
    assert "PowBackward0: [4.0, 8.0] → MulBackward0" in kept
    assert (
        "MulBackward0: receives [4.0, 8.0] for h; the pass stops at h, so it sends nothing on"
        in kept
    )
    # A plain backward still names the node the gradient goes to.
    plain = _captions(
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\nh = x * 2\n"
        "(h ** 2).sum().backward()\n"
    )
    assert "PowBackward0: [4.0, 8.0] → MulBackward0" in plain


def test_what_a_torch_module_returns_is_named_on_every_pass_of_a_loop() -> None:
    """`pred = model(x)` in a training loop read `linear(…)` and `sub(linear(…))` on each
    pass but the last: the op ran in torch's `nn.Linear.forward`, and only the variables
    at the end named it. So did a user Net's `return self.fc(x)` and a distribution's
    `rsample()`. What torch's own code returns as it is gets the caller's name."""
    code = (
        "import torch\nfrom torch.distributions import Normal\ntorch.manual_seed(0)\n"
        "model = torch.nn.Linear(1, 1)\n"
        "class Net(torch.nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = torch.nn.Linear(1, 1)\n"
        "    def forward(self, x):\n        return self.fc(x)\n"
        "net = Net()\nx = torch.tensor([[1.0], [2.0]])\nmu = torch.zeros(2, requires_grad=True)\n"
        "for epoch in range(2):\n    pred = model(x)\n    out = net(x)\n"
        "    z = Normal(mu, 1.0).rsample()\n"
        "    loss = ((pred - 1) ** 2).mean() + out.sum() + z.sum()\n"
    )
    captions = _captions(code, FORWARD)
    assert len([c for c in captions if c.startswith("line 15: linear(") and "→ pred" in c]) == 2
    assert len([c for c in captions if c.startswith("line 10: linear(") and "→ out" in c]) == 2
    assert len([c for c in captions if "sub(pred)" in c]) == 2
    assert len([c for c in captions if "→ z = " in c]) == 2
    assert not [c for c in captions if "linear(…)" in c], captions
    # An nn.Sequential returns what its last module returned.
    seq = _captions(
        "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
        "net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1)))\n"
        "for step in range(2):\n    pred = net(torch.ones(1, 2))\n",
        FORWARD,
    )
    assert len([c for c in seq if c.startswith("line 6: linear(relu(…)") and "→ pred" in c]) == 2
    assert len([c for c in seq if "relu(" in c and "→ relu(…)" in c]) == 2  # not the last


def test_the_pieces_a_for_loop_walks_are_named_by_its_variable_in_every_pass() -> None:
    """`for row in X:` runs `unbind`, `for xb in X.split(2):` runs `split`: each pass's
    piece read `unbind(…)` / `split(…)` but the last's (`mul(split(…), W)`)."""
    code = (
        "import torch\nW = torch.ones(2, requires_grad=True)\n"
        "for row in torch.tensor([[1.0, 2.0], [3.0, 4.0]]):\n    y = row * W\n"
        "for xb in torch.arange(4.0).split(2):\n    z = xb * W\n"
        "a, b = torch.arange(4.0).split(2)\n"
    )
    captions = _captions(code)
    assert "line 3: unbind(tensor(…)) → row, pass by pass: [1.0, 2.0], [3.0, 4.0]" in captions
    assert "line 5: split(arange(…)) → xb, pass by pass: [0.0, 1.0], [2.0, 3.0]" in captions
    assert [c for c in captions if c.startswith("line 4: ")] == [
        "line 4: mul(row, W) → y = [1.0, 2.0]",
        "line 4: mul(row, W) → y = [3.0, 4.0]",
    ]
    assert [c.split(" → ")[0] for c in captions if c.startswith("line 6: ")] == 2 * [
        "line 6: mul(xb, W)"
    ]
    assert not [c for c in captions if c.startswith("line 7: ") and "pass by pass" in c]


def test_a_gradient_a_module_hook_gets_in_its_tuple_is_named_by_its_place_there() -> None:
    # `grad_output[0] * 10` in a full backward pre-hook read `mul(t9)`.
    captions = _captions(
        "import torch\nlin = torch.nn.Linear(2, 2)\n"
        "lin.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 10,))\n"
        "x = torch.ones(1, 2, requires_grad=True)\nlin(x).sum().backward()\n"
    )
    hooked = [c for c in captions if c.startswith("line 3: mul(")]
    assert hooked and hooked[0].startswith("line 3: mul(grad_output[0]) → ")
    assert not [c for c in captions if re.search(r"\bt\d+\b", c)], captions


def test_the_partial_sums_of_the_builtin_sum_are_not_given_the_lines_variable() -> None:
    """`penalty = sum([a * 1, b * 1, c * 1])`: torch makes three tensors, a + b, then
    + c (Python's sum adds them one by one); each read `→ penalty`, as if one tensor
    were added to in place. A method called `sum` keeps its name."""
    code = (
        "import torch\na = torch.tensor(1.0, requires_grad=True)\n"
        "b = torch.tensor(2.0, requires_grad=True)\nc = torch.tensor(4.0, requires_grad=True)\n"
        "penalty = sum([a * 1, b * 1, c * 1])\ntotal = torch.stack([a, b]).sum()\n"
    )
    captions = _captions(code)
    added = [c for c in captions if c.startswith("line 5: add(")]
    assert [c.endswith("→ penalty = 7.0") for c in added] == [False, False, True]
    assert any(c.startswith("line 6: sum(") and "→ total = 3.0" in c for c in captions)


def test_a_model_held_only_in_a_functions_local_is_named_from_that_local() -> None:
    """`def main(): model = nn.Linear(2, 1) …; main()`, the guarded script's shape: the
    model's parameters read `t2` and `t3` in every caption (`linear(ones(…), t2, t3)`,
    `t3.grad: None → …`) and its frame `Linear`; the model is gone when the script ends,
    so no end-of-run name reached it. They are named from the local that held them."""
    code = (
        "import torch\nfrom torch import nn\n"
        "def train(model, x, steps):\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for _ in range(steps):\n"
        "        opt.zero_grad()\n"
        "        loss = model(x).pow(2).sum()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "def main():\n"
        "    torch.manual_seed(0)\n"
        "    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))\n"
        "    train(model, torch.ones(4, 2), 2)\n"
        "if __name__ == '__main__':\n"
        "    main()\n"
    )
    captions = _captions(code)
    assert not [c for c in captions if re.search(r"\bt\d+\b", c)], captions
    assert "line 12: building model created 4 parameters: model.0.weight [3, 2], " in " ".join(
        captions
    )
    assert any(c.startswith("line 9: SGD.step() changed model.2.bias: ") for c in captions)
    assert any(c.startswith("model.0.weight.grad: None → [3×2]") for c in captions)
    trace = run_source(code)
    assert list(trace.modules) == ["model", "model.0", "model.1", "model.2"]


def test_a_tensor_inside_a_torch_func_transform_is_named_by_the_users_local() -> None:
    """`grad(f)(x)` with `def f(x): return (x.sin() * x).sum()`: torch.func makes the
    tensor f sees in its own code, where no variable held it, and every caption read its
    id (`sin(t1)`, `→ returned for t1`); under vmap the same (`t8`)."""
    captions = _captions(
        "import torch\nfrom torch.func import grad, vmap\n"
        "def f(x):\n    return (x.sin() * x).sum()\n"
        "x = torch.tensor([0.5, 1.0, 1.5])\ng = grad(f)(x)\n"
        "def loss(w, xb):\n    return (w * xb).sin().sum()\n"
        "w = torch.tensor([0.5, -1.0])\n"
        "each = vmap(grad(loss), in_dims=(None, 0))(w, torch.randn(3, 2))\n"
    )
    assert not [c for c in captions if re.search(r"\bt\d+\b", c)], captions
    assert any(c.startswith("line 4: sin(x) → ") for c in captions), captions
    assert any(c.startswith("line 8: mul(w, xb) → ") for c in captions), captions


def test_a_functions_models_weights_are_listed_in_the_order_the_run_made_them() -> None:
    """Gone by the end, they were listed in a set's order: the picture's column of
    weights read blocks.0.ln1.bias, head.bias, blocks.1.attn… for a GPT in `main()`."""
    trace = run_source(
        "import torch\nfrom torch import nn\n"
        "def main():\n"
        "    torch.manual_seed(0)\n"
        "    model = nn.Sequential(*[nn.Linear(3, 3) for _ in range(6)])\n"
        "    model(torch.ones(2, 3)).sum().backward()\n"
        "main()\n"
    )
    names = [t.name for t in trace.tensors if t.requires_grad and t.is_leaf]
    assert names == [f"model.{i}.{p}" for i in range(6) for p in ("weight", "bias")]


def test_a_tensor_made_unbound_then_bound_by_an_in_place_call_is_named_by_its_variable() -> None:
    """`w = torch.ones(2).requires_grad_(True)` in a function: the variable binds the
    tensor ones() made, and with no name at the script's end every caption read
    `ones(…)` (`ones(…).grad: None → …`). An unused one said its result could not carry a
    gradient, though it was a leaf that requires grad."""
    captions = _captions(
        "import torch\ndef main():\n"
        "    w = torch.ones(2).requires_grad_(True)\n"
        "    b = torch.zeros(1).requires_grad_()\n"
        "    c = torch.zeros(1)\n    d = c.add_(1)\n"
        "    (w * 2).sum().backward()\nmain()\n"
    )
    assert "line 3: requires_grad(w, True) → w = [1.0, 1.0]" in captions
    assert any(c.startswith("w.grad: None → [2.0, 2.0]") for c in captions), captions
    assert not [c for c in captions if "ones(…)" in c], captions
    assert (
        "line 4: requires_grad(b) → b = [0.0]  · nothing drawn: nothing in the picture uses"
        " its result" in captions
    ), captions
    # A tensor already named keeps its name: `d = c.add_(1)` leaves c as c.
    assert any(c.startswith("line 6: add(c) → c = [1.0]") for c in captions), captions


def test_modules_in_a_dict_and_a_functional_calls_params_are_named_by_how_to_reach_them() -> None:
    """`models = {"a": nn.Linear(2, 1), …}` iterated as `for name, m in models.items()`:
    the first model's weights read t2 and t3 (only the loop's `m` reached the last), its
    frame `Linear`. And `torch.func.functional_call(net, params, …)` in a function named
    the `params` dict's tensors `net.weight`, the module's own name for what it swapped in,
    though the module's own weight is another tensor."""
    captions = _captions(
        "import torch\nmodels = {k: torch.nn.Linear(2, 1) for k in ['a', 'b']}\n"
        "x = torch.ones(3, 2)\n"
        "for name, m in models.items():\n    m(x).sum().backward()\n"
    )
    assert any(
        c.startswith("line 5: linear(x, models['a'].weight, models['a'].bias)") for c in captions
    )
    assert not [c for c in captions if re.search(r"\bt\d+\b", c)], captions
    trace = run_source(
        "import torch\ndef main():\n    net = torch.nn.Linear(2, 1)\n"
        "    params = {k: v.detach().clone().requires_grad_(True)\n"
        "              for k, v in net.named_parameters()}\n"
        "    out = torch.func.functional_call(net, params, (torch.ones(1, 2),))\n"
        "    out.sum().backward()\nmain()\n"
    )
    names = {trace.index.name_of(t.id) for t in trace.tensors if t.requires_grad}
    assert names == {"params['weight']", "params['bias']"}, names


def test_a_tensor_a_function_reads_out_of_a_local_dict_is_named_by_its_key() -> None:
    """An EMA teacher: `sd = teacher.state_dict()` in a function, then `0.5 * sd[k]`:
    the state dict's entries read `mul(t10)` and `also changes t10 (same memory)`."""
    captions = _captions(
        "import torch\n"
        "def ema(teacher, student):\n"
        "    sd = teacher.state_dict()\n"
        "    new = {k: 0.5 * sd[k] + 0.5 * v for k, v in student.state_dict().items()}\n"
        "    teacher.load_state_dict(new)\n"
        "teacher, student = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)\n"
        "teacher.requires_grad_(False)\nema(teacher, student)\n"
    )
    assert any(c.startswith("line 4: mul(sd['weight']) → ") for c in captions), captions
    assert any("also changes sd['bias'] (same memory)" in c for c in captions), captions
    assert not [c for c in captions if re.search(r"\bt\d+\b", c)], captions


@pytest.mark.parametrize("where", ["module", "function", "deleted"])
def test_a_model_an_object_of_the_scripts_class_holds_is_named_through_it(where) -> None:
    """A Trainer holding `self.model`: its weights read t2 and t3 in every caption
    (`linear(ones(…), t2, t3)`), its frame `Linear`, whether the trainer was a global
    or a function's local."""
    body = "trainer = Trainer()\ntrainer.fit(torch.ones(3, 2))\n"
    if where == "function":
        body = "def main():\n" + "".join("    " + line + "\n" for line in body.splitlines())
        body += "main()\n"
    elif where == "deleted":  # gone from the namespace by the end: named as it was called
        body += "del trainer\n"
    code = (
        "import torch\nclass Trainer:\n    def __init__(self):\n"
        "        self.model = torch.nn.Linear(2, 1)\n"
        "    def fit(self, x):\n        self.model(x).sum().backward()\n" + body
    )
    captions = _captions(code)
    assert not [c for c in captions if re.search(r"\bt\d+\b", c)], captions
    assert any("linear(ones(…), trainer.model.weight, trainer.model.bias)" in c for c in captions)
    assert list(run_source(code).modules) == ["trainer.model"]
