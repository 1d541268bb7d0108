"""Comparing two runs: the lesson's loop with and without zero_grad(), an edited op, and a
run against itself; torch gives the numbers both runs really had."""

from __future__ import annotations

import contextlib
import io
import math

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.compare import compare_runs
from autograd_viz.core.playback.run_view import prepare_run

WITH_RESET = (
    "import torch\n"
    "w = torch.tensor(2.0, requires_grad=True)\n"
    "opt = torch.optim.SGD([w], lr=0.1)\n"
    "for step in range(2):\n"
    "    opt.zero_grad()\n"
    "    loss = w * w * 2\n"
    "    loss.backward()\n"
    "    opt.step()\n"
)
WITHOUT_RESET = WITH_RESET.replace("    opt.zero_grad()\n", "")


def _diff(pinned: str, now: str):
    a, b = prepare_run(run_source(pinned)), prepare_run(run_source(now))
    return compare_runs((a.trace, a.graph), (b.trace, b.graph)), a, b


def _plain(code: str) -> dict:
    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, namespace)
    return namespace


def test_a_forgotten_zero_grad_shows_the_step_and_names_the_reset() -> None:
    diff, _, now = _diff(WITH_RESET, WITHOUT_RESET)
    grads = [c for c in diff.changes if c.what == ".grad" and c.name == "w"]
    (w,) = grads
    # torch: the first step's grad is 4w = 8 either way; after it w = 1.2, so the second
    # backward gives 4.8 with the reset, and 8 + 4.8 = 12.8 without it.
    assert _plain(WITH_RESET)["w"].grad.item() == 4.8000001907348633
    assert math.isclose(_plain(WITHOUT_RESET)["w"].grad.item(), 12.8, rel_tol=1e-6)
    assert (w.pinned, w.now) == ("4.8", "12.8")
    assert w.note.startswith("after backward #2: 4.8 (pinned) vs 12.8 (this run)")
    assert "the pinned run reset it before that (line 5: opt.zero_grad()), this run did not" in (
        w.note
    )
    assert w.tensor == now.trace.tensor_named("w").id
    # The update moved w further without the reset: its value changed too.
    assert any(c.what == "value" and c.name == "w" for c in diff.changes)
    assert not diff.added and not diff.removed and diff.backward_order == ""


def test_an_edited_op_is_removed_and_added_and_its_result_changes() -> None:
    head = "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    diff, _, _ = _diff(head + "z = (x * 2).exp().sum()\n", head + "z = (x * 2).sin().sum()\n")
    assert [title for _, title in diff.removed] == ["ExpBackward0"]
    # sin saves its input for backward, so the picture also shows that tensor (exp saved
    # its result instead, and x * 2 was gone by the end of the run).
    assert sorted(title for _, title in diff.added) == ["SinBackward0", "mul(…)"]
    z = next(c for c in diff.changes if c.name == "z" and c.what == "value")
    expected = math.sin(2) + math.sin(4)
    assert float(z.now) == round(expected, 4) or abs(float(z.now) - expected) < 1e-3


def test_a_run_compared_with_itself_is_the_same() -> None:
    diff, _, _ = _diff(WITH_RESET, WITH_RESET)
    assert diff.same and diff.counts["backward passes"] == (2, 2)
