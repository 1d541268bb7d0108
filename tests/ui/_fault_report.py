"""Helpers for the kernel fault tests: an event-loop watch and the table of outcomes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

TICK_MS = 50


class EventLoopWatch:
    """A timer that should fire every TICK_MS; the longest wait between two firings says
    how long the GUI event loop was not answering."""

    def __init__(self, interval_ms: int = TICK_MS) -> None:
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._last = 0.0
        self.longest_gap_ms = 0.0
        self.ticks = 0

    def _tick(self) -> None:
        now = time.monotonic()
        self.longest_gap_ms = max(self.longest_gap_ms, (now - self._last) * 1000)
        self._last = now
        self.ticks += 1

    def __enter__(self) -> EventLoopWatch:
        self._last = time.monotonic()
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._tick()  # a stall at the very end counts too
        self._timer.stop()


@dataclass
class Row:
    """One case of the table: filled in by its test; FAILED unless the test got to the end."""

    case: str
    expected: str
    result: str = "FAILED (see the test's report)"
    gap_ms: float | None = None
    seconds: float | None = None
    started: float = field(default_factory=time.monotonic)

    def passed(self, result: str, watch: EventLoopWatch | None = None) -> None:
        self.result = result
        self.gap_ms = watch.longest_gap_ms if watch is not None else None
        self.seconds = time.monotonic() - self.started


class FaultTable:
    """Collects rows; at the end of the run writes them to the terminal and to a file."""

    title = "kernel faults (issue 7)"

    def __init__(self, path: Path) -> None:
        self.rows: list[Row] = []
        self.path = path

    def row(self, case: str, expected: str) -> Row:
        row = Row(case, expected)
        self.rows.append(row)
        return row

    def lines(self) -> list[str]:
        header = ("user code", "behaviour users get", "longest GUI gap", "time")
        body = [
            (
                r.case,
                r.result,
                "-" if r.gap_ms is None else f"{r.gap_ms:.0f} ms",
                "-" if r.seconds is None else f"{r.seconds:.1f} s",
            )
            for r in self.rows
        ]
        widths = [max(len(cells[i]) for cells in [header, *body]) for i in range(4)]

        def line(cells: tuple[str, ...]) -> str:
            return " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

        return [line(header), "-+-".join("-" * w for w in widths), *map(line, body)]

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.rows:
            return
        lines = self.lines()
        self.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        terminalreporter.section(self.title)
        for text in lines:
            terminalreporter.write_line(text)
        terminalreporter.write_line(f"(also written to {self.path})")
