"""Snippets for the fidelity suite: each is run under the tracer and directly under torch."""

from __future__ import annotations

CASES: dict[str, str] = {
    "lab_loss": """
import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
""",
    "lab_two_rounds": """
import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
for _ in range(2):
    loss = (w * x + b - 5) ** 2
    loss.backward()
""",
    "lab_zero_between": """
import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
w.grad.zero_()
b.grad = None
loss = (w * x + b - 5) ** 2
loss.backward()
""",
    "polynomial": """
import torch
x = torch.tensor(3.0, requires_grad=True)
y = x**2 + 2*x + 1
y.backward()
""",
    "chain": """
import torch
x = torch.tensor(4.0, requires_grad=True)
inner = x**2 + 2*x
z = inner * 3
z.backward()
""",
    "two_variables": """
import torch
x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
f = x**2 * y + x * y**2
f.backward()
""",
    "vector_sum": """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x**2
loss = y.sum()
loss.backward()
""",
    "vector_ones_like": """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x**2
y.backward(torch.ones_like(y))
""",
    "leaf_example": """
import torch
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=False)
z = x * w + b
output = z ** 2
output.backward()
""",
    "retain_grad": """
import torch
x = torch.tensor(2.0, requires_grad=True)
z = x * 3
output = z ** 2
z.retain_grad()
output.backward()
""",
    "second_backward_error": """
import torch
w = torch.tensor(3.0, requires_grad=True)
loss = (w * 2) ** 2
loss.backward()
loss.backward()
""",
    "retain_graph": """
import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward(retain_graph=True)
loss.backward()
""",
    "vector_backward_error": """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x**2
y.backward()
""",
    "no_grad_update": """
import torch
w = torch.tensor(0.5, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
lr = 0.1
for step in range(3):
    if w.grad is not None: w.grad.zero_()
    if b.grad is not None: b.grad.zero_()
    loss = (w - 3.0)**2 + (b + 2.0)**2
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
""",
    "history_breaks": """
import torch
a = torch.tensor([1.5, 2.5], requires_grad=True)
s = (a * 2).sum()
as_number = s.item()
as_list = (a * 3).tolist()
as_float = float(s)
cut = (a * 4).detach()
as_array = cut.numpy()
raw = a.data
carried = torch.tensor(as_number, requires_grad=True) * 2
carried.backward()
""",
    "autograd_grad": """
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x, create_graph=True)
(g2,) = torch.autograd.grad(g, x)
""",
    "custom_function": """
import torch
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad
x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
y = Square.apply(x).sum()
y.backward()
""",
    "inplace_version_error": """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 2
c = b.sigmoid()
c.mul_(3)
d = (c * b).sum()
b.add_(1)
d.backward()
""",
    "inplace_ok": """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 2
b.add_(1)
b.mul_(b)
b.sum().backward()
""",
    "matmul_mean_relu": """
import torch
torch.manual_seed(0)
W = torch.randn(3, 4, requires_grad=True)
X = torch.randn(5, 3)
h = (X @ W).relu()
loss = h.mean()
loss.backward()
""",
    "mlp_training": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
X = torch.randn(8, 3)
y_true = torch.randn(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    optimizer.zero_grad()
    y_pred = model(X)
    loss = nn.functional.mse_loss(y_pred, y_true)
    loss.backward()
    optimizer.step()
""",
    "adam_momentum": """
import torch
torch.manual_seed(1)
p = torch.randn(4, requires_grad=True)
opt = torch.optim.Adam([p], lr=0.05)
for _ in range(3):
    opt.zero_grad(set_to_none=False)
    loss = ((p - 1) ** 2).sum()
    loss.backward()
    opt.step()
""",
    "descend_by_data": """
import torch
x = torch.tensor([3.0, -1.0], requires_grad=True)
for _ in range(4):
    loss = (x ** 2).sum()
    loss.backward()
    x.data = x.data - 0.1 * x.grad.data
    x.grad = None
""",
    "requires_grad_propagation": """
import torch
a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(2.0, requires_grad=False)
c = a + b
d = b + b
""",
    "partial_then_error": """
import torch
x = torch.tensor(2.0, requires_grad=True)
y = x * x
z = y.unknown_method()
""",
    "multi_output_ops": """
import torch
torch.manual_seed(2)
x = torch.randn(4, 3, requires_grad=True)
values, indices = x.max(dim=1)
first, second = x.split([1, 3], dim=0)
parts = torch.unbind(x, dim=1)
loss = values.sum() + first.mean() + second.abs().sum() + parts[2].prod()
loss.backward()
""",
    "cat_stack_where": """
import torch
a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
b = torch.tensor([0.5, 0.5, -1.0], requires_grad=True)
c = torch.cat([a, b])
s = torch.stack([a, b]).sum(dim=0)
w = torch.where(a > 0, a * b, b ** 2)
loss = c.sum() + (s * w).sum()
loss.backward()
""",
    "indexing_views": """
import torch
x = torch.arange(12.0).reshape(3, 4).requires_grad_()
y = x[1:, ::2]
z = x.view(4, 3).t()
v = x.T.expand(2, 4, 3)
loss = y.sum() * 2 + (z ** 2).sum() + v.mean()
loss.backward()
""",
    "softmax_cross_entropy": """
import torch
torch.manual_seed(3)
logits = torch.randn(5, 4, requires_grad=True)
target = torch.tensor([0, 3, 1, 1, 2])
loss = torch.nn.functional.cross_entropy(logits, target)
probs = logits.softmax(dim=-1)
loss.backward()
""",
    "no_grad_decorator_and_requires_grad_": """
import torch
@torch.no_grad()
def evaluate(t):
    return t * 10
a = torch.tensor([1.0, 2.0])
a.requires_grad_()
frozen = evaluate(a)
live = (a * 3).sum()
live.backward()
""",
    "clone_and_grad_none": """
import torch
p = torch.tensor([2.0, -1.0], requires_grad=True)
q = p.clone()
(q * q).sum().backward()
p.grad = None
(p * 4).sum().backward()
""",
    "grad_accumulation_three_times": """
import torch
x = torch.tensor(2.0, requires_grad=True)
for _ in range(3):
    y = x ** 2
    y.backward()
""",
    "double_backward_hessian_vector": """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x ** 3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
hv = (g * torch.tensor([1.0, 0.0])).sum()
hv.backward()
""",
    "integer_and_bool_tensors": """
import torch
counts = torch.tensor([1, 2, 3])
mask = counts > 1
w = torch.tensor([0.5, 1.5, 2.5], requires_grad=True)
loss = (w * counts * mask).sum()
loss.backward()
""",
    "float64_precision": """
import torch
x = torch.tensor([1e-8, 1.0, 1e8], dtype=torch.float64, requires_grad=True)
y = (x.log() * x).sum()
y.backward()
""",
    "nan_and_inf": """
import torch
x = torch.tensor([0.0, 1.0, -1.0], requires_grad=True)
y = (x.log() * 2).sum()
y.backward()
""",
    "lbfgs_closure": """
import torch
w = torch.tensor([0.0, 0.0], requires_grad=True)
opt = torch.optim.LBFGS([w], lr=1, max_iter=5)
def closure():
    opt.zero_grad()
    loss = ((w - 2) ** 2).sum()
    loss.backward()
    return loss
opt.step(closure)
""",
    "split_unbind": """
import torch
x = torch.arange(6.0, requires_grad=True)
a, b = x.split(3)
c = torch.stack(x.unbind()[:2])
loss = (a * b).sum() + c.prod()
loss.backward()
""",
    "inplace_on_a_view": """
import torch
base = torch.zeros(4, requires_grad=True).clone()
v = base[1:3]
w = torch.tensor([1.0, 2.0], requires_grad=True)
v.mul_(2).add_(w)
base.sum().backward()
""",
    "checkpoint_reentrant": """
import torch
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0)
w = torch.randn(4, 4, requires_grad=True)
x = torch.randn(2, 4, requires_grad=True)
y = checkpoint(lambda t: torch.tanh(t @ w), x, use_reentrant=True)
y.sum().backward()
""",
}

from tests.core.fidelity_cases_more import MORE_CASES  # noqa: E402

CASES.update(MORE_CASES)
