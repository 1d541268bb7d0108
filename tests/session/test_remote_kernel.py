"""Attaching to a kernel the app did not start (a GPU server's, by its connection file)."""

from __future__ import annotations

import sys

import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

import autograd_viz
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.session import KernelSession, KernelState

pytestmark = pytest.mark.kernel

LAB = """import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
"""
# A kernel whose environment has no autograd_viz, as on a server where it is not installed.
WITHOUT_US = (
    "import sys; sys.modules['autograd_viz'] = None; "
    "from ipykernel.kernelapp import launch_new_instance; launch_new_instance()"
)


# A kernel whose autograd-viz is an older release: its replies speak protocol 1.
ANOTHER_VERSION = (
    "import autograd_viz, autograd_viz.core.kernel.protocol as p; "
    "import autograd_viz.core.trace._model as t; "
    "autograd_viz.__version__ = '0.0.1'; p.PROTOCOL_VERSION = 1; t.TRACE_VERSION = 2; "
    "from ipykernel.kernelapp import launch_new_instance; launch_new_instance()"
)


class _Specs(KernelSpecManager):
    def __init__(self, argv_head: list[str]) -> None:
        super().__init__()
        self.argv_head = argv_head

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        argv = [*self.argv_head, "-f", "{connection_file}"]
        return KernelSpec(argv=argv, display_name="separate", language="python")


def _separate_kernel(tmp_path, argv_head: list[str]) -> KernelManager:
    km = KernelManager(kernel_name="separate", kernel_spec_manager=_Specs(argv_head))
    km.connection_file = str(tmp_path / "kernel-separate.json")
    km.start_kernel()
    return km


@pytest.fixture
def separate(tmp_path):
    km = _separate_kernel(tmp_path, [sys.executable, "-m", "ipykernel_launcher"])
    yield km
    km.shutdown_kernel(now=True)


def _attached(qtbot, path: str) -> KernelSession:
    session = KernelSession()
    with qtbot.waitSignal(session.kernel_info, timeout=60_000):
        session.attach(path)
    qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=10_000)
    return session


def test_attached_kernel_gives_the_same_trace(qtbot, separate) -> None:
    session = _attached(qtbot, separate.connection_file)
    try:
        assert session.existing == separate.connection_file
        run = session.run(LAB)
        with qtbot.waitSignal(run.finished, timeout=30_000) as got:
            pass
        remote = got.args[0]["trace"]
        local = run_source(LAB)
        assert [n.name for n in remote.nodes] == [n.name for n in local.nodes]
        assert [e["kind"] for e in remote.events][:-1] == [e["kind"] for e in local.events][:-1]
        assert remote.tensor_named("w").grad.data == 8.0
        assert remote.tensor_named("b").grad.data == 4.0
        assert remote.tensor_named("x").grad is None
    finally:
        session.shutdown()
    assert separate.is_alive()  # leaving does not stop a kernel that is not ours


def test_stop_interrupts_an_attached_kernel(qtbot, separate) -> None:
    session = _attached(qtbot, separate.connection_file)
    errors: list[str] = []
    session.stderr.connect(errors.append)
    try:
        session.run("import time\nkept = 41\nwhile True:\n    time.sleep(0.01)\n", keep=True)
        qtbot.waitUntil(lambda: session.state is KernelState.BUSY, timeout=10_000)
        qtbot.wait(300)
        with qtbot.waitSignal(session.run_finished, timeout=15_000):
            session.interrupt()
        assert "KeyboardInterrupt" in "".join(errors)
        run = session.run("import torch\nt = torch.tensor(float(kept + 1))\n", keep=True)
        with qtbot.waitSignal(run.finished, timeout=15_000) as got:
            pass
        assert got.args[0]["trace"].tensor_named("t").value.data == 42.0  # variables kept
    finally:
        session.shutdown()


def test_a_kernel_without_autograd_viz_is_named_clearly(qtbot, tmp_path) -> None:
    km = _separate_kernel(tmp_path, [sys.executable, "-c", WITHOUT_US])
    session = KernelSession()
    try:
        with qtbot.waitSignal(session.start_failed, timeout=60_000) as failed:
            session.attach(km.connection_file)
        message = failed.args[0]
        assert "cannot import autograd_viz" in message and "pip install autograd-viz" in message
        assert session.state is KernelState.DEAD
    finally:
        session.shutdown()
        km.shutdown_kernel(now=True)


def test_a_kernel_with_another_autograd_viz_is_named_clearly(qtbot, tmp_path) -> None:
    km = _separate_kernel(tmp_path, [sys.executable, "-c", ANOTHER_VERSION])
    session = KernelSession()
    try:
        with qtbot.waitSignal(session.start_failed, timeout=60_000) as failed:
            session.attach(km.connection_file)
        message = failed.args[0]
        assert "autograd-viz 0.0.1 (kernel protocol 1, trace format 2)" in message
        assert f"this app is autograd-viz {autograd_viz.__version__}" in message
        assert f"pip install autograd-viz=={autograd_viz.__version__}" in message
        assert session.state is KernelState.DEAD and session.info == {}
        # A run asked of it anyway is answered, once, and draws nothing.
        run = session.run(LAB)
        with qtbot.waitSignal(run.finished, timeout=10_000) as got:
            pass
        assert got.args[0]["ok"] is False and got.args[0]["trace"] is None
        assert km.is_alive()  # not the app's to stop
    finally:
        session.shutdown()
        km.shutdown_kernel(now=True)


def test_going_back_to_a_kernel_of_our_own(qtbot, separate) -> None:
    session = _attached(qtbot, separate.connection_file)
    try:
        with qtbot.waitSignal(session.kernel_info, timeout=60_000):
            session.attach(None)
        qtbot.waitUntil(lambda: session.state is KernelState.IDLE, timeout=10_000)
        assert session.existing is None and session.kernel_pid is not None
        assert separate.is_alive()
    finally:
        session.shutdown()


def test_the_app_attaches_from_the_command_line(qtbot, separate, tmp_path) -> None:
    """`autograd-viz FILE --existing CONNECTION.json --run --screenshot` draws the graph
    computed in the separate kernel."""
    import os
    import subprocess

    script = tmp_path / "lab.py"
    script.write_text(LAB + "where = 'separate'\n")
    shot = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograd_viz",
            str(script),
            "--existing",
            separate.connection_file,
            "--run",
            "--screenshot",
            str(shot),
            "--timeout",
            "90",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=150,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.stat().st_size > 10_000
    client = separate.client()
    client.start_channels()
    out: list[dict] = []
    try:
        # The run's namespace, which the app's calls (the descent view's) see after it.
        reply = client.execute_interactive(
            "import autograd_viz.core.kernel.protocol as p; ns = p.namespace_for('');"
            " print(ns['where'], float(ns['w'].grad))",
            timeout=30,
            output_hook=out.append,
        )
    finally:
        client.stop_channels()
    assert reply["content"]["status"] == "ok"
    text = "".join(m["content"].get("text", "") for m in out if m["msg_type"] == "stream")
    assert "separate 8.0" in text  # the script ran in that kernel, which is still running
