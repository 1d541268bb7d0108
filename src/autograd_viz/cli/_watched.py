"""`descent --function FILE.py` and `landscape FILE.py` run the user's file in a child
process, as `trace` does: `--timeout S` stops it (its start-up and torch's import not
counted), the child has the kernel's memory cap, a crash is one line, and nothing the
file started outlives the command. The child writes `started` to a status file when the
user's code is about to run, then `{"code": N}` when it is done. Imports no torch."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
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

__all__ = ["STARTED", "child_finish", "child_phase", "run_watched"]


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


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        elif process.poll() is None:
            process.kill()


def run_watched(command: str, argv: list[str], file: Path, timeout: float | None) -> int:
    """Run `autograd-viz COMMAND argv --child-status …` in a child; its exit code, or a
    one-line message and TIMEOUT, CRASHED or OUT_OF_MEMORY. As `trace` does, it ends every
    process the file started (a double-forked daemon too) and SIGTERM/SIGHUP stop the child."""
    with reaping_orphans(), ended_by_signals():
        return _run_watched(command, argv, file, timeout)


def _run_watched(command: str, argv: list[str], file: Path, timeout: float | None) -> int:
    prog = f"autograd-viz {command}"
    handle, status = tempfile.mkstemp(prefix=f"autograd-viz-{command}-", suffix=".status")
    os.close(handle)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    mark = env[RUN_MARK] = new_run_mark()  # whatever the file starts inherits it
    process = subprocess.Popen(
        self_command(command, *argv, "--child-status", status),
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=os.name == "posix",
    )
    try:
        deadline, counting = time.monotonic() + STARTUP_LIMIT_S, False
        while (code := process.poll()) is None:
            if not counting and STARTED in _read(status)[0]:
                counting = True
                deadline = float("inf") if timeout is None else time.monotonic() + timeout
            if time.monotonic() > deadline:
                _kill_group(process)
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
    except KeyboardInterrupt:
        print(f"{prog}: {file}: interrupted", file=sys.stderr)
        return 130
    except Terminated as stop:
        print(
            f"{prog}: {file}: stopped by {signal.Signals(int(stop.code) - 128).name}",
            file=sys.stderr,
        )
        return int(stop.code)
    finally:
        _kill_group(process)
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.wait(timeout=10)
        end_processes(mark)
        with contextlib.suppress(OSError):
            os.unlink(status)
