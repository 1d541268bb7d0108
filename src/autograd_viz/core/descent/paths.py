"""Gradient descent on a two-parameter loss with the real torch.optim optimizers.

Paths for many learning rates are computed at once (one parameter row per rate, one
param group each, one backward per step for all of them), so a learning-rate slider
only has to pick a precomputed row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

# The words live in captions.py; these names stay importable from here.
from autograd_viz.core.descent.captions import (  # noqa: F401
    DIVERGED,
    TOLERANCE,
    Caption,
    _rate,
    _steps,
    _where,
    describe_path,
    overflow_step,
    steps_to_minimum,
)

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class LossFunction:
    """A loss surface L(w, b) with what the view needs to frame it."""

    key: str
    title: str
    formula: str
    fn: LossFn
    minimum: tuple[float, float] | None
    start: tuple[float, float]
    extent: tuple[tuple[float, float], tuple[float, float]]  # (w range, b range)


FUNCTIONS: dict[str, LossFunction] = {
    f.key: f
    for f in (
        LossFunction(
            "bowl",
            "Bowl",
            "(w − 3)² + (b + 2)²",
            lambda w, b: (w - 3) ** 2 + (b + 2) ** 2,
            (3.0, -2.0),
            (0.5, 1.0),
            ((-2.0, 8.0), (-6.0, 4.0)),
        ),
        LossFunction(
            "elongated",
            "Elongated bowl",
            "(w − 3)² + 10·(b + 2)²",
            lambda w, b: (w - 3) ** 2 + 10 * (b + 2) ** 2,
            (3.0, -2.0),
            (0.5, 1.0),
            ((-2.0, 8.0), (-6.0, 4.0)),
        ),
        LossFunction(
            "rosenbrock",
            "Rosenbrock",
            "(1 − w)² + 100·(b − w²)²",
            lambda w, b: (1 - w) ** 2 + 100 * (b - w**2) ** 2,
            (1.0, 1.0),
            (-1.5, 2.0),
            ((-2.0, 2.0), (-1.0, 3.0)),
        ),
        LossFunction(
            "beale",
            "Beale",
            "(1.5 − w + wb)² + (2.25 − w + wb²)² + (2.625 − w + wb³)²",
            lambda w, b: (
                (1.5 - w + w * b) ** 2 + (2.25 - w + w * b**2) ** 2 + (2.625 - w + w * b**3) ** 2
            ),
            (3.0, 0.5),
            (1.0, 1.5),
            ((-4.5, 4.5), (-4.5, 4.5)),
        ),
        LossFunction(
            "saddle",
            "Saddle",
            "w² − b²",
            lambda w, b: w**2 - b**2,
            None,
            (1.5, 0.01),
            ((-2.0, 2.0), (-2.0, 2.0)),
        ),
    )
}


def loss_at_minimum(key: str) -> float | None:
    """torch's L at a built-in function's known minimum (None: unknown or not built in)."""
    function = FUNCTIONS.get(key)
    if function is None or function.minimum is None:
        return None
    w, b = (torch.tensor(v, dtype=torch.float64) for v in function.minimum)
    return float(function.fn(w, b))


OPTIMIZERS: dict[str, tuple[type[torch.optim.Optimizer], dict]] = {
    "sgd": (torch.optim.SGD, {}),
    "momentum": (torch.optim.SGD, {"momentum": 0.9}),
    "nesterov": (torch.optim.SGD, {"momentum": 0.9, "nesterov": True}),
    "rmsprop": (torch.optim.RMSprop, {}),
    "adam": (torch.optim.Adam, {}),
}


def descend_many(
    fn: LossFn,
    start: tuple[float, float],
    learning_rates: Sequence[float],
    steps: int,
    optimizer: str = "sgd",
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """Paths for every learning rate: a (rates, steps + 1, 3) tensor of (w, b, loss),
    step 0 being the start. Each rate is its own parameter row and param group of one
    real torch.optim optimizer; the rows never interact."""
    cls, options = OPTIMIZERS[optimizer]
    rows = [
        torch.tensor(start, dtype=torch.float64, device=device, requires_grad=True)
        for _ in learning_rates
    ]
    groups = [
        {"params": [row], "lr": float(lr)} for row, lr in zip(rows, learning_rates, strict=True)
    ]
    opt = cls(groups, **options)
    out = torch.empty(len(rows), steps + 1, 3, dtype=torch.float64, device=device)
    for step in range(steps + 1):
        params = torch.stack(rows)
        loss = fn(params[:, 0], params[:, 1])
        out[:, step, :2] = params.detach()
        out[:, step, 2] = loss.detach()
        if step == steps:
            break
        opt.zero_grad()
        # One backward for every row, each seeded with 1: a row's gradient depends only on
        # its own loss, so a row that overflowed keeps torch's inf / nan (a nan_to_num of the
        # loss here made them 0 and froze the path) and the other rows stay untouched.
        loss.backward(torch.ones_like(loss))
        opt.step()
    return out.cpu()


def descend(
    fn: LossFn,
    start: tuple[float, float],
    learning_rate: float,
    steps: int,
    optimizer: str = "sgd",
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """One path: a (steps + 1, 3) tensor of (w, b, loss)."""
    return descend_many(fn, start, [learning_rate], steps, optimizer, device)[0]


@dataclass(frozen=True)
class Thresholds:
    """Learning rates where plain gradient descent changes behaviour, from the Hessian.

    On a quadratic with Hessian eigenvalues λ, a step multiplies the distance along each
    eigenvector by (1 − lr·λ): at lr = 1/λmax the stiffest direction lands in one step, at
    2/λmax it flips sign forever (bounces), above it grows (diverges).
    """

    point: tuple[float, ...]  # where the Hessian was taken
    at: str  # "minimum" | "start" | "parameters"
    eigenvalues: tuple[float, ...]  # ascending (or just the largest, for a model)
    one_step: float | None  # 1/λmax; None when no eigenvalue is positive
    bounce: float | None  # 2/λmax
    exact: bool  # the Hessian is the same everywhere (a quadratic): the ticks are exact
    note: str  # a sentence for the tooltip


def hessian_at(fn: LossFn, point: Sequence[float]) -> torch.Tensor:
    """The 2×2 Hessian of L(w, b) at a point, by torch.autograd.functional.hessian."""
    x = torch.tensor(tuple(point), dtype=torch.float64)
    return torch.autograd.functional.hessian(lambda p: fn(p[0], p[1]), x)


def thresholds_from_eigenvalues(
    eigenvalues: Sequence[float], point: Sequence[float], at: str, exact: bool, where: str
) -> Thresholds:
    """1/λmax and 2/λmax with a sentence saying where they come from and how far to trust them."""
    eigs = tuple(sorted(float(v) for v in eigenvalues))
    top = eigs[-1]
    shown = ", ".join(f"{v:.4g}" for v in eigs).replace("-", "−")
    if top <= 0:
        return Thresholds(
            tuple(point),
            at,
            eigs,
            None,
            None,
            exact,
            f"Hessian {where}: eigenvalues {shown}. No direction curves upward, so no "
            "learning rate overshoots: every one moves downhill.",
        )
    note = (
        f"Hessian {where}: eigenvalues {shown}. lr = 1/λmax = {1 / top:.4g} reaches the "
        f"bottom of the steepest direction in one step; lr = 2/λmax = {2 / top:.4g} "
        "overshoots it by exactly as much as it started (bounces); above that each step "
        "overshoots further (diverges). Thresholds of plain gradient descent (SGD)."
    )
    if not exact:
        note += " The function is not quadratic: the ticks hold only near that point."
    if eigs[0] < 0:
        note += (
            f" The eigenvalue −{-eigs[0]:.4g} < 0 curves downward: along it every learning "
            "rate moves away."
        )
    return Thresholds(tuple(point), at, eigs, 1 / top, 2 / top, exact, note)


def learning_rate_thresholds(
    fn: LossFn, minimum: tuple[float, float] | None, start: tuple[float, float]
) -> Thresholds:
    """Thresholds from the Hessian at the minimum, or at the start when none is known."""
    point, at = (minimum, "minimum") if minimum is not None else (start, "start")
    hessian = hessian_at(fn, point)
    # A quadratic's Hessian is the same everywhere: compare with two other points.
    exact = all(
        torch.allclose(hessian_at(fn, other), hessian, rtol=1e-9, atol=1e-9)
        for other in (start, (point[0] + 0.37, point[1] - 0.61))
    )
    where = f"at the {at} (w={point[0]:.4g}, b={point[1]:.4g})".replace("-", "−")
    if minimum is None:
        where += ", as the function has no minimum to take it at"
    eigenvalues = torch.linalg.eigvalsh(hessian).tolist()
    return thresholds_from_eigenvalues(eigenvalues, point, at, exact, where)


def surface(
    fn: LossFn,
    extent: tuple[tuple[float, float], tuple[float, float]],
    resolution: int = 256,
    device: str | torch.device | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(w values, b values, loss grid[b, w]) over the extent, in one vectorised call."""
    (w0, w1), (b0, b1) = extent
    ws = torch.linspace(w0, w1, resolution, dtype=torch.float64, device=device)
    bs = torch.linspace(b0, b1, resolution, dtype=torch.float64, device=device)
    grid_b, grid_w = torch.meshgrid(bs, ws, indexing="ij")
    with torch.no_grad():
        values = fn(grid_w, grid_b)
    return ws.cpu(), bs.cpu(), values.cpu()


