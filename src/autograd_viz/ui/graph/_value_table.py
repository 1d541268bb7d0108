"""The inspector's table of a tensor's numbers: 4 significant digits, the full one on hover."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from autograd_viz.core.trace.value_text import format_number

MAX_CELLS = 400  # beyond this the heatmap says more than a wall of numbers


class ValueTable(QTableWidget):
    """A vector or matrix cell by cell: rows and columns numbered from 0 as torch indexes
    them; each cell reads at 4 significant digits and its tooltip holds the full float."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("inspectorValues")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setMinimumHeight(80)

    def show_values(self, array: np.ndarray, what: str) -> bool:
        """Fill the table with `array` (1-D: one row; more: rows × the rest flattened).

        Returns False (and leaves the table empty) when there are too many cells to read.
        """
        matrix = array.reshape(1, -1) if array.ndim == 1 else array.reshape(array.shape[0], -1)
        self.clear()
        if matrix.size > MAX_CELLS:
            self.setRowCount(0)
            self.setColumnCount(0)
            return False
        rows, columns = matrix.shape
        self.setRowCount(rows)
        self.setColumnCount(columns)
        self.setHorizontalHeaderLabels([str(c) for c in range(columns)])
        self.setVerticalHeaderLabels([str(r) for r in range(rows)] if array.ndim > 1 else [""])
        for r in range(rows):
            for c in range(columns):
                number = float(matrix[r, c])
                item = QTableWidgetItem(format_number(number))
                index = f"[{c}]" if array.ndim == 1 else f"[{r}, {c}]"
                item.setToolTip(f"{what}{index} = {number!r}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(r, c, item)
        return True
