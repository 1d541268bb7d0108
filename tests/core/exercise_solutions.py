"""Correct solutions of every exercise, written as a learner would, for the checker's tests."""

from __future__ import annotations

SOLUTIONS = {
    "grad_of": """
import torch


def grad_of(f, x0):
    x = torch.tensor(x0, requires_grad=True)
    loss = f(x)
    loss.backward()
    return x.grad.data.numpy()
""",
    "accumulated_grad": """
import torch


def accumulated_grad(f, x0, times):
    x = torch.tensor(x0, requires_grad=True)
    for _ in range(times):
        f(x).backward()
    return x.grad.data
""",
    "descend": """
import torch


def descend(f, x0, lr, steps):
    x = torch.tensor(x0, requires_grad=True)
    for _ in range(steps):
        loss = f(x)
        loss.backward()
        x.data = x.data - lr * x.grad.data
        x.grad = None
    return x.data
""",
    "tensors": """
import math

import torch


def make_tensors(t):
    eye = torch.eye(4)
    wave = torch.linspace(0, 2 * math.pi, 100)
    images = torch.rand(8, 1, 28, 28)
    ones = torch.ones_like(t)
    for x in (eye, wave, images, ones):
        print(x.shape, x.dtype)
    return eye, wave, images, ones
""",
    "matrices": """
import torch


def matrix_ops(A, B):
    return {
        "matmul": A @ B,
        "elementwise": A * B,
        "transpose": A.T,
        "row_max": A.max(dim=1).values,
        "row_norm": (A**2).sum(dim=1).sqrt(),
    }
""",
    "verify_grad": """
import math

import torch


def autograd_derivative(x):
    t = torch.tensor(x, requires_grad=True)
    y = torch.sin(t) * torch.exp(-t**2 / 2)
    y.backward()
    return t.grad.item()


def analytic_derivative(x):
    return math.cos(x) * math.exp(-x**2 / 2) + math.sin(x) * (-x) * math.exp(-x**2 / 2)
""",
    "no_grad": """
import time

import torch
from torch import nn


def make_model():
    layers = []
    for i in range(5):
        layers += [nn.Linear(1000, 1000), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def time_forward(model, x):
    start = time.perf_counter()
    tracked = model(x)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    with torch.no_grad():
        untracked = model(x)
    seconds_no_grad = time.perf_counter() - start
    return tracked, untracked, seconds, seconds_no_grad
""",
    "descent3": """
import torch


def descend3(start, lr, steps):
    w1, w2, w3 = (torch.tensor(float(v), requires_grad=True) for v in start)
    for _ in range(steps):
        for p in (w1, w2, w3):
            if p.grad is not None:
                p.grad.zero_()
        loss = (w1 - 1) ** 2 + (w2 - 2) ** 2 + (w3 - 3) ** 2
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w3 -= lr * w3.grad
    return w1.item(), w2.item(), w3.item()
""",
}
