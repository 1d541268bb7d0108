"""Everything a learning-rate slider needs, for several optimizers at once: the paths for
every rate, autograd's gradient at every point, the captions, the surface and its
thresholds. Runs in a worker thread of the app for the built-in functions, and in the
kernel (`sweep_in_namespace`) for a `loss(w, b)` the user wrote.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from autograd_viz.core.descent.paths import (
    OPTIMIZERS,
    Caption,
    LossFn,
    Thresholds,
    descend_many,
    describe_path,
    learning_rate_grid,
    learning_rate_thresholds,
    surface,
)

Extent = tuple[tuple[float, float], tuple[float, float]]
USER_START = (0.5, 1.0)  # the lesson's start, also for the user's own function
NO_FUNCTION = "Run your code first: no function loss(w, b) in the kernel"


@dataclass(frozen=True)
class OptimizerSweep:
    """One optimizer's paths for every learning rate."""

    optimizer: str
    paths: torch.Tensor  # (rates, steps + 1, 3): w, b, loss
    grads: torch.Tensor  # (rates, steps + 1, 2): ∂L/∂w, ∂L/∂b at every point, from autograd
    captions: list[Caption]


def gradients_along(fn: LossFn, paths: torch.Tensor) -> torch.Tensor:
    """autograd's (∂L/∂w, ∂L/∂b) at every point of every path, in one backward."""
    points = paths[..., :2].detach().clone().requires_grad_(True)
    loss = fn(points[..., 0], points[..., 1])
    # Each point seeded with 1: a point that overflowed keeps torch's own inf / nan gradient
    # (a nan_to_num here reported ∂L/∂w = 0 there) and the other points are untouched.
    loss.backward(torch.ones_like(loss))
    return points.grad


