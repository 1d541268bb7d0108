"""Files in the real window: title and modified mark, atomic saves, recent files, dropped
files, the unsaved-changes prompt, unreadable files, autosave and recovery after kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QTextCursor
from PySide6.QtWidgets import QApplication

from autograd_viz.core.platform.autosave import read_autosave, write_autosave
from autograd_viz.core.platform.user_data import data_dir
from autograd_viz.session import KernelCall, KernelState
from autograd_viz.ui.editor.document import Choice
from autograd_viz.ui.main_window import MainWindow

CHILD = Path(__file__).with_name("crash_child.py")
TITLE = "{}[*] — autograd-viz"


@pytest.fixture
def window(qtbot):
    win = MainWindow()  # no kernel is started: files need none
    qtbot.addWidget(win)
    win.resize(1000, 700)
    yield win
    win.close()


def _type(win: MainWindow, text: str) -> None:
    """Type at the end of the buffer, as the learner would (it marks the buffer modified)."""
    win.editor.moveCursor(QTextCursor.MoveOperation.End)
    win.editor.insertPlainText(text)


def _script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_title_names_the_file_and_marks_unsaved_changes(window, tmp_path) -> None:
    assert window.windowTitle() == TITLE.format("untitled") and not window.isWindowModified()
    _type(window, "x = 1\n")
    assert window.isWindowModified()
    lesson = _script(tmp_path, "lesson.py", "w = 2\n")
    assert window.open_path(lesson)  # the discard answer comes from tests/ui/conftest.py
    assert window.windowTitle() == TITLE.format("lesson.py") and not window.isWindowModified()
    _type(window, "b = 3\n")
    assert window.isWindowModified()
    assert window.document.save()
    assert lesson.read_text() == "w = 2\nb = 3\n" and not window.isWindowModified()


def test_a_failed_save_leaves_the_file_whole_and_permissions_are_kept(
    window, tmp_path, monkeypatch, message_boxes
) -> None:
    lesson = _script(tmp_path, "lesson.py", "old = 1\n")
    lesson.chmod(0o640)
    window.open_path(lesson)
    _type(window, "new = 2\n" * 1000)

    def crash(*_args):  # the moment a crash would hit: the new text written, not yet renamed
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    assert not window.document.save()
    assert lesson.read_text() == "old = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lesson.py"]  # no temp file left
    assert message_boxes[-1][0] == "Cannot save" and "No space left" in message_boxes[-1][1]
    assert window.isWindowModified()  # the changes are still unsaved
    monkeypatch.undo()
    assert window.document.save()
    assert lesson.read_text() == "old = 1\n" + "new = 2\n" * 1000
    assert lesson.stat().st_mode & 0o777 == 0o640


def test_recent_files_are_remembered_and_listed_newest_first(
    window, qtbot, tmp_path, message_boxes
) -> None:
    first, gone, last = (_script(tmp_path, f"{n}.py", f"{n} = 1\n") for n in "abc")
    for path in (first, gone, last):
        assert window.open_path(path)
    gone.unlink()
    stored = json.loads((data_dir() / "recent.json").read_text())
    assert stored["files"][:3] == [str(last), str(gone), str(first)]

    later = MainWindow()  # the next launch
    qtbot.addWidget(later)
    menu = later.document.recent_menu
    menu.aboutToShow.emit()
    entries = [a for a in menu.actions() if a.data()]
    assert [a.data() for a in entries] == [str(last), str(first)]  # the missing file dropped
    assert entries[1].text().startswith("&2 a.py")
    entries[1].trigger()
    assert later.document.path == first and later.editor.text() == "a = 1\n"
    first.unlink()  # gone while the menu was open
    assert not later.document.open_recent(first)
    assert "no longer exists" in message_boxes[-1][1] and later.document.recent_paths() == [last]
    later.close()


def test_the_recent_list_keeps_the_last_ten(window, tmp_path) -> None:
    paths = [_script(tmp_path, f"s{i}.py", f"i = {i}\n") for i in range(12)]
    for path in paths:
        window.open_path(path)
    assert window.document.recent_paths() == paths[::-1][:10]


def _drag(target, path: Path) -> tuple[bool, bool]:
    """Drag a file onto a widget and drop it; returns (drag accepted, drop accepted)."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    buttons, mods = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime, buttons, mods)
    enter.setAccepted(False)
    QApplication.sendEvent(target, enter)
    drop = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, buttons, mods)
    drop.setAccepted(False)
    QApplication.sendEvent(target, drop)
    return enter.isAccepted(), drop.isAccepted()


def test_dropping_a_python_file_opens_it(window, qtbot, tmp_path) -> None:
    window.show()
    lesson = _script(tmp_path, "dropped.py", "y = 7\n")
    assert _drag(window, lesson) == (True, True)
    qtbot.waitUntil(lambda: window.editor.text() == "y = 7\n", timeout=2000)
    assert window.windowTitle() == TITLE.format("dropped.py")
    onto_editor = _script(tmp_path, "second.py", "z = 8\n")
    assert _drag(window.editor.viewport(), onto_editor) == (True, True)
    qtbot.waitUntil(lambda: window.editor.text() == "z = 8\n", timeout=2000)  # not its name
    notes = _script(tmp_path, "notes.txt", "not python\n")
    assert _drag(window, notes) == (False, False)
    assert window.editor.text() == "z = 8\n"


