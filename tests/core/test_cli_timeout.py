"""`autograd-viz trace` runs the script in a child: hangs, crashes and memory blow-ups end
with one line on stderr and their own exit code, never a traceback of ours."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograd_viz.cli import ExitCode
from autograd_viz.core.kernel.limits import MEMORY_ENV
from autograd_viz.resources import EXAMPLES


def _trace(
    script: Path, *args: str, memory_mb: int = 3072
) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, **{MEMORY_ENV: str(memory_mb)})
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "autograd_viz", "trace", str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return done, time.monotonic() - began


def _script(tmp_path: Path, code: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(code)
    return path


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_a_hang_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    done, seconds = _trace(
        _script(tmp_path, "while True:\n    pass\n"), "--timeout", "2", "--json", str(out)
    )
    assert done.returncode == ExitCode.TIMEOUT
    assert seconds < 8  # 2 s of the script's own time, plus starting Python and torch
    assert _one_line(done.stderr).endswith("ran longer than the 2 s timeout and was stopped")
    assert not out.exists()


def test_the_timeout_does_not_count_importing_torch(tmp_path: Path) -> None:
    done, _ = _trace(_script(tmp_path, "import time\ntime.sleep(0.5)\n"), "--timeout", "1")
    assert done.returncode == ExitCode.OK, done.stderr


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (
            "import os\nos._exit(1)\n",
            "ended Python itself (exit code 1: os._exit() or a fatal error)",
        ),
        ("import ctypes\nctypes.string_at(0)\n", "crashed Python with a segmentation fault"),
    ],
    ids=["os_exit", "segfault"],
)
def test_a_crash_is_one_line_and_exit_code_4(tmp_path: Path, code: str, words: str) -> None:
    out = tmp_path / "t.json"
    done, _ = _trace(_script(tmp_path, code), "--json", str(out))
    assert done.returncode == ExitCode.CRASHED
    assert words in _one_line(done.stderr)
    assert not out.exists()


def test_running_out_of_memory_is_exit_code_5_with_the_trace(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    # 4 GB of address space (never touched) against a 3 GB cap: fails without using RAM.
    script = _script(tmp_path, "import torch\nkept = torch.ones(2)\nhuge = torch.empty(10**9)\n")
    done, _ = _trace(script, "--json", str(out))
    assert done.returncode == ExitCode.OUT_OF_MEMORY
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"autograd-viz trace: {script}, line 3, ran out of memory; the script may use at most "
        f"3,072 MB ({MEMORY_ENV} sets the limit, in MB or 'off')."
    )
    (error,) = [e for e in json.loads(out.read_text())["events"] if e["kind"] == "error"]
    assert error["line"] == 3 and "can't allocate memory" in error["message"]


def test_sys_exit_is_the_scripts_exit_code_not_a_crash(tmp_path: Path) -> None:
    # As under python: sys.exit(N) exits N (the trace records where), sys.exit(0) is clean.
    out = tmp_path / "t.json"
    done, _ = _trace(_script(tmp_path, "import sys\nsys.exit(3)\n"), "--json", str(out))
    assert done.returncode == 3
    (error,) = [e for e in json.loads(out.read_text())["events"] if e["kind"] == "error"]
    assert error["type"] == "SystemExit" and error["line"] == 2
    assert error["message"].startswith("sys.exit(3) was called")
    done, _ = _trace(_script(tmp_path, "import sys\nsys.exit(0)\n"), "--json", str(out))
    assert done.returncode == ExitCode.OK
    assert not [e for e in json.loads(out.read_text())["events"] if e["kind"] == "error"]


def test_a_normal_run_still_writes_the_trace(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    done, _ = _trace(EXAMPLES / "lab_loss.py", "--timeout", "60", "--json", str(out))
    assert done.returncode == ExitCode.OK, done.stderr
    grads = {
        t["name"]: t["grad"]["data"] for t in json.loads(out.read_text())["tensors"] if t["grad"]
    }
    assert grads == {"w": 8.0, "b": 4.0}


def test_processes_the_script_started_do_not_outlive_it(tmp_path: Path) -> None:
    code = "import subprocess\np = subprocess.Popen(['sleep', '1003'])\nprint(p.pid)\n"
    done, _ = _trace(_script(tmp_path, code), "--json", str(tmp_path / "t.json"))
    assert done.returncode == ExitCode.OK
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        assert not Path(f"/proc/{pid}").exists()


def test_a_bad_timeout_is_a_usage_error(tmp_path: Path) -> None:
    done, _ = _trace(EXAMPLES / "lab_loss.py", "--timeout", "0")
    assert done.returncode == 2
    assert _one_line(done.stderr) == (
        "autograd-viz trace: argument --timeout: wants a finite number > 0, not 0 (see --help)"
    )
