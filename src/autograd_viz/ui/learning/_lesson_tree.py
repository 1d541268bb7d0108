"""The lessons' tree: every title whole, wrapped onto more lines where the tree is narrow."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QWidget,
)

TEXT_MARGIN_PX = 10  # the style's padding around an item's text, with a little to spare


class _WrappingDelegate(QStyledItemDelegate):
    """Gives each row the height its title needs at the tree's width (Qt's own size hint
    assumes one line, so a wrapped title would be cut at its first line)."""

    def __init__(self, tree: QTreeWidget) -> None:
        super().__init__(tree)
        self.tree = tree

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """One line's hint, made as tall as the title wrapped at the width it gets."""
        hint = super().sizeHint(option, index)
        depth = 0
        parent = index.parent()
        while parent.isValid():
            depth, parent = depth + 1, parent.parent()
        indent = self.tree.indentation() * (depth + int(self.tree.rootIsDecorated()))
        width = max(40, self.tree.viewport().width() - indent - TEXT_MARGIN_PX)
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        flags = Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft
        needed = option.fontMetrics.boundingRect(QRect(0, 0, width, 100_000), flags, text)
        margin = self.tree.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameVMargin) * 2
        return QSize(min(hint.width(), width), max(hint.height(), needed.height() + margin))


class LessonTree(QTreeWidget):
    """A headerless tree whose items' titles wrap instead of being cut or scrolled away."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setItemDelegate(_WrappingDelegate(self))

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A new width wraps titles differently: lay the rows out again."""
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.scheduleDelayedItemsLayout()
