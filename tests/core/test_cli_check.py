"""`autograd-viz check` and `autograd-viz gradcheck`: lines, totals and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_viz.cli import main
from autograd_viz.core.learning.exercises import EXERCISES
from tests.core.exercise_solutions import SOLUTIONS

WRONG_GRAD_OF = (
    "import torch\n"
    "\n"
    "def grad_of(f, x0):\n"
    "    x = torch.tensor(x0, requires_grad=True)\n"
    "    if len(x0) == 1:\n"
    "        raise ValueError('one number is not enough')\n"
    "    f(x).backward()\n"
    "    return (x.grad * 2).numpy()\n"
)


def _write(tmp_path: Path, text: str, name: str = "solution.py") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_all_pass_exits_0_with_a_line_per_case(tmp_path, capsys) -> None:
    path = _write(tmp_path, SOLUTIONS["accumulated_grad"])
    assert main(["check", "accumulated_grad", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "PASS twice",
        "PASS lab_twice",
        "PASS once",
        "PASS three_times",
        "4 passed, 0 failed",
    ]


def test_failures_exit_1_with_expected_and_got(tmp_path, capsys) -> None:
    path = _write(tmp_path, WRONG_GRAD_OF)
    out_json = tmp_path / "out.json"
    code = main(["check", "grad_of", str(path), "--json", str(out_json), "--verbose"])
    assert code == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "FAIL square_sum: expected tensor [2, 4, 6] (float32), "
        "got array [4, 8, 12] (float32) (values differ by up to 6)"
    )
    assert out[1].startswith("FAIL lab_loss: expected tensor [8, 12, 4] (float32), got array")
    raised = out.index("FAIL returns_numpy: ValueError: one number is not enough (line 6)")
    assert f'File "{path}", line 6, in grad_of' in "\n".join(out[raised:])  # --verbose
    assert out[-1] == "0 passed, 4 failed"
    data = json.loads(out_json.read_text())
    assert data["failed"] == 4 and data["cases"][3]["line"] == 6


def test_list_names_every_exercise(capsys) -> None:
    assert main(["check", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(EXERCISES)
    assert all(EXERCISES[line.split()[0]].summary in line for line in lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "nope", "{file}"], "autograd-viz check: no exercise 'nope' (choose one of"),
        (["check", "grad_of", "{missing}"], "autograd-viz: no such file:"),
        (
            ["check", "grad_of", "{file}", "--timeout", "0"],
            "autograd-viz check: argument --timeout: wants a finite number > 0",
        ),
        (["gradcheck", "{missing}", "--at", "1"], "autograd-viz: no such file:"),
        (["gradcheck", "{file}", "--at", "x"], "autograd-viz gradcheck: --at wants numbers"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path, capsys, args, message) -> None:
    names = {"file": _write(tmp_path, "x = 1\n"), "missing": tmp_path / "missing.py"}
    assert main([a.format(**names) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err


def test_gradcheck_prints_the_table(tmp_path, capsys) -> None:
    path = _write(tmp_path, "import torch\n\ndef f(x, y):\n    return (x**2 * y).sum()\n")
    assert main(["gradcheck", str(path), "--at", "1,2", "--at", "3"]) == 0
    out = capsys.readouterr().out
    assert "∂f/∂x[1]" in out and "∂f/∂y" in out and out.splitlines()[-1].startswith("PASS")
    wrong = _write(tmp_path, "def g(x):\n    return x.detach() ** 2\n", "cut.py")
    assert main(["gradcheck", str(wrong), "--function", "g", "--at=-1.5"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_the_installed_command(tmp_path) -> None:
    path = _write(tmp_path, "def grad_of(f, x0):\n    while True:\n        pass\n")
    done = subprocess.run(
        [sys.executable, "-m", "autograd_viz", "check", "grad_of", str(path), "--timeout", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == "FAIL square_sum: timed out after 1 s"
    assert done.stdout.splitlines()[-1] == "0 passed, 4 failed"
