"""The one watcher of a child that runs user code (`trace`, `descent --function FILE.py`,
`landscape FILE.py`): it starts `autograd-viz COMMAND … --child-status STATUS` in a session
of its own with a fresh run mark, as the child subreaper (Linux), lets a command-specific
loop watch it, says in one line that Ctrl+C, SIGTERM or SIGHUP stopped it, and then ends
its process group, every process carrying the mark and every orphan below this one, and
removes the status file.

descent and landscape use it with a plain loop (run_watched): `--timeout S` stops the
file's code (its start-up and torch's import not counted), a crash is one line. Their
child writes `started` to the status file when the user's code is about to run, then
`{"code": N}` when it is done. Imports no torch."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from autograd_viz.cli._common import ExitCode, Terminated, ended_by_signals
from autograd_viz.core.platform.process_tree import (
    RUN_MARK,
    end_processes,
    new_run_mark,
    reaping_orphans,
)
from autograd_viz.core.platform.self_command import self_command

STARTUP_LIMIT_S = 120.0  # starting Python and importing torch
POLL_S = 0.05
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
STARTED = "started"

__all__ = [
    "STARTED",
    "child_finish",
    "child_phase",
    "kill_group",
    "run_watched",
    "watched_child",
]


def child_phase(status: str, name: str) -> None:
    """The child: note that it reached phase `name`."""
    with open(status, "a", encoding="utf-8") as out:
        out.write(name + "\n")


def child_finish(status: str, code: int) -> int:
    """The child: record its exit code (a child that dies first wrote none); returns it."""
    child_phase(status, json.dumps({"code": int(code)}))
    return code


def _read(status: str) -> tuple[list[str], int | None]:
    try:
        lines = Path(status).read_text(encoding="utf-8").splitlines()
    except OSError:
        return [], None
    for line in lines:
        if line.startswith("{"):
            with contextlib.suppress(ValueError, KeyError, TypeError):
                return lines, int(json.loads(line)["code"])
    return lines, None


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the child's process group (its own session: all it started and did not move)."""
    with contextlib.suppress(OSError):
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        elif process.poll() is None:
            process.kill()


Watch = Callable[[subprocess.Popen, str], int]  # (the child, its status file) -> exit code


def watched_child(
    command: str,
    argv: Sequence[str],
    file: Path,
    watch: Watch,
    *,
    after: Sequence[str] = (),
    env: dict[str, str] | None = None,
    pass_fds: Sequence[int] = (),
) -> int:
    """Run `autograd-viz COMMAND argv --child-status STATUS after…` in a child watched by
    `watch`; its exit code (130 or 128 + N when Ctrl+C or a signal stopped it). Whatever
    happens, nothing the child started outlives this call and the status file is removed."""
    prog = f"autograd-viz {command}"
    handle, status = tempfile.mkstemp(prefix=f"autograd-viz-{command}-", suffix=".status")
    os.close(handle)
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    mark = env[RUN_MARK] = new_run_mark()  # whatever the file starts inherits it
    # Every orphan that lands below this process meanwhile is the file's.
    with reaping_orphans(), ended_by_signals():
        try:
            # The child starts with `-P` where Python has it (self_command): the caller's
            # working directory is not on its sys.path; our package comes from PYTHONPATH.
            process = subprocess.Popen(
                self_command(command, *argv, "--child-status", status, *after),
                stdin=subprocess.DEVNULL,  # outside the terminal's group, a read would stop
                env=env,
                start_new_session=os.name == "posix",  # one kill reaches what the file started
                pass_fds=tuple(pass_fds),
            )
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(status)
            raise
        try:
            return watch(process, status)
        except KeyboardInterrupt:
            print(f"{prog}: {file}: interrupted", file=sys.stderr, flush=True)
            return 130
        except Terminated as stop:
            name = signal.Signals(int(stop.code) - 128).name
            print(f"{prog}: {file}: stopped by {name}", file=sys.stderr, flush=True)
            return int(stop.code)
        finally:
            kill_group(process)
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                process.wait(timeout=10)
            end_processes(mark)
            with contextlib.suppress(OSError):
                os.unlink(status)


def run_watched(command: str, argv: list[str], file: Path, timeout: float | None) -> int:
    """Run `autograd-viz COMMAND argv --child-status …` in a child; its exit code, or a
    one-line message and TIMEOUT, CRASHED or OUT_OF_MEMORY."""

    def watch(process: subprocess.Popen, status: str) -> int:
        return _watch_phases(f"autograd-viz {command}", process, status, file, timeout)

    return watched_child(command, argv, file, watch)


def _watch_phases(
    prog: str, process: subprocess.Popen, status: str, file: Path, timeout: float | None
) -> int:
    deadline, counting = time.monotonic() + STARTUP_LIMIT_S, False
    while (code := process.poll()) is None:
        if not counting and STARTED in _read(status)[0]:
            counting = True
            deadline = float("inf") if timeout is None else time.monotonic() + timeout
        if time.monotonic() > deadline:
            kill_group(process)
            process.wait()
            what = f"{file} ran longer than the {timeout:g} s timeout and was stopped"
            if not counting:
                what = f"Python could not start {file} within {STARTUP_LIMIT_S:g} s"
            print(f"{prog}: {what}", file=sys.stderr)
            return ExitCode.TIMEOUT
        time.sleep(POLL_S)
    finished = _read(status)[1]
    if finished is not None:
        return finished
    if code < 0 and -code == getattr(signal, "SIGKILL", 9):
        print(f"{prog}: {file} was killed (SIGKILL), likely out of memory", file=sys.stderr)
        return ExitCode.OUT_OF_MEMORY
    how = f"signal {-code}" if code < 0 else f"exit code {code}: os._exit() or a fatal error"
    print(f"{prog}: {file} ended Python itself ({how})", file=sys.stderr)
    return ExitCode.CRASHED
