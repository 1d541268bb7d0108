"""More snippets for the fidelity suites: things a learner might write that CASES does not.

Each is run under the tracer and directly under torch (see test_fidelity.py and
test_event_fidelity.py, which pick these up through `CASES`).
"""

from __future__ import annotations

MORE_CASES: dict[str, str] = {
    "cnn_batchnorm_maxpool_adam": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 3, kernel_size=3, padding=1),
    nn.BatchNorm2d(3),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Flatten(),
    nn.Linear(3 * 4 * 4, 4),
)
X = torch.randn(5, 1, 8, 8)
labels = torch.tensor([0, 1, 2, 3, 1])
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(2):
    optimizer.zero_grad()
    logits = model(X)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
""",
    "lstm_forward_backward": """
import torch
from torch import nn
torch.manual_seed(0)
lstm = nn.LSTM(input_size=3, hidden_size=4, batch_first=True)
head = nn.Linear(4, 1)
seq = torch.randn(2, 5, 3)
out, (h_n, c_n) = lstm(seq)
pred = head(out[:, -1])
loss = (pred ** 2).mean() + c_n.abs().mean()
loss.backward()
""",
    "gru_cell_unrolled": """
import torch
from torch import nn
torch.manual_seed(0)
cell = nn.GRUCell(3, 4)
xs = torch.randn(4, 2, 3)
h = torch.zeros(2, 4)
for x_t in xs:
    h = cell(x_t, h)
loss = h.pow(2).sum()
loss.backward()
""",
    "attention_masked_softmax_einsum": """
import torch
torch.manual_seed(0)
q = torch.randn(2, 4, 8, requires_grad=True)
k = torch.randn(2, 4, 8, requires_grad=True)
v = torch.randn(2, 4, 8, requires_grad=True)
scores = torch.einsum("bqd,bkd->bqk", q, k) / 8 ** 0.5
causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
scores = scores.masked_fill(causal, float("-inf"))
attn = scores.softmax(dim=-1)
out = torch.einsum("bqk,bkd->bqd", attn, v)
loss = out.pow(2).mean()
loss.backward()
""",
    "clip_grad_norm_and_value": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
X = torch.randn(6, 4) * 10
y = torch.randn(6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y) * 100
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
    opt.step()
""",
    "gradient_penalty": """
import torch
from torch import nn
torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
x = torch.randn(4, 3, requires_grad=True)
score = critic(x)
(grads,) = torch.autograd.grad(score.sum(), x, create_graph=True)
penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
penalty.backward()
""",
    "tensor_hooks_return_and_inplace": """
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
h = w * 2
h.register_hook(lambda g: g * 10)
def halve_in_place(g):
    g.mul_(0.5)
m = b * 3
m.register_hook(halve_in_place)
w.register_hook(lambda g: g.clamp(-1.0, 1.0))
loss = (h * m).sum() + (h ** 2).sum()
loss.backward()
""",
    "backward_inputs_subset": """
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
x = torch.randn(3)
loss = ((w * x + b) ** 2).sum()
loss.backward(inputs=[w])
""",
    "autograd_backward_two_losses": """
import torch
torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
shared = w.tanh()
l1 = shared.sum()
l2 = (shared * shared).mean()
torch.autograd.backward([l1, l2])
v = torch.randn(2, requires_grad=True)
out = v * 3
torch.autograd.backward([out], grad_tensors=[torch.tensor([1.0, -2.0])])
""",
    "sgd_nesterov_weight_decay": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
