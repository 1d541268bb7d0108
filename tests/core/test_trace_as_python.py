"""`autograd-viz trace FILE.py` runs the script as `python FILE.py` does (issue #20, 7-11).

Each script is written to a folder of its own and run twice from another directory: once
plainly in a fresh `python FILE.py` process, once under `autograd-viz trace FILE.py --json
OUT`. What it prints and how it exits must be the same; the trace must be written.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograd_viz.core.kernel.script_context import (
    as_python_script,
    exit_status,
    main_module,
    recursion_headroom,
)

SCRIPT = "../project/script.py"  # as typed from the working directory, relative


@pytest.fixture
def where(tmp_path: Path) -> Path:
    """The working directory the commands run from; the script lives in a sibling."""
    (tmp_path / "project").mkdir()
    (tmp_path / "elsewhere").mkdir()
    return tmp_path / "elsewhere"


def _write(where: Path, code: str, name: str = "script.py") -> Path:
    path = where.parent / "project" / name
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return path


def _plain(where: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, SCRIPT, *args], cwd=where, capture_output=True, text=True, timeout=120
    )


def _traced(where: Path, *args: str, ours: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograd_viz", "trace", SCRIPT, "--json", "out.json", *ours]
    if args:
        command += ["--", *args]
    return subprocess.run(command, cwd=where, capture_output=True, text=True, timeout=180)


def _trace_of(where: Path) -> dict:
    return json.loads((where / "out.json").read_text(encoding="utf-8"))


def _same(where: Path, code: str, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    """Run `code` both ways; assert the same stdout and exit code; the trace it wrote."""
    _write(where, code)
    plain = _plain(where, *args)
    traced = _traced(where, *args)
    assert traced.stdout == plain.stdout, (plain.stderr, traced.stderr)
    assert traced.returncode == plain.returncode, (plain.stderr, traced.stderr)
    return traced, _trace_of(where)


def _errors(trace: dict) -> list[dict]:
    return [e for e in trace["events"] if e["kind"] == "error"]


def _run_end(trace: dict) -> dict:
    assert trace["events"][-1]["kind"] == "run_end"
    return trace["events"][-1]


# ---- 7: sys.argv ----------------------------------------------------------------------
ARGPARSE = """
import argparse
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("rest", nargs="*")
args = parser.parse_args()
print(sys.argv, args.epochs, args.rest)
"""


def test_argv_is_the_file_as_typed_then_the_arguments_after_the_double_dash(where) -> None:
    traced, trace = _same(where, ARGPARSE, "--epochs", "3", "--", "-x")
    assert traced.stdout == f"{[SCRIPT, '--epochs', '3', '--', '-x']} 3 ['-x']\n"
    assert traced.returncode == 0 and not _errors(trace)


def test_without_arguments_argv_is_just_the_file_and_our_flags_still_work(where) -> None:
    _write(where, ARGPARSE + "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n")
    plain = _plain(where)
    traced = _traced(where, ours=("--max-events", "1", "--device", "cpu"))
    assert traced.stdout == plain.stdout == f"{[SCRIPT]} 1 []\n"
    assert traced.returncode == 0, traced.stderr
    assert [e["kind"] for e in _trace_of(where)["events"]] == ["op", "run_end"]  # capped at 1


def test_script_arguments_without_the_double_dash_are_refused_with_a_hint(where) -> None:
    _write(where, ARGPARSE)
    done = subprocess.run(
        [sys.executable, "-m", "autograd_viz", "trace", SCRIPT, "--epochs", "3"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"autograd-viz trace {SCRIPT} -- --epochs 3" in done.stderr


def test_the_help_documents_the_double_dash() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "autograd_viz", "trace", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert "Arguments after -- are the script's own" in " ".join(done.stdout.split())


# ---- 8: __main__ ----------------------------------------------------------------------
def test_pickle_and_torch_save_find_the_classes_the_script_defines(where) -> None:
    traced, trace = _same(
        where,
        """
        import io
        import pickle
        import sys

        import torch


        class Point:
            def __init__(self, x):
                self.x = x


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(2, 1)


        print(pickle.loads(pickle.dumps(Point(7))).x)
        buffer = io.BytesIO()
        torch.save(Net(), buffer)
        buffer.seek(0)
        print(type(torch.load(buffer, weights_only=False)).__name__)
        print(sys.modules["__main__"].__dict__ is globals(), __name__)
        """,
    )
    assert traced.stdout == "7\nNet\nTrue __main__\n"
    assert traced.returncode == 0 and not _errors(trace)


# ---- 9: sys.path[0], __file__ ---------------------------------------------------------
def test_the_scripts_folder_is_first_on_sys_path_and_file_is_absolute(where) -> None:
    _write(where, "VALUE = 'from the sibling'\n", name="helper.py")
    traced, trace = _same(
        where,
        """
        import os
        import sys

        import helper

        print(helper.VALUE)
        print(sys.path[0] == os.path.dirname(os.path.realpath(__file__)))
        print(os.path.isabs(__file__), __file__)
        print(any(os.path.realpath(p or ".") == os.getcwd() for p in sys.path))
        """,
    )
    assert traced.stdout.splitlines() == [
        "from the sibling",
        "True",
        f"True {where / SCRIPT}",  # joined to the working directory, not normalised
        "False",  # the directory it was run from is not on sys.path
    ]
    assert not _errors(trace)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P is 3.11+")
def test_modules_in_the_working_directory_do_not_shadow_ours(where) -> None:
    (where / "inspect.py").write_text("raise SystemExit('the cwd inspect.py was imported')\n")
    traced, trace = _same(
        where,
        """
        import inspect

        import torch

        print(inspect.__name__, torch.ones(2).sum().item())
        """,
    )
    assert traced.stdout == "inspect 2.0\n" and traced.returncode == 0, traced.stderr
    assert not _errors(trace)


# ---- 10: recursion headroom -----------------------------------------------------------
def test_recursion_near_the_limit_works_as_plainly(where) -> None:
    traced, trace = _same(
        where,
        """
        def f(n):
            return 0 if n == 0 else f(n - 1) + 1

        print(f(990))
        """,
    )
    assert traced.stdout == "990\n" and not _errors(trace)


def test_recursion_with_a_torch_op_at_each_level_works_as_plainly(where) -> None:
    # 985 works plainly with ~10 frames to spare (the torch calls take a few).
    traced, trace = _same(
        where,
        """
        import torch

        x = torch.ones(2, requires_grad=True)

        def f(n):
            return x * 1 if n == 0 else f(n - 1) + 0

        print(f(985).sum().item())
        """,
    )
    assert traced.stdout == "2.0\n" and not _errors(trace)
    assert sum(e["kind"] == "op" for e in trace["events"]) >= 986  # every op was recorded


def test_runaway_recursion_is_still_a_recursion_error(where) -> None:
    traced, trace = _same(
        where,
        """
        def f(n):
            return f(n + 1)

        print("before")
        f(0)
        """,
    )
    assert traced.returncode == 1
    (error,) = _errors(trace)
    assert error["type"] == "RecursionError"


# ---- 11: sys.exit ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "ending",
    ["sys.exit(0)", "sys.exit()", "sys.exit(None)", "sys.exit(main())", "raise SystemExit"],
)
def test_a_zero_exit_is_clean(where, ending: str) -> None:
    code = f"import sys\n\ndef main():\n    print('ran')\n\n{ending}\nprint('not reached')\n"
    traced, trace = _same(where, code)
    assert traced.stdout == ("ran\n" if "main" in ending else "")
    assert traced.returncode == 0, traced.stderr
    assert not _errors(trace)
    assert _run_end(trace)["ok"] is True and _run_end(trace)["exit_code"] == 0


def test_a_nonzero_exit_is_the_commands_exit_code(where) -> None:
    traced, trace = _same(where, "import sys\nprint('partly')\nsys.exit(3)\n")
    assert traced.returncode == 3 and traced.stdout == "partly\n"
    assert "Traceback" not in traced.stderr  # Python prints nothing for an int code
    (error,) = _errors(trace)
    assert error["type"] == "SystemExit" and error["line"] == 3
    assert error["message"] == "sys.exit(3) was called: the script stopped here, exit code 3"
    assert _run_end(trace)["ok"] is False and _run_end(trace)["exit_code"] == 3


def test_an_exit_with_a_message_prints_it_and_exits_1(where) -> None:
    _write(where, "import sys\nsys.exit('no data found')\n")
    plain, traced = _plain(where), _traced(where)
    assert plain.returncode == traced.returncode == 1
    assert plain.stderr == "no data found\n"
    assert traced.stderr.splitlines()[0] == "no data found"  # then our one summary line
    assert _run_end(_trace_of(where))["exit_code"] == 1


# ---- the context itself, in this process ----------------------------------------------
def test_the_context_puts_everything_back(tmp_path: Path) -> None:
    argv, main, path = sys.argv, sys.modules["__main__"], list(sys.path)
    module = main_module(tmp_path / "lesson.py")
    with as_python_script(["lesson.py", "-v"], module, str(tmp_path)):
        assert sys.argv == ["lesson.py", "-v"]
        assert sys.modules["__main__"] is module
        assert module.__file__ == str(tmp_path / "lesson.py")
        assert sys.path[0] == str(tmp_path) and sys.path[1:] == path
        sys.path.insert(0, "/the/script/added/this")
    assert sys.argv is argv and sys.modules["__main__"] is main
    assert sys.path == ["/the/script/added/this", *path]  # the script's own change stays
    sys.path.remove("/the/script/added/this")
    with as_python_script(["x.py"], None, str(tmp_path), replace_first_path=True):
        assert sys.path == [str(tmp_path), *path[1:]]
        assert sys.modules["__main__"] is main
    assert sys.path == path


def test_the_headroom_is_the_frames_below_plus_the_tracers_and_goes_back() -> None:
    limit = sys.getrecursionlimit()
    with recursion_headroom(sys._getframe(), per_call=5):
        depth, frame = 0, sys._getframe()
        while frame is not None:
            depth, frame = depth + 1, frame.f_back
        assert sys.getrecursionlimit() == limit + depth + 5
    assert sys.getrecursionlimit() == limit
    with recursion_headroom(sys._getframe()):
        sys.setrecursionlimit(5000)  # the script's own choice stays
    assert sys.getrecursionlimit() == 5000
    sys.setrecursionlimit(limit)


def test_exit_status_is_pythons() -> None:
    assert exit_status(SystemExit()) == (0, "")
    assert exit_status(SystemExit(0)) == (0, "")
    assert exit_status(SystemExit(3)) == (3, "")
    assert exit_status(SystemExit("bye")) == (1, "bye\n")
