"""Files shipped with the app: example scripts, lessons and the icon.

They live in the repository's top-level `resources/` folder. A wheel installs them inside
this package, as `autograd_viz/resources/{examples,lessons,icons}` (setup.py maps each
folder there), and the PyInstaller bundle puts them at the same place; run from the
source tree (PYTHONPATH=src, or an editable install) they are read where they are.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
_SOURCE_TREE = _HERE.parents[2] / "resources"  # src/autograd_viz/resources -> resources


def _folder() -> Path:
    """Where examples/, lessons/ and icons/ are: beside this file once installed (a
    wheel, the bundle), else in the source tree's top-level resources/."""
    if (_HERE / "examples" / "first_graph.py").is_file():
        return _HERE
    return _SOURCE_TREE


RESOURCES = _folder()
EXAMPLES = RESOURCES / "examples"
LESSONS = RESOURCES / "lessons"
ICON = RESOURCES / "icons" / "autograd-viz.svg"
DEFAULT_EXAMPLE = EXAMPLES / "first_graph.py"


def examples() -> list[Path]:
    """The example scripts, in a stable order (the first graph first)."""
    found = sorted(EXAMPLES.glob("*.py"))
    return sorted(found, key=lambda p: p != DEFAULT_EXAMPLE)


def lessons() -> list[Path]:
    """The lesson files (Markdown), in file-name order."""
    return sorted(LESSONS.glob("*.md"))
