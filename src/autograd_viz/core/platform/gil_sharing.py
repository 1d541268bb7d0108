"""A shorter GIL switch interval while a worker thread runs long Python work.

The GUI thread lets go of the GIL on each of its calls into Qt (every drawing call of a
paint) and must get it back after each. With a worker busy in Python, getting it back
waits for the worker to be asked to yield: Python's switch interval, 5 ms. A paint of
the folded RNN's picture during the next run's layout stalled 90-130 ms that way
(measured, benchmarks/bench_picture.py --repeat 3); at 0.5 ms it stayed under 40.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from autograd_viz.core.platform.shared_setting import SharedSetting

SHARED_SWITCH_INTERVAL_S = 0.0005

# Blocks overlap across threads (a decode, a layout): see shared_setting.py.
_interval = SharedSetting(
    sys.getswitchinterval,
    sys.setswitchinterval,
    lambda saved: min(saved, SHARED_SWITCH_INTERVAL_S),
)


@contextmanager
def gil_shared() -> Iterator[None]:
    """Python's switch interval at SHARED_SWITCH_INTERVAL_S for the block (blocks may nest
    and overlap across threads; the interval comes back when the last one ends)."""
    with _interval.changed():
        yield
