"""The commands' argument checks: every bad value exits 2 with one line naming the flag and
what it wants, never argparse's usage block or a traceback. Imports no torch and no Qt."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import NoReturn

__all__ = ["OneLineParser", "UsageError", "count", "finite", "number", "point"]


class UsageError(SystemExit):
    """A bad argument, already said in one line: exit 2 (main() returns it as a code)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (`PROG: what is wrong`) and exit 2."""

    def error(self, message: str) -> NoReturn:
        """Say what is wrong in one line and exit 2 (as argparse does, less the usage)."""
        print(f"{self.prog}: {message} (see --help)", file=sys.stderr)
        raise UsageError(2)


def count(minimum: int = 1, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum]."""
    top = "" if maximum is None else f" and ≤ {maximum:,}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"wants a whole number, not {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"wants a whole number ≥ {minimum}{top}, not {text}")
        return value

    return parse


def number(minimum: float = 0.0, strict: bool = True) -> Callable[[str], float]:
    """An argparse type: a finite number > minimum (≥ minimum when not strict)."""
    sign = ">" if strict else "≥"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"wants a number, not {text!r}") from None
        if not math.isfinite(value) or value < minimum or (strict and value == minimum):
            raise argparse.ArgumentTypeError(
                f"wants a finite number {sign} {minimum:g}, not {text}"
            )
        return value

    return parse


def finite(text: str) -> float:
    """An argparse type: any finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants a number, not {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"wants a finite number, not {text}")
    return value


def point(text: str) -> tuple[float, float]:
    """An argparse type: `W,B`, two finite numbers."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"wants two numbers W,B (e.g. 0.5,1.0), not {text!r}")
    try:
        w, b = (finite(part) for part in parts)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"wants two finite numbers W,B (e.g. 0.5,1.0), not {text!r}"
        ) from None
    return w, b
