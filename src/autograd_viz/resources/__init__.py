"""Files shipped with the app: example scripts and the icon."""

from __future__ import annotations

from pathlib import Path

RESOURCES = Path(__file__).resolve().parent
EXAMPLES = RESOURCES / "examples"
ICON = RESOURCES / "icons" / "autograd-viz.svg"
DEFAULT_EXAMPLE = EXAMPLES / "first_graph.py"


def examples() -> list[Path]:
    """The example scripts, in a stable order (the first graph first)."""
    found = sorted(EXAMPLES.glob("*.py"))
    return sorted(found, key=lambda p: p != DEFAULT_EXAMPLE)
