"""A path cut to the rectangle it is drawn in: a diverging step ends at the border (where a
marker says where it went) instead of drawing a line to 1e155 across the surface."""

from __future__ import annotations

import numpy as np

Box = tuple[float, float, float, float]  # w0, w1, b0, b1


def _border(inside: np.ndarray, outside: np.ndarray, box: Box) -> np.ndarray | None:
    # Where the segment from a point in the box to one outside it crosses the border.
    move = outside - inside
    fractions = [1.0]
    for axis, (low, high) in enumerate(((box[0], box[1]), (box[2], box[3]))):
        if outside[axis] > high:
            fractions.append((high - inside[axis]) / move[axis])
        elif outside[axis] < low:
            fractions.append((low - inside[axis]) / move[axis])
    point = inside + min(fractions) * move
    return point if np.isfinite(point).all() else None


def clip_path(points: np.ndarray, box: Box) -> tuple[np.ndarray, int | None, np.ndarray | None]:
    """(drawn (w, b) points with NaN rows between pieces, the step the path last left the
    box at when it ends outside it, the border point it left through)."""
    finite = np.isfinite(points).all(axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        inside = (
            finite
            & (points[:, 0] >= box[0])
            & (points[:, 0] <= box[1])
            & (points[:, 1] >= box[2])
            & (points[:, 1] <= box[3])
        )
    if inside.all():
        return points[:, :2], None, None
    drawn: list[np.ndarray] = []
    left_at, exit_point = None, None
    for i in range(len(points)):
        before = i > 0 and inside[i - 1]
        if inside[i]:
            if i > 0 and not before and finite[i - 1]:
                entry = _border(points[i, :2], points[i - 1, :2], box)
                if entry is not None:
                    drawn.append(entry)
            drawn.append(points[i, :2])
            left_at, exit_point = None, None
        elif before:
            left_at = i
            exit_point = _border(points[i - 1, :2], points[i, :2], box) if finite[i] else None
            if exit_point is not None:
                drawn.append(exit_point)
            else:
                exit_point = points[i - 1, :2]
            drawn.append(np.array([np.nan, np.nan]))
    out = np.vstack(drawn) if drawn else np.empty((0, 2))
    return out, left_at, exit_point
