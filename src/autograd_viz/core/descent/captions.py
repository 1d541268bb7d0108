"""What a descent path did, in words: one classification for every optimizer (converges,
oscillates, bounces, too slow, diverges, wanders), read from the path itself, not from the
learning rate or the optimizer's name."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

TOLERANCE = 1e-3  # "converged": within this distance of the minimum
DIVERGED = 1e6  # past this distance from the minimum a path has diverged


@dataclass(frozen=True)
class Caption:
    """What a path does, in a class a test can check and a sentence a learner can read."""

    kind: str  # converges | oscillates | bounces | too slow | diverges | wanders
    text: str
    steps: int | None  # steps to within tolerance of the minimum, when it gets there


def _rate(learning_rate: float) -> str:
    # "0.10" as the lesson writes it, but never a rounding that hides the real value.
    if 0.01 <= learning_rate < 10 and round(learning_rate, 2) == learning_rate:
        return f"{learning_rate:.2f}"
    return f"{learning_rate:.3g}"


def _steps(count: int) -> str:
    return f"{count} step" if count == 1 else f"{count} steps"


def _where(minimum: tuple[float, float]) -> str:
    return f"(w={minimum[0]:g}, b={minimum[1]:g})".replace("-", "−")


def steps_to_minimum(
    path: torch.Tensor, minimum: tuple[float, float], tolerance: float = TOLERANCE
) -> int | None:
    """The first step whose (w, b) is within `tolerance` of the minimum, or None."""
    distance = torch.linalg.vector_norm(
        path[:, :2] - torch.tensor(minimum, dtype=path.dtype), dim=1
    )
    close = torch.nonzero(distance <= tolerance)
    return int(close[0]) if len(close) else None


def overflow_step(path: torch.Tensor) -> int | None:
    """The first step where torch's w, b or loss is no longer a finite number, or None."""
    bad = torch.nonzero(~torch.isfinite(path).all(dim=1))
    return int(bad[0]) if len(bad) else None


def _overflow_words(path: torch.Tensor, step: int) -> str:
    w, b, loss = (float(v) for v in path[step])
    values = (("loss", loss), ("w", w), ("b", b))
    named = [f"{n} = {v:g}" for n, v in values if not math.isfinite(v)]
    return f"{named[0].replace('-', '−')} at step {step}"


def turns(path: torch.Tensor, target: torch.Tensor | None = None) -> int:
    """How often the path turns back (a step against the one before it) or, with a target,
    crosses it along w or b: overshooting shows as either."""
    finite = path[torch.isfinite(path).all(dim=1), :2]
    moves = finite[1:] - finite[:-1]
    size = torch.linalg.vector_norm(moves, dim=1)
    # Steps below float64's resolution of the distance travelled are rounding, not motion.
    scale = float(size.max()) if len(size) else 0.0
    moves = moves[size > 1e-12 * max(scale, 1e-300)]
    back = int(((moves[1:] * moves[:-1]).sum(dim=1) < 0).sum()) if len(moves) > 1 else 0
    if target is None:
        return back
    offsets = finite - target
    crossed = int(((offsets[1:] * offsets[:-1]) < 0).any(dim=1).sum())
    return max(back, crossed)


def turning_angle(path: torch.Tensor) -> float:
    """How far the path's direction turns in all, in radians: a spiral around a minimum
    (momentum's overshoot) turns past a full circle without ever stepping straight back."""
    finite = path[torch.isfinite(path).all(dim=1), :2]
    moves = finite[1:] - finite[:-1]
    size = torch.linalg.vector_norm(moves, dim=1)
    moves = moves[size > 1e-12 * max(float(size.max()) if len(size) else 0.0, 1e-300)]
    if len(moves) < 2:
        return 0.0
    angles = torch.atan2(moves[:, 1], moves[:, 0])
    change = torch.remainder(angles[1:] - angles[:-1] + math.pi, 2 * math.pi) - math.pi
    return float(change.abs().sum())


