"""The fold bar over the graph: where the selection sits (a breadcrumb of its groups, each
a button that folds back to it), Fold all, Open all and a depth control. Shown only for
a picture that has groups (modules, repeats, loops)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QToolButton, QWidget

from autograd_viz.core.playback.run_view import RunView

MAX_CRUMBS = 5  # deeper breadcrumbs keep their last ones, the rest shown as …


class FoldBar(QWidget):
    """Follows a RunView: its buttons call the view's fold methods, nothing else."""

    def __init__(self, view: RunView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("foldBar")
        self.view = view
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        row.setSpacing(4)
        self.crumbs = QHBoxLayout()
        self.crumbs.setSpacing(2)
        self.where = QLabel("")
        self.where.setObjectName("foldWhere")
        row.addLayout(self.crumbs)
        row.addWidget(self.where, 1)
        self.fold_all = self._button("Fold all", "Fold every module, repeat and loop to a box")
        self.fold_all.clicked.connect(view.fold_all)
        self.open_all = self._button("Open all", "Open every box: every node, in its frames")
        self.open_all.clicked.connect(view.open_all)
        row.addWidget(self.fold_all)
        row.addWidget(self.open_all)
        row.addWidget(QLabel("Depth"))
        self.depth = QSpinBox()
        self.depth.setRange(0, 0)
        self.depth.setToolTip("Open groups this many levels deep; deeper ones fold to boxes")
        self.depth.setKeyboardTracking(False)
        self.depth.valueChanged.connect(self._depth_chosen)
        row.addWidget(self.depth)
        self._setting = False
        view.run_changed.connect(lambda *_: self._refresh())
        view.graph_changed.connect(self._refresh)
        view.selection_changed.connect(lambda *_: self._refresh_crumbs())
        self._refresh()

    def install_shortcuts(self, area: QWidget) -> None:
        """Enter (or Return) opens the selected box while focus is inside `area`."""
        for key in ("Return", "Enter"):
            shortcut = QShortcut(QKeySequence(key), area)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(self.open_selected)

    def open_selected(self) -> None:
        """Open the selected folded box one level (its parts stay boxes)."""
        selection = self.view.selection
        if len(selection) == 1 and selection[0].startswith("m:"):
            self.view.toggle_module(selection[0][2:])

    def _button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        return button

    def _depth_chosen(self, depth: int) -> None:
        if not self._setting:
            self.view.open_to_depth(depth)

    def _refresh(self) -> None:
        folds = self.view.folds()
        self.setVisible(bool(folds))
        deepest = max((f.depth for f in folds.values()), default=0)
        self._setting = True
        self.depth.setRange(0, deepest)
        # The depth shown: how deep the picture is open now (every group above it open).
        collapsed = self.view.collapsed
        shallowest = min((folds[k].depth for k in collapsed if k in folds), default=deepest)
        self.depth.setValue(shallowest - 1 if collapsed else deepest)
        self._setting = False
        self._refresh_crumbs()

    def _refresh_crumbs(self) -> None:
        while self.crumbs.count():
            widget = self.crumbs.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        folds = self.view.folds()
        selected = self.view.selection[0] if self.view.selection else ""
        chain = self.view.breadcrumb(selected) if selected else []
        if not folds:
            self.where.setText("")
            return
        if not chain:
            boxes = sum(1 for k in self.view.graph.nodes if k.startswith("m:"))
            self.where.setText(
                f"{boxes} folded box{'es' if boxes != 1 else ''} · double-click a box or "
                "select it and press Enter to open it"
                if boxes
                else "Double-click a node to fold the group it is in"
            )
            return
        self.where.setText("")
        shown = chain[-MAX_CRUMBS:]
        if len(chain) > len(shown):
            self.crumbs.addWidget(QLabel("…"))
        for i, key in enumerate(shown):
            if i or len(chain) > len(shown):
                self.crumbs.addWidget(QLabel("›"))
            info = folds.get(key)
            crumb = self._button(info.title if info else key, "")
            crumb.setObjectName("foldCrumb")
            folded = key in self.view.collapsed
            crumb.setToolTip(f"{'Open' if folded else 'Fold'} {info.title if info else key}")
            crumb.clicked.connect(lambda _=False, k=key: self.view.toggle_module(k))
            crumb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            self.crumbs.addWidget(crumb)
