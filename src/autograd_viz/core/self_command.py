"""The command line that starts this very app again in a child process.

From a Python install that is `python -m autograd_viz …`; from a frozen bundle
(PyInstaller), which has no separate Python to run `-m` with, it is the bundle's own
executable, whose entry point (`autograd_viz.cli.main`) understands the same arguments.
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
    return [sys.executable, "-m", "autograd_viz", *args]
