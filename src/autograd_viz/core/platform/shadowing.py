"""A learner's own file that hides a module we need: `torch.py` in the script's folder, the
working directory or PYTHONPATH makes `import torch` find it instead of PyTorch. Every
command and the kernel name it in the same sentence. Imports no torch and no Qt."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["HiddenModule", "import_torch", "shadowing_file"]


class HiddenModule(ImportError):
    """torch could not be imported because a user's file of that name came first."""


def _without_working_directory() -> list[str]:
    here = os.path.realpath(os.getcwd())
    return [p for p in sys.path if p and os.path.realpath(p) != here]


def shadowing_file(module: str = "torch", *, safe_path: bool = False) -> str | None:
    """When `module` cannot be imported because a user's file of that name comes first on
    sys.path, a sentence that names it ("a file torch.py in /path hides PyTorch"); else None.
    With `safe_path` the working directory is left out, as for a `python -P` child."""
    try:
        if safe_path:
            spec = importlib.machinery.PathFinder.find_spec(module, _without_working_directory())
        else:
            spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None) or ""
    if not origin.endswith(".py") or Path(origin).name == "__init__.py":
        return None  # the real package (a folder with __init__.py), or a built-in
    what = "PyTorch" if module == "torch" else f"the module {module}"
    return f"a file {Path(origin).name} in {Path(origin).parent} hides {what}"


def import_torch():  # -> torch (not imported where this module is)
    """`import torch`, raising HiddenModule with the sentence above when a user's file hid it."""
    try:
        import torch
    except Exception as exc:
        hidden = shadowing_file("torch")
        if hidden is None:
            raise
        raise HiddenModule(hidden) from exc
    return torch
