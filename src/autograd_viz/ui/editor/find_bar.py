"""The find/replace bar under the editor: Ctrl+F finds, Ctrl+H replaces, Esc closes."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QWidget,
)

MAX_COUNTED = 10_000  # past this many matches the count says "10000+"


class FindBar(QFrame):
    """Finds text in an editor (next, previous, match case) and replaces one or all."""

    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.editor = editor
        self.find_field = QLineEdit()
        self.find_field.setObjectName("findField")
        self.find_field.setPlaceholderText("Find")
        self.find_field.setClearButtonEnabled(True)
        self.replace_field = QLineEdit()
        self.replace_field.setObjectName("replaceField")
        self.replace_field.setPlaceholderText("Replace with")
        self.match_case = QCheckBox("Match case")
        self.previous_button = self._tool_button("↑", "Previous match (Shift+Enter, Shift+F3)")
        self.next_button = self._tool_button("↓", "Next match (Enter, F3)")
        self.close_button = self._tool_button("✕", "Close (Esc)")
        self.count_label = QLabel()
        self.count_label.setMinimumWidth(90)
        self.replace_button = QPushButton("Replace")
        self.replace_button.setToolTip("Replace this match and find the next (Enter)")
        self.replace_all_button = QPushButton("Replace all")

        grid = QGridLayout(self)
        grid.setContentsMargins(6, 3, 6, 3)
        grid.setHorizontalSpacing(4)
        grid.setVerticalSpacing(3)
        grid.addWidget(self.find_field, 0, 0)
        grid.addWidget(self.previous_button, 0, 1)
        grid.addWidget(self.next_button, 0, 2)
        grid.addWidget(self.match_case, 0, 3)
        grid.addWidget(self.count_label, 0, 4)
        grid.addWidget(self.close_button, 0, 5)
        grid.addWidget(self.replace_field, 1, 0)
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        buttons.addWidget(self.replace_button)
        buttons.addWidget(self.replace_all_button)
        buttons.addStretch(1)
        grid.addLayout(buttons, 1, 1, 1, 5)
        grid.setColumnStretch(0, 1)

        self.find_field.textChanged.connect(self._search_as_you_type)
        self.find_field.returnPressed.connect(self.find_next)
        self.find_field.installEventFilter(self)
        self.replace_field.returnPressed.connect(self.replace)
        self.replace_field.installEventFilter(self)
        self.match_case.toggled.connect(self._search_as_you_type)
        self.previous_button.clicked.connect(self.find_previous)
        self.next_button.clicked.connect(self.find_next)
        self.replace_button.clicked.connect(self.replace)
        self.replace_all_button.clicked.connect(self.replace_all)
        self.close_button.clicked.connect(self.close_bar)
        self.hide()

    def _tool_button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        return button

    # ---- opening and closing ---------------------------------------------------
    @property
    def replacing(self) -> bool:
        """Whether the replace row is shown."""
        return not self.replace_field.isHidden()

    def open_find(self) -> None:
        """Show the bar for finding; the editor's selection (one line) becomes the needle."""
        self._open(replacing=False)

    def open_replace(self) -> None:
        """Show the bar with its replace row."""
        self._open(replacing=True)

    def _open(self, replacing: bool) -> None:
        for widget in (self.replace_field, self.replace_button, self.replace_all_button):
            widget.setVisible(replacing)
        selected = self.editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:  # Qt's paragraph separator: several lines
            self.find_field.blockSignals(True)
            self.find_field.setText(selected)
            self.find_field.blockSignals(False)
        self.show()
        self.find_field.setFocus()
        self.find_field.selectAll()
        self._update_count()

    def close_bar(self) -> None:
        """Hide the bar and give the keyboard back to the editor."""
        self.hide()
        self.editor.setFocus()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc closes; Shift+Enter in the find field goes to the previous match."""
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            shifted = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            is_return = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            if watched is self.find_field and is_return and shifted:
                self.find_previous()
                return True
        return super().eventFilter(watched, event)

    # ---- finding ---------------------------------------------------------------
    def _flags(self, backward: bool = False) -> QTextDocument.FindFlag:
        flags = QTextDocument.FindFlag(0)
        if self.match_case.isChecked():
            flags |= QTextDocument.FindFlag.FindCaseSensitively
        if backward:
            flags |= QTextDocument.FindFlag.FindBackward
        return flags

    def matches(self) -> list[tuple[int, int]]:
        """(start, end) of every match in the editor, in document order."""
        needle = self.find_field.text()
        if not needle:
            return []
        doc = self.editor.document()
        found, spans = doc.find(needle, 0, self._flags()), []
        while not found.isNull() and len(spans) < MAX_COUNTED:
            spans.append((found.selectionStart(), found.selectionEnd()))
            found = doc.find(needle, found, self._flags())
        return spans

    def find_next(self) -> bool:
        """Select the next match after the cursor, wrapping at the end."""
        return self._find(backward=False)

    def find_previous(self) -> bool:
        """Select the previous match before the cursor, wrapping at the start."""
        return self._find(backward=True)

    def _search_as_you_type(self) -> None:
        # Search from where the current selection starts, so typing more letters
        # keeps the same match selected while it still matches.
        cursor = self.editor.textCursor()
        cursor.setPosition(cursor.selectionStart())
        self.editor.setTextCursor(cursor)
        self._find(backward=False)

    def _find(self, backward: bool) -> bool:
        needle = self.find_field.text()
        if not needle:
            self._update_count()
            return False
        doc = self.editor.document()
        found = doc.find(needle, self.editor.textCursor(), self._flags(backward))
        if found.isNull():  # wrap around
            start = doc.characterCount() - 1 if backward else 0
            found = doc.find(needle, start, self._flags(backward))
        if not found.isNull():
            self.editor.setTextCursor(found)
        self._update_count()
        return not found.isNull()

    def _current_match(self, spans: list[tuple[int, int]]) -> int | None:
        cursor = self.editor.textCursor()
        selection = (cursor.selectionStart(), cursor.selectionEnd())
        return spans.index(selection) if selection in spans else None

    def _update_count(self) -> None:
        spans = self.matches()
        current = self._current_match(spans)
        if not self.find_field.text():
            text, bad = "", False
        elif not spans:
            text, bad = "No matches", True
        else:
            total = f"{len(spans)}+" if len(spans) >= MAX_COUNTED else str(len(spans))
            text, bad = (f"{current + 1} of {total}" if current is not None else total), False
        self.count_label.setText(text)
        self.count_label.setStyleSheet("color: #dc2626;" if bad else "")

    # ---- replacing -------------------------------------------------------------
    def replace(self) -> bool:
        """Replace the selected match (if a match is selected), then find the next one."""
        spans = self.matches()
        replaced = self._current_match(spans) is not None
        if replaced:
            self.editor.textCursor().insertText(self.replace_field.text())
        self.find_next()
        return replaced

    def replace_all(self) -> int:
        """Replace every match as one undo step; returns how many were replaced."""
        spans = self.matches()
        if not spans:
            self._update_count()
            return 0
        replacement = self.replace_field.text()
        cursor = QTextCursor(self.editor.document())
        cursor.beginEditBlock()
        for start, end in reversed(spans):  # from the end, so earlier positions stay valid
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(replacement)
        cursor.endEditBlock()
        self.count_label.setText(f"Replaced {len(spans)}")
        self.count_label.setStyleSheet("")
        return len(spans)