def _describe_without_minimum(
    path: torch.Tensor, lr: str, steps: int, overflow: int | None, tolerance: float
) -> Caption:
    # The user's own loss: no known minimum to measure against, so the path's own loss
    # and turns say what it does, in the same words as for a built-in function.
    losses = path[:, 2]
    first = float(losses[0])
    if overflow is not None:
        before = float(losses[overflow - 1]) if overflow > 0 else first
        if float(losses[overflow]) == -math.inf or (
            not math.isnan(float(losses[overflow])) and before < first
        ):
            words = f"the loss falls without bound: {_overflow_words(path, overflow)}"
            return Caption("diverges", f"{lr} — {words}", None)
        return Caption(
            "diverges",
            f"{lr} — too large: each step overshoots further and the path diverges; "
            f"{_overflow_words(path, overflow)}",
            None,
        )
    last = float(losses[-1])
    if last < -DIVERGED:
        return Caption("diverges", f"{lr} — the loss falls without bound", None)
    if last > first + 1e-9 * max(1.0, abs(first)):
        return Caption(
            "diverges",
            f"{lr} — too large: each step overshoots further and the path diverges "
            f"(the loss grew from {first:.3g} to {last:.3g} in {_steps(steps)})",
            None,
        )
    moved = float(torch.linalg.vector_norm(path[-1, :2] - path[-2, :2]))
    turned = turns(path) > 1 or turning_angle(path) > 1.5 * math.pi
    settled = f"w={float(path[-1, 0]):.3g}, b={float(path[-1, 1]):.3g}".replace("-", "−")
    if moved <= tolerance:
        if turned:
            return Caption(
                "oscillates", f"{lr} — overshoots and oscillates, then settles at {settled}", None
            )
        return Caption("converges", f"{lr} — settles at {settled}", None)
    tail = losses[-min(len(losses), 10) :]
    if turned and float(tail.max() - tail.min()) <= 1e-9 * max(1.0, abs(float(tail.max()))):
        return Caption(
            "bounces",
            f"{lr} — bounces between the valley walls forever, the loss stuck at {last:.3g}",
            None,
        )
    if turned:
        return Caption(
            "oscillates",
            f"{lr} — overshoots and oscillates, still moving after {_steps(steps)}",
            None,
        )
    return Caption("wanders", f"{lr} — still moving after {_steps(steps)}", None)


def describe_path(
    path: torch.Tensor,
    learning_rate: float,
    minimum: tuple[float, float] | None,
    tolerance: float = TOLERANCE,
) -> Caption:
    """Classify a path from what it actually did (the same words for every optimizer)."""
    lr = f"lr = {_rate(learning_rate)}"
    steps = len(path) - 1
    overflow = overflow_step(path)
    if minimum is None:
        return _describe_without_minimum(path, lr, steps, overflow, tolerance)
    target = torch.tensor(minimum, dtype=path.dtype)
    distance = torch.linalg.vector_norm(path[:, :2] - target, dim=1)
    reached = steps_to_minimum(path, minimum, tolerance)
    where = _where(minimum)
    if reached is not None:
        if turns(path[: reached + 1], target) > 1:
            return Caption(
                "oscillates",
                f"{lr} — oscillates across the valley but converges "
                f"toward {where} in {_steps(reached)}",
                reached,
            )
        return Caption(
            "converges",
            f"{lr} — steady convergence toward {where} in {_steps(reached)}",
            reached,
        )
    if overflow is not None:
        return Caption(
            "diverges",
            f"{lr} — too large: each step overshoots further and the path diverges; "
            f"{_overflow_words(path, overflow)}",
            None,
        )
    if float(distance[-1]) > DIVERGED or float(distance[-1]) > float(distance[0]) * (1 + 1e-9):
        return Caption(
            "diverges",
            f"{lr} — too large: each step overshoots further and the path diverges "
            f"({float(distance[-1]):.3g} away after {_steps(steps)})",
            None,
        )
    tail = distance[-min(len(distance), 10) :]
    if float(tail.max() - tail.min()) <= 1e-9 * max(1.0, float(tail.max())):
        return Caption(
            "bounces",
            f"{lr} — bounces between the valley walls forever, never closer to {where}",
            None,
        )
    away = f"{float(distance[-1]):.3g} away after {_steps(steps)}"
    if turns(path, target) > 1:
        return Caption(
            "oscillates",
            f"{lr} — overshoots and oscillates around {where}, still {away}",
            None,
        )
    return Caption("too slow", f"{lr} — heading toward {where} but still {away}", None)
