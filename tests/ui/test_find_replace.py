"""The find/replace bar, the editor's font zoom and the Edit menu."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from autograd_viz.ui.editor.editor_pane import EditorPane
from autograd_viz.ui.main_window import MainWindow

CODE = "w = 1\nW = 2\nw2 = w * 3\n"


@pytest.fixture
def pane(qtbot) -> EditorPane:
    widget = EditorPane()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.editor.set_text(CODE)
    widget.show()
    return widget


def _selection(pane: EditorPane) -> tuple[int, int]:
    cursor = pane.editor.textCursor()
    return cursor.selectionStart(), cursor.selectionEnd()


def test_find_next_and_previous_wrap_around_and_count(pane) -> None:
    bar = pane.find_bar
    bar.open_find()
    assert not bar.isHidden() and not bar.replacing
    bar.find_field.setText("w")  # searching as you type selects the first match
    assert _selection(pane) == (0, 1) and bar.count_label.text() == "1 of 4"
    assert bar.find_next() and _selection(pane) == (6, 7)  # "W": case is ignored
    assert bar.find_previous() and _selection(pane) == (0, 1)
    assert bar.find_previous() and _selection(pane) == (17, 18)  # wrapped to the last
    assert bar.count_label.text() == "4 of 4"
    bar.match_case.setChecked(True)
    assert len(bar.matches()) == 3
    bar.find_field.setText("nothing like it")
    assert not bar.find_next() and bar.count_label.text() == "No matches"


def test_replace_all_counts_and_is_one_undo_step(pane) -> None:
    bar = pane.find_bar
    bar.open_replace()
    assert bar.replacing
    bar.match_case.setChecked(True)
    bar.find_field.setText("w")
    bar.replace_field.setText("weight")  # the replacement contains the needle
    assert bar.replace_all() == 3
    assert pane.editor.text() == "weight = 1\nW = 2\nweight2 = weight * 3\n"
    assert bar.count_label.text() == "Replaced 3"
    pane.editor.undo()
    assert pane.editor.text() == CODE


def test_replace_one_replaces_the_selected_match_then_moves_on(pane) -> None:
    bar = pane.find_bar
    bar.open_replace()
    bar.match_case.setChecked(True)
    bar.find_field.setText("w")
    bar.replace_field.setText("v")
    assert bar.replace()  # the first match was selected while typing
    assert pane.editor.text() == "v = 1\nW = 2\nw2 = w * 3\n"
    assert _selection(pane) == (12, 13)  # the next one, ready for the next Replace
    bar.find_field.setText("zzz")
    assert not bar.replace() and bar.replace_all() == 0


def test_the_selection_becomes_the_needle_and_escape_closes(pane, qtbot) -> None:
    cursor = pane.editor.textCursor()
    cursor.setPosition(12)
    cursor.setPosition(14, QTextCursor.MoveMode.KeepAnchor)
    pane.editor.setTextCursor(cursor)
    pane.find_bar.open_find()
    assert pane.find_bar.find_field.text() == "w2"
    qtbot.keyClick(pane.find_bar.find_field, Qt.Key.Key_Escape)
    assert pane.find_bar.isHidden()


def test_zoom_keys_change_the_editor_font(pane, qtbot) -> None:
    editor = pane.editor
    size, gutter = editor.font_size, editor.line_number_area_width()
    ctrl = Qt.KeyboardModifier.ControlModifier
    qtbot.keyClick(editor, Qt.Key.Key_Equal, ctrl)
    qtbot.keyClick(editor, Qt.Key.Key_Equal, ctrl)
    assert editor.font_size == size + 2 and editor.line_number_area_width() > gutter
    qtbot.keyClick(editor, Qt.Key.Key_Minus, ctrl)
    assert editor.font_size == size + 1
    qtbot.keyClick(editor, Qt.Key.Key_0, ctrl)
    assert editor.font_size == size and editor.line_number_area_width() == gutter


def test_edit_menu_undoes_redoes_comments_and_opens_the_bar(qtbot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    pane, editor = window.editor_pane, window.editor
    menus = {a.text(): a.menu() for a in window.menuBar().actions()}
    edit_items = [a.text() for a in menus["&Edit"].actions() if a.text()]
    assert edit_items[:4] == ["&Undo", "&Redo", "&Find…", "R&eplace…"]
    assert pane.find_action.shortcut().toString() == "Ctrl+F"
    assert pane.replace_action.shortcut().toString() == "Ctrl+H"
    editor.set_text("x = 1\n")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    editor.insertPlainText("y = 2\n")
    assert pane.undo_action.isEnabled()
    pane.undo_action.trigger()
    assert editor.text() == "x = 1\n" and pane.redo_action.isEnabled()
    pane.redo_action.trigger()
    assert editor.text() == "x = 1\ny = 2\n"
    editor.moveCursor(QTextCursor.MoveOperation.Start)
    pane.comment_action.trigger()
    assert editor.text() == "# x = 1\ny = 2\n"
    pane.replace_action.trigger()
    assert not pane.find_bar.isHidden() and pane.find_bar.replacing
    window.close()
