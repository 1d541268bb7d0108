# Leaf and non-leaf tensors: only leaves that require grad keep a .grad,
# unless a non-leaf asks for one with retain_grad().
import torch

x = torch.tensor(2.0, requires_grad=True)  # leaf
w = torch.tensor(3.0, requires_grad=True)  # leaf
b = torch.tensor(1.0)  # leaf, no grad tracking

z = x * w + b  # non-leaf
z.retain_grad()  # keep ∂output/∂z = 2z = 14
output = z**2

output.backward()
print("x.grad =", x.grad)  # 2·z·w = 42
print("w.grad =", w.grad)  # 2·z·x = 28
print("b.grad =", b.grad)  # None: b does not require grad
print("z.grad =", z.grad)  # 14, kept by retain_grad()
