"""Lesson 2, Part 2: grad_of, accumulated_grad and descend, checked against torch.

Each case hands the learner's function a small loss (the lab's (w·x + b − 5)², the
lessons' bowls) and compares the result with what `torch.autograd` computes for it.
"""

from __future__ import annotations

from autograd_viz.core.learning import exercise_checks as checks
from autograd_viz.core.learning.exercise_checks import Case, Exercise, calls, fresh


def _square_sum(x):
    return (x**2).sum()


def _lab_loss(v):
    return (v[0] * v[1] + v[2] - 5) ** 2


def wave(x):
    """Lesson 1's Σ sin(x)·exp(−x²/2)."""
    return (x.sin() * (-(x**2) / 2).exp()).sum()


def _cubic(x):
    return (x**3).sum()


def _bowl(v):
    return (v[0] - 3) ** 2 + (v[1] + 2) ** 2


def three_bowl(v):
    """Lesson 1's (w1 − 1)² + (w2 − 2)² + (w3 − 3)², minimum at (1, 2, 3)."""
    return (v[0] - 1) ** 2 + (v[1] - 2) ** 2 + (v[2] - 3) ** 2


def _grad_reference(f, x0):
    import torch

    x = torch.tensor(x0, requires_grad=True)
    (grad,) = torch.autograd.grad(f(x), x)
    return grad


def _accumulated_reference(f, x0, times):
    import torch

    x = torch.tensor(x0, requires_grad=True)
    total = torch.zeros_like(x)
    for _ in range(times):
        total += torch.autograd.grad(f(x), x)[0]
    return total


def sgd_reference(f, x0, lr, steps):
    """Plain SGD with torch.optim.SGD's own update, `param.add_(grad, alpha=-lr)`.

    Written out rather than calling the optimizer: its first step imports torch._dynamo,
    about a second on every check (tests/core/test_exercises.py shows the two agree).
    """
    import torch

    x = torch.tensor(x0, requires_grad=True)
    for _ in range(steps):
        (grad,) = torch.autograd.grad(f(x), x)
        with torch.no_grad():
            x.add_(grad, alpha=-lr)
    return x.detach()


_GRAD_OF_STARTER = '''import torch


def grad_of(f, x0):
    """The gradient of f at the point x0 (a list of numbers), as a NumPy array."""
    pass
'''
_ACCUMULATED_STARTER = '''import torch


def accumulated_grad(f, x0, times):
    """x.grad after `times` rounds of forward + backward, never cleared in between."""
    pass
'''
_DESCEND_STARTER = '''import torch


def descend(f, x0, lr, steps):
    """Plain gradient descent by hand; returns x.data after `steps` steps."""
    pass
'''
_LESSON2 = "Lesson 2 · Part 2"
_LAB = [3.0, 2.0, 1.0]  # w, x, b of lesson 2's lab

LESSON2_EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        "grad_of",
        "The gradient at a point",
        "grad_of(f, x0): one backward, return x.grad as a NumPy array",
        _LESSON2,
        "grad_of",
        "Write grad_of(f, x0). x0 is a list of numbers: turn it into a tensor x that "
        "requires grad, evaluate loss = f(x) (f returns a scalar tensor), call "
        "loss.backward() and return x's gradient as a NumPy array.",
        _GRAD_OF_STARTER,
        (
            *calls(
                _grad_reference,
                ("square_sum", "Σ x² at [1, 2, 3]", (_square_sum, [1.0, 2.0, 3.0])),
                ("lab_loss", "the lab's (w·x + b − 5)² at w=3, x=2, b=1", (_lab_loss, _LAB)),
                ("wave", "Σ sin(x)·exp(−x²/2) at [1, −0.5]", (wave, [1.0, -0.5])),
            ),
            Case(
                "returns_numpy",
                "Σ x³ at [2]: the result is a numpy.ndarray",
                fresh((_cubic, [2.0])),
                lambda f, x0: _grad_reference(f, x0).numpy(),
                checks.numpy_array,
            ),
        ),
    ),
    Exercise(
        "accumulated_grad",
        "Gradients add up",
        "accumulated_grad(f, x0, times): backward `times` times without zeroing",
        _LESSON2,
        "accumulated_grad",
        "Write accumulated_grad(f, x0, times). Make x from x0 as in grad_of, then "
        "`times` times over build a fresh loss = f(x) and call backward on it, never "
        "clearing x.grad in between. Return x.grad: PyTorch adds every backward's "
        "gradient to what is already there.",
        _ACCUMULATED_STARTER,
        calls(
            _accumulated_reference,
            ("twice", "x² at 2, two rounds", (_square_sum, [2.0], 2)),
            ("lab_twice", "the lab's loss, two rounds", (_lab_loss, _LAB, 2)),
            ("once", "Σ x³ at [1, −2], one round", (_cubic, [1.0, -2.0], 1)),
            ("three_times", "Σ x³ at [1, −2], three rounds", (_cubic, [1.0, -2.0], 3)),
        ),
    ),
    Exercise(
        "descend",
        "Gradient descent by hand",
        "descend(f, x0, lr, steps): x.data −= lr·x.grad, then clear the grad",
        _LESSON2,
        "descend",
        "Write descend(f, x0, lr, steps) without torch.optim. Start from x = "
        "torch.tensor(x0, requires_grad=True). Each step: loss = f(x); loss.backward(); "
        "x.data = x.data − lr · x.grad.data; then x.grad = None so the next step starts "
        "clean. Return x.data.",
        _DESCEND_STARTER,
        calls(
            sgd_reference,
            ("bowl", "(w−3)² + (b+2)² from (0.5, 1), lr 0.1", (_bowl, [0.5, 1.0], 0.1, 25)),
            (
                "three_bowl",
                "Σ (wᵢ − i)², lr 0.1, 50 steps",
                (three_bowl, [5.0, 0.0, -3.0], 0.1, 50),
            ),
            ("one_step", "Σ x² from [1, −2], lr 0.5", (_square_sum, [1.0, -2.0], 0.5, 1)),
            ("no_steps", "0 steps: the start comes back", (_bowl, [0.5, 1.0], 0.1, 0)),
            ("diverging", "Σ x² from [1], lr 1.1: it grows", (_square_sum, [1.0], 1.1, 5)),
        ),
    ),
)
