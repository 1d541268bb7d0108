"""What the commands share: their exit codes and reading the user's script. Imports no
torch and no Qt."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator
from enum import IntEnum
from pathlib import Path

from autograd_viz.core.platform.shadowing import shadowing_file

__all__ = [
    "ExitCode",
    "ended_by_signals",
    "hidden_torch",
    "read_source",
    "runnable_source",
    "shadowing_file",
    "split_script_args",
]


class ExitCode(IntEnum):
    """What `autograd-viz` commands exit with (a script's own sys.exit(N) exits N)."""

    OK = 0
    USER_ERROR = 1  # the user's script raised (the trace is still written)
    USAGE = 2  # bad arguments, unreadable file
    # `trace` runs the script in a child process (cli.trace) and tells these apart:
    TIMEOUT = 3  # the script ran past --timeout S and was stopped (no trace written)
    CRASHED = 4  # the script killed Python: os._exit(), a segfault (no trace written)
    OUT_OF_MEMORY = 5  # an allocation failed (the trace records it) or the OOM killer struck


def read_source(path: Path) -> str:
    """The text of a script, or SystemExit(2) with a one-line reason (missing, not UTF-8,
    binary, too big: the same checks as the editor's Open)."""
    from autograd_viz.core.platform.source_files import UnreadableFile, read_source_file

    if not path.exists():
        raise SystemExit(f"autograd-viz: no such file: {path}")
    try:
        return read_source_file(path)
    except UnreadableFile as exc:
        raise SystemExit(f"autograd-viz: {exc}") from None


def runnable_source(path: Path, prog: str, *, safe_path: bool = True) -> str | None:
    """The text of a script the command can run, or None once the one-line reason it
    cannot is printed: it is unreadable (read_source), or a user's file hides PyTorch
    (hidden_torch, with `safe_path` as there)."""
    try:
        source = read_source(path)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return None
    return None if hidden_torch(prog, safe_path=safe_path) else source


def split_script_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(our arguments, the script's): the script's are all those after the first `--`."""
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


class Terminated(SystemExit):
    """SIGTERM or SIGHUP arrived: unwinds like sys.exit(128 + N), so every `finally` that
    ends a child and removes its files runs before the command exits."""


@contextlib.contextmanager
def ended_by_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise Terminated (exit 128 + N) in the main
    thread instead of killing this process outright with its child still running."""

    def terminate(number: int, _frame: object) -> None:
        raise Terminated(128 + number)

    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    saved = {}
    try:
        for number in wanted:
            saved[number] = signal.signal(number, terminate)
    except ValueError:  # not the main thread (a test calling in): nothing to install
        pass
    try:
        yield
    finally:
        for number, previous in saved.items():
            signal.signal(number, previous)


def hidden_torch(prog: str, *, safe_path: bool = True) -> bool:
    """Whether a user's file hides PyTorch; if so the command's one line says which
    ("PROG: a file torch.py in /path hides PyTorch"). `safe_path`: as a `python -P` child
    would import it (the working directory left out); without it, as this process would."""
    hidden = shadowing_file("torch", safe_path=safe_path)
    if hidden is not None:
        print(f"{prog}: {hidden}", file=sys.stderr)
    return hidden is not None
