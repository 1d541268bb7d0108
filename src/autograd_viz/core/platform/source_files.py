"""Reading and saving the learner's scripts: refuse what the editor cannot show, never
leave a half-written file behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from autograd_viz.core.platform.user_data import write_atomic

MAX_BYTES = 5 * 1024 * 1024  # a script this big is data, not a lesson; the editor would crawl


class UnreadableFile(Exception):
    """A file the editor will not open; str() is a sentence for the learner."""


def read_source_file(path: Path) -> str:
    """The text of a script with "\\n" line ends, or UnreadableFile saying why not."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise UnreadableFile(f"{path.name} is not a file.")
        if size > MAX_BYTES:
            raise UnreadableFile(
                f"{path.name} is {size / 2**20:.1f} MB: too big for the editor "
                f"(the limit is {MAX_BYTES // 2**20} MB)."
            )
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(f"{path.name} cannot be read: {exc.strerror or exc}.") from None
    if b"\0" in data:
        raise UnreadableFile(f"{path.name} looks like a binary file (it contains NUL bytes).")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(
            f"{path.name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
            f"position {exc.start}). Save it as UTF-8 in another editor first."
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def save_source_file(path: Path, text: str) -> None:
    """Write a script atomically (temp file, fsync, rename), keeping the file's permissions."""
    # Through a symlink, replace the file it points to, not the link itself.
    target = Path(path).resolve()
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    write_atomic(target, text, mode=mode)


def _umask() -> int:
    """The process umask, read without changing it where the system allows."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere the only way to read it is to set it
    os.umask(mask)
    return mask
