"""Writing a command's output file atomically: a temporary file beside it, renamed over it,
so an interrupted write leaves the old file or the new one, never half of one (the
editor's saves do the same, in user_data.write_atomic)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_bytes_via", "write_text_atomic"]


def _umask_mode() -> int:
    # What a plain open() would give the file: the temp file's own mode is 0600.
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_bytes_via(path: str | Path, write: Callable[[Path], object]) -> None:
    """Let `write(tmp)` fill a temporary file beside `path` (same suffix, so writers that
    pick a format by it still do), then rename it over `path`. `write` returning False
    (Qt's way of failing) raises OSError."""
    target = Path(os.path.realpath(path))  # a symlinked output writes through the link
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    try:
        if write(Path(tmp)) is False:
            raise OSError(f"could not write {path}")
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write text atomically (see write_bytes_via)."""
    write_bytes_via(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
