"""Freeing a big list a slice at a time, on a thread of its own.

Dropping the last reference to a list of 18,000 event dicts frees them and everything they
hold (about a million objects for the 8k-node RNN) in one cascade that never lets go of
the GIL: 30-60 ms measured, on the GUI thread when a new run replaced it there. Emptied
here in slices, with a pause between them, no thread waits on it for more than a slice.
"""

from __future__ import annotations

import atexit
import queue
import sys
import threading
import time
from typing import Any

__all__ = ["SHRED_SLICE", "shred"]

SHRED_SLICE = 500  # items freed at a time: about 1 ms of the RNN's events (measured)
# A pause after each slice, the GIL free: a thread that never sleeps made the GUI thread
# wait a switch interval (5 ms) for the GIL after each of its many calls into Qt while it
# painted (a stall of 90-100 ms, measured), where a short sleep hands the GIL over at once.
SHRED_PAUSE_S = 0.004
_ORPHANS: queue.SimpleQueue[list[Any]] = queue.SimpleQueue()
_started = threading.Lock()
_thread: threading.Thread | None = None


def shred(lists: list[list[Any]]) -> int:
    """Take the lists in `lists` that nothing else refers to, empty `lists`, and free their
    items a slice at a time on the shredder's thread; returns how many were taken.

    A list something else still holds (another trace sharing its events, a view) is left
    alone: it is only let go of here, as it would have been anyway.
    """
    global _thread
    if sys.is_finalizing() or _closing:
        # No thread can start any more: Thread.start() waited forever for one (a process
        # holding a big trace at exit hung there). The caller frees the lists itself.
        return 0
    taken = 0
    while lists:
        lst = lists.pop()
        # Held by `lst` and getrefcount's argument alone: nobody else can see it again.
        if sys.getrefcount(lst) == 2:
            _ORPHANS.put(lst)
            taken += 1
        del lst
    if taken:
        with _started:
            if _thread is None or not _thread.is_alive():
                _thread = threading.Thread(target=_work, name="autograd-viz shredder", daemon=True)
                _thread.start()
    return taken


def _close() -> None:
    global _closing
    _closing = True


# atexit runs this before the interpreter finalizes: from then on lists are freed where
# they are let go of (is_finalizing() turns True only later, once module teardown starts).
_closing = False
atexit.register(_close)


def _work() -> None:
    while True:
        lst = _ORPHANS.get()
        while lst:
            del lst[-SHRED_SLICE:]
            time.sleep(SHRED_PAUSE_S)
        del lst