def sweep_optimizer(
    fn: LossFn,
    start: tuple[float, float],
    rates: Sequence[float],
    steps: int,
    optimizer: str,
    minimum: tuple[float, float] | None,
    device: str | torch.device | None = None,
) -> OptimizerSweep:
    """Paths, gradients and captions of one optimizer for every learning rate."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}: use one of {', '.join(OPTIMIZERS)}")
    paths = descend_many(fn, start, rates, steps, optimizer, device)
    grads = gradients_along(fn, paths.to(device)).cpu()
    captions = [describe_path(path, lr, minimum) for path, lr in zip(paths, rates, strict=True)]
    return OptimizerSweep(optimizer, paths, grads, captions)


POINTWISE = "point by point"  # a loss torch cannot batch: one Python call per point
VMAP_CHUNK = 4096  # points per vmapped call: a loss over a big dataset stays in memory


def as_batched(fn: LossFn) -> LossFn:
    """`fn` for tensors of many (w, b) at once (see `batched_loss`)."""
    return batched_loss(fn)[0]


def batched_loss(fn: LossFn) -> tuple[LossFn, str]:
    """`fn` for tensors of many (w, b) at once, checked against one call per point, and how
    it is evaluated: itself when it already works element-wise ("element-wise"); else
    torch.func.vmap of it ("vmap": a loss over a dataset, `((w * x + b - y) ** 2).mean()`,
    reduces to one number a point); else one call per point ("point by point": user code
    may use `.item()`, `math` or a Python `if`, which vmap refuses)."""
    probe_w = torch.tensor([0.5, 1.5, -0.25], dtype=torch.float64)
    probe_b = torch.tensor([1.5, -0.5, 0.75], dtype=torch.float64)

    def pointwise(w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        values = [
            torch.as_tensor(fn(wi, bi), dtype=w.dtype, device=w.device)
            for wi, bi in zip(w.reshape(-1), b.reshape(-1), strict=True)
        ]
        return torch.stack(values).reshape(w.shape)

    def vmapped(w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        shape = torch.broadcast_shapes(w.shape, b.shape)
        flat_w, flat_b = w.expand(shape).reshape(-1), b.expand(shape).reshape(-1)
        out = torch.func.vmap(fn, chunk_size=VMAP_CHUNK)(flat_w, flat_b)
        return out.to(w.dtype).reshape(shape)

    try:
        with torch.no_grad():
            expected = pointwise(probe_w, probe_b)
    except Exception:
        return pointwise, POINTWISE  # it fails point by point too: the sweep says how
    for candidate, how in ((fn, "element-wise"), (vmapped, "vmap")):
        try:
            with torch.no_grad():
                out = candidate(probe_w, probe_b)
            if (
                isinstance(out, torch.Tensor)
                and out.shape == probe_w.shape
                and torch.allclose(out.double(), expected, rtol=1e-6, atol=1e-9, equal_nan=True)
            ):
                return candidate, how
        except Exception:
            pass
    return pointwise, POINTWISE


def auto_extent(paths: torch.Tensor, start: tuple[float, float]) -> Extent:
    """A square-ish window around the start and where the paths go, ignoring blow-ups."""
    points = paths[..., :2].reshape(-1, 2)
    kept = points[torch.isfinite(points).all(dim=1)]
    kept = kept[(kept - torch.tensor(start, dtype=kept.dtype)).abs().max(dim=1).values < 50]
    low = torch.minimum(kept.min(dim=0).values, torch.tensor(start, dtype=kept.dtype))
    high = torch.maximum(kept.max(dim=0).values, torch.tensor(start, dtype=kept.dtype))
    centre = (low + high) / 2
    half = max(1.0, float((high - low).max()) * 0.65)
    return (
        (float(centre[0]) - half, float(centre[0]) + half),
        (float(centre[1]) - half, float(centre[1]) + half),
    )


FRAME_REACH = 1.5  # the window reaches this many start-to-minimum distances from their middle
FRAME_MARGIN = 0.15  # of the framed span, on each side


def framed_extent(
    fn: LossFn,
    paths: torch.Tensor,
    start: tuple[float, float],
    device: str | torch.device | None = None,
) -> Extent:
    """The window a user's surface is computed and shown on: the start, the lowest point of
    a coarse look over where the paths go, and the paths' points near those two, with a
    margin. A window around everything the paths reach made them a dot (±60 for a line
    fit); paths that run further are cut at its border with a marker."""
    wide = auto_extent(paths, start)
    ws, bs, grid = surface(fn, wide, 48, device)
    finite = torch.isfinite(grid)
    anchor = torch.tensor(start, dtype=torch.float64)
    if finite.any():
        lowest = torch.where(finite, grid, torch.inf).argmin()
        row, col = divmod(int(lowest), grid.shape[1])
        minimum = torch.tensor([float(ws[col]), float(bs[row])], dtype=torch.float64)
    else:
        minimum = anchor
    centre = (anchor + minimum) / 2
    reach = FRAME_REACH * max(
        float((anchor - minimum).norm()), 0.01 * float(wide[0][1] - wide[0][0])
    )
    points = paths[..., :2].reshape(-1, 2).to(torch.float64)
    points = points[torch.isfinite(points).all(dim=1)]
    points = points[(points - centre).norm(dim=1) <= reach]
    points = torch.cat([points, anchor[None], minimum[None]])
    low, high = points.min(dim=0).values, points.max(dim=0).values
    middle = (low + high) / 2
    half = float((high - low).max()) / 2 * (1 + 2 * FRAME_MARGIN)
    half = max(half, 1e-3 * max(1.0, float(middle.abs().max())))
    return (
        (float(middle[0]) - half, float(middle[0]) + half),
        (float(middle[1]) - half, float(middle[1]) + half),
    )


def _find_loss(namespace: dict[str, Any], name: str) -> LossFn:
    fn = namespace.get(name)
    if fn is None:
        raise LookupError(NO_FUNCTION.replace("loss", name, 1))
    if isinstance(fn, torch.Tensor):
        raise LookupError(
            f"Run your code first: {name} in the kernel is a tensor, not a function "
            f"{name}(w, b). Define def {name}(w, b): return … to see its surface."
        )
    if not callable(fn):
        raise LookupError(f"{name} in the kernel is a {type(fn).__name__}, not a function")
    return fn


def _on_devices(work, device: str):
    """Run `work(device)`; user code that built cpu tensors of its own gets the cpu."""
    try:
        return work(device), device
    except RuntimeError as exc:
        if device == "cpu" or "same device" not in str(exc):
            raise
        return work("cpu"), "cpu"


def thresholds_json(t: Thresholds) -> dict[str, Any]:
    """A Thresholds as JSON data."""
    return {
        "point": list(t.point),
        "at": t.at,
        "eigenvalues": list(t.eigenvalues),
        "one_step": t.one_step,
        "bounce": t.bounce,
        "exact": t.exact,
        "note": t.note,
    }


def sweep_json(run: OptimizerSweep) -> dict[str, Any]:
    """One optimizer's sweep as JSON data (lists of numbers, captions as dicts)."""
    return {
        "paths": run.paths.tolist(),
        "grads": run.grads.tolist(),
        "captions": [{"kind": c.kind, "text": c.text, "steps": c.steps} for c in run.captions],
    }


