"""Where the app keeps the user's things between launches: progress, autosaves, settings."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def data_dir() -> Path:
    """The user's data folder: $AUTOGRAD_VIZ_DATA_DIR, else the XDG data home (created)."""
    override = os.environ.get("AUTOGRAD_VIZ_DATA_DIR")
    if override:
        path = Path(override)
    else:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        path = Path(base) / "autograd-viz"
    path.mkdir(parents=True, exist_ok=True)
    return path


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


def read_json(path: Path, default: Any) -> Any:
    """A JSON file's content, or `default` when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default
