"""Where the commands write: never over their input, always atomically, and trace JSON on
a standard output that the user's code cannot write into. Imports no torch and no Qt."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from autograd_viz.core.platform.atomic_files import write_bytes_via, write_text_atomic

__all__ = [
    "absolute_output",
    "json_output_problem",
    "output_over_input",
    "real_stdout",
    "unwritable",
    "write_bytes_via",
    "write_text_atomic",
]


def _same_file(a: Path, b: Path) -> bool:
    # samefile sees through symlinks and hard links; a missing output cannot be the input.
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def output_over_input(outputs: dict[str, str | Path | None], inputs: list[str | Path]) -> str:
    """A one-line refusal when an output path (by flag) is one of the input files, else ""."""
    for flag, out in outputs.items():
        if out is None:
            continue
        for source in inputs:
            if _same_file(Path(out), Path(source)):
                return f"{flag} {out} is the input file {source}: it would be overwritten"
    return ""


def unwritable(path: str | Path | None) -> str:
    """Why `path` cannot be written (its folder missing or read-only), else ""; checked
    before any work, so a long run does not end in a write that fails."""
    if path is None:
        return ""
    folder = Path(os.path.realpath(path)).parent
    if not folder.is_dir():
        return f"cannot write {path}: no folder {folder}"
    if not os.access(folder, os.W_OK):
        return f"cannot write {path}: the folder {folder} is not writable"
    if Path(path).is_dir():
        return f"cannot write {path}: it is a folder"
    return ""


def json_output_problem(json_out: str | None, inputs: list[str | Path]) -> str:
    """Why `--json OUT` cannot be written: it is one of the input files, or its folder is
    missing or read-only; "" when it can (checked before any of the user's code runs)."""
    return output_over_input({"--json": json_out}, inputs) or unwritable(json_out)


def absolute_output(path: str | None) -> str | None:
    """The output path made absolute now, before the user's code can os.chdir."""
    return None if path is None else os.path.abspath(path)


@contextlib.contextmanager
def real_stdout() -> Iterator[IO[str]]:
    """While the block runs, file descriptor 1 is standard error, so that nothing the user's
    code writes, even with os.write(1, …) or a subprocess, lands in our JSON; yields the
    real standard output, to write the result to (it stays open after the block, as fd 1
    stays standard error for the user's atexit handlers)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    previous = sys.stdout
    # A wrapper of its own: the user's sys.stdout.close() must not close our stderr.
    sys.stdout = open(1, "w", 1, "utf-8", "backslashreplace", closefd=False)  # noqa: SIM115
    try:
        yield out
    finally:
        with contextlib.suppress(OSError, ValueError):  # the user may have closed it
            sys.stdout.flush()
        sys.stdout = previous
