"""A process-wide setting changed for blocks that may nest and overlap across threads (a
layout on a worker, a player built on the GUI thread, a block inside another): the first
block in saves the setting and the last one out puts it back. Each block saving and
restoring for itself could leave the changed value in place for good (one thread
restoring what another had changed)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class SharedSetting(Generic[T]):
    """`read` and `write` a setting; `changed()` holds `changing(saved)` for a block."""

    def __init__(
        self, read: Callable[[], T], write: Callable[[T], None], changing: Callable[[T], T]
    ) -> None:
        self._read, self._write, self._changing = read, write, changing
        self._lock = threading.Lock()
        self._open = 0
        self._saved = read()

    @contextmanager
    def changed(self) -> Iterator[None]:
        """The changed value for the block; the saved one back when the last block ends."""
        with self._lock:
            if self._open == 0:
                self._saved = self._read()
                self._write(self._changing(self._saved))
            self._open += 1
        try:
            yield
        finally:
            with self._lock:
                self._open -= 1
                if self._open == 0:
                    self._write(self._saved)
