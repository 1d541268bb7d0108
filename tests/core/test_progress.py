"""Saved progress: a round trip through the file, damaged files, reset, signals, summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograd_viz.core.learning.progress import Progress, load_progress, progress_path, summary_line


def test_marks_survive_a_new_load(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    progress = load_progress(path)
    assert progress.count("quiz") == (0, 0) and not path.exists()
    progress.mark("quiz", "l2-item")
    progress.mark("task", "w-accumulates-16")
    progress.mark("exercise", "grad_of", False)
    again = load_progress(path)
    assert again.is_done("quiz", "l2-item") and again.is_done("task", "w-accumulates-16")
    assert not again.is_done("exercise", "grad_of")
    assert again.count("exercise") == (0, 1) and again.count("quiz") == (1, 1)
    assert json.loads(path.read_text())["version"] == 1


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"", b"[1, 2]", b'{"done": "yes"}', b'{"done": {"quiz": 3}}', b"\xff\xfe"],
)
def test_a_damaged_file_gives_empty_progress(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "progress.json"
    path.write_bytes(content)
    progress = load_progress(path)
    assert progress.count("quiz") == (0, 0) and not progress.is_done("quiz", "l2-item")
    progress.mark("quiz", "l2-item")  # and it can be written again
    assert load_progress(path).is_done("quiz", "l2-item")


def test_reset_forgets_everything_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    progress = load_progress(path)
    progress.mark("quiz", "a")
    progress.mark("lesson", "lesson1/graph")
    resets = []
    progress.was_reset.connect(lambda: resets.append(True))
    progress.reset()
    assert resets == [True] and progress.count("quiz") == (0, 0)
    assert load_progress(path).count("lesson") == (0, 0)


def test_changed_fires_once_per_real_change() -> None:
    progress = Progress()  # in memory: nothing is written
    seen = []
    progress.changed.connect(lambda *args: seen.append(args))
    progress.mark("quiz", "a")
    progress.mark("quiz", "a")  # no change, no signal
    progress.mark("quiz", "a", False)
    assert seen == [("quiz", "a", True), ("quiz", "a", False)]


def test_progress_lives_in_the_data_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AUTOGRAD_VIZ_DATA_DIR", str(tmp_path))
    assert progress_path() == tmp_path / "progress.json"
    load_progress().mark("quiz", "a")
    assert (tmp_path / "progress.json").exists()


def test_summary_line() -> None:
    progress = Progress()
    progress.mark("quiz", "a")
    progress.mark("quiz", "b", False)
    progress.mark("task", "t1")
    line = summary_line(progress, {"quiz": 11, "lesson": 14})
    assert line == "Sections 0/14 · Lab tasks 1 · Exercises 0 · Quiz 1/11"
