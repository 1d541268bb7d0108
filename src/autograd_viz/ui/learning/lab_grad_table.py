"""The lab's grad table: each tensor as torch reported it, and what one backward adds."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from autograd_viz.core.learning.lab import LEAVES, TENSOR_NAMES, format_number

COLUMNS = ("tensor", "value", "requires_grad", "is_leaf", "grad_fn", ".grad now", "+ per backward")
_MUTED = QColor("#64748b")
_NONE = QColor("#94a3b8")


def _text(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return format_number(value)
    return str(value)


class GradTable(QTableWidget):
    """One row per lab tensor; the last column's tooltip and the footer say why."""

    def __init__(self, parent=None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("labGradTable")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setAlternatingRowColors(True)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        # "monospace" by name resolved to a proportional face on a machine with more fonts.
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.rows: dict[str, dict[str, str]] = {}  # name → column → text shown (for tests)
        self.why: dict[str, str] = {}  # leaf → the chain rule with torch's numbers

    def show_state(self, state: dict[str, Any]) -> None:
        """Fill the table from a `lab_state` reading."""
        tensors = state.get("tensors", {})
        adds = state.get("adds", {})
        names = [n for n in TENSOR_NAMES if n in tensors]
        extra = 1 if state.get("z_item") is not None else 0
        self.setRowCount(len(names) + extra)
        self.rows, self.why = {}, {}
        for row, name in enumerate(names):
            t = tensors[name]
            if name in LEAVES:
                add = adds.get(name, {})
                per_backward = _text(add.get("grad")) if add else "—"
                self.why[name] = add.get("why", "")
            else:
                per_backward = "—"  # not a leaf: backward stores nothing in it by default
            if not t["is_leaf"] and t["grad"] is None:
                grad = "None (retains)" if t["retains_grad"] else "None (non-leaf)"
            else:
                grad = _text(t["grad"])
            cells = {
                "tensor": name,
                "value": _text(t["value"]),
                "requires_grad": _text(t["requires_grad"]),
                "is_leaf": _text(t["is_leaf"]),
                "grad_fn": t["grad_fn"] or "—",
                ".grad now": grad,
                "+ per backward": per_backward,
            }
            self._fill(row, cells, tip=self.why.get(name, ""))
            self.rows[name] = cells
        if extra:
            cells = dict.fromkeys(COLUMNS, "—")
            cells.update(tensor="z_item", value=_text(state["z_item"]), requires_grad="float")
            self._fill(len(names), cells, tip="a plain Python float: no requires_grad, no graph")
            self.rows["z_item"] = cells

    def _fill(self, row: int, cells: dict[str, str], tip: str) -> None:
        for column, key in enumerate(COLUMNS):
            text = cells[key]
            item = QTableWidgetItem(text)
            item.setFont(self._mono)
            if text.startswith("None"):
                item.setForeground(_NONE)
            elif text in ("—", "float"):
                item.setForeground(_MUTED)
            if tip:
                item.setToolTip(tip)
            self.setItem(row, column, item)
