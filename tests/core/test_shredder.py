"""A big trace's events are freed a slice at a time on a thread of their own, and a list
something else still holds is never touched."""

from __future__ import annotations

import time
import weakref

from autograd_viz.core.platform.shredder import shred
from autograd_viz.core.trace import Trace
from autograd_viz.core.trace._model import SHRED_FROM


class _Marker:
    """Something weakly referenceable to put in an event."""


def _wait_until(condition, timeout_s: float = 10.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_a_list_only_the_caller_holds_is_emptied_and_its_items_freed() -> None:
    markers = [_Marker() for _ in range(5_000)]
    watched = [weakref.ref(m) for m in markers[::500]]
    lists = [markers]
    del markers
    assert shred(lists) == 1
    assert lists == []
    assert _wait_until(lambda: all(w() is None for w in watched))


def test_a_list_held_elsewhere_is_left_as_it_is() -> None:
    kept = [_Marker() for _ in range(3_000)]
    assert shred([kept]) == 0
    time.sleep(0.05)
    assert len(kept) == 3_000 and all(isinstance(m, _Marker) for m in kept)


def test_a_big_trace_lets_its_events_go_but_not_a_shared_list() -> None:
    marker = _Marker()
    events = [{"kind": "op", "line": 1, "made": marker}] + [
        {"kind": "op", "line": i} for i in range(SHRED_FROM)
    ]
    trace = Trace(events=events)
    assert trace.index.count("op") == SHRED_FROM + 1  # the index holds the list too
    watched = weakref.ref(marker)
    del marker
    del trace  # the list is still `events` here: nothing is emptied
    assert len(events) == SHRED_FROM + 1 and watched() is not None
    trace = Trace(events=events)
    del events
    del trace  # now the trace held the list alone
    assert _wait_until(lambda: watched() is None)


def test_a_small_trace_is_freed_as_before() -> None:
    marker = _Marker()
    trace = Trace(events=[{"kind": "op", "line": 1, "made": marker}])
    watched = weakref.ref(marker)
    del marker, trace
    assert watched() is None  # at once, on this thread


def test_a_process_that_lets_go_of_a_big_list_as_it_exits_still_exits(tmp_path) -> None:
    """Once the interpreter finalizes no thread can start: Thread.start() waited forever,
    so a process holding a big trace at exit (the app, `autograd-viz trace`) hung there."""
    import subprocess
    import sys

    script = tmp_path / "exits.py"
    script.write_text(
        "from autograd_viz.core.platform.shredder import shred\n"
        "class Holder:\n"
        "    def __del__(self):\n"
        "        shred([[object() for _ in range(1000)]])\n"
        "holder = Holder()\n"  # freed as the interpreter finalizes
        "import atexit\n"
        "atexit.register(lambda: shred([[object() for _ in range(1000)]]))\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], timeout=60, capture_output=True)
    assert done.returncode == 0, done.stderr
