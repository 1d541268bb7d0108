# The lab's tiny loss: (w·x + b − 5)² with w = 3, x = 2, b = 1.
# x does not require grad, so it stays out of the graph and x.grad stays None.
import torch

w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)

loss = (w * x + b - 5) ** 2  # (3·2 + 1 − 5)² = 4
loss.backward()
print(w.grad, b.grad, x.grad)  # tensor(8.) tensor(4.) None
