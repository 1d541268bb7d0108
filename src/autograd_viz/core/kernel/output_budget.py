"""A flood of prints is cut at its source: the process that runs user code.

`print("x" * 10**8)` or a tight print loop would otherwise push megabytes a second through
the kernel's messages into the app's console, which can lay out only so much text a second.
`OutputBudget` wraps a text stream: a burst passes at once, after that a steady rate, and
what is over is counted and replaced by one note when output slows down or the run ends.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

# Passed through at once: a traceback, a table, a thousand lines. Kept under the console's
# 100,000-character cut per chunk, so the note that follows a burst is never cut off.
BURST_CHARS = 50_000
RATE_CHARS = 50_000  # per second after the burst: more than anyone can read


class OutputBudget:
    """A stream that passes at most `burst` characters at once and `rate` a second after."""

    def __init__(
        self,
        stream: TextIO,
        burst: int = BURST_CHARS,
        rate: int = RATE_CHARS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.burst, self.rate, self._clock = burst, rate, clock
        self._tokens = float(burst)
        self._last = clock()
        self.dropped = 0  # characters not shown since the last note
        self.dropped_total = 0

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now

    def write(self, text: str) -> int:
        """Pass `text` on as far as the budget allows; count the rest."""
        self._refill()
        if self.dropped and self._tokens >= min(self.burst, self.rate):
            self.note()  # output is flowing again: say where the gap was
        shown = text if len(text) <= self._tokens else text[: int(self._tokens)]
        if shown:
            self.stream.write(shown)
            self._tokens -= len(shown)
        if len(shown) < len(text):
            self.dropped += len(text) - len(shown)
            self.dropped_total += len(text) - len(shown)
        return len(text)

    def note(self) -> None:
        """Write the note for what was dropped since the last one (nothing if nothing was)."""
        if self.dropped:
            self.stream.write(
                f"\n[… {self.dropped:,} characters of output not shown: more than the "
                f"console can keep up with ({self.rate:,} a second after the first "
                f"{self.burst:,}) …]\n"
            )
            self.dropped = 0

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, encoding, isatty…
        return getattr(self.stream, name)


@contextlib.contextmanager
def budgeted_output(burst: int = BURST_CHARS, rate: int = RATE_CHARS) -> Iterator[None]:
    """Put sys.stdout and sys.stderr (each its own budget) behind an OutputBudget."""
    saved = sys.stdout, sys.stderr
    budgets = [OutputBudget(stream, burst, rate) for stream in saved]
    sys.stdout, sys.stderr = budgets
    try:
        yield
    finally:
        # Code that swapped the streams itself keeps its choice; ours are undone.
        if sys.stdout is budgets[0]:
            sys.stdout = saved[0]
        if sys.stderr is budgets[1]:
            sys.stderr = saved[1]
        for budget in budgets:
            budget.note()
