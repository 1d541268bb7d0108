"""The lessons browser: pick a section, read it, open or run its examples; progress follows."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QMessageBox

from autograd_viz.core.learning.exercise_catalog import EXERCISES
from autograd_viz.core.learning.lab_tasks import TASKS as LAB_TASKS
from autograd_viz.core.learning.lessons import all_sections, find_section
from autograd_viz.core.learning.progress import load_progress
from autograd_viz.core.learning.quiz import QUESTIONS
from autograd_viz.session import KernelState
from autograd_viz.ui.editor.document import Choice
from autograd_viz.ui.learning.lessons_pane import DONE_MARK, TODO_MARK, LessonsPane
from autograd_viz.ui.main_window import MainWindow

RETAIN = "lesson1/leaf-vs-nonleaf"


@pytest.fixture
def progress(tmp_path: Path):
    return load_progress(tmp_path / "progress.json")


@pytest.fixture
def pane(qtbot, progress) -> LessonsPane:
    widget = LessonsPane(progress)
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    return widget


@pytest.fixture
def window(qtbot, progress):
    win = MainWindow(progress=progress)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    yield win
    win.close()


def _click(qtbot, button) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_tree_lists_every_section_and_the_first_is_shown(pane) -> None:
    sections = all_sections()
    assert len(pane._items) == len(sections)
    assert pane.section == sections[0]
    assert pane.title.text() == sections[0].title
    assert len(pane.example_cards) == len(sections[0].examples)
    assert all(i.text(0).startswith(TODO_MARK) for i in pane._items.values())


def test_selecting_a_section_shows_its_text_examples_and_the_correction(pane, qtbot) -> None:
    item = pane._items[RETAIN]
    pane.tree.setCurrentItem(item)
    section = find_section(RETAIN)
    assert pane.section == section
    assert "Torch computes **12**" in pane.text.text()
    assert [c.code for c in pane.example_cards] == [code for _, code in section.examples]
    assert not pane.tab_button.isVisibleTo(pane)
    pane.show_section("lesson1/descent")
    assert pane.tab_button.isVisibleTo(pane) and "Descent" in pane.tab_button.text()
    assert len(pane.example_cards) == 2  # the old section's cards are gone


def test_open_and_run_emit_the_code_and_mark_the_section(pane, qtbot, progress) -> None:
    pane.show_section(RETAIN)
    card = pane.example_cards[1]
    with qtbot.waitSignal(pane.example_requested) as opened:
        _click(qtbot, card.open_button)
    assert opened.args == [card.code, False]
    assert progress.is_done("lesson", RETAIN)
    assert pane._items[RETAIN].text(0).startswith(DONE_MARK)
    assert f"Sections 1/{len(all_sections())}" in pane.summary.text()
    with qtbot.waitSignal(pane.example_requested) as ran:
        _click(qtbot, card.run_button)
    assert ran.args == [card.code, True]


def test_summary_follows_progress_live_and_totals_can_be_set(pane, progress) -> None:
    progress.mark("quiz", QUESTIONS[0].id)
    progress.mark("task", "anything")
    assert f"Quiz 1/{len(QUESTIONS)}" in pane.summary.text()
    assert "Lab tasks 1" in pane.summary.text()
    pane.set_totals({"task": 9, "exercise": 10})
    assert "Lab tasks 1/9 · Exercises 0/10" in pane.summary.text()
    progress.mark("lesson", RETAIN)
    progress.reset()
    assert f"Quiz 0/{len(QUESTIONS)}" in pane.summary.text()
    assert pane._items[RETAIN].text(0).startswith(TODO_MARK)


def test_open_in_editor_fills_the_main_windows_editor(window, qtbot) -> None:
    window.show_tab("Lessons")
    assert window.tabs.currentWidget() is window.lessons
    window.lessons.show_section("lesson1/first-gradients")
    card = window.lessons.example_cards[0]
    _click(qtbot, card.open_button)
    assert window.editor.text().rstrip("\n") == card.code.rstrip("\n")
    assert window.tabs.currentWidget() is window.lessons  # opening does not leave the lesson


def test_a_sections_tab_button_brings_that_tab(window, qtbot) -> None:
    window.show_tab("Lessons")
    window.lessons.show_section("lesson2/quiz")
    _click(qtbot, window.lessons.tab_button)
    assert window.tabs.currentWidget() is window.quiz
    assert window.progress.is_done("lesson", "lesson2/quiz")
    window.show_tab("No such tab")  # a tab another version has: a message, no crash
    assert "No such tab" in window.statusBar().currentMessage()


def test_reset_progress_asks_first(window, monkeypatch, progress, tmp_path) -> None:
    progress.mark("quiz", QUESTIONS[0].id)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Cancel)
    window.reset_progress_action.trigger()
    assert load_progress(tmp_path / "progress.json").is_done("quiz", QUESTIONS[0].id)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Reset)
    window.reset_progress_action.trigger()
    assert load_progress(tmp_path / "progress.json").count("quiz") == (0, 0)
    assert f"Quiz 0/{len(QUESTIONS)}" in window.lessons.summary.text()


def test_main_window_owns_one_progress_from_the_data_folder(qtbot, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AUTOGRAD_VIZ_DATA_DIR", str(tmp_path))
    load_progress().mark("quiz", QUESTIONS[0].id)
    win = MainWindow()
    qtbot.addWidget(win)
    assert win.lessons.progress is win.progress is win.quiz.progress
    assert win.progress.path == tmp_path / "progress.json"
    assert win.quiz.right_count == 1
    summary = win.lessons.summary.text()  # totals come from the lab's and exercises' lists
    assert f"Lab tasks 0/{len(LAB_TASKS)} · Exercises 0/{len(EXERCISES)}" in summary
    win.close()


@pytest.mark.kernel
def test_run_puts_the_code_in_the_editor_and_a_trace_arrives(window, qtbot) -> None:
    window.session.start()
    qtbot.waitUntil(lambda: window.session.state is KernelState.IDLE, timeout=60_000)
    window.show_tab("Lessons")
    window.lessons.show_section(RETAIN)
    card = window.lessons.example_cards[1]  # retain_grad: z.grad is 12
    with qtbot.waitSignal(window.trace_shown, timeout=30_000) as shown:
        _click(qtbot, card.run_button)
    assert window.editor.text().rstrip("\n") == card.code.rstrip("\n")
    assert window.tabs.currentWidget() is window.graph_area
    trace = shown.args[0]
    assert trace.tensor_named("z").grad.data == 12.0
    assert trace.tensor_named("x").grad.data == 36.0
    qtbot.waitUntil(lambda: "z.grad = tensor(12.)" in window.console.plain_text(), timeout=5_000)


@pytest.mark.parametrize("choice", [Choice.DISCARD, Choice.CANCEL])
def test_a_section_counts_as_tried_only_once_save_or_discard_is_answered(
    window, qtbot, monkeypatch, choice
) -> None:
    window.editor.moveCursor(QTextCursor.MoveOperation.End)
    window.editor.insertPlainText("mine = 1\n")  # typed: unsaved changes, opening asks first
    mine = window.editor.text()
    window.show_tab("Lessons")
    window.lessons.show_section(RETAIN)
    asked: list[bool] = []

    def answer() -> Choice:
        asked.append(window.progress.is_done("lesson", RETAIN))  # while the dialog is up
        return choice

    monkeypatch.setattr(window.document, "ask_save_changes", answer)
    card = window.lessons.example_cards[0]
    _click(qtbot, card.open_button)
    assert asked == [False]  # not tried before the answer
    opened = choice is Choice.DISCARD
    assert window.progress.is_done("lesson", RETAIN) is opened
    assert window.lessons._items[RETAIN].text(0).startswith(DONE_MARK if opened else TODO_MARK)
    assert (window.editor.text() == card.code) is opened
    if not opened:
        assert window.editor.text() == mine  # Cancel kept the learner's text
    # The fixture's close asks too: let it close (a refused close leaves the kernel running).
    monkeypatch.setattr(window.document, "ask_save_changes", lambda: Choice.DISCARD)


def test_an_opener_that_declines_leaves_the_section_untried(qtbot, progress) -> None:
    calls: list[tuple[str, bool]] = []
    pane = LessonsPane(progress, opener=lambda code, run: calls.append((code, run)) or False)
    qtbot.addWidget(pane)
    pane.show_section(RETAIN)
    card = pane.example_cards[0]
    _click(qtbot, card.run_button)
    assert calls == [(card.code, True)] and not progress.is_done("lesson", RETAIN)


def _cut_titles(tree) -> list[str]:
    """Titles whose row is too short or too narrow to show them whole, wrapped."""
    metrics = tree.fontMetrics()
    cut = []
    items = []
    for i in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(i)
        items += [top] + [top.child(j) for j in range(top.childCount())]
    for item in items:
        rect = tree.visualItemRect(item)
        text = item.text(0)
        needed = metrics.boundingRect(
            QRect(0, 0, rect.width() - 8, 100_000), Qt.TextFlag.TextWordWrap, text
        )
        longest_word = max(metrics.horizontalAdvance(w) for w in text.split())
        if (
            needed.height() > rect.height()
            or rect.right() > tree.viewport().width()
            or longest_word > rect.width() - 8
            or item.toolTip(0) not in text
        ):
            cut.append(text)
    return cut


@pytest.mark.parametrize("size", [(1400, 860), (1000, 650)])
def test_every_section_title_is_readable_at_the_default_and_a_small_window(
    window, qtbot, size
) -> None:
    window.resize(*size)
    window.show_tab("Lessons")
    tree = window.lessons.tree
    qtbot.waitUntil(lambda: tree.viewport().width() > 100 and tree.isVisible())
    qtbot.waitUntil(lambda: not _cut_titles(tree), timeout=3000)
    # Some title is longer than the tree is wide: it is wrapped, not cut or scrolled.
    longest = max(tree.fontMetrics().horizontalAdvance(t.title) for t in all_sections())
    assert longest > tree.viewport().width() - tree.indentation() * 2
    assert not tree.horizontalScrollBar().isVisible()