@pytest.mark.parametrize("choice", list(Choice))
def test_closing_with_unsaved_changes_asks(window, tmp_path, monkeypatch, choice) -> None:
    window.show()
    _type(window, "typed = True\n")
    text = window.editor.text()
    autosave = window.document.autosave_now()
    assert autosave is not None and autosave.exists()
    asked = []
    monkeypatch.setattr(window.document, "ask_save_changes", lambda: asked.append(1) or choice)
    saved_as = tmp_path / "kept.py"
    monkeypatch.setattr(window.document, "ask_save_path", lambda: saved_as)
    closed = window.close()
    assert asked == [1]
    if choice is Choice.CANCEL:
        assert not closed and window.isVisible() and window.editor.text() == text
        assert autosave.exists()
        monkeypatch.setattr(window.document, "ask_save_changes", lambda: Choice.DISCARD)
        return
    assert closed and not window.isVisible()
    assert not autosave.exists()  # a clean exit leaves no autosave
    if choice is Choice.SAVE:
        assert saved_as.read_text() == text
    else:
        assert not saved_as.exists()


def test_new_and_open_ask_before_dropping_changes(window, tmp_path, monkeypatch) -> None:
    _type(window, "mine = 1\n")
    text = window.editor.text()
    monkeypatch.setattr(window.document, "ask_save_changes", lambda: Choice.CANCEL)
    assert not window.document.new()
    assert not window.open_path(_script(tmp_path, "other.py", "other = 1\n"))
    window.open_example("example = 1\n", run=False)
    assert window.editor.text() == text and window.isWindowModified()
    monkeypatch.setattr(window.document, "ask_save_changes", lambda: Choice.DISCARD)
    assert window.document.new()
    assert window.editor.text() == "" and window.windowTitle() == TITLE.format("untitled")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("café = 1\n".encode("latin-1"), "not UTF-8"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary"),
        (None, "too big"),  # a sparse 6 MB file
        (FileNotFoundError, "cannot be read"),
    ],
)
def test_unreadable_files_are_refused_and_nothing_changes(
    window, tmp_path, monkeypatch, message_boxes, content, reason
) -> None:
    _type(window, "keep_me = 1\n")
    before = (window.editor.text(), window.document.path, window.isWindowModified())
    path = tmp_path / "bad.py"
    if content is None:
        with path.open("wb") as handle:
            handle.truncate(6 * 2**20)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    asked = []
    monkeypatch.setattr(
        window.document, "ask_save_changes", lambda: asked.append(1) or Choice.DISCARD
    )
    assert not window.open_path(path)
    assert not asked  # refused before any question about the current buffer
    assert (window.editor.text(), window.document.path, window.isWindowModified()) == before
    title, text = message_boxes[-1]
    assert title == "Cannot open file" and reason in text and "bad.py" in text


def test_autosave_writes_the_buffer_on_a_timer_and_on_run(window, qtbot, monkeypatch) -> None:
    window.document.autosave_timer.setInterval(30)
    target = window.document.autosaves.file(None)
    _type(window, "first = 1\n")
    qtbot.waitUntil(lambda: target.exists(), timeout=3000)
    assert read_autosave(None).text == window.editor.text()
    window.document.autosave_timer.stop()  # now only a run writes it
    ran = []
    monkeypatch.setattr(window.session, "state", KernelState.IDLE)

    def run(code: str, name: str, **_: str) -> KernelCall:
        ran.append(code)
        return KernelCall("run", name, 0)

    monkeypatch.setattr(window.session, "run", run)
    _type(window, "second = 2\n")
    window.run_code()
    assert ran and read_autosave(None).text == window.editor.text() == ran[0]


def test_an_autosave_like_the_file_is_not_offered(window, tmp_path) -> None:
    lesson = _script(tmp_path, "same.py", "same = 1\n")
    write_autosave(lesson, "same = 1\n")
    window.open_path(lesson)
    assert window.editor_pane.recovery_bar.isHidden()
    assert read_autosave(lesson) is None


def test_discarding_a_recovery_deletes_it(window, tmp_path) -> None:
    lesson = _script(tmp_path, "lost.py", "on_disk = 1\n")
    write_autosave(lesson, "unsaved = 2\n")
    window.open_path(lesson)
    bar = window.editor_pane.recovery_bar
    assert not bar.isHidden()
    bar.discard_button.click()
    assert bar.isHidden() and read_autosave(lesson) is None
    assert window.editor.text() == "on_disk = 1\n" and not window.isWindowModified()


def test_text_typed_before_a_kill_9_is_recovered(qtbot, tmp_path) -> None:
    lesson = _script(tmp_path, "lesson.py", "import torch\n")
    typed = "loss = w * x  # typed, never saved"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}  # the same AUTOGRAD_VIZ_DATA_DIR
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(lesson), typed],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def autosaved_or_dead() -> bool:
        if child.poll() is not None:
            return True
        saved = read_autosave(lesson)
        return saved is not None and typed in saved.text

    try:
        qtbot.waitUntil(autosaved_or_dead, timeout=45_000)
        assert child.poll() is None, child.communicate()[1][-3000:]
    finally:
        child.kill()  # SIGKILL: no handler, no clean-up, like a crash
        child.communicate(timeout=10)
    killed = -signal.SIGKILL if os.name == "posix" else 1  # Windows: TerminateProcess
    assert child.returncode == killed and typed in read_autosave(lesson).text

    window = MainWindow()  # the next launch: `autograd-viz lesson.py`
    qtbot.addWidget(window)
    window.set_document(lesson.read_text(), lesson)
    bar = window.editor_pane.recovery_bar
    assert not bar.isHidden() and "lesson.py" in bar.label.text()
    assert window.editor.text() == "import torch\n"  # nothing changes until asked
    qtbot.mouseClick(bar.restore_button, Qt.MouseButton.LeftButton)
    assert window.editor.text() == typed + "import torch\n"
    assert window.isWindowModified() and bar.isHidden()
    assert lesson.read_text() == "import torch\n"  # restoring is not saving
    window.close()
