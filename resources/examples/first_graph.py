# Your first computation graph: out = (x·y + 4)²
# Press Ctrl+Enter to see the graph PyTorch builds.
import torch

x = torch.tensor(2.0, requires_grad=True)  # leaf: "track me"
y = torch.tensor(3.0, requires_grad=True)

z = x * y  # MulBackward0 records the multiply
w = z + 4  # AddBackward0
out = w**2  # PowBackward0

out.backward()  # walk the graph backwards (chain rule)
print("out =", out.item())  # 100.0
print("x.grad =", x.grad)  # 2·(xy+4)·y = 60
print("y.grad =", y.grad)  # 2·(xy+4)·x = 40
