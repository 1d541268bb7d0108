"""Postponed collections nest and overlap across threads, and always end."""

from __future__ import annotations

import gc
import threading

from autograd_viz.core.platform.gc_pause import POSTPONED_THRESHOLD, collections_postponed


def test_overlapping_blocks_give_the_thresholds_back() -> None:
    before = gc.get_threshold()
    inside, outside = threading.Event(), threading.Event()

    def worker() -> None:  # a layout job's block, opened before and closed inside the other
        with collections_postponed():
            inside.set()
            outside.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    inside.wait(5)
    with collections_postponed():  # the GUI thread's, closed after the worker's
        outside.set()
        thread.join(5)
        assert gc.get_threshold() == POSTPONED_THRESHOLD  # the worker's end kept ours
    assert gc.get_threshold() == before
    with collections_postponed(), collections_postponed():
        assert gc.get_threshold() == POSTPONED_THRESHOLD
    assert gc.get_threshold() == before
