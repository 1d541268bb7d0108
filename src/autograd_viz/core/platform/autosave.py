"""Autosaves: a copy of each unsaved buffer in the user's data folder, so that a crash or a
`kill -9` of the app loses nothing.

Each window owns its copies (`AutosaveOwner`): the file is named by the document's path
*and* the owner's id, so two windows on the same document (or two untitled buffers) never
share one, and a clean exit deletes only its own. Whether an owner is still running is
decided by a lock it holds (`fcntl.flock`, released by the kernel when the process dies,
`kill -9` included) or else by its pid *and* that process's start time: a pid alone is
reused (pid 1, any pid after a reboot) and would hide a copy from recovery forever."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from autograd_viz.core.platform.user_data import data_dir, read_json, set_aside, write_atomic

try:
    import fcntl
except ImportError:  # Windows: no flock; the pid and start time decide alone
    fcntl = None  # type: ignore[assignment]

FOLDER = "autosave"
UNTITLED = "untitled"
MAX_PID = 2**22  # Linux's pid_max ceiling; anything above is not a pid
_LIVE: set[str] = set()  # this process's owners (their locks may be unavailable)


@dataclass(frozen=True)
class Autosave:
    """What an autosave holds: the text, when it was written, whose buffer it was."""

    text: str
    saved_at: float  # seconds since the epoch
    path: Path | None  # the document's file; None for an untitled buffer
    pid: int  # the app process that wrote it (0: unknown)
    file: Path | None = None  # the autosave file itself
    owner: str = ""  # the id of the window that wrote it


def _stem(path: Path | None) -> str:
    if path is None:
        return UNTITLED
    return hashlib.sha256(str(Path(path).absolute()).encode("utf-8")).hexdigest()[:20]


def autosave_folder() -> Path:
    """The folder every autosave lives in."""
    return data_dir() / FOLDER


def autosave_file(path: Path | None, owner: str = "") -> Path:
    """Where an owner's autosave of a document lives: the document's stable name (per
    absolute path, "untitled" for new) then the owner's id."""
    name = _stem(path) if not owner else f"{_stem(path)}.{owner}"
    return autosave_folder() / f"{name}.json"


def process_start(pid: int) -> str | None:
    """When process `pid` started, as the boot's id and field 22 of /proc/PID/stat (clock
    ticks since boot): None where there is no /proc or no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except (OSError, ValueError):
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # the name in (...) may hold spaces
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None  # field 22 = index 19 here


class AutosaveOwner:
    """One window's autosaves: writes and removes only its own files, and holds a lock
    while it lives so that other instances know its copies are not abandoned."""

    def __init__(self) -> None:
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:10]}"
        self._lock: int | None = None
        _LIVE.add(self.id)

    def file(self, path: Path | None) -> Path:
        """This owner's autosave file for a document."""
        return autosave_file(path, self.id)

    def write(self, path: Path | None, text: str) -> Path:
        """Write (atomically) this owner's autosave of a document; returns the file."""
        self._hold_lock()
        return _write(self.file(path), path, text, self.id)

    def remove(self, path: Path | None) -> None:
        """Forget this owner's autosave of a document (saved, or its changes discarded)."""
        self.file(path).unlink(missing_ok=True)

    def release(self) -> None:
        """The window is closing cleanly: drop the lock and its file."""
        if self._lock is not None:
            with contextlib.suppress(OSError):
                _lock_file(self.id).unlink(missing_ok=True)
                os.close(self._lock)
            self._lock = None
        _LIVE.discard(self.id)

    def _hold_lock(self) -> None:
        if self._lock is not None or fcntl is None:
            return
        autosave_folder().mkdir(parents=True, exist_ok=True)
        lock = _lock_file(self.id)
        for _ in range(3):
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)  # not inherited by children
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                # A sweep may have unlinked the file between open and flock: then the
                # lock guards nothing others can see, and a fresh file is needed.
                if os.fstat(fd).st_ino == os.stat(lock).st_ino:
                    self._lock = fd
                    return
            except OSError:  # a file system without locks: the pid and start time decide
                pass
            os.close(fd)


def _lock_file(owner: str) -> Path:
    return autosave_folder() / f"{owner}.lock"


def _write(target: Path, path: Path | None, text: str, owner: str) -> Path:
    live = bool(owner)  # a left-over copy names no owner and no start time to check
    record = {
        "version": 2,
        "path": None if path is None else str(Path(path).absolute()),
        "saved_at": time.time(),
        "pid": os.getpid(),
        "started": process_start(os.getpid()) if live else None,
        "owner": owner,
        "text": text,
    }
    write_atomic(target, json.dumps(record, ensure_ascii=False))
    return target


