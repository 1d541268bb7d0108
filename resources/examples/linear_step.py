# One training step of a small model: the parameters are leaves, the loss is the root.
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
X = torch.randn(8, 3)
y_true = torch.randn(8, 1)

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.zero_grad()
y_pred = model(X)
loss = nn.functional.mse_loss(y_pred, y_true)
loss.backward()
print("loss =", loss.item())
