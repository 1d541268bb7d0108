"""A tab page that scrolls sideways only: narrow windows scroll it, none cuts it short."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from autograd_viz.ui._sideways_scroll import SidewaysScroll


def test_it_asks_for_the_page_height_and_little_width_and_follows_a_growing_page(qtbot) -> None:
    page = QWidget()
    layout = QVBoxLayout(page)
    wide = QLabel("x" * 200)
    layout.addWidget(wide)
    question = QLabel("What will w.grad be after this backward?")
    question.setMinimumHeight(120)
    question.hide()
    layout.addWidget(question)
    area = SidewaysScroll(page)
    qtbot.addWidget(area)
    area.resize(300, 400)
    area.show()
    assert area.minimumSizeHint().width() < page.minimumSizeHint().width()
    before = area.minimumSizeHint().height()
    assert before >= page.minimumSizeHint().height()
    question.show()  # a question card appears: the page needs more height
    qtbot.waitUntil(lambda: area.minimumSizeHint().height() >= before + 120)
    assert not area.verticalScrollBar().isVisible()
    assert area.horizontalScrollBar().maximum() > 0  # the wide row scrolls into view
