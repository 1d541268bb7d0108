"""Issue 15, item 13: a wrong answer cannot be made to pass by attacking the checker.

Each cheat below passed every case before the comparison moved out of the solution's
process; each must now fail every case (and the honest solution still passes them).
"""

from __future__ import annotations

import pytest

from autograd_viz.core.learning.exercise_runner import check_solution
from tests.core.exercise_solutions import SOLUTIONS

_WRONG = (
    "import torch\n"
    "def grad_of(f, x0):\n"
    "    return torch.zeros(len(x0)).numpy()  # wrong for every case\n"
)
CHEATS = {
    # Every comparison says "equal".
    "numpy_allclose": "import numpy\nnumpy.allclose = lambda *a, **k: True\n" + _WRONG,
    # The comparison's own code replaced.
    "close_code": (
        "from autograd_viz.core.learning import exercise_checks as c\n"
        "c.close.__code__ = (lambda expected, got, rtol=0, atol=0: None).__code__\n"
        "c.numpy_array.__code__ = (lambda expected, got: None).__code__\n" + _WRONG
    ),
    # The expected value read from the caller's frames (or anywhere in this process).
    "caller_frame": (
        "import gc, sys\n"
        "def grad_of(f, x0):\n"
        "    frame = sys._getframe(1)\n"
        "    while frame is not None:\n"
        "        for name in ('expected', 'value', 'want'):\n"
        "            if name in frame.f_locals and frame.f_locals[name] is not None:\n"
        "                return frame.f_locals[name]\n"
        "        frame = frame.f_back\n"
        "    import torch\n"
        "    return torch.zeros(len(x0)).numpy()\n"
    ),
    # "Pass" lines (old and new shapes) written to every inherited pipe, then os._exit(0).
    "forged_pipe": (
        "import json, os, stat\n"
        "def _forge():\n"
        "    lines = [{'kind': 'expected', 'cases': [{'name': n, 'expected': 'x'} for n in\n"
        "              ('square_sum', 'lab_loss', 'wave', 'returns_numpy')]},\n"
        "             {'kind': 'loaded'}]\n"
        "    for i in range(4):\n"
        "        lines.append({'kind': 'case', 'index': i, 'passed': True, 'got': 'x',\n"
        "                      'message': '', 'outcome': 'passed'})\n"
        "    lines.append({'kind': 'done'})\n"
        "    data = ''.join(json.dumps(m) + '\\n' for m in lines).encode()\n"
        "    for fd in range(3, 64):\n"
        "        try:\n"
        "            if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
        "                os.write(fd, data)\n"
        "        except OSError:\n"
        "            pass\n"
        "    os._exit(0)\n"
        "_forge()\n"
    ),
}


@pytest.mark.parametrize("cheat", list(CHEATS))
def test_a_cheat_cannot_pass_a_wrong_answer(cheat: str) -> None:
    result = check_solution("grad_of", CHEATS[cheat], "solution.py")
    assert result.passed == 0, [c.verdict() for c in result.cases]
    assert all(not c.passed for c in result.cases)


def test_the_honest_answer_still_passes_next_to_the_cheats() -> None:
    result = check_solution("grad_of", SOLUTIONS["grad_of"], "solution.py")
    assert result.all_passed, [c.verdict() for c in result.cases]
    # torch's own numbers, computed in the reference process, are what the table shows
    import torch

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x**2).sum().backward()
    shown = ", ".join(f"{v:g}" for v in x.grad.tolist())
    assert result.cases[0].expected == f"tensor [{shown}] (float32)"
