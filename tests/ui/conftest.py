"""UI test set-up: no test ever waits on a modal dialog. Unsaved changes are discarded,
file dialogs are cancelled and message boxes are recorded, unless a test answers itself
(by replacing the method of its own Document)."""

from __future__ import annotations

import pytest

from autograd_viz.ui.editor import document
from autograd_viz.ui.editor.document import Choice


@pytest.fixture(autouse=True)
def message_boxes(monkeypatch) -> list[tuple[str, str]]:
    """Answer the Document's dialogs; returns the (title, text) of each message box."""
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(document, "ask_save_changes", lambda *_: Choice.DISCARD)
    monkeypatch.setattr(document, "ask_open_path", lambda *_: None)
    monkeypatch.setattr(document, "ask_save_path", lambda *_: None)
    monkeypatch.setattr(document, "show_warning", lambda _parent, t, m: shown.append((t, m)))
    return shown
