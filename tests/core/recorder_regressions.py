"""Scripts the recorder once broke or got wrong (issue 20, items 1-6), one per cause.

Each prints what it computed, so running it plainly and under `autograd-viz trace` in
fresh processes must print the same; tests/core/test_event_fidelity.py also compares
every event with the eager reference.
"""

from __future__ import annotations

REGRESSIONS: dict[str, str] = {
    # 1. Reading grad_fn / is_leaf of a view made under no_grad whose base was then
    # written in place raises in torch; the recorder read it and crashed the run.
    "no_grad_view_written_in_place": """
import torch
w = torch.zeros(3, 2, requires_grad=True)
with torch.no_grad():
    w[0].fill_(1.0)
    w[:, 1].mul_(2)
    v = w[1]
    v.add_(5)
print(w.sum().item())
(w * 2).sum().backward()
print(w.grad.tolist())
""",
    "embedding_padding_idx_and_orthogonal_init": """
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(5, 3, padding_idx=0)
bag = nn.EmbeddingBag(5, 3, mode="sum", padding_idx=0)
lin = nn.Linear(3, 3)
nn.init.orthogonal_(lin.weight)
ids = torch.tensor([[0, 2, 4], [1, 0, 3]])
loss = lin(emb(ids)).pow(2).mean() + bag(ids).sum()
loss.backward()
print(round(loss.item(), 5))
print(emb.weight.grad[0].tolist(), round(emb.weight.grad.abs().sum().item(), 5))
print(round(lin.weight.grad.abs().sum().item(), 5))
""",
    # 2. Dynamo compiled the recorder's own code into the user's graph: wrong numbers.
    "torch_compile_eager_backend": """
import torch
f = torch.compile(lambda a, b: a * b + a, backend="eager")
print(f(torch.tensor([1., 2., 3.]), torch.tensor([0.5, -1., 2.])).tolist())
w = torch.tensor([1., 2., 3.], requires_grad=True)
for k in range(3):
    f(w, torch.tensor([0.5, -1., 2.]) * k).sum().backward()
print(w.grad.tolist())
""",
    "torch_compile_aot_module": """
import torch
from torch import nn
torch.manual_seed(0)
model = torch.compile(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)),
                      backend="aot_eager")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3)
for _ in range(2):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    print(round(loss.item(), 6))
""",
    "torch_compile_inductor": """
import torch
w = torch.tensor([1., 2., 3.], requires_grad=True)
f = torch.compile(lambda a, b: (a * b + a).sum())
for k in range(3):
    f(w, torch.tensor([0.5, -1., 2.]) * (k + 1)).backward()
print(w.grad.tolist())
""",
    # 3. The recorder's own reads reached a subclass's __torch_function__ and a
    # TorchDispatchMode of the user's.
    "user_subclass_and_dispatch_mode_see_only_their_calls": """
import torch
from torch.utils._python_dispatch import TorchDispatchMode
calls = []
class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        calls.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs or {})
x = torch.tensor([1., 2.]).as_subclass(Logged)
y = x * 2
print(calls)
class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))
a = torch.randn(4, 4, requires_grad=True)
with Count() as counter:
    b = (a @ a).relu().sum()
    b.backward()
print(counter.ops)
""",
    # 4. A backward pass run inside another one recorded nothing.
    "checkpoint_reentrant_inner_pass": """
import torch
from torch.utils.checkpoint import checkpoint
w = torch.tensor([[1.5]], requires_grad=True)
x = torch.tensor([[2.0]], requires_grad=True)
def block(h):
    return torch.tanh(h @ w)
y = checkpoint(block, x, use_reentrant=True)
y.sum().backward()
print(w.grad.tolist(), x.grad.tolist())
""",
    "autograd_grad_inside_custom_backward": """
import torch
class Cubed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            inner = x.detach().requires_grad_()
            (d,) = torch.autograd.grad((inner ** 3).sum(), inner)
        return g * d
x = torch.tensor([1.0, 2.0], requires_grad=True)
Cubed.apply(x).sum().backward()
print(x.grad.tolist())
""",
    # 5. A user's Node post hook replaced what the node sent on; the trace showed the
    # gradients from before the hook.
    "node_post_hook_rewrites_grads": """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, None))
z = y.exp().sum()
z.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
z.backward()
print(x.grad.tolist())
""",
    # 6. A backward pass on another thread left no events.
    "backward_on_a_thread": """
import threading
import torch
w = torch.tensor(1.0, requires_grad=True)
t = threading.Thread(target=lambda: (w * 3).backward())
t.start()
t.join()
print(w.grad.item())
class Worker(threading.Thread):
    def run(self):
        (w * 2).backward()
worker = Worker()
worker.start()
worker.join()
print(w.grad.item())
""",
}
