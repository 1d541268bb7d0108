"""Issue 15, item 11: a GUI killed with SIGTERM or kill -9 leaves its kernel folder (ipc
sockets and the 0600 connection file with the HMAC key) in TMPDIR; the next start sweeps
those whose owner is gone. Attaching to a kernel (--existing) leaves its limits alone."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograd_viz.session import KernelSession, KernelState
from autograd_viz.session._leftovers import OWNER, make_kernel_folder, sweep_stale_kernel_folders
from tests.session.test_remote_kernel import _attached, separate  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

MAKE_FOLDER_AND_HANG = (
    "import sys, time\n"
    "from autograd_viz.session._leftovers import make_kernel_folder\n"
    "print(make_kernel_folder(), flush=True)\n"
    "time.sleep(600)\n"
)


def _folder_of_a_killed_app(tmp_path: Path) -> Path:
    """A kernel folder made by a real process that was then killed with kill -9."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    app = subprocess.Popen(
        [sys.executable, "-c", MAKE_FOLDER_AND_HANG], env=env, stdout=subprocess.PIPE, text=True
    )
    folder = Path(app.stdout.readline().strip())
    (folder / "kernel.json").write_text("{}")  # stands for the connection file
    app.kill()
    app.wait()
    app.stdout.close()
    return folder


def test_the_next_start_sweeps_the_folder_a_killed_app_left(tmp_path: Path) -> None:
    left = _folder_of_a_killed_app(tmp_path)
    assert left.is_dir() and left.parent == tmp_path
    mine = Path(make_kernel_folder_in(tmp_path))
    assert not left.exists()
    assert mine.is_dir() and (mine / OWNER).read_text().split()[0] == str(os.getpid())


def make_kernel_folder_in(where: Path) -> str:
    saved = tempfile.tempdir
    tempfile.tempdir = str(where)
    try:
        return make_kernel_folder()
    finally:
        tempfile.tempdir = saved


def test_a_reused_pid_does_not_keep_a_folder_but_a_live_owner_does(tmp_path: Path) -> None:
    live = Path(make_kernel_folder_in(tmp_path))
    reused = tmp_path / "autograd-viz-reused"
    reused.mkdir()
    (reused / OWNER).write_text(f"{os.getpid()} 1\n")  # our pid, another start time
    foreign = tmp_path / "autograd-viz-no-owner-file"  # not one we can judge: left alone
    foreign.mkdir()
    removed = sweep_stale_kernel_folders(str(tmp_path))
    assert removed == [str(reused)]
    assert live.is_dir() and foreign.is_dir()


@pytest.mark.kernel
def test_the_connection_file_lives_in_the_kernel_folder_and_goes_with_it(qtbot) -> None:
    session = KernelSession()
    with qtbot.waitSignal(session.kernel_info, timeout=90_000):
        session.start()
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=10_000)
    folder = Path(session._worker._socket_dir)
    connection = Path(session._worker.km.connection_file)
    assert connection.parent == folder and connection.is_file()
    assert (connection.stat().st_mode & 0o777) == 0o600
    assert (folder / OWNER).read_text().split()[0] == str(os.getpid())
    session.shutdown()
    assert not folder.exists()


def _limits(pid: int) -> dict[str, str]:
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {row[:26].strip(): row[26:].split()[0] for row in rows if row[:26].strip()}


@pytest.mark.kernel
def test_attaching_does_not_change_the_kernels_limits(qtbot, separate) -> None:  # noqa: F811
    pid = separate.provisioner.pid
    before = _limits(pid)
    session = _attached(qtbot, separate.connection_file)
    try:
        assert session.info["memory_limit_mb"] is None  # none of ours there
        during = _limits(pid)
    finally:
        session.shutdown()
    assert during["Max data size"] == before["Max data size"]
    assert during["Max stack size"] == before["Max stack size"]
    assert _limits(pid) == before
