"""Fewer garbage collections while many small objects are built beside a large trace.

At Python's default thresholds the cyclic collector runs every 700 new containers and, now
and then, rescans every object in the process. Next to a trace of 50,000 events that made
building a player's steps 3.5x slower and parsing a trace stall the GUI thread for 0.3 s
(measured). Inside `collections_postponed()` young collections are rarer and full ones
wait; the caller's thresholds come back at the end.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from autograd_viz.core.platform.shared_setting import SharedSetting

# Young passes every 50,000 new objects, each over those alone (5-15 ms); none over the
# older generations inside a block. At 50 young passes a generation-1 pass came inside
# blocks: it rescanned everything the block had made so far, a decoded trace's 240,000
# objects in 74-166 ms (measured), holding the GIL. Once the block ends, the first young
# pass takes the older generation along, unless what the block made was frozen
# (freeze_big_run) before it ended.
POSTPONED_THRESHOLD = (50_000, 1_000_000, 1_000_000)

# The thresholds are the process's, and blocks overlap (see shared_setting.py).
_thresholds = SharedSetting(
    gc.get_threshold, lambda t: gc.set_threshold(*t), lambda _saved: POSTPONED_THRESHOLD
)


@contextmanager
def collections_postponed() -> Iterator[None]:
    """Raise the collector's thresholds for the duration of the block (blocks may nest
    and overlap across threads; the thresholds come back when the last one ends)."""
    with _thresholds.changed():
        yield


def freeze_loaded_objects() -> None:
    """Move every object alive now out of the collector's sight, for good.

    Call it once the process has loaded what it keeps for its whole life (torch, the
    window): a full collection rescans every tracked object, and with torch loaded that
    measured 130-200 ms, long enough to freeze a window when it lands on the GUI thread.
    What is frozen is still freed by reference counting; only cycles among it stay.
    """
    gc.freeze()


# A run of more events, tensors and nodes than this is frozen once it has arrived and once
# it is laid out (about 100,000 tracked objects; the 8k-node RNN makes 34,000 items).
BIG_RUN_ITEMS = 10_000


def freeze_big_run(items: int) -> bool:
    """Freeze every object alive now when a run of `items` events, tensors and nodes (or
    a picture of as many nodes and edges) has just been decoded or laid out; True when it
    did.

    The 8k-node RNN's decoded trace and its picture are about 480,000 tracked objects that
    live as long as the run is shown. In the collector's sight, its next pass over the
    older generations scanned them all in one go, holding the GIL for 100-440 ms (measured)
    on whatever thread it landed: the GUI thread stalled that long. Frozen, they are still
    freed by reference counting when the run goes (a trace, its picture and its player
    hold no reference cycle: tests/core/test_gc_pause.py); only cyclic garbage alive at
    this moment would stay for good, so the youngest generation is collected first.
    """
    if items <= BIG_RUN_ITEMS:
        return False
    gc.collect(0)
    gc.freeze()
    return True
