"""Lesson 1's practice exercises: tensors, matrices, checking a derivative, no_grad,
descent in three variables, each case checked against what torch computes.
"""

from __future__ import annotations

import math
from typing import Any

from autograd_viz.core.learning import exercise_checks as checks
from autograd_viz.core.learning.exercise_checks import Case, Exercise, calls, fresh, part
from autograd_viz.core.learning.exercises_lesson2 import sgd_reference, three_bowl, wave


def _sgd3_reference(start, lr, steps):
    return tuple(sgd_reference(three_bowl, [float(v) for v in start], lr, steps).tolist())


def _wave_derivative(x):
    import torch

    t = torch.tensor(float(x), dtype=torch.float64, requires_grad=True)
    return torch.autograd.grad(wave(t), t)[0].item()


def _tensors_reference(t):
    import torch

    return (
        torch.eye(4, dtype=torch.float32),
        torch.linspace(0, 2 * math.pi, 100),
        torch.rand(8, 1, 28, 28),
        torch.ones_like(t),
    )


def _matrices_reference(a, b):
    import torch

    return {
        "matmul": torch.matmul(a, b),
        "elementwise": torch.mul(a, b),
        "transpose": a.transpose(0, 1),
        "row_max": torch.amax(a, dim=1),
        "row_norm": torch.linalg.vector_norm(a, dim=1),
    }


def _model_reference():
    import torch

    return torch.nn.Sequential(*(torch.nn.Linear(1000, 1000) for _ in range(5)))


def _small_model_and_batch():
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    return model, torch.randn(32, 64)


def _forward_reference(model, x):
    import torch

    tracked = model(x)
    with torch.no_grad():
        untracked = model(x)
    return tracked, untracked, None, None


def _matrices():
    import torch

    a = torch.tensor([[1.0, -2.0, 3.0], [0.0, 5.0, -1.0], [4.0, 2.0, 2.0]])
    b = torch.tensor([[2.0, 0.0, 1.0], [1.0, 3.0, -2.0], [0.0, -1.0, 4.0]])
    return a, b


def _random_matrices():
    import torch

    return torch.randn(3, 3), torch.randn(3, 3)


def _randn_3x5():
    import torch

    return (torch.randn(3, 5),)


def _zeros_2x7_double():
    import torch

    return (torch.zeros(2, 7, dtype=torch.float64),)


def _timing_note(_model, _x):
    return "two durations in seconds, both > 0"


def _describe_timings(value: dict[str, Any]) -> str:
    return value["value"] if value["type"] == "str" else checks.show_value(value)


def _derivative_case(function: str, x: float) -> Case:
    return Case(
        f"{function.split('_')[0]}_at_{x:g}",
        f"{function}({x:g}) against autograd in float64",
        fresh((x,)),
        _wave_derivative,
        function=function,
    )


def _tensor_part(name, text, index, arguments=_randn_3x5, compare=checks.same_tensor, **kw):
    return part(name, text, index, arguments, _tensors_reference, compare, **kw)


def _matrix_part(name: str, text: str, key: str, arguments=_matrices) -> Case:
    return part(name, text, key, arguments, _matrices_reference)


def _forward_part(name: str, text: str, index: int, **kw) -> Case:
    return part(name, text, index, _small_model_and_batch, _forward_reference, **kw)


_TENSORS_STARTER = '''import math

import torch


def make_tensors(t):
    """(identity 4×4 float32, 100 points from 0 to 2π, 8 random images, ones like t)."""
    pass
'''
_MATRICES_STARTER = '''import torch


def matrix_ops(A, B):
    """A dict with 'matmul', 'elementwise', 'transpose', 'row_max' and 'row_norm'."""
    pass
'''
_VERIFY_STARTER = '''import math

import torch


def autograd_derivative(x):
    """f'(x) for f(x) = sin(x)·exp(−x²/2), from autograd, as a float."""
    pass


def analytic_derivative(x):
    """f'(x) from the formula worked out by hand, as a float."""
    pass
'''
_NO_GRAD_STARTER = '''import time

import torch
from torch import nn


def make_model():
    """Five nn.Linear layers of 1000 units each, in an nn.Sequential."""
    pass


def time_forward(model, x):
    """(output with tracking, output under no_grad, seconds with, seconds without)."""
    pass
'''
_DESCENT3_STARTER = '''import torch


def descend3(start, lr, steps):
    """Minimise (w1−1)² + (w2−2)² + (w3−3)² from `start`; return (w1, w2, w3) as floats."""
    pass
'''

_LESSON1 = "Lesson 1 · practice"
_START3 = (5.0, 0.0, -3.0)
_graph = {
    "compare": checks.describe_equal(checks.describe_graph),
    "describe": checks.describe_graph,
}
_batch = checks.describe_random_batch
_batch_same = checks.describe_equal(_batch)


