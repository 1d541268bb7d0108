"""`autograd-viz trace`: the headless command writes the same trace the GUI draws."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from autograd_viz.resources import EXAMPLES


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograd_viz", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )


def test_trace_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    done = _cli("trace", str(EXAMPLES / "lab_loss.py"), "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "tensor(8.) tensor(4.) None" in done.stdout  # the script's own print
    data = json.loads(out.read_text())
    assert set(data) >= {"version", "tensors", "nodes", "events", "truncated", "notes"}
    grads = {t["name"]: t["grad"]["data"] for t in data["tensors"] if t["grad"]}
    assert grads == {"w": 8.0, "b": 4.0}


def test_trace_to_stdout_keeps_json_clean(tmp_path: Path) -> None:
    done = _cli("trace", str(EXAMPLES / "first_graph.py"))
    assert done.returncode == 0
    data = json.loads(done.stdout)  # prints went to stderr
    assert "x.grad = tensor(60.)" in done.stderr
    assert {n["name"] for n in data["nodes"]} >= {"MulBackward0", "AddBackward0", "PowBackward0"}


def test_trace_of_failing_script_exits_1_with_error_event(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("import torch\nx = torch.ones(3, requires_grad=True)\n(x * 2).backward()\n")
    out = tmp_path / "t.json"
    done = _cli("trace", str(script), "--json", str(out))
    assert done.returncode == 1
    (error,) = [e for e in json.loads(out.read_text())["events"] if e["kind"] == "error"]
    assert error["line"] == 3 and "scalar outputs" in error["message"]


def test_missing_file_is_a_one_line_message(tmp_path: Path) -> None:
    done = _cli("trace", str(tmp_path / "nope.py"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"autograd-viz: no such file: {tmp_path / 'nope.py'}"


def test_version() -> None:
    done = _cli("--version")
    assert done.returncode == 0 and done.stdout.startswith("autograd-viz 0.")


def test_device_flag(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    done = _cli("trace", str(EXAMPLES / "lab_loss.py"), "--device", "auto", "--json", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["device"] in ("cpu", "cuda:0")
    assert {t["device"] for t in data["tensors"]} == {data["device"]}
    bad = _cli("trace", str(EXAMPLES / "lab_loss.py"), "--device", "gpu")
    assert bad.returncode == 2 and bad.stderr.startswith("autograd-viz: --device gpu:")


def test_event_cap_flag(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    done = _cli("trace", str(EXAMPLES / "first_graph.py"), "--max-events", "3", "--json", str(out))
    data = json.loads(out.read_text())
    assert done.returncode == 0
    assert len(data["events"]) == 4  # three recorded, then run_end
    assert any("recording stopped" in n for n in data["notes"])
