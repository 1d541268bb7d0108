"""The kernel's processes, read from /proc: what it started, how to end all of it, and
why it ended, in a learner's words."""

from __future__ import annotations

import contextlib
import os
import signal

from autograd_viz.core.platform.process_tree import descendants, end_processes, process_start

__all__ = ["death_reason", "descendants", "kill_leftovers", "process_start"]


def kill_leftovers(
    pgid: int | None, processes: list[tuple[int, str]], mark: str | None = None
) -> None:
    """SIGKILL the kernel's process group, any process it started in a session of its own
    (`subprocess.Popen(..., start_new_session=True)`), and every process carrying its run
    `mark` (a double-forked `setsid` daemon is no longer below it), so nothing is left."""
    if pgid is not None and hasattr(os, "killpg"):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    # Each only while still that process, not a newcomer with its pid.
    end_processes(mark, known=processes)


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
