"""What the descent pane draws, prepared off the GUI thread: paths for every learning rate
and every chosen optimizer, the surface, its contour lines and its thresholds. Built here
for the built-in functions, or from the kernel's answer for the user's own code."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg

if TYPE_CHECKING:  # torch loads when the pane first computes, not when the app starts
    from autograd_viz.core.descent.paths import Caption, Thresholds

RATE_COUNT = 241  # slider positions, log-spaced from 1e-3 to 2
RESOLUTION = 256  # surface grid of the built-in functions
CONTOUR_LEVELS = 10
CHUNK = 60  # rates computed between two progress reports (each ~0.1 s on one core)


@dataclass
class Run:
    """One optimizer's paths, one row per learning rate."""

    optimizer: str
    paths: np.ndarray  # (rates, steps + 1, 3): w, b, loss (model: α, β, the real loss)
    grads: np.ndarray | None  # (rates, steps + 1, 2): ∂L/∂w, ∂L/∂b from autograd
    captions: list[Caption | None]  # None: that rate is not computed yet


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
    # Which rates have their paths yet (None: all): the first answer holds the slider's
    # rate only, the rest follow from the worker while the learner already looks.
    computed: np.ndarray | None = None

    @property
    def complete(self) -> bool:
        """Every rate's path is computed."""
        return self.computed is None or bool(self.computed.all())

    def has_rate(self, index: int) -> bool:
        """The path for slider position `index` is computed."""
        return self.computed is None or bool(self.computed[index])

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
    its contours (the last of `sweep_stages`)."""
    *_, last = sweep_stages(function, optimizers, start, steps, reuse)
    return last


def _rate_order(count: int, first: int | None) -> list[list[int]]:
    # The slider's own rate first (what the learner sees at once), then the rest in chunks.
    rest = [i for i in range(count) if i != first]
    head = [[first]] if first is not None else []
    return head + [rest[i : i + CHUNK] for i in range(0, len(rest), CHUNK)]


def sweep_stages(
    function: str,
    optimizers: list[str],
    start: tuple[float, float],
    steps: int,
    reuse: Sweep | None = None,
    first_rate: float | None = None,
) -> Iterator[Sweep]:
    """Sweeps of a built-in function, each more complete than the last: the surface, then
    the path at `first_rate`, the contours, then the other rates chunk by chunk. Runs off
    the GUI thread; reuses what `reuse` already has for the same function, start and step
    count (ticking one more optimizer computes only that one). Each yielded Sweep owns its
    arrays (the GUI thread reads one while the worker fills the next)."""
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
    if same_surface:
        ws, bs, grid, contours = reuse.ws, reuse.bs, reuse.grid, reuse.contours
    else:
        ws, bs, grid = (t.numpy() for t in surface(spec.fn, spec.extent, RESOLUTION))
        contours = []
    # The saddle's thresholds come from the start point: recompute when it moves.
    thresholds = learning_rate_thresholds(spec.fn, spec.minimum, start)
    runs: dict[str, Run] = {}
    todo = []
    for name in optimizers:
        if same_paths and name in reuse.runs and None not in reuse.runs[name].captions:
            runs[name] = reuse.runs[name]
        else:
            todo.append(name)
            empty = np.full((len(rates), steps + 1, 3), np.nan)
            runs[name] = Run(
                name, empty, np.full((len(rates), steps + 1, 2), np.nan), [None] * len(rates)
            )
    computed = np.zeros(len(rates), dtype=bool) if todo else None

    def snapshot() -> Sweep:
        copies = {
            name: Run(name, run.paths.copy(), run.grads.copy(), list(run.captions))
            if name in todo
            else run
            for name, run in runs.items()
        }
        done = None if computed is None or computed.all() else computed.copy()
        return Sweep(
            key,
            "function",
            rates,
            copies,
            ws,
            bs,
            grid,
            contours,
            spec.minimum,
            thresholds,
            computed=done,
        )

    first = None
    if todo and first_rate is not None:
        first = min(range(len(rates)), key=lambda i: abs(rates[i] - first_rate))
    if not same_surface:
        yield snapshot()  # the heatmap before any path: it takes a millisecond
    for number, chunk in enumerate(_rate_order(len(rates), first) if todo else []):
        chunk_rates = [rates[i] for i in chunk]
        for name in todo:
            run = sweep_optimizer(spec.fn, start, chunk_rates, steps, name, spec.minimum)
            runs[name].paths[chunk] = run.paths.numpy()
            runs[name].grads[chunk] = run.grads.numpy()
            for i, caption in zip(chunk, run.captions, strict=True):
                runs[name].captions[i] = caption
        computed[chunk] = True
        if number == 0 and not same_surface:
            contours = contour_lines(ws, bs, grid)  # 0.3 s: after the first path
        if not computed.all():
            yield snapshot()
    if not same_surface and not contours:
        contours = contour_lines(ws, bs, grid)
    computed = None
    yield snapshot()


def _array(values: Any) -> np.ndarray:
    # The kernel's JSON writes NaN and infinities as "nan", "inf": numpy reads those back.
    return np.asarray(values, dtype=float)


def _thresholds(data: dict | None, at: str) -> Thresholds | None:
    from autograd_viz.core.descent.sweep import thresholds_from_json

    return thresholds_from_json(data, at)


USER_FIRST_EVERY = 8  # the kernel's first answer: every 8th rate (the surface's extent)
USER_CHUNK = 24  # rates per later kernel call for a loss evaluated one point at a time


def user_rate_parts(count: int, first: int | None, pointwise: bool) -> list[list[int]]:
    """The order the user's rates are asked of the kernel after its first answer (which
    holds `user_first_rates`): the rest at once for a loss torch batches, else in parts
    small enough that the pane can say how many are in every second or so."""
    done = set(user_first_rates(count, first))
    rest = [i for i in range(count) if i not in done]
    if not pointwise:
        return [rest] if rest else []
    return [rest[i : i + USER_CHUNK] for i in range(0, len(rest), USER_CHUNK)]


def user_first_rates(count: int, first: int | None) -> list[int]:
    """The kernel's first answer: the slider's rate and a spread of the others, enough to
    frame the surface the way the whole sweep would."""
    spread = set(range(0, count, USER_FIRST_EVERY)) | {count - 1}
    if first is not None:
        spread.add(first)
    return sorted(spread)


def sweep_from_kernel(
    key: tuple,
    result: dict[str, Any],
    indices: list[int] | None = None,
    rates: list[float] | None = None,
) -> Sweep:
    """The kernel's `sweep_in_namespace` answer for the user's loss(w, b), ready to draw;
    when it holds only the rows `indices` of `rates`, the rest are marked not computed."""
    from autograd_viz.core.descent.sweep import caption_from_json

    ws, bs, grid = _array(result["ws"]), _array(result["bs"]), _array(result["grid"])
    answered = [float(r) for r in result["rates"]]
    if indices is None or rates is None:
        indices, rates = list(range(len(answered))), answered
    computed = np.zeros(len(rates), dtype=bool)
    computed[indices] = True
    runs = {}
    # In the order the learner ticked them (the kernel's JSON may sort its keys).
    order = [n for n in key[1] if n in result["runs"]] if len(key) > 1 else []
    for name in order + [n for n in result["runs"] if n not in order]:
        data = result["runs"][name]
        paths, grads = _array(data["paths"]), _array(data["grads"])
        run = Run(
            name,
            np.full((len(rates), *paths.shape[1:]), np.nan),
            np.full((len(rates), *grads.shape[1:]), np.nan),
            [None] * len(rates),
        )
        _fill(run, indices, paths, grads, data["captions"], caption_from_json)
        runs[name] = run
    return Sweep(
        key,
        "function",
        rates,
        runs,
        ws,
        bs,
        grid,
        contour_lines(ws, bs, grid),
        None,
        _thresholds(result.get("thresholds"), "start"),
        device=result.get("device", "cpu"),
        computed=None if computed.all() else computed,
        extra={"evaluation": result.get("evaluation")},
    )


def with_kernel_rates(sweep: Sweep, result: dict[str, Any], indices: list[int]) -> Sweep:
    """A copy of `sweep` with the kernel's answer for the rows `indices` filled in (the GUI
    thread may be drawing `sweep` meanwhile)."""
    from autograd_viz.core.descent.sweep import caption_from_json

    runs = {}
    for name, run in sweep.runs.items():
        data = result["runs"][name]
        copy = Run(name, run.paths.copy(), run.grads.copy(), list(run.captions))
        _fill(
            copy,
            indices,
            _array(data["paths"]),
            _array(data["grads"]),
            data["captions"],
            caption_from_json,
        )
        runs[name] = copy
    computed = sweep.computed.copy() if sweep.computed is not None else None
    if computed is not None:
        computed[indices] = True
    return replace(
        sweep, runs=runs, computed=None if computed is None or computed.all() else computed
    )


def _fill(run: Run, indices: list[int], paths, grads, captions: list, read) -> None:
    run.paths[indices] = paths
    run.grads[indices] = grads
    for i, caption in zip(indices, captions, strict=True):
        run.captions[i] = read(caption)


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


MARGIN = 0.15  # of the framed span, on each side


def view_of(sweep: Sweep, start: tuple[float, float]) -> tuple[tuple[float, float], ...]:
    """The (w range, b range) to show: a built-in function's designed extent; for the user's
    own surface the start, the lowest point found and the paths that do not run away, with a
    margin, inside the computed surface (a ±60 window made every path a dot)."""
    extent = ((float(sweep.ws[0]), float(sweep.ws[-1])), (float(sweep.bs[0]), float(sweep.bs[-1])))
    if sweep.key[0] != "user":
        return extent
    points = [np.asarray(start, dtype=float)[None]]
    if np.isfinite(sweep.grid).any():
        row, col = np.unravel_index(
            np.nanargmin(np.where(np.isfinite(sweep.grid), sweep.grid, np.nan)), sweep.grid.shape
        )
        points.append(np.array([[sweep.ws[col], sweep.bs[row]]]))
    for run in sweep.runs.values():
        for index, caption in enumerate(run.captions):
            if caption is not None and caption.kind != "diverges":
                points.append(run.paths[index, :, :2])
    kept = np.concatenate(points)
    (w0, w1), (b0, b1) = extent
    inside = np.isfinite(kept).all(axis=1)
    inside &= (kept[:, 0] >= w0) & (kept[:, 0] <= w1) & (kept[:, 1] >= b0) & (kept[:, 1] <= b1)
    kept = kept[inside]
    if kept.size == 0:
        return extent
    low, high = kept.min(axis=0), kept.max(axis=0)
    # Never narrower than a twentieth of the surface: a path that stays put is still framed.
    span = np.maximum(high - low, 0.05 * max(w1 - w0, b1 - b0)) * (1 + 2 * MARGIN)
    centre = (low + high) / 2
    return (
        (max(w0, centre[0] - span[0] / 2), min(w1, centre[0] + span[0] / 2)),
        (max(b0, centre[1] - span[1] / 2), min(b1, centre[1] + span[1] / 2)),
    )
