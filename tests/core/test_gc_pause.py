"""Postponed collections nest and overlap across threads, and always end."""

from __future__ import annotations

import gc
import threading

import pytest

from autograd_viz.core.platform.gc_pause import (
    BIG_RUN_ITEMS,
    POSTPONED_THRESHOLD,
    collections_postponed,
    freeze_big_run,
)


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


LOOP_AND_MODULES = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
h = torch.zeros(1, 4)
for t in range(40):
    h = torch.tanh(model[0](h) + 1)
model(h).sum().backward()
"""


def test_a_shown_run_is_freed_by_reference_counting_alone() -> None:
    # The app freezes a big run (freeze_big_run): a reference cycle anywhere in a trace,
    # its picture or its player would then never be freed. With the collector off, the
    # last reference going must free them all.
    import weakref

    from autograd_viz.core.graph.folding import box_id
    from autograd_viz.core.kernel.runner import run_source
    from autograd_viz.core.playback.run_view import RunView, prepare_run

    trace = run_source(LOOP_AND_MODULES)
    gc.collect()
    gc.disable()
    try:
        run = prepare_run(trace)
        view = RunView()
        view.show(run)
        assert run.graph.folding is not None and run.graph.boxes  # folded: loops, modules
        view.toggle_module(next(iter(run.graph.boxes))[len(box_id("")) :])  # opened: a refold
        run.player.seek(5)
        run.player.steps[3].caption  # noqa: B018 (captions are written when first read)
        folding = run.graph.folding
        watched = [
            weakref.ref(x)
            for x in (trace, run.graph, view.graph, folding, folding.base, folding.layout)
        ]
        del run, folding, trace
        view.clear("gone")
        del view
        assert [w() for w in watched] == [None] * len(watched)
    finally:
        gc.enable()


def test_only_a_big_run_is_frozen() -> None:
    before = gc.get_freeze_count()
    assert freeze_big_run(BIG_RUN_ITEMS) is False
    assert gc.get_freeze_count() == before
    kept = [[i] for i in range(100)]  # alive now: frozen with the rest
    try:
        assert freeze_big_run(BIG_RUN_ITEMS + 1) is True
        assert gc.get_freeze_count() >= before + len(kept)
    finally:
        gc.unfreeze()  # this test process's objects back in the collector's sight


def test_overlapping_gil_sharing_blocks_give_the_interval_back() -> None:
    import sys

    from autograd_viz.core.platform.gil_sharing import SHARED_SWITCH_INTERVAL_S, gil_shared

    before = sys.getswitchinterval()
    with gil_shared():
        assert sys.getswitchinterval() == min(before, SHARED_SWITCH_INTERVAL_S)
        with gil_shared():
            pass
        assert sys.getswitchinterval() == min(before, SHARED_SWITCH_INTERVAL_S)
    assert sys.getswitchinterval() == before


def test_overlapping_blocks_on_two_threads_put_the_setting_back_once_both_end() -> None:
    """The first block in saves, the last one out restores: a thread ending its block
    while another's is open leaves the changed value for the other."""
    import sys
    import threading

    from autograd_viz.core.platform.gil_sharing import SHARED_SWITCH_INTERVAL_S, gil_shared

    before = sys.getswitchinterval()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with gil_shared():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    with gil_shared():
        assert sys.getswitchinterval() == pytest.approx(min(before, SHARED_SWITCH_INTERVAL_S))
    assert sys.getswitchinterval() == pytest.approx(min(before, SHARED_SWITCH_INTERVAL_S))
    release.set()
    thread.join(10)
    assert sys.getswitchinterval() == before
