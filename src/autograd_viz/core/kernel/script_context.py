"""Make a run look like `python FILE` to the code it runs, and put everything back after.

`python FILE ARGS…` gives the script `sys.argv == [FILE, *ARGS]`, a fresh `__main__`
module whose namespace is the script's globals (so pickle and `torch.save` find the classes
it defines), the script's own folder as `sys.path[0]` (so a sibling `import helper` works
from anywhere), and the whole recursion limit for its own frames. Here a run starts deep
inside our code (the trace child's command line, the kernel's event loop, `run_source`) and
the tracer adds frames to every torch call, so while the script runs each of those is
arranged as Python would have it, and restored when it returns.

`as_python_script` is entered by whoever knows the file (cli_trace, protocol.kernel_run);
`recursion_headroom` by `run_source`, the one place that knows where the script's frames
begin. `exit_status` says what Python does with a `SystemExit`.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

# What the tracer adds under a torch call made at the deepest point of the user's
# recursion: the dispatch to the mode's __torch_function__ and the recording under it.
# Measured on torch 2.13 / Python 3.11 as 4-7 recursion counts for an op, a module call,
# backward() and an optimizer step; 20 leaves room without moving Python's limit far.
TRACER_FRAMES_PER_CALL = 20


def main_module(file: str | os.PathLike[str] | None = None) -> types.ModuleType:
    """A fresh `__main__` module as `python FILE` makes it: `__file__` is FILE joined to the
    working directory when relative, not normalised (`/cwd/../x.py`), as Python 3.11 does."""
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = builtins
    if file is not None:
        file = os.fspath(file)
        module.__dict__["__file__"] = (
            file if os.path.isabs(file) else os.path.join(os.getcwd(), file)
        )
        module.__dict__["__cached__"] = None
    return module


def script_folder(file: str | os.PathLike[str]) -> str:
    """The folder `python FILE` puts first on sys.path: the script's, links resolved."""
    return os.path.dirname(os.path.realpath(file))


@contextlib.contextmanager
def as_python_script(
    argv: list[str],
    main: types.ModuleType | None = None,
    folder: str | None = None,
    replace_first_path: bool = False,
) -> Iterator[None]:
    """While the block runs, `sys.argv` is `argv`, `sys.modules['__main__']` is `main`
    (when given), and `folder` is `sys.path[0]` (when given): inserted there, or in place
    of the entry that was first when `replace_first_path` (the working directory that
    `python -m` put there, which `python FILE` would not have). All restored afterwards."""
    saved_argv = sys.argv
    saved_main = sys.modules.get("__main__")
    first = sys.path[0] if replace_first_path and sys.path else None
    sys.argv = list(argv)
    if main is not None:
        sys.modules["__main__"] = main
    if folder is not None:
        if first is not None:
            sys.path[0] = folder
        else:
            sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.argv = saved_argv
        if main is not None:
            if saved_main is None:
                sys.modules.pop("__main__", None)
            else:
                sys.modules["__main__"] = saved_main
        if folder is not None:
            # The script may have changed sys.path: take back our entry wherever it went.
            with contextlib.suppress(ValueError):
                where = sys.path.index(folder)
                if first is not None:
                    sys.path[where] = first
                else:
                    del sys.path[where]


def frames_below(frame: types.FrameType | None) -> int:
    """How many frames are on the stack from `frame` (included) down to the first."""
    count = 0
    while frame is not None:
        count += 1
        frame = frame.f_back
    return count


@contextlib.contextmanager
def recursion_headroom(
    caller: types.FrameType | None, per_call: int = TRACER_FRAMES_PER_CALL
) -> Iterator[None]:
    """Raise the recursion limit by the frames under the code about to run, so that its
    module level sits as deep as a script's under `python FILE`, plus `per_call` for the
    tracer's frames around a torch call; put back afterwards unless the code set its own."""
    previous = sys.getrecursionlimit()
    raised = previous + frames_below(caller) + per_call
    sys.setrecursionlimit(raised)
    try:
        yield
    finally:
        if sys.getrecursionlimit() == raised:
            sys.setrecursionlimit(previous)


def exit_status(exc: SystemExit) -> tuple[int, str]:
    """(the exit code, the text on stderr) that `python FILE` gives for this SystemExit:
    None is 0, an int is itself, anything else is printed and exits 1."""
    code = exc.code
    if code is None:
        return 0, ""
    if isinstance(code, int):
        return code, ""
    return 1, f"{code}\n"


def loop_statements(tree: ast.Module, code: str) -> list[dict[str, Any]]:
    """The script's `for` and `while` statements, for the trace's `loops`: the line each
    starts on, the last line of its body, and its first line as written (`for t in
    range(300):`), so a picture can fold the iterations of a loop and name it."""
    lines = code.splitlines()
    loops = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            end = max((getattr(n, "end_lineno", None) or n.lineno) for n in node.body)
            text = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
            loops.append({"line": node.lineno, "end": end, "text": text[:120]})
    return sorted(loops, key=lambda d: (d["line"], -d["end"]))
