"""The kernel's processes, read from /proc: what it started, how to end all of it, and
why it ended, in a learner's words."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def process_start(pid: int) -> str | None:
    """A process's start time from /proc (tells it apart from a later one with its pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22, counted after the name


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of every process below `pid`, read from /proc (Linux; else [])."""
    found: list[tuple[int, str]] = []
    stack = [pid]
    while stack:
        parent = stack.pop()
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                pids = [int(p) for p in children.read_text().split()]
            except (OSError, ValueError):
                continue
            for child in pids:
                start = process_start(child)
                if start is not None and all(child != seen for seen, _ in found):
                    found.append((child, start))
                    stack.append(child)
    return found


def kill_leftovers(pgid: int | None, processes: list[tuple[int, str]]) -> None:
    """SIGKILL the kernel's process group and any process it started in a session of its
    own (`subprocess.Popen(..., start_new_session=True)`), so a restart leaves nothing."""
    if pgid is not None and hasattr(os, "killpg"):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    for pid, start in processes:
        if process_start(pid) == start:  # still that process, not a newcomer with its pid
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def death_reason(code: int | None) -> str:
    """Why a kernel process ended, in a learner's words."""
    if code is None:
        return "the code crashed or exited it"
    if code < 0:
        with contextlib.suppress(ValueError):
            name = signal.Signals(-code).name
            return {
                "SIGSEGV": "a crash in native code: segmentation fault",
                "SIGBUS": "a crash in native code: bus error",
                "SIGABRT": "native code aborted it",
                "SIGKILL": "it was killed, most often because the machine ran out of memory",
            }.get(name, f"it was ended by {name}")
        return f"it was ended by signal {-code}"
    return f"it exited with code {code}: os._exit() or a fatal error"
