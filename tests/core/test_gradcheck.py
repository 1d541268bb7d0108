"""Finite differences next to autograd, with torch.autograd.gradcheck as the oracle."""

from __future__ import annotations

import json
import math

import pytest
import torch

from autograd_viz.core.learning.exercise_runner import SolutionError, run_gradient_check
from autograd_viz.core.learning.gradcheck import GradientCheck, gradient_check


class _WrongSquare(torch.autograd.Function):
    """x² with a backward that says 3x: the bug a gradient check exists to catch."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x


FUNCTIONS = {
    "polynomial": (lambda x, y: (x**2 * y).sum() + torch.sin(y), [[1.0, 2.0], 3.0]),
    "vector_output": (lambda x: torch.stack([x[0] * x[1], x[1].exp()]), [[0.5, -1.0]]),
    "matrix_input": (lambda a, v: (a @ v).tanh(), [[[1.0, 2.0], [0.5, -1.0]], [0.3, 0.2]]),
    "lesson_wave": (lambda x: torch.sin(x) * torch.exp(-(x**2) / 2), [1.0]),
    "abs_away_from_0": (lambda x: x.abs().sum(), [[-2.0, 3.0]]),
    "relu_at_0": (lambda x: torch.relu(x), [0.0]),  # finite difference 0.5, autograd 0
    "wrong_backward": (lambda x: _WrongSquare.apply(x).sum(), [[1.0, -2.0]]),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_verdict_agrees_with_torch_autograd_gradcheck(name: str) -> None:
    fn, point = FUNCTIONS[name]
    inputs = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in point]
    oracle = torch.autograd.gradcheck(fn, inputs, raise_exception=False)
    check = gradient_check(fn, point)
    assert check.passed == oracle
    assert check.passed == (name not in ("relu_at_0", "wrong_backward"))


def test_entries_side_by_side_for_the_lessons_function() -> None:
    fn, point = FUNCTIONS["lesson_wave"]
    (entry,) = gradient_check(fn, point, names=["x"]).entries
    analytic = (math.cos(1) - math.sin(1)) * math.exp(-0.5)  # f'(x) worked out by hand
    assert entry.analytical == pytest.approx(analytic, abs=1e-12)  # autograd, float64
    assert entry.numerical == pytest.approx(analytic, abs=1e-8)  # central difference
    assert entry.ok and entry.abs_error < 1e-8 and entry.label == "∂f/∂x"


def test_every_jacobian_entry_is_listed_with_its_indices() -> None:
    fn, point = FUNCTIONS["matrix_input"]
    check = gradient_check(fn, point, names=["a", "v"])
    assert check.output_shape == [2] and len(check.entries) == 2 * (4 + 2)
    jacobian = torch.autograd.functional.jacobian(
        fn, tuple(torch.tensor(p, dtype=torch.float64) for p in point)
    )
    for entry in check.entries:
        which = jacobian[0] if entry.input == "a" else jacobian[1]
        expected = which[tuple(entry.output_index + entry.index)].item()
        assert entry.analytical == pytest.approx(expected, abs=1e-12)
    labels = {e.label for e in check.entries}
    assert "∂f[1]/∂a[1, 0]" in labels and "∂f[0]/∂v[1]" in labels


def test_wrong_backward_shows_the_mismatch() -> None:
    fn, point = FUNCTIONS["wrong_backward"]
    check = gradient_check(fn, point, names=["x"])
    assert [round(e.numerical, 6) for e in check.entries] == [2.0, -4.0]  # 2x
    assert [e.analytical for e in check.entries] == [3.0, -6.0]  # the bug: 3x
    assert check.max_abs_error == pytest.approx(2.0) and not check.passed
    assert "MISMATCH" in check.table() and check.summary().startswith("FAIL")


def test_a_cut_graph_is_explained() -> None:
    check = gradient_check(lambda x: torch.tensor((x**2).sum().item()), [[1.0, 2.0]])
    assert not check.passed and "no grad_fn" in check.notes[0]


def test_json_round_trip() -> None:
    check = gradient_check(*FUNCTIONS["polynomial"])
    data = json.loads(json.dumps(check.to_dict()))
    assert data["passed"] is True and data["max_abs_error"] < 1e-6
    again = GradientCheck.from_dict(data)
    assert again.entries == check.entries and again.passed


def test_in_a_child_process() -> None:
    source = "import torch\n\n\ndef loss(w, b):\n    return (w * 2.0 + b - 5) ** 2\n"
    check = run_gradient_check(source, "loss", [3.0, 1.0], "mine.py")
    assert [e.input for e in check.entries] == ["w", "b"]
    assert [round(e.analytical, 9) for e in check.entries] == [8.0, 4.0]  # lesson 2's numbers
    with pytest.raises(SolutionError) as raised:
        run_gradient_check("def f(x):\n    return x / 0 + nope\n", "f", [1.0], "mine.py")
    assert raised.value.line == 2 and "NameError" in raised.value.message
    with pytest.raises(SolutionError, match="timed out after 1 s"):
        run_gradient_check("def f(x):\n    while True:\n        pass\n", "f", [1.0], timeout=1)
