"""Every process a run of user code started, found and ended, however it hid (Linux).

A script may double-fork and `setsid` a daemon: it then leaves the child's process group
and, once its parent exits, its place in the tree (it is re-parented to init). Two
things still find it:

- a *mark*: the child is started with `AUTOGRAD_VIZ_RUN=<token>` in its environment;
  every process it forks or execs inherits it, and `/proc/PID/environ` keeps the
  environment a process started with, so a sweep of /proc finds them all;
- a *child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`): orphans below a subreaper are
  re-parented to it instead of init, so a command that runs only user code (`trace`)
  can end all of its own descendants, even one that cleared its environment.

Elsewhere (macOS, Windows) these are no-ops and the callers' process-group kill is what
there is. Imports no torch and no Qt.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "RUN_MARK",
    "become_subreaper",
    "descendants",
    "end_processes",
    "marked_processes",
    "new_run_mark",
    "process_start",
    "reaping_orphans",
]

RUN_MARK = "AUTOGRAD_VIZ_RUN"
_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37  # linux/prctl.h
SWEEP_ROUNDS = 20  # a process may fork while being swept: look again until none is left


def new_run_mark() -> str:
    """A fresh token to put in a child's environment as RUN_MARK."""
    return f"{os.getpid()}-{secrets.token_hex(8)}"


def _prctl(option: int, value: int | ctypes.c_int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper(on: bool = True) -> bool:
    """Make this process the child subreaper of its descendants (Linux); whether it worked."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, int(on))


def is_subreaper() -> bool:
    """Whether this process is a child subreaper now (False where there is no such thing)."""
    flag = ctypes.c_int(0)
    return _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag)) and bool(flag.value)  # type: ignore[arg-type]


@contextlib.contextmanager
def reaping_orphans() -> Iterator[None]:
    """While the block runs this process is a subreaper; on the way out every process below
    it that was not there when the block began is ended, and the flag is put back. (Only the
    new ones: a test or the GUI calling in may have children of its own.)"""
    before = set(descendants(os.getpid()))
    was = is_subreaper()
    become_subreaper()
    try:
        yield
    finally:
        end_processes(below_self=True, spare=before)
        # Orphans that ended by themselves are our zombies now: collect them too.
        _reap([pid for pid, start in descendants(os.getpid()) if (pid, start) not in before])
        if not was:
            become_subreaper(False)


def process_start(pid: int) -> str | None:
    """A process's start time from /proc (tells it apart from a later one with its pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22, counted after the name


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of every process below `pid`, read from /proc (Linux; else [])."""
    found: dict[int, str] = {}
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
                if start is not None and child not in found:
                    found[child] = start
                    stack.append(child)
    return list(found.items())


def marked_processes(mark: str) -> list[tuple[int, str]]:
    """(pid, start time) of every process of this user whose environment holds RUN_MARK=mark."""
    needle = f"{RUN_MARK}={mark}".encode() + b"\0"
    found: list[tuple[int, str]] = []
    me = os.getpid()
    for entry in Path("/proc").iterdir() if os.path.isdir("/proc") else ():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()  # only our own user's are readable
        except OSError:
            continue
        if (b"\0" + needle) in (b"\0" + environ):
            start = process_start(int(entry.name))
            if start is not None:
                found.append((int(entry.name), start))
    return found


def _alive_as(pid: int, start: str) -> bool:
    """Whether `pid` is still the process that started at `start`, and not a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return False
    return fields[19] == start and fields[0] not in ("Z", "X")


def _kill(pid: int, start: str) -> bool:
    """SIGKILL `pid` if it is still the process that started at `start`; whether sent."""
    if not _alive_as(pid, start):
        return False  # gone, a zombie already, or a newcomer with its pid
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
        return True
    return False


def _reap(pids: list[int]) -> None:
    """Collect the exit status of those of `pids` that are our own ended children, so they
    leave no zombie; never waits on any other child (a Popen owns its own)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.waitpid(pid, os.WNOHANG)


def end_processes(
    mark: str | None = None,
    known: list[tuple[int, str]] | None = None,
    below_self: bool = False,
    spare: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset(),
) -> list[int]:
    """SIGKILL every process carrying `mark`, those in `known`, and with `below_self` every
    descendant of this process, except those in `spare`; repeat until none is left (a
    process may fork while it is being swept). The pids that were killed."""
    killed: list[int] = []
    pending = list(known or [])
    for _ in range(SWEEP_ROUNDS):
        if mark is not None:
            pending += marked_processes(mark)
        if below_self:
            pending += descendants(os.getpid())
        targets = {pid: start for pid, start in pending if (pid, start) not in spare}
        sent = [pid for pid, start in targets.items() if _kill(pid, start)]
        pending = []
        if not sent:
            break
        killed += sent
        time.sleep(0.01)  # let the signals land: a process that forked meanwhile is next
    _reap(killed)
    return killed
