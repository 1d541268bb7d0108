"""Issue 15, items 1 and 2: each window owns its autosave, and whether its owner still runs
is decided by a lock or by pid *and* start time, never by a pid alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from autograd_viz.core.platform.autosave import (
    AutosaveOwner,
    autosave_file,
    autosave_folder,
    process_start,
    read_autosave,
    recoverable,
)

# Another app instance: owns an autosave of the untitled buffer, says so, then lives on.
OTHER_WINDOW = textwrap.dedent(
    """
    import sys
    from autograd_viz.core.platform.autosave import AutosaveOwner
    owner = AutosaveOwner()
    owner.write(None, sys.argv[1])
    print(owner.id, flush=True)
    sys.stdin.read()  # until the test closes the pipe, or kills us
    """
)


@pytest.fixture
def other_window():
    """A second app process with an unsaved untitled buffer; killed (-9) afterwards."""
    child = subprocess.Popen(
        [sys.executable, "-c", OTHER_WINDOW, "typed in the other window\n"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    owner_id = child.stdout.readline().strip()
    assert owner_id, "the other window did not start"
    yield child, owner_id
    child.kill()
    child.wait(timeout=10)


def test_two_windows_on_one_document_keep_two_autosaves(other_window) -> None:
    child, owner_id = other_window
    mine = AutosaveOwner()
    mine.write(None, "typed here\n")
    assert mine.file(None) != autosave_file(None, owner_id)
    # This window exits cleanly: it deletes its own copy, not the other window's.
    mine.remove(None)
    mine.release()
    assert not mine.file(None).exists()
    assert read_autosave(None).text == "typed in the other window\n"
    # While the other window lives, its copy is not offered to a third one ...
    assert recoverable(None, "") is None
    assert autosave_file(None, owner_id).exists()
    # ... and once it is killed (-9: no clean-up at all) its text is offered, not lost.
    child.kill()
    child.wait(timeout=10)
    offer = recoverable(None, "")
    assert offer is not None and offer.text == "typed in the other window\n"
    assert offer.owner == owner_id and offer.pid == child.pid
    assert not (autosave_folder() / f"{owner_id}.lock").exists()  # a dead window's lock


def test_the_lock_of_a_killed_window_with_no_copy_left_is_swept(other_window) -> None:
    child, owner_id = other_window
    lock = autosave_folder() / f"{owner_id}.lock"
    autosave_file(None, owner_id).unlink()  # it saved its text, then was killed
    recoverable(None, "")
    assert lock.exists()  # still held: left alone
    child.kill()
    child.wait(timeout=10)
    recoverable(None, "")
    assert not lock.exists()


def test_an_owners_copy_is_written_with_its_id_and_start_time() -> None:
    owner = AutosaveOwner()
    record = json.loads(owner.write(None, "x").read_text())
    assert record["owner"] == owner.id and record["pid"] == os.getpid()
    assert record["started"] == process_start(os.getpid())
    assert recoverable(None, "") is None  # this window's own copy: it is alive
    owner.release()


@pytest.mark.skipif(not os.path.exists("/proc/1/stat"), reason="no /proc to read pid 1 from")
@pytest.mark.parametrize(
    "record",
    [
        {"pid": 1, "started": "another-boot:12345"},  # pid 1 lives, but is not the writer
        {"pid": 1},  # an old autosave: a pid and nothing to check it against
        {"pid": 1, "owner": "1-deadbeef00", "started": "another-boot:1"},  # no lock left
    ],
    ids=["pid-reused", "pid-only", "owner-gone"],
)
def test_a_live_process_with_a_reused_pid_does_not_hide_the_autosave(record) -> None:
    file = autosave_file(None, "1-deadbeef00")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"text": "lost?\n", "saved_at": 1.0e9, **record}))
    offer = recoverable(None, "")
    assert offer is not None and offer.text == "lost?\n" and offer.pid == 1


def test_a_live_writer_without_a_lock_is_known_by_its_start_time(tmp_path) -> None:
    if process_start(os.getpid()) is None:
        pytest.skip("no /proc: only the lock tells")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        file = autosave_file(None, "x")
        file.parent.mkdir(parents=True, exist_ok=True)
        started = process_start(sleeper.pid)
        record = {"text": "live\n", "pid": sleeper.pid, "started": started, "saved_at": 1e9}
        file.write_text(json.dumps(record))
        assert recoverable(None, "") is None  # the same process: still running
        file.write_text(json.dumps({**record, "started": started + "0"}))
        assert recoverable(None, "").text == "live\n"  # same pid, another process
    finally:
        sleeper.kill()
        sleeper.wait(timeout=10)
