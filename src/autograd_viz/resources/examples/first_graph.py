# Your first computation graph: out = (x·y + 4)² at x = 2, y = 3.
# Press Ctrl+Enter: the canvas shows the graph PyTorch really built.
import torch

x = torch.tensor(2.0, requires_grad=True)  # a leaf you created: "track me"
y = torch.tensor(3.0, requires_grad=True)

z = x * y  # MulBackward0 records the multiplication
w = z + 4  # AddBackward0
out = w**2  # PowBackward0

out.backward()  # walk the graph backwards, chain rule at every node
print("out =", out.item())  # 100.0
print("x.grad =", x.grad)  # ∂out/∂x = 2·(xy+4)·y = 60
print("y.grad =", y.grad)  # ∂out/∂y = 2·(xy+4)·x = 40
