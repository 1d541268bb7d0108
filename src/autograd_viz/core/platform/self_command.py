"""The command line that starts this very app again in a child process.

From a Python install that is `python -P -m autograd_viz …`; from a frozen bundle
(PyInstaller), which has no separate Python to run `-m` with, it is the bundle's own
executable, whose entry point (`autograd_viz.cli.main`) understands the same arguments.

`-P` (Python 3.11+) keeps the working directory off the child's sys.path, where `-m`
would put it first: a user's `inspect.py` or `torch.py` there must not replace the modules
our own startup imports. The caller puts our package on PYTHONPATH instead.
"""

from __future__ import annotations

import sys


def is_frozen() -> bool:
    """Whether this process is a frozen bundle."""
    return bool(getattr(sys, "frozen", False))


def self_command(*args: str) -> list[str]:
    """`autograd-viz ARGS…` as a child process command."""
    if is_frozen():
        return [sys.executable, *args]
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []
    return [sys.executable, *safe_path, "-m", "autograd_viz", *args]
