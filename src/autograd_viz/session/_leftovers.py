"""The kernel's files in TMPDIR, and sweeping those an app killed with SIGTERM or kill -9
left behind.

Each kernel of ours gets one private folder, `autograd-viz-XXXX/`, holding its ipc sockets
and its connection file (0600, holding the HMAC key), and an `owner` file: the app's pid and
that process's start time. A clean exit removes the folder; a killed app cannot, so the next
start removes every such folder of this user whose owner is gone (its pid is dead, or now
belongs to a process that started at another time).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from autograd_viz.core.platform.process_tree import process_start

PREFIX = "autograd-viz-"
OWNER = "owner"
CONNECTION = "kernel.json"

__all__ = ["CONNECTION", "make_kernel_folder", "sweep_stale_kernel_folders"]


def make_kernel_folder() -> str:
    """A new private folder for a kernel's sockets and connection file, marked as ours;
    the stale ones a killed app left are swept first."""
    sweep_stale_kernel_folders()
    folder = tempfile.mkdtemp(prefix=PREFIX)  # 0700
    Path(folder, OWNER).write_text(f"{os.getpid()} {process_start(os.getpid()) or ''}\n")
    return folder


def _owner_alive(folder: Path) -> bool | None:
    """Whether the app that made `folder` still runs; None when the folder is not one of ours."""
    try:
        pid_text, _, start = folder.joinpath(OWNER).read_text().strip().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    if not start.strip() or process_start(os.getpid()) is None:
        return True  # no /proc to tell by (not Linux): never remove what may be in use
    return process_start(pid) == start.strip()


def sweep_stale_kernel_folders(where: str | None = None) -> list[str]:
    """Remove this user's kernel folders whose owner is gone; the ones removed."""
    removed: list[str] = []
    base = Path(where or tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for folder in base.glob(PREFIX + "*"):
            with contextlib.suppress(OSError):
                if folder.is_symlink() or not folder.is_dir():
                    continue
                if folder.stat().st_uid != getattr(os, "getuid", lambda: -1)():
                    continue
                if _owner_alive(folder) is False:
                    shutil.rmtree(folder, ignore_errors=True)
                    removed.append(str(folder))
    return removed
