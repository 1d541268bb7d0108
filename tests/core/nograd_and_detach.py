import torch

w = torch.tensor(0.5, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
for _step in range(3):
    loss = (w - 3.0) ** 2 + (b + 2.0) ** 2
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    w.grad.zero_()
    b.grad.zero_()

h = (w * 4).detach()
out = h * b
