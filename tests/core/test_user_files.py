"""Reading and saving scripts, autosaves and recent files: no Qt, plain files."""

from __future__ import annotations

import os

import pytest

from autograd_viz.core.platform.autosave import (
    AutosaveOwner,
    read_autosave,
    recoverable,
    remove_autosave,
    write_autosave,
)
from autograd_viz.core.platform.preferences import (
    forget_file,
    load_theme,
    recent_files,
    remember_file,
    save_theme,
)
from autograd_viz.core.platform.source_files import (
    MAX_BYTES,
    UnreadableFile,
    read_source_file,
    save_source_file,
)
from autograd_viz.core.platform.user_data import data_dir


def test_read_normalises_line_ends_and_drops_a_bom(tmp_path) -> None:
    path = tmp_path / "crlf.py"
    path.write_bytes(b"\xef\xbb\xbfa = 1\r\nb = 2\rc = 3\n")
    assert read_source_file(path) == "a = 1\nb = 2\nc = 3\n"


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"\xff\xfe\x00a", "binary"), (b"caf\xe9 = 1\n", "not UTF-8 text (byte 0xe9 at position 3)")],
)
def test_unreadable_content_says_why(tmp_path, data, reason) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(data)
    with pytest.raises(UnreadableFile, match=reason.replace("(", r"\(").replace(")", r"\)")):
        read_source_file(path)


def test_huge_files_are_refused_without_being_read(tmp_path) -> None:
    path = tmp_path / "huge.py"
    with path.open("wb") as handle:
        handle.truncate(MAX_BYTES + 1)
    with pytest.raises(UnreadableFile, match="too big"):
        read_source_file(path)
    with pytest.raises(UnreadableFile, match="not a file"):
        read_source_file(tmp_path)


def test_save_writes_through_a_symlink_and_keeps_the_mode(tmp_path) -> None:
    real = tmp_path / "real.py"
    real.write_text("old\n")
    real.chmod(0o604)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    save_source_file(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
    assert real.stat().st_mode & 0o777 == 0o604
    fresh = tmp_path / "fresh.py"
    save_source_file(fresh, "x\n")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask


def test_autosaves_are_named_by_path_and_owner_and_round_trip(tmp_path) -> None:
    lesson = tmp_path / "lesson.py"
    owner = AutosaveOwner()
    assert owner.file(None).name == f"untitled.{owner.id}.json"
    assert owner.file(lesson) == owner.file(tmp_path / "." / "lesson.py")
    assert owner.file(lesson) != owner.file(tmp_path / "other.py")
    assert owner.file(lesson) != AutosaveOwner().file(lesson)  # another window, another file
    assert owner.file(lesson).parent == data_dir() / "autosave"
    write_autosave(lesson, "unsaved ✓\n")  # left by a window that is gone
    saved = read_autosave(lesson)
    assert saved.text == "unsaved ✓\n" and saved.path == lesson and saved.pid == os.getpid()
    assert recoverable(lesson, "on disk\n") == saved
    assert recoverable(lesson, "unsaved ✓\n") is None  # the same text: nothing to offer
    assert read_autosave(lesson) is None
    remove_autosave(lesson)  # removing twice is fine


def test_recent_files_keep_ten_newest_first_and_drop_missing(tmp_path) -> None:
    paths = [tmp_path / f"s{i}.py" for i in range(12)]
    for path in paths:
        path.write_text("")
        remember_file(path)
    remember_file(paths[3])  # opened again: back to the top, listed once
    expected = [paths[3], *[p for p in paths[::-1] if p != paths[3]]][:10]
    assert recent_files() == expected
    paths[11].unlink()
    forget_file(paths[10])
    assert paths[11] not in recent_files() and paths[10] not in recent_files()


def test_theme_choice_is_stored(tmp_path) -> None:
    assert load_theme() == "system"
    save_theme("dark")
    assert load_theme() == "dark"
    with pytest.raises(ValueError):
        save_theme("purple")
