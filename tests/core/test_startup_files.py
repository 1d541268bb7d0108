"""Issue 15, item 12: every file the app reads at start-up may be damaged or hostile. The
loaders never raise; a file they cannot use is renamed NAME.corrupt-DATE and a note says
so; and what they return can be written back."""

from __future__ import annotations

import json
import os
import random
import string

import pytest

from autograd_viz.core.learning.progress import load_progress
from autograd_viz.core.platform import user_data
from autograd_viz.core.platform.autosave import read_autosave, recoverable
from autograd_viz.core.platform.preferences import (
    load_keep_variables,
    load_theme,
    recent_files,
    save_keep_variables,
    save_theme,
)
from autograd_viz.core.platform.user_data import data_dir, startup_notes

DEEP = "[" * 200_000 + "]" * 200_000
# Every file read at start-up, by its place in the data folder.
STARTUP_FILES = (
    "progress.json",
    "settings.json",
    "recent.json",
    "autosave/untitled.json",  # an autosave of the old, single-file kind
    "autosave/untitled.1-0123456789.json",  # one window's autosave
)
HOSTILE = {
    "deep-array": DEEP,
    "deep-object": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "not-json": "{not json",
    "not-utf8": b"\xff\xfe\x00{",
    "empty": "",
    "a-list": "[1, 2, 3]",
    "nul-bytes": '{"files": ["a\\u0000b"], "text": "t\\u0000", "path": "p\\u0000"}',
    "pid-abc": '{"text": "x", "pid": "abc", "saved_at": "yesterday"}',
    "pid-huge": '{"text": "x", "pid": 1e30, "saved_at": 1e308}',
    "nan": '{"text": "x", "pid": NaN, "saved_at": Infinity, "done": NaN, "theme": NaN}',
    "wrong-types": '{"done": [1], "files": {"a": 1}, "theme": 3, "keep_variables": "yes"}',
    "nested-values": '{"done": {"task": {"a": [[[]]]}}, "theme": {"x": ['
    + "[" * 900
    + "]" * 900
    + "]}}",
}


def _load_everything() -> None:
    """What the window reads while it starts; each must return a usable value."""
    progress = load_progress()
    assert all(isinstance(v, bool) for e in progress.done.values() for v in e.values())
    assert load_theme() in ("system", "light", "dark")
    assert isinstance(load_keep_variables(), bool)
    assert all(path.is_file() for path in recent_files())
    saved = read_autosave(None)
    offer = recoverable(None, "")
    for autosave in (saved, offer):
        if autosave is not None:
            assert isinstance(autosave.text, str) and isinstance(autosave.pid, int)
            assert 0 <= autosave.saved_at < 1e11
    # And what was read can be written back (a deep value would overflow json.dumps).
    progress.mark("task", "t", True)
    save_theme("dark")
    save_keep_variables(True)


def _write(name: str, content: str | bytes) -> os.PathLike:
    path = data_dir() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", STARTUP_FILES)
@pytest.mark.parametrize("content", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_startup_file_is_survived(name, content) -> None:
    startup_notes()
    _write(name, content)
    _load_everything()


@pytest.mark.parametrize("name", STARTUP_FILES)
def test_a_corrupt_file_is_renamed_and_a_note_says_so(name) -> None:
    startup_notes()
    path = _write(name, DEEP)
    _load_everything()
    kept = list(path.parent.glob(path.name + ".corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text() == DEEP  # set aside, never deleted
    notes = startup_notes()
    assert any(path.name in note and kept[0].name in note for note in notes), notes


def test_a_fifo_or_a_folder_in_place_of_a_file_does_not_block_start_up() -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(data_dir() / "settings.json")  # reading it would wait for a writer forever
    (data_dir() / "progress.json").mkdir()
    _load_everything()
    assert list(data_dir().glob("settings.json.corrupt-*"))


def test_a_data_folder_that_cannot_be_created_still_lets_the_app_start(
    tmp_path, monkeypatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("AUTOGRAD_VIZ_DATA_DIR", str(blocker / "data"))  # under a file
    startup_notes()
    folder = data_dir()
    assert folder != blocker / "data" and folder.is_dir()
    notes = startup_notes()
    assert len(notes) == 1 and str(blocker / "data") in notes[0]
    _load_everything()  # and reading, then saving, works in the folder used instead


# ---- the property test: random JSON and bytes fed to every start-up file -----------------
KEYS = [
    "text",
    "pid",
    "saved_at",
    "path",
    "owner",
    "started",
    "files",
    "done",
    "theme",
    "keep_variables",
    "version",
    "task",
    "exercise",
    "",
    "\u0000",
    "é",
]


def _random_json(rng: random.Random, depth: int = 0) -> object:
    """A random JSON value, biased to the keys and types the app's files hold."""
    kind = rng.randrange(9 if depth < 6 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, 1, -1, 2**31, 2**63, 10**400, os.getpid(), 1])
    if kind == 2:
        return rng.choice([0.0, -1.5, 1e30, 1e308, float("nan"), float("inf"), 1.7e9])
    if kind in (3, 4):
        alphabet = string.printable + "\u0000\u00e9\u2603\ud7ff"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if kind == 5:
        return rng.choice(["system", "dark", "/tmp", str(data_dir()), "1-0123456789"])
    if kind == 6:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS): _random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


def _random_content(rng: random.Random) -> str | bytes:
    roll = rng.random()
    if roll < 0.1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
    if roll < 0.15:
        depth = rng.choice([999, 5000, 100_000])
        return rng.choice("[{").replace("{", '{"a":') * depth
    text = json.dumps(_random_json(rng), allow_nan=True)
    if roll < 0.25 and text:  # cut short, as a crash mid-write would
        return text[: rng.randrange(len(text))]
    return text


def _fuzz(seed: int, rounds: int) -> None:
    rng = random.Random(seed)
    for _ in range(rounds):
        for name in STARTUP_FILES:
            if rng.random() < 0.7:
                _write(name, _random_content(rng))
        _load_everything()
        startup_notes()


def test_random_and_hostile_json_in_every_startup_file_never_stops_the_app() -> None:
    _fuzz(seed=15, rounds=60)


@pytest.mark.slow
def test_random_and_hostile_json_in_every_startup_file_many_rounds() -> None:
    _fuzz(seed=1512, rounds=400)


def test_fallback_folder_is_reused_within_a_run(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AUTOGRAD_VIZ_DATA_DIR", str(tmp_path / "f" / "x"))
    (tmp_path / "f").write_text("")
    first = data_dir()
    assert data_dir() == first and user_data.startup_notes()
