"""The lab's grad table: each tensor as torch reported it, and what the next backward adds.

"+ next backward" is measured, not derived: torch ran `loss.backward()` on a copy of the lab
(its log replayed) and the column shows the difference of each leaf's .grad, or the error
that backward raises, or nothing when there is no loss yet.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from autograd_viz.core.learning.lab import LEAVES, TENSOR_NAMES, format_number

NEXT = "+ next backward"
# What the tasks ask about first, so a narrow lab column shows it without scrolling.
COLUMNS = ("tensor", "value", ".grad now", NEXT, "grad_fn", "requires_grad", "is_leaf")
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
        # Rows a line of text tall, and room for all of them (`_fit_rows`): at the default
        # 30 px the lab's column showed w, x and b, and z and loss were below a scroll.
        rows = self.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().height() + 6)
        # "monospace" by name resolved to a proportional face on a machine with more fonts.
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.rows: dict[str, dict[str, str]] = {}  # name → column → text shown (for tests)
        self.why: dict[str, str] = {}  # leaf → the chain rule with torch's numbers
        self.hidden: tuple[str, ...] = ()  # columns kept hidden while a prediction is open

    def hide_columns(self, names: tuple[str, ...]) -> None:
        """Hide the named columns (those that would answer an open question); () shows all."""
        self.hidden = tuple(names)
        for column, key in enumerate(COLUMNS):
            self.setColumnHidden(column, key in self.hidden)

    def show_state(self, state: dict[str, Any]) -> None:
        """Fill the table from a `lab_state` reading."""
        tensors = state.get("tensors", {})
        adds = state.get("adds", {})
        measured = state.get("next_backward") or {}
        names = [n for n in TENSOR_NAMES if n in tensors]
        extra = 1 if state.get("z_item") is not None else 0
        self.setRowCount(len(names) + extra)
        self.rows, self.why = {}, {}
        for row, name in enumerate(names):
            t = tensors[name]
            tip = ""
            if name in LEAVES:
                per_backward, said = _next_backward(measured, name)
                self.why[name] = adds.get(name, {}).get("why", "")
                tip = "\n".join(p for p in (said, self.why[name]) if p)
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
                NEXT: per_backward,
            }
            self._fill(row, cells, tip=tip)
            self.rows[name] = cells
        if extra:
            cells = dict.fromkeys(COLUMNS, "—")
            cells.update(tensor="z_item", value=_text(state["z_item"]), requires_grad="float")
            self._fill(len(names), cells, tip="a plain Python float: no requires_grad, no graph")
            self.rows["z_item"] = cells
        self._fit_rows()

    def _fit_rows(self) -> None:
        """Take the height that shows every row, no more (the chain rule below gets the
        rest of the column)."""
        scroll = self.horizontalScrollBar().sizeHint().height()
        self.setFixedHeight(
            self.horizontalHeader().height()
            + self.verticalHeader().length()
            + 2 * self.frameWidth()
            + scroll
        )

    def _fill(self, row: int, cells: dict[str, str], tip: str) -> None:
        for column, key in enumerate(COLUMNS):
            text = cells[key]
            item = QTableWidgetItem(text)
            item.setFont(self._mono)
            if text.startswith("None"):
                item.setForeground(_NONE)
            elif text in ("—", "float", "nothing"):
                item.setForeground(_MUTED)
            if tip:
                item.setToolTip(tip)
            self.setItem(row, column, item)


def _next_backward(measured: dict[str, Any], name: str) -> tuple[str, str]:
    """The "+ next backward" cell of a leaf and its tooltip, from torch's measurement."""
    if not measured:
        return "—", ""
    if measured.get("missing"):
        return "—", "There is no loss yet: forward builds one."
    error = measured.get("error")
    if error is not None:
        first = error["message"].split(". ")[0].split(" (")[0]
        return error["type"], f"loss.backward() now raises {error['type']}: {first}."
    leaf = measured.get("leaves", {}).get(name, {})
    if leaf.get("added") is None:
        return "nothing", f"loss.backward() now leaves {name}.grad None."
    added = _text(leaf["added"])
    return added, f"loss.backward() now adds {added} to {name}.grad (torch, on a copy of the lab)."