def thresholds_from_json(data: dict[str, Any] | None, at: str) -> Thresholds | None:
    """The Thresholds that `thresholds_json` wrote (None for none); `at` where it is unsaid."""
    if not data:
        return None
    return Thresholds(
        tuple(data.get("point", ())),
        data.get("at", at),
        tuple(data["eigenvalues"]),
        data.get("one_step"),
        data.get("bounce"),
        bool(data.get("exact", False)),
        data["note"],
    )


def caption_from_json(data: dict[str, Any]) -> Caption:
    """A Caption as `sweep_json` wrote it (`steps` may be absent)."""
    return Caption(data["kind"], data["text"], data.get("steps"))


def sweep_in_namespace(
    namespace: dict[str, Any],
    function: str = "loss",
    optimizers: Sequence[str] = ("sgd",),
    learning_rates: Sequence[float] | None = None,
    steps: int = 50,
    start: Sequence[float] | None = None,
    bounds: Sequence[Sequence[float]] | None = None,
    resolution: int = 128,
    device: str | None = None,
) -> dict[str, Any]:
    """Runs in the kernel: the user's `loss(w, b)` swept over learning rates and optimizers,
    with its surface and thresholds, as JSON data for the descent pane. `resolution` 0: no
    surface (the pane asks for the rest of the rates in parts, over the surface it has);
    `evaluation` says how the function takes a batch (`batched_loss`)."""
    from autograd_viz.core.kernel.runner import preferred_device

    if not optimizers:
        raise ValueError("choose at least one optimizer")
    fn, evaluation = batched_loss(_find_loss(namespace, function))
    start_point = (float(start[0]), float(start[1])) if start else USER_START
    rates = [float(r) for r in learning_rates] if learning_rates else learning_rate_grid()
    if not math.isfinite(float(fn(*(torch.tensor(v) for v in start_point)))):
        raise ValueError(f"{function}{start_point} is not a finite number")

    def work(on: str) -> tuple[dict[str, OptimizerSweep], Extent, tuple]:
        runs = {
            name: sweep_optimizer(fn, start_point, rates, steps, name, None, on)
            for name in optimizers
        }
        extent = (
            ((float(bounds[0][0]), float(bounds[0][1])), (float(bounds[1][0]), float(bounds[1][1])))
            if bounds
            else framed_extent(fn, torch.cat([run.paths for run in runs.values()]), start_point, on)
        )
        if resolution <= 0:
            none = torch.empty(0, dtype=torch.float64)
            return runs, extent, (none, none, none)
        return runs, extent, surface(fn, extent, resolution, on)

    (runs, extent, (ws, bs, grid)), used = _on_devices(work, device or preferred_device())
    return {
        "function": function,
        "device": used,
        "evaluation": evaluation,
        "start": list(start_point),
        "extent": [list(extent[0]), list(extent[1])],
        "minimum": None,
        "rates": rates,
        "ws": ws.tolist(),
        "bs": bs.tolist(),
        "grid": grid.tolist(),
        "runs": {name: sweep_json(run) for name, run in runs.items()},
        "thresholds": thresholds_json(learning_rate_thresholds(fn, None, start_point)),
    }