def write_autosave(path: Path | None, text: str) -> Path:
    """Write an autosave owned by no live window (a left-over copy, as a crash leaves)."""
    return _write(autosave_file(path, f"{os.getpid()}-{uuid.uuid4().hex[:10]}"), path, text, "")


def _read(file: Path) -> tuple[Autosave, dict] | None:
    """An autosave file's content; a damaged one is set aside (its text may still be read
    by hand) and None returned. Fields of the wrong type are taken as unknown."""
    record = read_json(file, None, expect=dict)
    if record is None:
        return None
    if not isinstance(record.get("text"), str):
        set_aside(file, "holds no text")
        return None
    pid, saved_at, saved_path = record.get("pid"), record.get("saved_at"), record.get("path")
    if not (isinstance(pid, int) and not isinstance(pid, bool) and 0 < pid < MAX_PID):
        pid = 0
    if isinstance(saved_at, bool) or not isinstance(saved_at, (int, float)):
        saved_at = math.nan
    if not math.isfinite(saved_at) or not 0 <= saved_at < 1e11:  # year 5138
        try:
            saved_at = file.stat().st_mtime  # when it was written is what the offer says
        except OSError:
            saved_at = 0.0
    valid_path = isinstance(saved_path, str) and saved_path and "\0" not in saved_path
    owner = record.get("owner")
    saved = Autosave(
        text=record["text"],
        saved_at=float(saved_at),
        path=Path(saved_path) if valid_path else None,
        pid=pid,
        file=file,
        owner=owner if isinstance(owner, str) else "",
    )
    return saved, record


def _copies(path: Path | None) -> list[Path]:
    """Every autosave file of a document: this version's (one per owner) and the old
    single `NAME.json`."""
    stem = _stem(path)
    try:
        found = sorted(autosave_folder().glob(f"{stem}.*.json"))
    except OSError:
        return []
    return [*found, autosave_folder() / f"{stem}.json"]


def read_autosave(path: Path | None) -> Autosave | None:
    """The newest autosave of a document (any owner), or None when there is none."""
    saved = [read[0] for file in _copies(path) if (read := _read(file)) is not None]
    return max(saved, key=lambda s: s.saved_at, default=None)


def remove_autosave(path: Path | None) -> None:
    """Forget every autosave of a document, whoever wrote it."""
    for file in _copies(path):
        file.unlink(missing_ok=True)


def remove_copy(saved: Autosave) -> None:
    """Delete the file one autosave came from (it was restored or discarded)."""
    if saved.file is not None:
        saved.file.unlink(missing_ok=True)


def recoverable(path: Path | None, current_text: str) -> Autosave | None:
    """The autosave worth offering for a document just opened with `current_text`: the
    newest one left by an app that is gone, holding other text. Stale copies are removed;
    those of windows still running are left to them."""
    _sweep_locks()
    offers = []
    for file in _copies(path):
        read = _read(file)
        if read is None:
            continue
        saved, record = read
        if owner_running(saved.owner, saved.pid, record.get("started")):
            continue  # another window is editing it right now
        if saved.text == current_text:
            file.unlink(missing_ok=True)
        else:
            offers.append(saved)
    return max(offers, key=lambda s: s.saved_at, default=None)


def _sweep_locks() -> None:
    """Delete the locks of windows killed after their copies were gone (nothing else
    would: each names a window that will never run again)."""
    try:
        locks = list(autosave_folder().glob("*.lock"))
    except OSError:
        return
    for lock in locks:
        owner_running(lock.stem, 0, None)  # unlinks a lock nobody holds


def owner_running(owner: str, pid: int, started: object) -> bool:
    """Whether the window that wrote an autosave is alive: its lock is held, or (with no
    lock to ask) its pid is a process that started when the writer did."""
    if owner in _LIVE:
        return True
    if owner and fcntl is not None and "/" not in owner and "\0" not in owner:
        lock = _lock_file(owner)
        try:
            fd = os.open(lock, os.O_RDWR)
        except (OSError, ValueError):
            pass  # no lock file: the pid and start time decide
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True  # held: its owner lives
            finally:
                os.close(fd)
            lock.unlink(missing_ok=True)  # its owner is gone; the lock is no one's
            return False
    if pid <= 0 or not isinstance(started, str):
        return False  # nothing tells us it lives: offering the text loses nothing
    return process_start(pid) == started
