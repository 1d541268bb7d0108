"""Labels that never collide: each node's label goes where no mark and no label placed
before it is, in its fullest form that fits (name, value and .grad; the name alone; the
name shortened), or not at all (the tooltip still has it)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QRectF

CELL_PX = 64.0  # the spatial index's cell: labels and marks are tens of pixels
GAP_PX = 2.0  # the least room between two labels


class LabelPlacer:
    """Rectangles already taken on screen, in a grid for quick look-ups."""

    def __init__(self, marks: Iterable[tuple[str, QRectF]] = ()) -> None:
        self._cells: dict[tuple[int, int], list[tuple[str, QRectF, bool]]] = {}
        for owner, rect in marks:
            self._add(owner, rect, True)

    def _keys(self, rect: QRectF) -> Iterable[tuple[int, int]]:
        for i in range(int(rect.left() // CELL_PX), int(rect.right() // CELL_PX) + 1):
            for j in range(int(rect.top() // CELL_PX), int(rect.bottom() // CELL_PX) + 1):
                yield i, j

    def _add(self, owner: str, rect: QRectF, mark: bool) -> None:
        for key in self._keys(rect):
            self._cells.setdefault(key, []).append((owner, rect, mark))

    def free(self, owner: str, rect: QRectF, marks: bool = True) -> bool:
        """Whether `rect` overlaps no label taken, nor (with `marks`) any other mark."""
        grown = rect.adjusted(-GAP_PX, -GAP_PX, GAP_PX, GAP_PX)
        for key in self._keys(grown):
            for other, taken, is_mark in self._cells.get(key, ()):
                if other != owner and (marks or not is_mark) and taken.intersects(grown):
                    return False
        return True

    def take(self, owner: str, rect: QRectF) -> None:
        """Mark `rect` as a label's, free or not (one that must be drawn anyway)."""
        self._add(owner, rect, False)

    def place(self, owner: str, variants: list[QRectF]) -> int | None:
        """Take the first of `variants` (fullest first) that is free; its index, or None.
        All but the last must clear the marks too; the last (a name alone, the least a
        node can say) need only clear the other labels."""
        for i, rect in enumerate(variants):
            if self.free(owner, rect, marks=i < len(variants) - 1):
                self._add(owner, rect, False)
                return i
        return None
