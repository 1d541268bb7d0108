"""Issue 15, items 4 and 8 for the GUI's kernel: it starts with `python -P` semantics (the
working directory's modules are not run), names a user's torch.py that hides PyTorch, and
is the child subreaper of the user's code, so a daemon that double-forked, left its
session and cleared its environment is still ended with the kernel. Real kernels; /proc
says whether a process still runs."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from autograd_viz.session import KernelSession, KernelState
from tests.core.test_process_lifetime import _alive, _gone_soon
from tests.session.test_kernel_session import _run

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]

# Forks twice with setsid in between, clears its environment (so no run mark is left) and
# execs `sleep`: only the kernel being its subreaper keeps it in the kernel's tree.
DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.environ.clear()
        with open({pidfile!r}, "w") as out:
            out.write(str(os.getpid()))
        os.execve("/bin/sleep", ["sleep", "300"], {{}})
    os._exit(0)
os.wait()
deadline = time.monotonic() + 10
while not os.path.exists({pidfile!r}) and time.monotonic() < deadline:
    time.sleep(0.01)
"""


def _started(qtbot) -> KernelSession:
    session = KernelSession()
    with qtbot.waitSignal(session.kernel_info, timeout=60_000):
        session.start()
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=10_000)
    return session


def _daemon(qtbot, session: KernelSession, tmp_path: Path) -> int:
    pidfile = tmp_path / "daemon.pid"
    _run(qtbot, session, DAEMON.format(pidfile=str(pidfile)))
    pid = int(pidfile.read_text())
    assert _alive(pid)
    assert "AUTOGRAD_VIZ_RUN" not in Path(f"/proc/{pid}/environ").read_bytes().decode()
    return pid


def test_a_daemon_that_cleared_its_environment_ends_with_the_session(qtbot, tmp_path) -> None:
    session = _started(qtbot)
    pid = _daemon(qtbot, session, tmp_path)
    try:
        session.shutdown()
        assert _gone_soon(pid)
    finally:
        if _alive(pid):  # never leave it behind, even when the test fails
            os.kill(pid, signal.SIGKILL)


# Two kernel starts (~10 s on a loaded machine); the session test above is its bounded form.
@pytest.mark.slow
def test_a_daemon_that_cleared_its_environment_ends_with_a_restart(qtbot, tmp_path) -> None:
    session = _started(qtbot)
    try:
        pid = _daemon(qtbot, session, tmp_path)
        with qtbot.waitSignal(session.kernel_info, timeout=60_000):
            session.restart()
        assert _gone_soon(pid)
    finally:
        session.shutdown()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P is 3.11+")
def test_the_kernel_does_not_run_the_working_directorys_modules(
    qtbot, tmp_path, monkeypatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    for name in ("inspect", "typing_extensions"):
        (here / f"{name}.py").write_text(
            f"open({str(tmp_path / name)!r} + '.ran', 'w').close()\n"
            "raise SystemExit('the working directory was on sys.path')\n"
        )
    monkeypatch.chdir(here)
    session = _started(qtbot)
    try:
        _, out, _ = _run(
            qtbot, session, "import inspect, os, typing_extensions\nprint(os.getcwd())\n"
        )
    finally:
        session.shutdown()
    assert out.strip() == str(here)  # it did run there
    assert not list(tmp_path.glob("*.ran"))


def test_a_torch_py_that_hides_pytorch_is_named_when_the_kernel_starts(
    qtbot, tmp_path, monkeypatch
) -> None:
    (tmp_path / "torch.py").write_text("raise ImportError('not the real torch')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    session = KernelSession()
    try:
        with qtbot.waitSignal(session.start_failed, timeout=60_000) as failed:
            session.start()
    finally:
        session.shutdown()
    assert failed.args[0] == (
        f"The Python kernel could not start: a file torch.py in {tmp_path} hides PyTorch."
    )
    assert session.state is KernelState.DEAD


def test_closing_while_the_kernel_starts_ends_the_thread_and_the_kernel(qtbot) -> None:
    # The app closed while its kernel was still starting (an `open --screenshot` on a
    # loaded machine): the worker's thread outlived shutdown() and Qt aborted the app at
    # exit ("QThread: Destroyed while thread … is still running").
    session = KernelSession()
    session.start()
    qtbot.waitUntil(lambda: session._worker.kernel_pid is not None, timeout=30_000)
    pid = session._worker.kernel_pid
    session.shutdown(wait_ms=1)  # far less than a start takes
    assert session._thread.isFinished()
    assert _gone_soon(pid)
