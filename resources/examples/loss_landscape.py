# A model's loss landscape (Descent tab → "Model landscape"): define `model` and a
# zero-argument `loss_fn()` that returns its loss, press Ctrl+Enter, then open the tab.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.linspace(-2, 2, 64).unsqueeze(1)
y = torch.sin(2 * x)

model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))


def loss_fn():
    return nn.functional.mse_loss(model(x), y)


print("loss =", loss_fn().item())
