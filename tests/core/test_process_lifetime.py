"""Issue 15, items 4 and 7-9: `trace` and `check` end when the script's run ends, leave no
process or status file behind (setsid daemons, SIGTERM/SIGHUP included), and name a file
that hides PyTorch. Every process is real; /proc says whether one still runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autograd_viz.cli._common import shadowing_file
from autograd_viz.core.platform.process_tree import process_start

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SOLUTION = """
import torch

def grad_of(f, x0):
    x = torch.tensor(x0, requires_grad=True)
    f(x).backward()
    return x.grad.data.numpy()
"""
# Forks twice with setsid in between: the grandchild leaves the process group and is
# re-parented; it writes its pid to PIDFILE and sleeps SECONDS holding every inherited fd.
DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open({pidfile!r}, "w").write(str(os.getpid()))
        time.sleep({seconds})
        os._exit(0)
    os._exit(0)
os.wait()
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _gone_soon(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _command(*args: str, tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ, TMPDIR=str(tmp_path))  # the status file lands where we can look
    return [sys.executable, "-m", "autograd_viz", *args], env


def _run(
    *args: str, tmp_path: Path, timeout: float = 120
) -> tuple[subprocess.CompletedProcess, float]:
    command, env = _command(*args, tmp_path=tmp_path)
    began = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path
    )
    return done, time.monotonic() - began


def _pid_from(path: Path, within: float = 60.0) -> int:
    deadline = time.monotonic() + within
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(path.read_text())


# ---- 7: a thread or an atexit handler the script leaves ---------------------------------
@pytest.mark.parametrize(
    "code",
    [
        "import threading, time\nthreading.Thread(target=time.sleep, args=(600,)).start()\n",
        "import atexit, time\natexit.register(time.sleep, 600)\n",
    ],
    ids=["non-daemon thread", "blocking atexit"],
)
def test_trace_returns_once_the_trace_is_written(tmp_path: Path, code: str) -> None:
    script = tmp_path / "s.py"
    script.write_text(
        "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\n" + code
    )
    out = tmp_path / "t.json"
    done, seconds = _run("trace", str(script), "--json", str(out), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert seconds < 60  # it used to wait the 600 s out (or forever)
    assert out.exists() and '"MulBackward0"' in out.read_text()


def test_the_timeout_still_stops_a_script_that_never_returns(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(
        "import threading\nthreading.Thread(target=lambda: None).start()\nwhile True:\n    pass\n"
    )
    done, seconds = _run("trace", str(script), "--timeout", "2", tmp_path=tmp_path)
    assert done.returncode == 3, done.stderr
    assert seconds < 30


# ---- 8: double-forked setsid daemons ----------------------------------------------------
def test_a_setsid_daemon_does_not_outlive_trace(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent(DAEMON.format(pidfile=str(pidfile), seconds=300)))
    done, seconds = _run(
        "trace", str(script), "--json", str(tmp_path / "t.json"), tmp_path=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert _gone_soon(_pid_from(pidfile, within=1))
    assert seconds < 60


def test_a_daemon_that_cleared_its_environment_does_not_outlive_trace(tmp_path: Path) -> None:
    # No run mark to find it by: trace is its subreaper, so it is still below trace.
    script = tmp_path / "s.py"
    script.write_text(
        "import subprocess\n"
        "out = subprocess.run(['setsid', 'sh', '-c', 'sleep 302 >/dev/null 2>&1 & echo $!'],"
        " env={'PATH': '/usr/bin:/bin'}, capture_output=True, text=True).stdout\n"
        f"open({str(tmp_path / 'daemon.pid')!r}, 'w').write(out.strip())\n"
    )
    done, _ = _run("trace", str(script), "--json", str(tmp_path / "t.json"), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _gone_soon(_pid_from(tmp_path / "daemon.pid", within=1))


def test_check_neither_waits_for_nor_leaves_a_setsid_daemon(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    solution = tmp_path / "solution.py"
    solution.write_text(textwrap.dedent(DAEMON.format(pidfile=str(pidfile), seconds=60)) + SOLUTION)
    done, seconds = _run("check", "grad_of", str(solution), tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("4 passed, 0 failed")
    assert seconds < 40  # it used to wait for the daemon's 60 s
    assert _gone_soon(_pid_from(pidfile, within=1))


# ---- 9: SIGTERM and SIGHUP ----------------------------------------------------------------
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_to_trace_ends_its_child_and_removes_the_status_file(
    tmp_path: Path, number: signal.Signals
) -> None:
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "s.py"
    script.write_text(
        f"import os\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\nwhile True:\n    pass\n"
    )
    command, env = _command(
        "trace", str(script), "--json", str(tmp_path / "t.json"), tmp_path=tmp_path
    )
    trace = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    child = _pid_from(pidfile)
    assert list(tmp_path.glob("*.status"))  # there while it runs
    trace.send_signal(number)
    _, stderr = trace.communicate(timeout=30)
    assert trace.returncode == 128 + number
    assert stderr.strip().splitlines()[-1].endswith(f"stopped by {number.name}")
    assert _gone_soon(child)  # it used to spin on at full CPU
    assert not list(tmp_path.glob("*.status"))


def test_sigterm_to_check_ends_the_solution(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    solution = tmp_path / "solution.py"
    solution.write_text(
        f"import os\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\nwhile True:\n    pass\n"
    )
    command, env = _command(
        "check", "grad_of", str(solution), "--timeout", "300", tmp_path=tmp_path
    )
    check = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    child = _pid_from(pidfile)
    check.send_signal(signal.SIGTERM)
    _, stderr = check.communicate(timeout=30)
    assert check.returncode == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in stderr
    assert _gone_soon(child)


# ---- 4: a file that hides torch ----------------------------------------------------------
def test_a_torch_py_that_hides_pytorch_is_named(tmp_path: Path) -> None:
    hiding = tmp_path / "hiding"
    hiding.mkdir()
    (hiding / "torch.py").write_text("raise ImportError('not the real torch')\n")
    script = tmp_path / "s.py"
    script.write_text("import torch\n")
    command, env = _command("trace", str(script), tmp_path=tmp_path)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, str(hiding)])
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == f"autograd-viz trace: a file torch.py in {hiding} hides PyTorch"


HIDDEN_CASES = {
    "check": ("check", "grad_of", "{script}"),
    "gradcheck": ("gradcheck", "{script}", "--at", "1"),
    "descent": ("descent", "--function", "{script}"),
    "landscape": ("landscape", "{script}"),
}


@pytest.mark.parametrize("case", HIDDEN_CASES)
def test_every_command_that_runs_user_code_names_a_torch_py_on_its_path(
    case: str, tmp_path: Path
) -> None:
    hiding = tmp_path / "hiding"
    hiding.mkdir()
    (hiding / "torch.py").write_text("raise ImportError('not the real torch')\n")
    script = tmp_path / "s.py"
    script.write_text("import torch\ndef loss(w, b):\n    return w * b\n")
    args = [a.format(script=script) for a in HIDDEN_CASES[case]]
    command, env = _command(*args, tmp_path=tmp_path)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, str(hiding)])
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"autograd-viz {case}: a file torch.py in {hiding} hides PyTorch"


def test_descent_names_a_torch_py_in_the_working_directory(tmp_path: Path) -> None:
    # `python -m autograd_viz descent` imports torch in this very process, from the cwd first.
    (tmp_path / "torch.py").write_text("raise ImportError('not the real torch')\n")
    done, _ = _run("descent", tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"autograd-viz descent: a file torch.py in {tmp_path} hides PyTorch"
    )


def test_check_is_not_stopped_by_a_torch_py_its_child_does_not_see(tmp_path: Path) -> None:
    # The solution's child starts with -P: the caller's working directory is not its path.
    (tmp_path / "torch.py").write_text("raise ImportError('not the real torch')\n")
    (tmp_path / "sol.py").write_text(SOLUTION)
    done, _ = _run("check", "grad_of", str(tmp_path / "sol.py"), tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("passed, 0 failed")


def test_shadowing_file_says_nothing_for_the_real_torch() -> None:
    assert shadowing_file("torch") is None
    assert process_start(os.getpid()) is not None


def test_a_setsid_daemon_does_not_outlive_descent(tmp_path: Path) -> None:
    """descent and landscape run the file in a watched child too: what it starts ends with
    the command."""
    pidfile = tmp_path / "daemon.pid"
    loss_file = tmp_path / "loss.py"
    loss_file.write_text(
        textwrap.dedent(DAEMON.format(pidfile=str(pidfile), seconds=300))
        + "\ndef loss(w, b):\n    return (w - 3) ** 2 + (b + 2) ** 2\n"
    )
    done, seconds = _run("descent", "--function", str(loss_file), "--steps", "3", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _gone_soon(_pid_from(pidfile, within=1))
    assert seconds < 60
