"""Soak test (issue 7): many runs in a row of good and bad scripts through the real window.

After a warm-up the GUI process's memory must stay within a bound, no edit may be lost, and
when the window closes no kernel it ever started may still run. AUTOGRAD_VIZ_SOAK_RUNS sets
the number of runs (default 200).
"""

from __future__ import annotations

import gc
import os
import re
from pathlib import Path

import pytest
from pytestqt.exceptions import TimeoutError as WaitTimeout

from autograd_viz.session import KernelState
from autograd_viz.ui.main_window import MainWindow

pytestmark = [pytest.mark.slow, pytest.mark.kernel]

RUNS = int(os.environ.get("AUTOGRAD_VIZ_SOAK_RUNS", "200"))
WARM_UP = max(5, RUNS // 10)
MAX_GROWTH_MB = 120  # GUI memory after the warm-up may grow by at most this much

GOOD = """import torch
w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * 2.0 + b - 5) ** 2
loss.backward()
print("grads", w.grad.item(), b.grad.item())
"""
# (name, code, how it ends): "run" finishes by itself, "stop" needs Stop, "dies" kills
# the kernel. Mostly good runs, as a learner's session would be.
SCRIPTS = [
    ("good", GOOD, "run"),
    ("raises", "import torch\nx = torch.ones(3, requires_grad=True)\n(x * 2).backward()\n", "run"),
    ("good", GOOD, "run"),
    ("syntax error", "x = (1,\nprint(x)\n", "run"),
    ("good", GOOD, "run"),
    ("prints a lot", "for i in range(20_000):\n    print('line', i)\n", "run"),
    ("good", GOOD, "run"),
    ("recursion", "def f(n):\n    return f(n + 1)\nf(0)\n", "run"),
    ("good", GOOD, "run"),
    ("out of memory", "import torch\nbig = torch.empty(10**12)\n", "run"),
    ("good", GOOD, "run"),
    ("sys.exit", "import sys\nsys.exit(2)\n", "run"),
    ("good", GOOD, "run"),
    ("endless loop", "while True:\n    pass\n", "stop"),
    ("good", GOOD, "run"),
    ("bigger graph", "import torch\nx = torch.ones(8, requires_grad=True)\ny = x\n"
     "for _ in range(300):\n    y = (y * 1.01).tanh()\ny.sum().backward()\n", "run"),
    ("good", GOOD, "run"),
    ("ignores Stop", "while True:\n    try:\n        while True:\n            pass\n"
     "    except KeyboardInterrupt:\n        pass\n", "stop"),
    ("good", GOOD, "run"),
    ("os._exit", "import os\nos._exit(1)\n", "dies"),
]  # fmt: skip


def rss_mb() -> float:
    """This process's resident memory, from /proc."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def test_soak(qtbot) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    win.session.start()
    qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=60_000)
    kernels = {win.session.kernel_pid}
    baseline = None
    memory: list[float] = []
    try:
        for number in range(RUNS):
            name, code, ending = SCRIPTS[number % len(SCRIPTS)]
            text = f"# soak run {number}: {name}\n{code}"
            win.editor.set_text(text)
            _run_once(qtbot, win, ending)
            assert win.editor.text() == text, f"run {number} ({name}) changed the editor text"
            kernels.add(win.session.kernel_pid)
            if number + 1 == WARM_UP or (number + 1) % 20 == 0 or number + 1 == RUNS:
                gc.collect()
                memory.append(rss_mb())
                if number + 1 == WARM_UP:
                    baseline = memory[-1]
        assert baseline is not None
        growth = memory[-1] - baseline
        assert growth < MAX_GROWTH_MB, f"GUI memory grew {growth:.0f} MB: {memory}"
    finally:
        win.editor.document().setModified(False)
        win.close()
    left = [pid for pid in kernels if pid is not None and alive(pid)]
    assert not left, f"kernels still running after the window closed: {left}"
    print(f"\nsoak: {RUNS} runs, {len(kernels)} kernels, GUI RSS (MB) {memory}")


def _run_once(qtbot, win: MainWindow, ending: str) -> None:
    if ending == "run":
        with qtbot.waitSignal(win.session.run_finished, timeout=60_000):
            win.run_code()
    elif ending == "stop":
        with qtbot.waitSignal(
            win.session.state_changed, timeout=10_000, check_params_cb=lambda s: s == "busy"
        ):
            win.run_code()
        qtbot.wait(100)
        with qtbot.waitSignal(win.session.run_finished, timeout=10_000):
            win.stop_action.trigger()
    else:  # the kernel dies: the app notices and starts another
        pid = win.session.kernel_pid
        win.run_code()
        qtbot.waitUntil(lambda: win.session.kernel_pid not in (pid, None), timeout=60_000)
    try:
        qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=60_000)
    except WaitTimeout:
        pytest.fail(f"the kernel did not come back: {win.console.plain_text()[-800:]}")
