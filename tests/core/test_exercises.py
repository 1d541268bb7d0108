"""The exercise checker: correct solutions pass, wrong ones fail for the right reason, and a
solution that hangs, exits or segfaults is a failed case, never a hung or dead caller."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time

import pytest

from autograd_viz.core.learning.exercise_runner import check_solution
from autograd_viz.core.learning.exercises import EXERCISES, CheckResult
from tests.core.exercise_solutions import SOLUTIONS


def _check(exercise: str, source: str, timeout: float = 5.0) -> CheckResult:
    return check_solution(exercise, source, "solution.py", timeout)


def _by_name(result: CheckResult) -> dict:
    return {c.name: c for c in result.cases}


def test_catalog_is_complete_and_light() -> None:
    assert set(EXERCISES) == {
        "grad_of",
        "accumulated_grad",
        "descend",
        "tensors",
        "matrices",
        "verify_grad",
        "no_grad",
        "descent3",
    }
    assert set(SOLUTIONS) == set(EXERCISES)
    for exercise in EXERCISES.values():
        starter = ast.parse(exercise.starter)
        defined = {n.name for n in starter.body if isinstance(n, ast.FunctionDef)}
        called = {c.function or exercise.function for c in exercise.cases}
        assert called <= defined, exercise.id  # the starter names every function a case calls
        names = [c.name for c in exercise.cases]
        assert len(names) == len(set(names)) >= 4, exercise.id
        assert exercise.statement and exercise.summary and exercise.title
    # Listing exercises (the GUI does it at start-up) must not load torch.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, autograd_viz.core.learning.exercises as e; "
            "e.EXERCISES['grad_of'].starter; print('torch' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "False", done.stderr


# Lesson 2: ∂loss/∂(w, x, b) = (8, 12, 4) per backward, so two rounds give 16, 24, 8;
# lesson 1: x² at 2 gives 4, then 8 after a second backward.
LESSON_NUMBERS = {
    ("grad_of", "lab_loss"): "tensor [8, 12, 4] (float32)",
    ("accumulated_grad", "lab_twice"): "tensor [16, 24, 8] (float32)",
    ("accumulated_grad", "twice"): "tensor [8] (float32)",
}


@pytest.mark.parametrize("exercise", list(SOLUTIONS))
def test_correct_solution_passes_every_case(exercise: str) -> None:
    result = _check(exercise, SOLUTIONS[exercise])
    assert result.all_passed, [c.verdict() for c in result.cases] + [result.output]
    assert all(c.expected and c.got for c in result.cases)
    for case in result.cases:  # torch's answers are the lessons' numbers
        assert LESSON_NUMBERS.get((exercise, case.name), case.expected) == case.expected
    data = json.loads(json.dumps(result.to_dict()))
    assert data["exercise"] == exercise and data["all_passed"] is True
    assert data["passed"] == len(result.cases) and data["failed"] == 0
    assert set(data["cases"][0]) == {
        "name", "description", "passed", "expected", "got", "message", "error", "line", "seconds"
    }  # fmt: skip


def test_reference_descent_is_torch_optim_sgd() -> None:
    import torch

    from autograd_viz.core.learning.exercises_lesson2 import sgd_reference, three_bowl

    x = torch.tensor([5.0, 0.0, -3.0], requires_grad=True)
    optimizer = torch.optim.SGD([x], lr=0.1)
    for _ in range(50):
        optimizer.zero_grad()
        three_bowl(x).backward()
        optimizer.step()
    assert torch.equal(sgd_reference(three_bowl, [5.0, 0.0, -3.0], 0.1, 50), x.detach())


def test_starter_fails_every_case_saying_it_returned_none() -> None:
    result = _check("grad_of", EXERCISES["grad_of"].starter)
    assert result.passed == 0
    assert all("returned None" in c.message for c in result.cases)
    assert result.cases[0].verdict().startswith("FAIL square_sum: expected tensor [2, 4, 6]")


WRONG = {
    # Doubles the gradient and returns a tensor, not a NumPy array.
    "grad_of": (
        "import torch\n"
        "def grad_of(f, x0):\n"
        "    x = torch.tensor(x0, requires_grad=True)\n"
        "    f(x).backward()\n"
        "    return x.grad * 2\n",
        {
            "square_sum": "values differ by up to 6",
            "returns_numpy": "expected a numpy.ndarray, got torch.Tensor",
        },
    ),
    # Zeroes the gradient each round: the total is one gradient, not `times` of them.
    "accumulated_grad": (
        "import torch\n"
        "def accumulated_grad(f, x0, times):\n"
        "    x = torch.tensor(x0, requires_grad=True)\n"
        "    for _ in range(times):\n"
        "        x.grad = None\n"
        "        f(x).backward()\n"
        "    return x.grad\n",
        {"twice": "values differ by up to 4", "once": ""},
    ),
    # Forgets to clear x.grad: the steps grow with the accumulated gradients.
    "descend": (
        "import torch\n"
        "def descend(f, x0, lr, steps):\n"
        "    x = torch.tensor(x0, requires_grad=True)\n"
        "    for _ in range(steps):\n"
        "        f(x).backward()\n"
        "        x.data = x.data - lr * x.grad.data\n"
        "    return x.data\n",
        {"bowl": "values differ", "one_step": "", "no_steps": ""},
    ),
    # Returns max()'s (values, indices) pair and a sum of squares without the root.
    "matrices": (
        "def matrix_ops(A, B):\n"
        "    return {'matmul': A @ B, 'elementwise': A * B, 'transpose': A.T,\n"
        "            'row_max': A.max(dim=1), 'row_norm': (A ** 2).sum(dim=1)}\n",
        {"row_max": "take its .values", "row_norm": "values differ", "matmul": ""},
    ),
    # Normal random numbers, and ones of the default dtype instead of t's.
    "tensors": (
        "import math, torch\n"
        "def make_tensors(t):\n"
        "    return (torch.eye(4), torch.linspace(0, 2 * math.pi, 100),\n"
        "            torch.randn(8, 1, 28, 28), torch.ones(t.shape))\n",
        {
            "images": "values not uniform in [0, 1)",
            "ones_like_double": "dtype torch.float32 instead of torch.float64",
            "ones_like": "",
        },
    ),
    # Forgets no_grad: the "untracked" output still carries a graph.
    "no_grad": (
        "import time\n"
        "from torch import nn\n"
        "def make_model():\n"
        "    return nn.Sequential(*[nn.Linear(1000, 1000) for _ in range(4)])\n"
        "def time_forward(model, x):\n"
        "    return model(x), model(x), 0.1, 0.1\n",
        {
            "model": "4 Linear layers",
            "untracked": "requires_grad=True, grad_fn=AddmmBackward0 instead of "
            "requires_grad=False, grad_fn=None",
            "tracked": "",
        },
    ),
    # The function has the wrong name.
    "descent3": (
        "def descend(start, lr, steps):\n    return 1.0, 2.0, 3.0\n",
        {"lesson": "your code defines no function descend3()"},
    ),
    # The derivative's sign slip: + x·sin(x)·exp(−x²/2).
    "verify_grad": (
        "import math\n"
        "def autograd_derivative(x):\n"
        "    return analytic_derivative(x)\n"
        "def analytic_derivative(x):\n"
        "    return (math.cos(x) + x * math.sin(x)) * math.exp(-x * x / 2)\n",
        {"autograd_at_1": "values differ", "analytic_at_0": ""},
    ),
}


@pytest.mark.parametrize("exercise", list(WRONG))
def test_wrong_solution_fails_with_the_right_message(exercise: str) -> None:
    source, messages = WRONG[exercise]
    cases = _by_name(_check(exercise, source))
    for name, message in messages.items():
        if message:
            assert not cases[name].passed and message in cases[name].message, cases[name]
        else:  # the parts this solution gets right still pass
            assert cases[name].passed, cases[name]


def test_solution_that_hangs_is_stopped_by_the_time_limit() -> None:
    started = time.perf_counter()
    result = _check("grad_of", "def grad_of(f, x0):\n    while True:\n        pass\n", timeout=1)
    assert time.perf_counter() - started < 20
    first, *rest = result.cases
    assert first.message == "timed out after 1 s" and not first.passed
    assert all(
        c.message == "not run: the solution process stopped during 'square_sum'" for c in rest
    )
    assert first.verdict() == "FAIL square_sum: timed out after 1 s"


def test_solution_that_hangs_while_loading_is_stopped() -> None:
    result = _check("descend", "while True:\n    pass\n", timeout=1)
    message = "loading your code timed out after 1 s (a loop at the top level?)"
    assert [c.message for c in result.cases] == [message] * len(result.cases)


def test_os_exit_is_reported_as_the_process_ending() -> None:
    source = "import os\ndef accumulated_grad(f, x0, times):\n    os._exit(3)\n"
    first = _check("accumulated_grad", source).cases[0]
    assert "ended the Python process (exit code 3)" in first.message and not first.passed


@pytest.mark.skipif(os.name != "posix", reason="a SIGSEGV exit code is POSIX")
def test_segfault_is_reported_with_the_learners_line() -> None:
    source = "import ctypes\n\n\ndef grad_of(f, x0):\n    return ctypes.string_at(0)\n"
    first = _check("grad_of", source).cases[0]
    assert first.message.startswith("the solution crashed the Python process (exit code -11")
    assert "SIGSEGV" in first.message and first.line == 5 and "line 5" in first.message
    assert "Segmentation fault" in first.error


def test_syntax_error_reports_its_line() -> None:
    result = _check("grad_of", "import torch\n\ndef grad_of(f, x0)\n    return 1\n")
    for case in result.cases:
        assert case.line == 3 and not case.passed
        assert case.message == "your code did not load: SyntaxError: expected ':' (line 3)"
        assert "def grad_of(f, x0)" in case.error


def test_errors_point_at_the_learners_line_and_later_cases_still_run() -> None:
    # One solution, a different behaviour per case (told apart by x0):
    source = (
        "import os, sys\n"  # 1
        "import torch\n"  # 2
        "def grad_of(f, x0):\n"  # 3
        "    if x0 == [1.0, 2.0, 3.0]:\n"  # 4
        "        return 1 / 0\n"  # 5: square_sum raises
        "    if x0 == [3.0, 2.0, 1.0]:\n"  # 6
        "        sys.exit(4)\n"  # 7: lab_loss calls sys.exit
        '    print(\'{"kind": "done"}\')\n'  # 8: prints look like protocol messages…
        "    os.write(1, b'raw bytes on fd 1\\n')\n"  # 9: …or go straight to fd 1
        "    x = torch.tensor(x0, requires_grad=True)\n"
        "    f(x).backward()\n"
        "    return x.grad.numpy()\n"
    )
    result = _check("grad_of", source)
    cases = _by_name(result)
    raised = cases["square_sum"]
    assert raised.message == "ZeroDivisionError: division by zero (line 5)" and raised.line == 5
    assert 'File "solution.py", line 5, in grad_of' in raised.error
    assert "exercise_child" not in raised.error  # only the learner's frames
    assert cases["lab_loss"].message == "SystemExit: 4 (line 7)"
    assert cases["wave"].passed and cases["returns_numpy"].passed
    assert "raw bytes on fd 1" in result.output and '{"kind": "done"}' in result.output


def test_solution_cannot_change_the_expected_answers() -> None:
    # Expected values are computed before the learner's code is loaded.
    source = (
        "import torch\n"
        "torch.autograd.grad = lambda *a, **k: (torch.zeros(3),)\n"
        "def grad_of(f, x0):\n"
        "    return torch.zeros(len(x0)).numpy()\n"
    )
    cases = _by_name(_check("grad_of", source))
    assert cases["square_sum"].expected == "tensor [2, 4, 6] (float32)"
    assert not cases["square_sum"].passed


def test_unknown_exercise() -> None:
    with pytest.raises(KeyError, match="no exercise 'nope'"):
        check_solution("nope", "")