X, y = torch.randn(8, 3), torch.randn(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
""",
    "adamw_with_steplr": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
X, y = torch.randn(8, 3), torch.randn(8, 1)
opt = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
for epoch in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    sched.step()
""",
    "rmsprop_cosine_schedule": """
import torch
torch.manual_seed(0)
p = torch.randn(5, requires_grad=True)
q = torch.randn(5, requires_grad=True)
opt = torch.optim.RMSprop([p, q], lr=0.05, momentum=0.5, centered=True)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
for _ in range(3):
    opt.zero_grad()
    loss = ((p - 1) ** 2).sum() + (p * q).sum()
    loss.backward()
    opt.step()
    sched.step()
""",
    "embedding_sparse_sgd": """
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(10, 3, sparse=True)
ids = torch.tensor([[1, 2, 4], [4, 3, 9]])
opt = torch.optim.SGD(emb.parameters(), lr=0.5)
for _ in range(2):
    opt.zero_grad()
    vectors = emb(ids)
    loss = vectors.pow(2).sum()
    loss.backward()
    opt.step()
""",
    "frozen_first_layer": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
model[0].requires_grad_(False)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
X, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
""",
    "scatter_gather_index_add": """
import torch
torch.manual_seed(0)
src = torch.randn(2, 5, requires_grad=True)
index = torch.tensor([[0, 1, 2, 0, 1], [2, 2, 1, 0, 0]])
scattered = torch.zeros(2, 3).scatter_add(1, index, src)
picked = src.gather(1, torch.tensor([[4, 0], [1, 1]]))
rows = torch.randn(3, 4, requires_grad=True)
added = torch.zeros(5, 4).index_add(0, torch.tensor([0, 4, 0]), rows)
sel = rows.index_select(0, torch.tensor([2, 2]))
weighted = added * torch.arange(5.0)[:, None]
loss = (scattered ** 2).sum() + picked.prod() + weighted.sum() + sel.sum()
loss.backward()
""",
    "func_grad_and_jacobian": """
import torch
from torch.autograd.functional import jacobian
torch.manual_seed(0)
def f(x):
    return (x.sin() * x).sum()
x = torch.randn(3)
g = torch.func.grad(f)(x)
J = jacobian(lambda t: t ** 2 + t.roll(1), x)
w = torch.randn(3, requires_grad=True)
loss = (w * g).sum() + (J @ w).sum()
loss.backward()
""",
    "checkpoint_non_reentrant": """
import torch
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0)
w1 = torch.randn(4, 4, requires_grad=True)
w2 = torch.randn(4, 2, requires_grad=True)
x = torch.randn(3, 4)
def block(t):
    return torch.relu(t @ w1) @ w2
y = checkpoint(block, x, use_reentrant=False)
loss = y.pow(2).sum()
loss.backward()
""",
    "custom_function_mark_dirty_once_differentiable": """
import torch
from torch.autograd.function import once_differentiable
class ScaleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.mul_(3)
    @staticmethod
    def backward(ctx, grad):
        return grad * 3
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad
a = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
b = a * 1
c = ScaleInPlace.apply(b)
d = Cube.apply(c)
loss = d.sum()
loss.backward()
""",
    "weight_norm_and_spectral_norm": """
import torch
from torch import nn
from torch.nn.utils import parametrizations
torch.manual_seed(0)
lin1 = parametrizations.weight_norm(nn.Linear(3, 4))
lin2 = parametrizations.spectral_norm(nn.Linear(4, 2))
X = torch.randn(5, 3)
out = lin2(torch.tanh(lin1(X)))
loss = out.pow(2).mean()
loss.backward()
""",
    "float64_and_complex": """
import torch
torch.manual_seed(0)
x = torch.randn(4, dtype=torch.float64, requires_grad=True)
z = torch.complex(x, x.flip(0) * 2)
rotated = z * torch.exp(1j * torch.tensor(0.3, dtype=torch.float64))
spectrum = torch.fft.fft(rotated)
loss = spectrum.abs().pow(2).sum() + rotated.angle().sum()
loss.backward()
""",
    "complex_leaf": """
import torch
torch.manual_seed(0)
c = torch.randn(3, dtype=torch.complex64, requires_grad=True)
loss = (c * c.conj()).real.sum() + (c ** 2).imag.sum()
loss.backward()
""",
    "retain_graph_zero_grad_keep_tensors": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
X = torch.randn(4, 3)
hidden = model(X).tanh()
loss_a = hidden.sum()
loss_b = (hidden ** 2).mean()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_a.backward(retain_graph=True)
model.zero_grad(set_to_none=False)
loss_b.backward(retain_graph=True)
loss_a.backward()
opt.step()
opt.zero_grad(set_to_none=False)
""",
    "error_mid_training_loop": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 5)]
for batch in batches:
    opt.zero_grad()
    loss = model(batch).pow(2).mean()
    loss.backward()
    opt.step()
""",
    "manual_sgd_loop_over_parameters": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
X, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    loss = ((model(X) - y) ** 2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= 0.1 * param.grad
""",
    "relu_inplace_result_bound": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))
X = torch.randn(5, 3)
model(X).sum().backward()
h = torch.randn(4, requires_grad=True) * 1
r = torch.nn.functional.relu(h, inplace=True)
r.sum().backward()
""",
}

from tests.core.fidelity_cases_models import MODEL_CASES  # noqa: E402

MORE_CASES.update(MODEL_CASES)
