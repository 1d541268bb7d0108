"""Issue 15, item 1, with real windows: two windows with untitled buffers (or one file open
twice) keep their own autosaves, and a clean exit of one leaves the other's text on disk."""

from __future__ import annotations

from autograd_viz.core.platform.autosave import read_autosave
from autograd_viz.ui.main_window import MainWindow


def _window(qtbot, text: str, path=None) -> MainWindow:
    window = MainWindow()
    qtbot.addWidget(window)
    window.set_document("", path)
    window.document.autosave_timer.stop()  # the test writes when it means to
    window.editor.insertPlainText(text)
    return window


def test_closing_one_window_keeps_the_other_windows_autosave(qtbot, tmp_path) -> None:
    lesson = tmp_path / "lesson.py"
    lesson.write_text("")
    for path in (None, lesson):
        first = _window(qtbot, "typed in the first window\n", path)
        second = _window(qtbot, "typed in the second window\n", path)
        mine, theirs = first.document.autosave_now(), second.document.autosave_now()
        assert mine is not None and theirs is not None and mine != theirs
        second.close()  # a clean exit (its changes discarded): only its own copy goes
        assert not theirs.exists() and mine.exists()
        assert read_autosave(path).text == "typed in the first window\n"
        # The first window's text did not change, so it never writes again: its copy
        # must still be there for a kill -9 now.
        assert first.document.autosave_now() is None and mine.exists()
        first.close()
        assert not mine.exists()
