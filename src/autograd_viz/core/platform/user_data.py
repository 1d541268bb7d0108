"""Where the app keeps the user's things between launches: progress, autosaves, settings.

Everything read here may be damaged or hostile (a half-written disk, a hand edit, a
200,000-deep JSON array): reading never raises. A file that cannot be used is renamed
`NAME.corrupt-DATE` (kept, never deleted: it may hold the learner's text) and a note says
so; `startup_notes()` hands the notes to whoever can show them."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

MAX_JSON_BYTES = 16 * 2**20  # far above any file the app writes; a bigger one is not ours

_notes: list[str] = []  # what start-up should tell the learner (corrupt files, folders)
_fallbacks: dict[str, Path] = {}  # a data folder that could not be made -> the one used


def data_dir() -> Path:
    """The user's data folder: $AUTOGRAD_VIZ_DATA_DIR, else the XDG data home (created).

    A folder that cannot be created (a file in the way, no permission) does not stop the
    app: a private temporary folder is used instead, and a note says that nothing will be
    kept between launches."""
    override = os.environ.get("AUTOGRAD_VIZ_DATA_DIR")
    key = override or os.environ.get("XDG_DATA_HOME") or "~"
    if key in _fallbacks:
        return _fallbacks[key]
    path = Path(key)
    try:
        if override:
            path = Path(override)
        else:  # Path.home() raises where $HOME is unset and the user has no passwd entry
            base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
            path = Path(base) / "autograd-viz"
        path.mkdir(parents=True, exist_ok=True)
        return path
    except (OSError, ValueError, RuntimeError, KeyError) as exc:  # ValueError: a NUL byte
        try:  # a fresh private folder: a shared name in /tmp could be another user's
            fallback = Path(tempfile.mkdtemp(prefix="autograd-viz-data-"))
            atexit.register(shutil.rmtree, fallback, ignore_errors=True)  # kept for no one
        except OSError:
            fallback = path  # reads then fail softly, writes say why where they happen
        _fallbacks[key] = fallback
        reason = getattr(exc, "strerror", None) or exc
        add_note(
            f"The data folder {path} cannot be created ({reason}): using {fallback}; "
            "progress and settings will not be kept."
        )
        return fallback


def add_note(text: str) -> None:
    """Remember a line to show the learner once the window is up."""
    if text not in _notes:
        _notes.append(text)


def startup_notes() -> list[str]:
    """The notes gathered so far (and forget them: each is shown once)."""
    notes = list(_notes)
    _notes.clear()
    return notes


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write text so a crash mid-write leaves the old file or the new one, never half of one
    (`mode`: the permission bits the new file gets; default the temp file's 0o600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            if mode is not None:
                os.chmod(tmp, mode)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX; elsewhere a folder cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_json(path: Path, default: Any, expect: type | None = None) -> Any:
    """A JSON file's content, or `default` when it is missing or unusable. An unusable one
    (not JSON, too deep, too big, not a file, or not of type `expect`) is set aside."""
    try:
        info = path.stat()
    except (OSError, ValueError):
        return default  # missing (the usual case), or a path the system refuses
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block the start-up, /dev/zero never end
        set_aside(path, "is not a regular file")
        return default
    if info.st_size > MAX_JSON_BYTES:
        set_aside(path, f"is {info.st_size:,} bytes, not a file the app wrote")
        return default
    try:
        raw = path.read_bytes()
    except OSError as exc:
        add_note(f"{path} cannot be read ({exc.strerror or exc}); it was left alone.")
        return default
    try:
        value = json.loads(raw.decode("utf-8"))
    except RecursionError:  # nested past what Python's stack can hold
        set_aside(path, "is JSON nested too deeply to read")
        return default
    except ValueError as exc:
        set_aside(path, f"is not valid JSON ({_short(exc)})")
        return default
    if expect is not None and not isinstance(value, expect):
        set_aside(path, f"holds a JSON {type(value).__name__}, not an {expect.__name__}")
        return default
    return value


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:120]


def set_aside(path: Path, why: str) -> Path | None:
    """Rename a damaged file to `NAME.corrupt-DATE` (so it is neither read again nor lost)
    and leave a note saying so; returns the new name (None if it could not be renamed)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    for n in range(2, 100):  # two in the same second keep both
        if not target.exists():
            break
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    try:
        os.replace(path, target)
    except OSError as exc:
        add_note(
            f"{path.name} {why} and cannot be renamed ({exc.strerror or exc}); it is ignored "
            f"(in {path.parent})."
        )
        return None
    add_note(
        f"{path.name} {why}: the app started without it, renamed {target.name} (in {path.parent})."
    )
    return target
