"""UI test set-up: no test ever waits on a modal dialog. Unsaved changes are discarded,
file dialogs are cancelled and message boxes are recorded, unless a test answers itself
(by replacing the method of its own Document)."""

from __future__ import annotations

import pytest

from autograd_viz.session import KernelState
from autograd_viz.ui.editor import document
from autograd_viz.ui.editor.document import Choice
from autograd_viz.ui.main_window import MainWindow


@pytest.fixture(autouse=True)
def message_boxes(monkeypatch) -> list[tuple[str, str]]:
    """Answer the Document's dialogs; returns the (title, text) of each message box."""
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(document, "ask_save_changes", lambda *_: Choice.DISCARD)
    monkeypatch.setattr(document, "ask_open_path", lambda *_: None)
    monkeypatch.setattr(document, "ask_save_path", lambda *_: None)
    monkeypatch.setattr(document, "show_warning", lambda _parent, t, m: shown.append((t, m)))
    return shown


@pytest.fixture
def running_window(qtbot):
    """The whole window with its own real kernel, started and idle; closed afterwards."""
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    win.session.start()
    qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=60_000)
    yield win
    win.close()


@pytest.fixture
def descent_pane(qtbot):
    """A descent pane, shown at 1100×650, its first sweep computed."""
    from autograd_viz.ui.descent.descent_pane import DescentPane

    widget = DescentPane()
    widget.resize(1100, 650)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: widget.sweep is not None, timeout=60_000)
    return widget
