"""Issue 15, items 3, 5, 10, 14 and 15: outputs never over the input and written
atomically, --help says what runs, descent and landscape have trace's limits, every bad
value is one line and exit 2, and trace's stdout JSON survives what the script does."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograd_viz.cli import ExitCode
from autograd_viz.cli.main import main
from autograd_viz.core.kernel.limits import MEMORY_ENV
from autograd_viz.core.platform.atomic_files import write_bytes_via

TRACED = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
MODEL = (
    "import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(2, 1)\n"
    "X, y = torch.randn(8, 2), torch.randn(8, 1)\n"
    "def loss_fn():\n    return ((model(X) - y) ** 2).mean()\n"
)


def _cli(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograd_viz", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=dict(os.environ, **{MEMORY_ENV: "3072"}, **env),
    )


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def _file(folder: Path, text: str, name: str = "script.py") -> Path:
    path = folder / name
    path.write_text(text)
    return path


# Item 3: an output path that is the input file is refused, through links too.


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_trace_refuses_json_over_its_script(tmp_path: Path, how: str, capsys) -> None:
    script = _file(tmp_path, TRACED)
    out = {"same": script, "symlink": tmp_path / "link.py", "hardlink": tmp_path / "hard.py"}[how]
    if how == "symlink":
        out.symlink_to(script)
    elif how == "hardlink":
        os.link(script, out)
    assert main(["trace", str(script), "--json", str(out)]) == ExitCode.USAGE
    assert _one_line(capsys.readouterr().err).endswith("it would be overwritten")
    assert script.read_text() == TRACED


@pytest.mark.parametrize(
    "args",
    [
        ["check", "grad_of", "{f}", "--json", "{f}"],
        ["gradcheck", "{f}", "--at", "1", "--json", "{f}"],
        ["landscape", "{f}", "--json", "{f}"],
        ["descent", "--function", "{f}", "--json", "{f}"],
        ["{f}", "--screenshot", "{f}"],
        ["{f}", "--export-graph", "{f}"],
    ],
)
def test_every_command_refuses_output_over_its_input(tmp_path: Path, args, capsys) -> None:
    script = _file(tmp_path, TRACED)
    assert main([a.format(f=script) for a in args]) == ExitCode.USAGE
    assert _one_line(capsys.readouterr().err).endswith("it would be overwritten")
    assert script.read_text() == TRACED


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    out = _file(tmp_path, "old", "out.json")

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_bytes_via(out, half_then_fail)
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_trace_json_replaces_the_file_by_rename(tmp_path: Path) -> None:
    out = _file(tmp_path, "old", "out.json")
    before = out.stat().st_ino
    done = _cli("trace", str(_file(tmp_path, TRACED)), "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert out.stat().st_ino != before  # a new file renamed over it, not rewritten in place
    assert json.loads(out.read_text())["nodes"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "script.py"]


# Item 5: --help says what runs.


def test_help_says_what_each_flag_runs(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Opening FILE runs nothing" in text
    assert "opening it alone does not run it" in text
    assert "run FILE, save the graph canvas" in text
    assert "FILE and the editor's code run there" in text
    for command in ("trace", "descent", "landscape", "check", "gradcheck"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        help_text = " ".join(capsys.readouterr().out.split())
        assert "memory cap" in help_text, command
        assert "--timeout" in help_text, command


# Item 10: descent FILE and landscape stop at --timeout and have the memory cap.


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["descent", "--function"], "def loss(w, b):\n    while True:\n        pass\n"),
        (["landscape"], MODEL + "while True:\n    pass\n"),
    ],
)
def test_a_looping_file_stops_at_the_timeout(tmp_path: Path, command, code) -> None:
    began = time.monotonic()
    done = _cli(*command, str(_file(tmp_path, code)), "--timeout", "1.5")
    assert done.returncode == ExitCode.TIMEOUT
    assert time.monotonic() - began < 20  # 1.5 s of its own, plus Python's and torch's start
    assert _one_line(done.stderr).endswith("ran longer than the 1.5 s timeout and was stopped")


@pytest.mark.parametrize(
    "command",
    [
        ["descent", "--function", "{f}"],
        ["landscape", "{f}"],
        ["gradcheck", "{f}", "--at", "1"],
    ],
)
def test_user_code_runs_under_the_memory_cap(tmp_path: Path, command) -> None:
    # 8 GB of untouched pages: allowed without a cap, refused under 3072 MB.
    code = "big = bytearray(8 << 30)\n" + MODEL + "def loss(w, b):\n    return w * b\nf = loss\n"
    done = _cli(*(a.format(f=_file(tmp_path, code)) for a in command))
    if command[0] == "gradcheck":
        assert done.returncode == ExitCode.USER_ERROR and "MemoryError" in done.stderr
    else:
        assert done.returncode == ExitCode.OUT_OF_MEMORY, done.stderr
        assert "ran out of memory" in done.stderr and "3,072 MB" in done.stderr


# Item 14: each bad value is exit 2 and one line naming it.


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["trace", "{f}", "--max-nodes", "-1"], "--max-nodes: wants a whole number ≥ 1"),
        (["trace", "{f}", "--max-nodes", "0"], "--max-nodes: wants a whole number ≥ 1"),
        (["trace", "{f}", "--max-events", "-5"], "--max-events: wants a whole number ≥ 1"),
        (["trace", "{f}", "--timeout", "nan"], "--timeout: wants a finite number > 0"),
        (["gradcheck", "{f}", "--at", "1", "--eps", "0"], "--eps: wants a finite number > 0"),
        (["gradcheck", "{f}", "--at", "1", "--eps", "-1"], "--eps: wants a finite number > 0"),
        (["gradcheck", "{f}", "--at", "1", "--atol", "nan"], "--atol: wants a finite number ≥ 0"),
        (["descent", "--start", "1"], "--start: wants two numbers W,B"),
        (["descent", "--start", "nan,inf"], "--start: wants two finite numbers W,B"),
        (["descent", "--lr", "0"], "--lr: wants a finite number > 0"),
        (["descent", "--json", "{d}/no/such/x.json"], "cannot write"),
        (["landscape", "{f}", "--json", "{d}/no/such/x.json"], "cannot write"),
        (["landscape", "{f}", "--resolution", "2000"], "--resolution: wants a whole number ≥ 2"),
        (["{f}", "--export-graph", "{d}/eg.txt"], "--export-graph writes .png or .svg, not .txt"),
        (["{f}", "--size", "30000x30000"], "--size wants each side from 200 to 7680 pixels"),
        (["--existing", "{c}"], "no kernel listens at 127.0.0.1:"),
    ],
)
def test_a_bad_value_is_one_line_and_exit_2(
    tmp_path: Path, args, says, capsys, monkeypatch
) -> None:
    monkeypatch.setattr("autograd_viz.cli._gui_checks.KERNEL_WAIT_S", 0.5)
    connection = tmp_path / "kernel.json"
    connection.write_text(json.dumps({"ip": "127.0.0.1", "shell_port": _free_port()}))
    names = {"f": _file(tmp_path, TRACED), "d": tmp_path, "c": connection}
    assert main([a.format(**names) for a in args]) == ExitCode.USAGE
    assert says in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (
            ["descent", "--function"],
            "import torch\ndef loss(w, b):\n    return torch.stack([w, b])\n",
            "returned a tensor of shape [2, 1], not one number",
        ),
        (["descent", "--function"], "def loss(w, b):\n    return 'x'\n", "returned a str"),
        (
            ["descent", "--function"],
            "import sys\nsys.exit(3)\n",
            "called sys.exit(3) while loading",
        ),
        (
            ["landscape"],
            "import torch\nmodel = torch.nn.ReLU()\ndef loss_fn():\n    return 0\n",
            "has no parameters to train",
        ),
        (["landscape"], "x = 1\n", "model in {f} is nothing, not an nn.Module"),
    ],
)
def test_a_file_that_cannot_be_used_is_one_line_and_exit_2(
    tmp_path: Path, args, code, says
) -> None:
    script = _file(tmp_path, code)
    done = _cli(*args, str(script))
    assert done.returncode == ExitCode.USAGE
    line = _one_line(done.stderr)
    assert says.format(f=script) in line and "Run your code first" not in line


# Item 15: what the script does cannot spoil the trace's stdout or --json.


@pytest.mark.parametrize("json_out", [False, True])
def test_trace_survives_fd_writes_and_a_closed_stdout(tmp_path: Path, json_out: bool) -> None:
    script = _file(
        tmp_path, "import os, sys\nos.write(1, b'noise')\n" + TRACED + "sys.stdout.close()\n"
    )
    done = _cli("trace", str(script), *(["--json", "t.json"] if json_out else []), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    # fd 1 is the script's stdout only where the trace is not: with --json it is.
    assert "noise" in (done.stdout if json_out else done.stderr)
    text = (tmp_path / "t.json").read_text() if json_out else done.stdout
    assert len(json.loads(text)["nodes"]) == 3


def test_a_relative_json_is_resolved_before_the_script_changes_folder(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    script = _file(tmp_path, f"import os\nos.chdir({str(tmp_path / 'elsewhere')!r})\n" + TRACED)
    done = _cli("trace", script.name, "--json", "t.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "t.json").exists() and not (tmp_path / "elsewhere" / "t.json").exists()