LESSON1_EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        "tensors",
        "Making tensors",
        "make_tensors(t): identity, linspace to 2π, random images, ones_like",
        _LESSON1,
        "make_tensors",
        "Write make_tensors(t) returning four tensors in this order: a 4×4 float32 "
        "identity matrix; 100 evenly spaced values from 0 to 2π, both ends included; a "
        "batch of 8 MNIST-sized images, shape (8, 1, 28, 28), uniform random values in "
        "[0, 1); and ones with the shape and dtype of t.",
        _TENSORS_STARTER,
        (
            _tensor_part("identity", "the 4×4 identity, float32", 0),
            _tensor_part("linspace", "100 points from 0 to 2π", 1),
            _tensor_part("images", "8 random images", 2, compare=_batch_same, describe=_batch),
            _tensor_part("ones_like", "ones like a (3, 5) t", 3),
            _tensor_part("ones_like_double", "ones like a float64 t", 3, _zeros_2x7_double),
        ),
    ),
    Exercise(
        "matrices",
        "Matrix operations",
        "matrix_ops(A, B): matmul, element-wise, transpose, row max, row norm",
        _LESSON1,
        "matrix_ops",
        "Write matrix_ops(A, B) for two 3×3 float tensors. Return a dict with 'matmul' "
        "(the matrix product), 'elementwise' (A * B), 'transpose' (A transposed), "
        "'row_max' (the largest value in each row of A, shape (3,)) and 'row_norm' "
        "(the Euclidean length of each row of A, shape (3,)).",
        _MATRICES_STARTER,
        (
            _matrix_part("matmul", "A @ B", "matmul"),
            _matrix_part("elementwise", "A * B, element by element", "elementwise"),
            _matrix_part("transpose", "A transposed", "transpose"),
            _matrix_part("row_max", "the largest value in each row of A", "row_max"),
            _matrix_part("row_norm", "the length of each row of A", "row_norm"),
            _matrix_part("matmul_random", "A @ B, random", "matmul", _random_matrices),
            _matrix_part("row_norm_random", "row lengths, random", "row_norm", _random_matrices),
        ),
    ),
    Exercise(
        "verify_grad",
        "Check autograd against calculus",
        "f'(x) of sin(x)·exp(−x²/2) by autograd and by hand",
        _LESSON1,
        "autograd_derivative",
        "f(x) = sin(x)·exp(−x²/2). Write autograd_derivative(x), which gets f′(x) from "
        "autograd (a tensor that requires grad, f, backward, .grad), and "
        "analytic_derivative(x), which uses the derivative worked out by hand: "
        "f′(x) = cos(x)·exp(−x²/2) − x·sin(x)·exp(−x²/2). Both take and return plain "
        "floats; at x = 1 they agree to about six decimals.",
        _VERIFY_STARTER,
        tuple(
            _derivative_case(function, x)
            for x in (1.0, -2.0, 0.0, 3.0)
            for function in ("autograd_derivative", "analytic_derivative")
        ),
    ),
    Exercise(
        "no_grad",
        "What tracking costs",
        "make_model() and time_forward(model, x) with and without no_grad",
        _LESSON1,
        "time_forward",
        "Write make_model(): an nn.Sequential of five nn.Linear(1000, 1000) layers "
        "(ReLUs between them if you like). Write time_forward(model, x): run model(x) "
        "once normally and once inside torch.no_grad(), timing each with "
        "time.perf_counter(), and return (output, output_no_grad, seconds, "
        "seconds_no_grad). The no_grad output has no grad_fn: no graph was recorded.",
        _NO_GRAD_STARTER,
        (
            Case(
                "model",
                "make_model() has five 1000→1000 Linear layers",
                tuple,
                _model_reference,
                checks.describe_equal(checks.describe_linear_layers),
                function="make_model",
                describe=checks.describe_linear_layers,
            ),
            _forward_part("tracked", "the normal output has a graph", 0, **_graph),
            _forward_part("untracked", "the no_grad output has none", 1, **_graph),
            _forward_part("same_values", "the no_grad output's numbers", 1),
            Case(
                "timings",
                "two positive durations in seconds",
                _small_model_and_batch,
                _timing_note,
                checks.positive_seconds,
                pick=lambda result: result[2:4],
                pick_label="result[2:4]",
                describe=_describe_timings,
            ),
        ),
    ),
    Exercise(
        "descent3",
        "Descent in three variables",
        "descend3(start, lr, steps) on (w1−1)² + (w2−2)² + (w3−3)²",
        _LESSON1,
        "descend3",
        "Minimise L = (w1−1)² + (w2−2)² + (w3−3)² by hand, as the lesson does for two "
        "parameters. Write descend3(start, lr, steps): three scalar tensors that require "
        "grad, starting at `start`; each step zeroes their grads, computes L, calls "
        "backward and updates each weight inside torch.no_grad(). Return the three final "
        "values as floats. From (5, 0, −3), lr 0.1 and 50 steps land within 0.001 of "
        "(1, 2, 3).",
        _DESCENT3_STARTER,
        calls(
            _sgd3_reference,
            ("lesson", "from (5, 0, −3), lr 0.1, 50 steps", (_START3, 0.1, 50)),
            ("fast", "from (5, 0, −3), lr 0.3, 10 steps", (_START3, 0.3, 10)),
            ("bounce", "lr 1.0 jumps across the minimum", (_START3, 1.0, 3)),
            ("no_steps", "0 steps: the start comes back", ((0.5, 1.0, 1.5), 0.1, 0)),
        ),
    ),
)
