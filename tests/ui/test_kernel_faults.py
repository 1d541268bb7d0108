"""Issue 7's kernel faults, each through the real MainWindow and a real kernel.

Every case checks the behaviour a learner gets and that the GUI event loop kept answering
(a 50 ms timer never waited longer than MAX_GAP_MS). One window and kernel serve the whole
module; cases that kill the kernel check that the app started a new one. At the end of the
run the outcomes are printed as a table (and written to kernel-faults-report.txt in
pytest's base temporary folder).
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from autograd_viz.core.kernel.limits import MEMORY_ENV
from autograd_viz.core.platform.gc_pause import freeze_loaded_objects
from autograd_viz.session import INTERRUPT_GRACE_MS, KernelState
from autograd_viz.ui.editor.console import MAX_TOTAL_CHARS
from autograd_viz.ui.main_window import MainWindow
from tests.ui._fault_report import EventLoopWatch, FaultTable

pytestmark = pytest.mark.kernel

MAX_GAP_MS = 500
# The one case that may stall longer, once, when its trace arrives: 50,000 events become
# ~400,000 Python containers in the GUI process, and a full collection that happens to run
# on the GUI thread then scans them (~0.4 s here). Layout and the player's 50,000 steps are
# built on the layout thread (measured gap: 0.18 s; before that, up to 1.1 s).
HUGE_TRACE_GAP_MS = 1000
KERNEL_MEMORY_MB = 3072  # the test kernel's cap: a "memory bomb" fails long before the machine
RUN_MS = 60_000
RESTART_MS = 60_000


def alive(pid: int | None) -> bool:
    """Whether a process runs (a zombie waiting to be reaped does not count)."""
    if pid is None:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@pytest.fixture(scope="module")
def table(request, tmp_path_factory) -> FaultTable:
    plugins = request.config.pluginmanager
    found = plugins.get_plugin("autograd-viz-fault-table")
    if found is None:
        found = FaultTable(tmp_path_factory.getbasetemp() / "kernel-faults-report.txt")
        plugins.register(found, "autograd-viz-fault-table")
    return found


@pytest.fixture(scope="module")
def window(qapp, request):
    saved = os.environ.get(MEMORY_ENV)
    os.environ[MEMORY_ENV] = str(KERNEL_MEMORY_MB)  # the kernel reads it at every start
    win = MainWindow()
    win.resize(1200, 800)
    win.show()
    win.session.start()
    QtBot(request).waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=RESTART_MS)
    # As the app does once torch is loaded: full collections on the GUI thread then skip
    # what was loaded before (here: every earlier test's leftovers too).
    gc.collect()
    freeze_loaded_objects()
    yield win
    pid = win.session.kernel_pid
    win.editor.document().setModified(False)  # nothing to ask about on close
    win.close()
    if saved is None:
        os.environ.pop(MEMORY_ENV, None)
    else:
        os.environ[MEMORY_ENV] = saved
    assert not alive(pid), "the kernel outlived the window"


@pytest.fixture
def keeping(window):
    """Runs keep their variables (the Keep variables between runs setting) for the rows
    that show what survives a fault; each run starts fresh otherwise."""
    window.session.set_keep_variables(True)
    yield
    window.session.set_keep_variables(False)


def console_has(win: MainWindow, text: str) -> bool:
    return text in win.console.plain_text()


def run_and_wait(qtbot, win: MainWindow, code: str, timeout: int = RUN_MS):
    """Run `code` as Ctrl+Enter does; the trace it drew once the kernel is idle again."""
    win.editor.set_text(code)
    with (
        qtbot.waitSignal(win.trace_shown, timeout=timeout) as shown,
        qtbot.waitSignal(win.session.run_finished, timeout=timeout),
    ):
        win.run_code()
    qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=10_000)
    return shown.args[0]


def start_running(qtbot, win: MainWindow, code: str) -> None:
    """Start `code` and return once the kernel is busy with it."""
    win.editor.set_text(code)
    with qtbot.waitSignal(
        win.session.state_changed, timeout=10_000, check_params_cb=lambda s: s == "busy"
    ):
        win.run_code()


def wait_for_new_kernel(qtbot, win: MainWindow, old_pid: int | None) -> None:
    qtbot.waitUntil(
        lambda: win.session.state is KernelState.IDLE and win.session.kernel_pid != old_pid,
        timeout=RESTART_MS,
    )


def assert_kernel_works(qtbot, win: MainWindow, expect: str = "fresh kernel ok") -> None:
    run_and_wait(qtbot, win, f"print({expect!r})")
    qtbot.waitUntil(lambda: console_has(win, expect), timeout=5_000)


# ---- the cases ---------------------------------------------------------------------
def test_stop_interrupts_an_endless_loop(qtbot, window, table, keeping) -> None:
    row = table.row("while True: pass", "Stop interrupts it within 1 s; kernel and variables kept")
    run_and_wait(qtbot, window, "kept = 41")
    pid = window.session.kernel_pid
    code = "while True:\n    pass\n"
    with EventLoopWatch() as watch:
        start_running(qtbot, window, code)
        qtbot.wait(300)
        began = time.monotonic()
        with qtbot.waitSignal(window.trace_shown, timeout=5_000) as shown:
            window.stop_action.trigger()
        stopped_after = time.monotonic() - began
        qtbot.waitUntil(lambda: window.session.state is KernelState.IDLE, timeout=5_000)
    assert shown.args[0].errors[0]["type"] == "KeyboardInterrupt"
    assert stopped_after < 1.0
    assert window.editor.error_line in (1, 2) and window.editor.text() == code
    run_and_wait(qtbot, window, "print('kept is', kept + 1)")
    qtbot.waitUntil(lambda: console_has(window, "kept is 42"), timeout=5_000)
    assert window.session.kernel_pid == pid
    assert watch.longest_gap_ms < MAX_GAP_MS
    row.passed(f"KeyboardInterrupt after {stopped_after:.2f} s; kernel and `kept` survive", watch)


def test_stop_restarts_a_kernel_that_ignores_the_interrupt(qtbot, window, table) -> None:
    row = table.row(
        "a loop that catches KeyboardInterrupt", "Stop escalates to a kernel restart within a few s"
    )
    code = (
        "while True:\n"
        "    try:\n"
        "        while True:\n"
        "            pass\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
    )
    pid = window.session.kernel_pid
    with EventLoopWatch() as watch:
        start_running(qtbot, window, code)
        qtbot.wait(300)
        began = time.monotonic()
        window.stop_action.trigger()
        qtbot.waitUntil(lambda: console_has(window, "did not stop within"), timeout=10_000)
        noticed = time.monotonic() - began
        wait_for_new_kernel(qtbot, window, pid)
        restarted = time.monotonic() - began
    assert INTERRUPT_GRACE_MS / 1000 - 0.2 < noticed < INTERRUPT_GRACE_MS / 1000 + 2
    assert restarted < 15
    assert not alive(pid)
    assert window.editor.text() == code
    assert watch.longest_gap_ms < MAX_GAP_MS
    assert_kernel_works(qtbot, window)
    row.passed(
        f"console: 'did not stop within 2 s of Stop … restarting' at {noticed:.1f} s; "
        f"new kernel at {restarted:.1f} s; text kept",
        watch,
    )


@pytest.mark.parametrize(
    ("case", "code", "reason"),
    [
        ("import os; os._exit(1)", "import os\nos._exit(1)\n# my notes\n", "exited with code 1"),
        (
            "a segfault (ctypes.string_at(0))",
            "import ctypes\nctypes.string_at(0)\n# my notes\n",
            "segmentation fault",
        ),
    ],
    ids=["os_exit", "segfault"],
)
def test_a_dead_kernel_is_reported_and_replaced(qtbot, window, table, case, code, reason) -> None:
    row = table.row(case, "the app says the kernel died, restarts it, keeps all text")
    pid = window.session.kernel_pid
    window.editor.set_text(code)
    with EventLoopWatch() as watch:
        window.run_code()
        qtbot.waitUntil(lambda: console_has(window, "The kernel died"), timeout=RUN_MS)
        wait_for_new_kernel(qtbot, window, pid)
    assert console_has(window, reason), window.console.plain_text()[-500:]
    assert window.editor.text() == code
    assert not alive(pid)
    assert window.kernel_status.state == "idle"
    assert watch.longest_gap_ms < MAX_GAP_MS
    assert_kernel_works(qtbot, window)
    row.passed(f"'The kernel died ({reason} …)'; new kernel; text kept", watch)


def test_sys_exit_stops_the_script_not_the_kernel(qtbot, window, table, keeping) -> None:
    row = table.row(
        "sys.exit(2)", "SystemExit shown at its line; the kernel is not affected; exit 0 is clean"
    )
    pid = window.session.kernel_pid
    code = "import sys\nkept = 'still here'\nsys.exit(2)\nprint('not reached')\n"
    with EventLoopWatch() as watch:
        trace = run_and_wait(qtbot, window, code)
    (error,) = trace.errors
    assert error["type"] == "SystemExit" and error["line"] == 3
    assert "sys.exit(2) was called" in window.editor.error_message
    assert window.editor.error_line == 3
    assert not console_has(window, "not reached")
    assert window.session.kernel_pid == pid
    run_and_wait(qtbot, window, "print('kept is', kept)")
    qtbot.waitUntil(lambda: console_has(window, "kept is still here"), timeout=5_000)
    trace = run_and_wait(qtbot, window, "import sys\nprint('clean')\nsys.exit()\n")
    assert trace.errors == [] and window.editor.error_line is None  # as python: exit 0
    qtbot.waitUntil(lambda: console_has(window, "clean"), timeout=5_000)
    assert "SystemExit" not in window.console.plain_text().rsplit("clean", 1)[1]
    assert watch.longest_gap_ms < MAX_GAP_MS
    row.passed("ipykernel keeps running: SystemExit marked on line 3; variables kept", watch)


def test_a_memory_bomb_fails_inside_the_kernel(qtbot, window, table, keeping) -> None:
    row = table.row(
        "allocating far more memory than the machine has",
        "MemoryError (or torch's allocator error) shown; the app survives and says so",
    )
    assert window.session.info.get("memory_limit_mb") == KERNEL_MEMORY_MB
    pid = window.session.kernel_pid
    with EventLoopWatch() as watch:
        # 4 TB at once, then 400 MB at a time until the cap (address space only: untouched
        # pages cost this machine nothing, but they count against the kernel's limit).
        one = run_and_wait(qtbot, window, "import torch\nkept = 7\nhuge = torch.empty(10**12)\n")
        many = run_and_wait(
            qtbot,
            window,
            "import torch\nblocks = []\nwhile True:\n    blocks.append(torch.empty(10**8))\n",
        )
    for trace, line in ((one, 3), (many, 4)):
        (error,) = trace.errors
        assert error["line"] == line
        assert "can't allocate memory" in error["message"] or error["type"] == "MemoryError"
    assert window.editor.error_line == 4
    assert console_has(window, "The code ran out of memory; the kernel may use at most 3,072 MB")
    assert window.session.kernel_pid == pid
    run_and_wait(qtbot, window, "blocks.clear()\nprint('kept is', kept)")
    qtbot.waitUntil(lambda: console_has(window, "kept is 7"), timeout=5_000)
    assert watch.longest_gap_ms < MAX_GAP_MS
    row.passed(
        f"RuntimeError 'can't allocate memory' at its line, console names the "
        f"{KERNEL_MEMORY_MB:,} MB cap; kernel and variables kept",
        watch,
    )


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ('print("x" * 10**8)', 'print("x" * 10**8)\n'),
        ("printing in a tight loop", "for i in range(1_000_000):\n    print(i)\n"),
    ],
    ids=["one_huge_print", "print_loop"],
)
def test_an_output_flood_is_cut_with_a_note(qtbot, window, table, case, code) -> None:
    row = table.row(case, "the console truncates with a note; the GUI stays responsive")
    window.console.clear_console()
    with EventLoopWatch() as watch:
        run_and_wait(qtbot, window, code)
        qtbot.waitUntil(
            lambda: console_has(window, "characters of output not shown"), timeout=5_000
        )
    text = window.console.plain_text()
    assert len(text) <= MAX_TOTAL_CHARS
    assert watch.longest_gap_ms < MAX_GAP_MS
    row.passed(
        f"'[… N characters of output not shown …]'; console holds {len(text):,} chars", watch
    )


@pytest.mark.parametrize(
    ("case", "code", "line"),
    [
        ("infinite recursion", "def deeper(n):\n    return deeper(n + 1)\n\ndeeper(0)\n", 2),
        (
            "infinite recursion on tensors",
            "import torch\n\ndef deeper(x):\n    return deeper(x * 1.0)\n\n"
            "deeper(torch.ones(1, requires_grad=True))\n",
            4,
        ),
    ],
    ids=["python", "torch"],
)
def test_infinite_recursion_marks_its_line(qtbot, window, table, case, code, line) -> None:
    row = table.row(case, "RecursionError shown with its line")
    pid = window.session.kernel_pid
    with EventLoopWatch() as watch:
        trace = run_and_wait(qtbot, window, code)
    (error,) = trace.errors
    assert error["type"] == "RecursionError" and error["line"] == line
    assert window.editor.error_line == line
    assert "RecursionError" in window.editor.error_message
    qtbot.waitUntil(lambda: console_has(window, "RecursionError"), timeout=5_000)
    assert window.session.kernel_pid == pid
    assert watch.longest_gap_ms < MAX_GAP_MS
    row.passed(f"RecursionError marked on line {line}; kernel kept", watch)


def test_a_huge_graph_is_capped_with_a_note(qtbot, window, table) -> None:
    row = table.row(
        "a graph of 100,000+ nodes", "the trace is capped with a clear note; the canvas is usable"
    )
    pid = window.session.kernel_pid
    code = (
        "import torch\n"
        "x = torch.tensor(1.0, requires_grad=True)\n"
        "y = x\n"
        "for _ in range(100_000):\n"
        "    y = y * 1.0001\n"
    )
    with EventLoopWatch() as watch:
        trace = run_and_wait(qtbot, window, code)
        window.canvas.fit()
        qtbot.wait(100)
    assert any("more than 20,000 nodes" in note for note in trace.notes)
    assert any("recording stopped" in note for note in trace.notes)
    assert len(trace.nodes) == 20_000
    assert window.canvas.marker_count() > 0
    # Freeing a 100,000-deep graph recurses deep in C++: the kernel has the stack for it.
    run_and_wait(qtbot, window, "y = None\nprint('graph freed')")
    qtbot.waitUntil(lambda: console_has(window, "graph freed"), timeout=5_000)
    assert window.session.kernel_pid == pid
    assert watch.longest_gap_ms < HUGE_TRACE_GAP_MS
    row.passed(
        "trace capped at 20,000 nodes and 50,000 events, with notes that say so; the canvas "
        "draws and fits; freeing the 100,000-deep graph later does not crash the kernel",
        watch,
    )


def test_a_syntax_error_is_marked_and_nothing_runs(qtbot, window, table) -> None:
    row = table.row("a syntax error", "marked at its line, nothing runs")
    with EventLoopWatch() as watch:
        trace = run_and_wait(qtbot, window, "ran_anyway = 1\nif True\n    pass\n")
    assert trace.errors[0]["type"] == "SyntaxError" and window.editor.error_line == 2
    run_and_wait(qtbot, window, "print('ran_anyway' in dir())")
    qtbot.waitUntil(lambda: console_has(window, "False"), timeout=5_000)
    assert watch.longest_gap_ms < MAX_GAP_MS
    row.passed("SyntaxError marked on line 2; line 1 did not run", watch)


def test_stop_and_restart_clean_up_threads_and_processes(qtbot, window, table) -> None:
    row = table.row(
        "threads and child processes (Popen sleep, non-daemon thread)",
        "Stop/restart cleans them up",
    )
    pid = window.session.kernel_pid
    with EventLoopWatch() as watch:
        # Stop while a run waits on its child: the interrupt goes to the kernel's whole
        # process group, so the child ends with the run.
        start_running(
            qtbot,
            window,
            "import subprocess\nwaiter = subprocess.Popen(['sleep', '1002'])\nwaiter.wait()\n",
        )
        qtbot.waitUntil(lambda: bool(_sleeps(pid)), timeout=5_000)
        (waiter,) = _sleeps(pid)
        with qtbot.waitSignal(window.session.run_finished, timeout=5_000):
            window.stop_action.trigger()
        qtbot.waitUntil(lambda: not alive(waiter), timeout=5_000)
        # Left running after a run: a child in the kernel's group, one in a session of its
        # own (out of reach of a group kill) and a non-daemon thread. Restart ends them all.
        run_and_wait(
            qtbot,
            window,
            "import subprocess, threading, time\n"
            "child = subprocess.Popen(['sleep', '1000'])\n"
            "loner = subprocess.Popen(['sleep', '1001'], start_new_session=True)\n"
            "threading.Thread(target=lambda: time.sleep(1000), daemon=False).start()\n",
        )
        children = _sleeps(pid)
        assert len(children) == 2 and all(alive(c) for c in children)
        window.restart_action.trigger()
        wait_for_new_kernel(qtbot, window, pid)
    assert not alive(pid)
    qtbot.waitUntil(lambda: not any(alive(c) for c in children), timeout=5_000)
    assert watch.longest_gap_ms < MAX_GAP_MS
    assert_kernel_works(qtbot, window)
    row.passed(
        "Stop ends the run's child (SIGINT reaches the kernel's group); restart kills the "
        "group, children in sessions of their own, and the threads with the process",
        watch,
    )


def _sleeps(pid: int) -> list[int]:
    """The `sleep` processes the kernel `pid` started."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                if Path(f"/proc/{child}/comm").read_text().strip() == "sleep" and alive(int(child)):
                    found.append(int(child))
            except OSError:
                continue
    return found
