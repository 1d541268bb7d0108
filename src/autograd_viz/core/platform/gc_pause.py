"""Fewer garbage collections while many small objects are built beside a large trace.

At Python's default thresholds the cyclic collector runs every 700 new containers and, now
and then, rescans every object in the process. Next to a trace of 50,000 events that made
building a player's steps 3.5x slower and parsing a trace stall the GUI thread for 0.3 s
(measured). Inside `collections_postponed()` young collections are rarer and full ones
wait; the caller's thresholds come back at the end.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

POSTPONED_THRESHOLD = (50_000, 50, 1_000_000)

# The thresholds are the process's, and blocks overlap: a layout on a worker thread, a
# player built on the GUI thread, a block inside another. Each saving and restoring for
# itself could leave the postponed thresholds in place for good (one thread restoring
# what another had raised), so the first block in saves and the last one out restores.
_lock = threading.Lock()
_open = 0
_saved = gc.get_threshold()


@contextmanager
def collections_postponed() -> Iterator[None]:
    """Raise the collector's thresholds for the duration of the block (blocks may nest
    and overlap across threads; the thresholds come back when the last one ends)."""
    global _open, _saved
    with _lock:
        if _open == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(*POSTPONED_THRESHOLD)
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0:
                gc.set_threshold(*_saved)


def freeze_loaded_objects() -> None:
    """Move every object alive now out of the collector's sight, for good.

    Call it once the process has loaded what it keeps for its whole life (torch, the
    window): a full collection rescans every tracked object, and with torch loaded that
    measured 130-200 ms, long enough to freeze a window when it lands on the GUI thread.
    What is frozen is still freed by reference counting; only cycles among it stay.
    """
    gc.freeze()
