"""Gradient descent made visible: paths for many learning rates with the real torch.optim
optimizers (`paths`), everything a slider needs at once (`sweep`), and a real model's loss
landscape (`landscape`)."""