def learning_rate_grid(low: float = 1e-3, high: float = 2.0, count: int = 241) -> list[float]:
    """Log-spaced learning rates for the slider, plus the round values a lesson names
    (0.1, 0.5, 1.0, 1.01, …) so that the slider can land on them exactly."""
    step = (math.log10(high) - math.log10(low)) / (count - 1)
    spaced = [10 ** (math.log10(low) + i * step) for i in range(count)]
    named = [
        0.001,
        0.002,
        0.005,
        0.01,
        0.02,
        0.05,
        0.1,
        0.2,
        0.3,
        0.5,
        0.7,
        0.9,
        0.95,
        1.0,
        1.01,
        1.05,
        1.1,
        1.5,
        2.0,
    ]
    # Drop grid points that crowd a named value, then merge.
    kept = [
        r for r in spaced if all(abs(math.log(r / n)) > 0.5 * step * math.log(10) for n in named)
    ]
    return sorted({*kept, *(n for n in named if low <= n <= high)})


def user_function(source: str, filename: str = "<loss>") -> LossFn:
    """`def loss(w, b): ...` from user code, run for real (it must use torch operations)."""
    namespace: dict = {"__name__": "__loss__", "torch": torch}
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace.get("loss")
    if not callable(fn):
        raise ValueError(f"{filename} defines no function loss(w, b)")

    def checked(w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # The paths hold one loss per (w, b): say so in the learner's words, not torch's.
        out = fn(w, b)
        if not isinstance(out, torch.Tensor):
            raise ValueError(
                f"loss(w, b) in {filename} returned a {type(out).__name__}, not a tensor"
            )
        if out.numel() != w.numel():
            raise ValueError(
                f"loss(w, b) in {filename} returned a tensor of shape {list(out.shape)}, "
                "not one number (reduce it, e.g. with .sum())"
            )
        return out.reshape(w.shape)

    return checked


def run_descent(
    function: LossFunction | LossFn,
    start: tuple[float, float],
    learning_rate: float,
    steps: int,
    optimizer: str = "sgd",
    device: str | torch.device | None = None,
) -> dict:
    """The headless `descent` result: path, caption and steps to tolerance, as JSON data."""
    named = isinstance(function, LossFunction)
    fn = function.fn if named else function
    minimum = function.minimum if named else None
    path = descend(fn, start, learning_rate, steps, optimizer, device)
    caption = describe_path(path, learning_rate, minimum)
    return {
        "function": function.key if named else "user",
        "optimizer": optimizer,
        "lr": learning_rate,
        "steps": steps,
        "start": list(start),
        "device": str(device or "cpu"),
        "minimum": list(minimum) if minimum else None,
        "tolerance": TOLERANCE,
        "path": [{"w": w, "b": b, "loss": loss} for w, b, loss in path.tolist()],
        "caption": {"kind": caption.kind, "text": caption.text},
        "steps_to_tolerance": caption.steps,
    }
