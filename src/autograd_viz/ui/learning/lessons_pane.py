"""The lessons browser: lessons and sections on the left, the chosen section on the right,
each example with Open in editor and Run; the learner's progress in the header."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from autograd_viz.core.learning.lessons import Lesson, Section, all_sections, load_lessons
from autograd_viz.core.learning.progress import Progress, summary_line
from autograd_viz.core.learning.quiz import QUESTIONS
from autograd_viz.ui.learning._example_card import ExampleCard
from autograd_viz.ui.learning._lesson_tree import LessonTree

KEY_ROLE = Qt.ItemDataRole.UserRole
LABEL_ROLE = Qt.ItemDataRole.UserRole + 1  # the section's numbered title, without its mark
DONE_MARK, TODO_MARK = "✓", "○"


# Puts an example's code in the editor (and runs it when asked); False when the learner
# kept what the editor held instead (Cancel on Save / Discard).
ExampleOpener = Callable[[str, bool], bool]


class LessonsPane(QWidget):
    """Browse the lessons; a section counts as done once one of its examples is opened or
    run, or its tab is visited.

    An example opens through `opener` when one is given (the main window's, which may ask
    Save / Discard first): the section counts only once the example really opened. Without
    one, `example_requested` (emitted either way) is all, and the example counts as opened.
    """

    example_requested = Signal(str, bool)  # code, run (True: run it as Ctrl+Enter does)
    tab_requested = Signal(str)  # the name of an app tab a section points to

    def __init__(
        self,
        progress: Progress,
        lessons: tuple[Lesson, ...] | None = None,
        parent: QWidget | None = None,
        opener: ExampleOpener | None = None,
    ) -> None:
        super().__init__(parent)
        self.progress = progress
        self.opener = opener
        self.lessons = lessons or load_lessons()
        self.section: Section | None = None
        self.example_cards: list[ExampleCard] = []
        self._totals = {"lesson": len(all_sections(self.lessons)), "quiz": len(QUESTIONS)}
        self._items: dict[str, QTreeWidgetItem] = {}

        self.summary = QLabel()
        self.summary.setObjectName("progressSummary")
        self.summary.setToolTip("Saved between launches; Learn → Reset progress… clears it")
        self.tree = LessonTree()
        self.tree.setObjectName("lessonTree")
        self.tree.setMinimumWidth(200)
        self._fill_tree()
        self.tree.currentItemChanged.connect(self._on_item)

        self.title = QLabel()
        self.title.setObjectName("sectionTitle")
        self.title.setWordWrap(True)
        self.title.setStyleSheet("font-size: 15pt; font-weight: 600;")
        self.text = QLabel()
        self.text.setObjectName("sectionText")
        self.text.setTextFormat(Qt.TextFormat.MarkdownText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.tab_button = QPushButton()
        self.tab_button.setObjectName("sectionTabButton")
        self.tab_button.clicked.connect(self._go_to_tab)
        self.page = QWidget()
        self.page.setObjectName("sectionPage")
        self.page_layout = QVBoxLayout(self.page)
        self.page_layout.setContentsMargins(16, 12, 16, 16)
        self.page_layout.setSpacing(10)
        self.page_layout.addWidget(self.title)
        self.page_layout.addWidget(self.text)
        tab_row = QHBoxLayout()
        tab_row.addWidget(self.tab_button)
        tab_row.addStretch(1)
        self.page_layout.addLayout(tab_row)
        self.examples_layout = QVBoxLayout()
        self.examples_layout.setSpacing(10)
        self.page_layout.addLayout(self.examples_layout)
        self.page_layout.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.page)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.scroll)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([300, 800])
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.summary)
        column.addWidget(splitter, 1)

        progress.changed.connect(self._on_progress)
        progress.was_reset.connect(self._on_reset)
        self._refresh_progress()
        first = self.tree.topLevelItem(0)
        if first is not None and first.childCount():
            self.tree.setCurrentItem(first.child(0))

    # ---- the tree --------------------------------------------------------------------
    def _fill_tree(self) -> None:
        for lesson in self.lessons:
            top = QTreeWidgetItem([lesson.title])
            top.setFlags(top.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            top.setToolTip(0, lesson.title)
            self.tree.addTopLevelItem(top)
            for number, section in enumerate(lesson.sections, start=1):
                item = QTreeWidgetItem([f"{number}. {section.title}"])
                item.setData(0, KEY_ROLE, section.key)
                item.setData(0, LABEL_ROLE, f"{number}. {section.title}")
                item.setToolTip(0, section.title)  # the whole title, however narrow the tree
                top.addChild(item)
                self._items[section.key] = item
            top.setExpanded(True)

    def _on_item(self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        key = item.data(0, KEY_ROLE) if item is not None else None
        if key:
            self.show_section(key)

    def show_section(self, key: str) -> None:
        """Show a section ("lesson1/graph") on the right and select it in the tree."""
        item = self._items[key]
        if self.tree.currentItem() is not item:
            self.tree.setCurrentItem(item)  # comes back here through _on_item
            return
        section = next(s for s in all_sections(self.lessons) if s.key == key)
        self.section = section
        self.title.setText(section.title)
        self.text.setText(section.text)
        self.tab_button.setVisible(section.tab is not None)
        self.tab_button.setText(f"Go to the {section.tab} tab →" if section.tab else "")
        for card in self.example_cards:
            self.examples_layout.removeWidget(card)
            card.hide()  # deleteLater waits for the event loop; hidden, it never shows
            card.deleteLater()
        self.example_cards = []
        for title, code in section.examples:
            card = ExampleCard(title, code)
            card.requested.connect(self._on_example)
            self.examples_layout.addWidget(card)
            self.example_cards.append(card)
        self.scroll.verticalScrollBar().setValue(0)

    # ---- actions ---------------------------------------------------------------------
    def _on_example(self, code: str, run: bool) -> None:
        section = self.section  # the one whose card was clicked, whatever a dialog does
        self.example_requested.emit(code, run)
        # The opener may ask Save / Discard / Cancel first: mark only once that is answered.
        opened = self.opener(code, run) if self.opener is not None else True
        if opened and section is not None:
            self.progress.mark("lesson", section.key)

    def _go_to_tab(self) -> None:
        if self.section is not None and self.section.tab:
            self.progress.mark("lesson", self.section.key)
            self.tab_requested.emit(self.section.tab)

    # ---- progress --------------------------------------------------------------------
    def set_totals(self, totals: dict[str, int]) -> None:
        """How many lab tasks / exercises there are, for the summary ("Lab tasks 2/9")."""
        self._totals.update(totals)
        self._refresh_progress()

    def _on_progress(self, _kind: str, _key: str, _done: bool) -> None:
        if isValid(self):  # psygnal may outlive the widget: a closed pane ignores it
            self._refresh_progress()

    def _on_reset(self) -> None:
        if isValid(self):
            self._refresh_progress()

    def _refresh_progress(self) -> None:
        self.summary.setText(f"Progress: {summary_line(self.progress, self._totals)}")
        for key, item in self._items.items():
            mark = DONE_MARK if self.progress.is_done("lesson", key) else TODO_MARK
            item.setText(0, f"{mark} {item.data(0, LABEL_ROLE)}")


def ask_reset_progress(parent: QWidget, progress: Progress) -> bool:
    """Ask before forgetting every task, exercise, quiz answer and section; reset on yes."""
    answer = QMessageBox.question(
        parent,
        "Reset progress",
        "Forget every lab task, exercise, quiz answer and lesson section marked as done?\n"
        "This cannot be undone.",
        QMessageBox.StandardButton.Reset | QMessageBox.StandardButton.Cancel,
        QMessageBox.StandardButton.Cancel,
    )
    if answer != QMessageBox.StandardButton.Reset:
        return False
    progress.reset()
    return True
