"""Autosaves: a copy of each unsaved buffer in the user's data folder, so that a crash or a
`kill -9` of the app loses nothing. One file per document, named by its path."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograd_viz.core.platform.user_data import data_dir, read_json, write_atomic

FOLDER = "autosave"
UNTITLED = "untitled"


@dataclass(frozen=True)
class Autosave:
    """What an autosave holds: the text, when it was written, whose buffer it was."""

    text: str
    saved_at: float  # seconds since the epoch
    path: Path | None  # the document's file; None for an untitled buffer
    pid: int  # the app process that wrote it


def autosave_file(path: Path | None) -> Path:
    """Where the autosave of a document lives: stable per absolute path, "untitled" for new."""
    if path is None:
        name = UNTITLED
    else:
        name = hashlib.sha256(str(Path(path).absolute()).encode("utf-8")).hexdigest()[:20]
    return data_dir() / FOLDER / f"{name}.json"


def write_autosave(path: Path | None, text: str) -> Path:
    """Write (atomically) the autosave of a document; returns the file written."""
    record = {
        "version": 1,
        "path": None if path is None else str(Path(path).absolute()),
        "saved_at": time.time(),
        "pid": os.getpid(),
        "text": text,
    }
    target = autosave_file(path)
    write_atomic(target, json.dumps(record, ensure_ascii=False))
    return target


def read_autosave(path: Path | None) -> Autosave | None:
    """The autosave of a document, or None when there is none (or it is unreadable)."""
    record = read_json(autosave_file(path), None)
    if not isinstance(record, dict) or not isinstance(record.get("text"), str):
        return None
    saved_path = record.get("path")
    return Autosave(
        text=record["text"],
        saved_at=float(record.get("saved_at") or 0.0),
        path=Path(saved_path) if saved_path else None,
        pid=int(record.get("pid") or 0),
    )


def remove_autosave(path: Path | None) -> None:
    """Forget the autosave of a document (it was saved, or its changes were discarded)."""
    autosave_file(path).unlink(missing_ok=True)


def recoverable(path: Path | None, current_text: str) -> Autosave | None:
    """The autosave worth offering for a document just opened with `current_text`: one
    left by an app that is gone, holding other text. A stale copy is removed."""
    saved = read_autosave(path)
    if saved is None or _still_running(saved.pid):
        return None  # another window of the app is editing it right now
    if saved.text == current_text:
        remove_autosave(path)
        return None
    return saved


def _still_running(pid: int) -> bool:
    """Whether another live process has this id (POSIX only: on Windows, signal 0 kills)."""
    if pid <= 0 or pid == os.getpid() or sys.platform == "win32":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True
