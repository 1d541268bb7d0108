"""What the descent pane draws, prepared off the GUI thread: paths for every learning rate
and every chosen optimizer, the surface, its contour lines and its thresholds. Built here
for the built-in functions, or from the kernel's answer for the user's own code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg

if TYPE_CHECKING:  # torch loads when the pane first computes, not when the app starts
    from autograd_viz.core.descent.paths import Caption, Thresholds

RATE_COUNT = 241  # slider positions, log-spaced from 1e-3 to 2
RESOLUTION = 256  # surface grid of the built-in functions
CONTOUR_LEVELS = 10


@dataclass
class Run:
    """One optimizer's paths, one row per learning rate."""

    optimizer: str
    paths: np.ndarray  # (rates, steps + 1, 3): w, b, loss (model: α, β, the real loss)
    grads: np.ndarray | None  # (rates, steps + 1, 2): ∂L/∂w, ∂L/∂b from autograd
    captions: list[Caption]


@dataclass
class Sweep:
    """Everything the pane draws for one source / start / step count."""

    key: tuple
    kind: str  # "function" (a loss L(w, b)) | "model" (a model's landscape)
    rates: list[float]
    runs: dict[str, Run]
    ws: np.ndarray
    bs: np.ndarray
    grid: np.ndarray  # loss[b, w]
    contours: list[np.ndarray]  # each (n, 2) with NaN breaks
    minimum: tuple[float, float] | None
    thresholds: Thresholds | None
    device: str = "cpu"
    axes: tuple[str, str] = ("w", "b")
    extra: dict[str, Any] = field(default_factory=dict)  # model: in_plane, grad_norms, …

    @property
    def captions(self) -> list[Caption]:
        """The first optimizer's caption for each slider position (the lab reads these)."""
        return next(iter(self.runs.values())).captions


def shown_surface(grid: np.ndarray) -> np.ndarray:
    """The heatmap's values: log₁₀ of the loss above its lowest point (contours read better)."""
    finite = np.isfinite(grid)
    low = grid[finite].min() if finite.any() else 0.0
    return np.log10(np.where(finite, grid - low, np.nan) + 1e-3)


def contour_lines(ws: np.ndarray, bs: np.ndarray, grid: np.ndarray) -> list[np.ndarray]:
    """Contour lines of the log surface, in (w, b) coordinates, NaN between pieces."""
    shown = shown_surface(grid)
    finite = shown[np.isfinite(shown)]
    if finite.size == 0:
        return []
    shown = np.where(np.isfinite(shown), shown, finite.max())
    contours = []
    for level in np.linspace(finite.min(), finite.max(), CONTOUR_LEVELS + 2)[1:-1]:
        lines = pg.functions.isocurve(shown, level, connected=True, extendToEdge=True)
        pieces = []
        for line in lines:
            points = np.asarray(line, dtype=float)  # (row, col) = (b index, w index)
            w = np.interp(points[:, 1], np.arange(len(ws)), ws)
            b = np.interp(points[:, 0], np.arange(len(bs)), bs)
            pieces.append(np.column_stack([w, b]))
            pieces.append(np.array([[np.nan, np.nan]]))
        if pieces:
            contours.append(np.vstack(pieces))
    return contours


def compute_sweep(
    function: str,
    optimizers: list[str],
    start: tuple[float, float],
    steps: int,
    reuse: Sweep | None = None,
) -> Sweep:
    """Paths of a built-in function for every slider position and optimizer, the surface and
    its contours. Runs off the GUI thread; reuses what `reuse` already has for the same
    function, start and step count (ticking one more optimizer computes only that one)."""
    from autograd_viz.core.descent.paths import (
        FUNCTIONS,
        learning_rate_grid,
        learning_rate_thresholds,
        surface,
    )
    from autograd_viz.core.descent.sweep import sweep_optimizer

    spec = FUNCTIONS[function]
    key = ("function", function, tuple(optimizers), start, steps)
    same_surface = reuse is not None and reuse.key[:2] == key[:2]
    same_paths = same_surface and reuse.key[3:] == key[3:]
    rates = reuse.rates if same_paths else learning_rate_grid(count=RATE_COUNT)
    runs = {}
    for name in optimizers:
        if same_paths and name in reuse.runs:
            runs[name] = reuse.runs[name]
            continue
        run = sweep_optimizer(spec.fn, start, rates, steps, name, spec.minimum)
        runs[name] = Run(name, run.paths.numpy(), run.grads.numpy(), run.captions)
    if same_surface:
        ws, bs, grid, contours = reuse.ws, reuse.bs, reuse.grid, reuse.contours
    else:
        ws, bs, grid = (t.numpy() for t in surface(spec.fn, spec.extent, RESOLUTION))
        contours = contour_lines(ws, bs, grid)
    # The saddle's thresholds come from the start point: recompute when it moves.
    thresholds = learning_rate_thresholds(spec.fn, spec.minimum, start)
    return Sweep(key, "function", rates, runs, ws, bs, grid, contours, spec.minimum, thresholds)


def _array(values: Any) -> np.ndarray:
    # The kernel's JSON writes NaN and infinities as "nan", "inf": numpy reads those back.
    return np.asarray(values, dtype=float)


def _thresholds(data: dict | None, at: str) -> Thresholds | None:
    from autograd_viz.core.descent.sweep import thresholds_from_json

    return thresholds_from_json(data, at)


def sweep_from_kernel(key: tuple, result: dict[str, Any]) -> Sweep:
    """The kernel's `sweep_in_namespace` answer for the user's loss(w, b), ready to draw."""
    from autograd_viz.core.descent.sweep import caption_from_json

    runs = {
        name: Run(
            name,
            _array(data["paths"]),
            _array(data["grads"]),
            [caption_from_json(c) for c in data["captions"]],
        )
        for name, data in result["runs"].items()
    }
    ws, bs, grid = _array(result["ws"]), _array(result["bs"]), _array(result["grid"])
    return Sweep(
        key,
        "function",
        [float(r) for r in result["rates"]],
        runs,
        ws,
        bs,
        grid,
        contour_lines(ws, bs, grid),
        None,
        _thresholds(result.get("thresholds"), "start"),
        device=result.get("device", "cpu"),
    )


def landscape_from_kernel(key: tuple, result: dict[str, Any]) -> Sweep:
    """The kernel's `landscape_in_namespace` answer: one SGD run at one rate, on the plane."""
    from autograd_viz.core.descent.paths import learning_rate_grid
    from autograd_viz.core.descent.sweep import caption_from_json

    caption = caption_from_json({**result["caption"], "steps": None})
    # One path, at the slider's rate: its caption stands for every slider position.
    run = Run("sgd", _array(result["path"])[None], None, [caption] * len(learning_rate_grid()))
    alphas, betas, grid = _array(result["alphas"]), _array(result["betas"]), _array(result["grid"])
    return Sweep(
        key,
        "model",
        [float(result["learning_rate"])],
        {"sgd": run},
        alphas,
        betas,
        grid,
        contour_lines(alphas, betas, grid),
        None,
        _thresholds(result.get("thresholds"), "parameters"),
        device=result.get("device", "cpu"),
        axes=("α (direction 1)", "β (direction 2)"),
        extra={
            "in_plane": _array(result["in_plane"]),
            "grad_norms": _array(result["grad_norms"]),
            "parameters": result["parameters"],
            "zeroed": result["directions"]["zeroed"],
        },
    )
