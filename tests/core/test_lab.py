"""The lab on real torch, in-process: actions, state read back, tasks, predictions, script.

Each test plays actions through `lab_step` (the function the kernel runs) in a fresh
namespace, so every number below came out of torch; torch is also the oracle.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

from autograd_viz.core.descent.paths import FUNCTIONS, run_descent
from autograd_viz.core.learning.lab import LAB_SOURCE, Lab, lab_state, lab_step, toggle_code
from autograd_viz.core.learning.lab_predict import ERROR, NO, judge, question_for
from autograd_viz.core.learning.lab_tasks import TASKS, check_descent_task, tasks_done

SECOND_TIME = "Trying to backward through the graph a second time"


def play(*keys: str, requires_grad: dict[str, bool] | None = None) -> tuple[Lab, dict]:
    """Set the lab up and run each action for real; returns the lab and its namespace."""
    lab = Lab()
    lab.requires_grad.update(requires_grad or {})
    namespace: dict = {}
    with contextlib.redirect_stderr(io.StringIO()):  # tracebacks of the errors on purpose
        lab.record("setup", lab.setup(), lab_step(namespace, lab.setup(), fresh=True))
        for key in keys:
            code = key if " " in key or "(" in key else lab.code_for(key)
            lab.record(key, code, lab_step(namespace, code))
    return lab, namespace


def grads(lab: Lab) -> dict:
    return {n: lab.last.grad(n) for n in ("w", "x", "b")}


def oracle_grads(requires: dict[str, bool], rounds: int = 1) -> dict:
    """Plain torch, no lab: the lesson's loss, backward `rounds` times on fresh forwards."""
    t = {
        n: torch.tensor(v, requires_grad=requires[n])
        for n, v in (("w", 3.0), ("x", 2.0), ("b", 1.0))
    }
    for _ in range(rounds):
        ((t["w"] * t["x"] + t["b"] - 5) ** 2).backward()
    return {n: None if v.grad is None else v.grad.item() for n, v in t.items()}


def test_one_round_gives_w_and_b_but_not_x() -> None:
    lab, _ = play("forward", "backward")
    assert grads(lab) == oracle_grads({"w": True, "x": False, "b": True})
    assert grads(lab) == {"w": 8.0, "x": None, "b": 4.0}
    adds = lab.state["adds"]
    assert (adds["w"]["grad"], adds["x"]["grad"], adds["b"]["grad"]) == (8.0, None, 4.0)
    assert adds["w"]["why"] == "∂loss/∂w = 2(w·x+b−5)·x = 2·2·2 = 8 per forward + backward"
    assert adds["b"]["why"] == "∂loss/∂b = 2(w·x+b−5) = 2·2 = 4 per forward + backward"
    assert "does not require grad" in adds["x"]["why"]
    w, z, loss = (lab.state["tensors"][n] for n in ("w", "z", "loss"))
    assert w["is_leaf"] and not z["is_leaf"] and z["grad"] is None
    assert (z["grad_fn"], loss["grad_fn"], loss["value"]) == ("MulBackward0", "PowBackward0", 4.0)
    assert tasks_done(lab.steps)["lab.w_b_not_x"]


def test_x_requiring_grad_gets_twelve() -> None:
    lab, _ = play("forward", "backward", requires_grad={"x": True})
    assert (
        grads(lab)
        == oracle_grads({"w": True, "x": True, "b": True})
        == {
            "w": 8.0,
            "x": 12.0,
            "b": 4.0,
        }
    )
    assert lab.state["adds"]["x"]["why"].endswith("= 2·2·3 = 12 per forward + backward")
    assert not tasks_done(lab.steps)["lab.w_b_not_x"]  # x has a gradient now


def test_toggle_is_a_real_requires_grad_switch() -> None:
    lab, _ = play(toggle_code("x", True), "forward", "backward")
    assert lab.requires_grad["x"] is True and lab.last.grad("x") == 12.0


def test_two_rounds_accumulate_to_sixteen() -> None:
    lab, _ = play("forward", "backward", "forward", "backward")
    assert grads(lab) == oracle_grads({"w": True, "x": False, "b": True}, rounds=2)
    assert lab.last.grad("w") == 16.0
    done = tasks_done(lab.steps)
    assert done["lab.accumulate_16"]
    assert not done["lab.zero_grad_8"] and not done["lab.retain_graph_16"]


@pytest.mark.parametrize(("zero", "emptied"), [("zero_none", None), ("zero_inplace", 0.0)])
def test_zero_grad_between_rounds_ends_at_eight(zero: str, emptied) -> None:
    lab, _ = play("forward", "backward", zero, "forward", "backward")
    assert lab.steps[3].grad("w") == emptied
    assert lab.last.grad("w") == 8.0
    done = tasks_done(lab.steps)
    assert done["lab.zero_grad_8"] and not done["lab.accumulate_16"]


def test_zero_grad_after_an_accumulated_round_counts_too() -> None:
    lab, _ = play("forward", "backward", "forward", "backward", "zero_none", "forward", "backward")
    assert [s.grad("w") for s in lab.steps[-3:]] == [None, None, 8.0]
    assert tasks_done(lab.steps)["lab.zero_grad_8"]
    lab, _ = play("zero_none", "forward", "backward")  # nothing to reset: not the task
    assert not tasks_done(lab.steps)["lab.zero_grad_8"]


def test_zero_inplace_leaves_a_none_grad_none() -> None:
    lab, _ = play("zero_inplace")
    assert lab.last.error is None and grads(lab) == {"w": None, "x": None, "b": None}


def test_second_backward_raises_torchs_own_error() -> None:
    lab, _ = play("forward", "backward", "backward")
    error = lab.last.error
    assert error["type"] == "RuntimeError" and SECOND_TIME in error["message"]
    assert lab.last.grad("w") == 8.0  # the failed pass added nothing
    assert lab.last.backward_passes == 1 and not lab.last.backward_ok
    assert tasks_done(lab.steps)["lab.second_time_error"]
    assert not tasks_done(lab.steps[:-1])["lab.second_time_error"]


def test_backward_of_a_loss_that_needs_no_grad_is_torchs_error() -> None:
    lab, _ = play("forward", "backward", requires_grad={"w": False, "b": False})
    assert lab.state["tensors"]["loss"]["requires_grad"] is False
    error = lab.last.error
    assert error["type"] == "RuntimeError" and "does not require grad" in error["message"]
    assert all(a["grad"] is None for a in lab.state["adds"].values())


def test_retain_graph_allows_a_second_backward() -> None:
    lab, _ = play("forward", "backward_retain", "backward")
    assert lab.last.error is None and lab.last.grad("w") == 16.0
    done = tasks_done(lab.steps)
    assert done["lab.retain_graph_16"]
    assert not done["lab.accumulate_16"] and not done["lab.second_time_error"]


@pytest.mark.parametrize("cut", ["item", "detach"])
def test_leaving_torch_breaks_the_connection_to_w(cut: str) -> None:
    lab, _ = play("forward", cut, "backward")
    assert lab.steps[2].state["reaches"] == {"w": False, "x": False, "b": True}
    assert lab.last.grad("w") is None and lab.last.grad("b") == 4.0
    assert "no path back to w" in lab.state["adds"]["w"]["why"]


def test_lesson_one_tasks_on_real_state() -> None:
    lab, _ = play("forward", "retain_grad", "backward")
    assert lab.state["tensors"]["z"]["grad"] == 4.0  # ∂loss/∂z = 2(z + b − 5), by torch
    done = tasks_done(lab.steps)
    assert done["lesson1.retain_grad"] and not done["lesson1.no_grad"]
    assert not done["lesson1.leaf_non_leaf"]  # z kept a .grad: it no longer shows the contrast
    lab, _ = play("forward", "backward")
    assert tasks_done(lab.steps)["lesson1.leaf_non_leaf"]
    assert not tasks_done(lab.steps)["lesson1.retain_grad"]
    lab, _ = play("forward_no_grad")
    z, loss = lab.state["tensors"]["z"], lab.state["tensors"]["loss"]
    assert not z["requires_grad"] and z["is_leaf"] and not loss["requires_grad"]
    assert tasks_done(lab.steps)["lesson1.no_grad"]


def test_tasks_start_undone_and_depend_on_state_not_buttons() -> None:
    lab, _ = play()
    assert not any(tasks_done(lab.steps).values())
    # backward pressed, but w does not require grad: the tasks about w stay undone
    lab, _ = play("forward", "backward", "forward", "backward", requires_grad={"w": False})
    assert lab.last.grad("w") is None
    assert not any(tasks_done(lab.steps)[k] for k in ("lab.w_b_not_x", "lab.accumulate_16"))


def test_descent_task_from_real_descent_paths() -> None:
    bowl = FUNCTIONS["bowl"]
    fast = run_descent(bowl, bowl.start, 0.5, 50)["steps_to_tolerance"]
    slow = run_descent(bowl, bowl.start, 0.1, 50)["steps_to_tolerance"]
    assert check_descent_task(fast) and not check_descent_task(slow)
    assert not check_descent_task(None)
    assert {t.key for t in TASKS if t.check is None} == {"lesson1.descent_10_steps"}


def test_predictions_are_judged_by_the_real_outcome() -> None:
    lab, _ = play("forward", "backward", "forward")
    question = question_for("backward", lab.state)
    assert question.choices == ("None", "16", "unchanged (8)", ERROR)
    assert question.expected == "16" and question.hides == ("+ next backward",)
    before = lab.state
    lab2, _ = play("forward", "backward", "forward", "backward")
    verdict = judge(question, "8", before, lab2.last)
    assert verdict.actual == "16" and not verdict.held
    assert "added 8" in verdict.why
    lab, _ = play("forward")
    ahead = lab.state
    lab, _ = play("forward", "item")
    verdict = judge(question_for("item", ahead), NO, ahead, lab.last)
    assert verdict.held and verdict.actual == NO
    lab, _ = play("forward", "backward")
    freed = question_for("backward", lab.state)
    assert freed.expected == ERROR  # torch refuses a freed graph: "an error" is the answer
    lab, _ = play("forward", "backward", "backward")
    verdict = judge(freed, ERROR, before, lab.last)
    assert verdict.held and SECOND_TIME.split(" the")[0] in verdict.why


def test_the_log_is_a_script_that_reproduces_the_state() -> None:
    lab, namespace = play(
        "forward", "retain_grad", "backward_retain", "backward", "backward", "zero_inplace"
    )
    script = lab.script()
    assert "loss.backward(retain_graph=True)" in script and "try:" in script
    plain: dict = {"__name__": "__main__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(script, LAB_SOURCE, "exec"), plain)  # plain torch, no tracer
    assert SECOND_TIME in out.getvalue()
    assert lab_state(plain)["tensors"] == lab_state(namespace)["tensors"]
    assert lab.state["tensors"]["w"]["grad"] == 0.0


def test_replay_plan_repeats_the_same_state() -> None:
    lab, _ = play("forward", "backward", "zero_none", "forward", "backward")
    again, _ = play(*[code for key, code in lab.replay_plan() if key != "setup"])
    assert again.state["tensors"] == lab.state["tensors"]


def test_a_lab_error_reaches_the_console_with_a_header_and_the_lab_lines_only() -> None:
    namespace: dict = {}
    lab = Lab()
    lab_step(namespace, lab.setup(), fresh=True)
    lab_step(namespace, lab.code_for("forward"))
    lab_step(namespace, lab.code_for("backward"))
    with contextlib.redirect_stderr(io.StringIO()) as console:
        step = lab_step(namespace, lab.code_for("backward"), label="backward()")
    text = console.getvalue()
    assert step["error"]["type"] == "RuntimeError"
    assert text.startswith(f"Lab: backward() raised RuntimeError: {SECOND_TIME}")
    assert '  File "<lab>", line 1' in text and "    loss.backward()" in text
    assert "site-packages" not in text and "torch/" not in text  # torch's frames are left out
    assert text.rstrip().endswith(step["error"]["message"])


def test_the_picture_is_the_whole_log_so_x_stays_drawn() -> None:
    lab, _ = play("forward", "backward")
    namespace: dict = {}
    lab_step(namespace, lab.setup(), fresh=True)
    lab_step(namespace, lab.code_for("forward"))
    picture = lab_step(namespace, lab.code_for("backward"))["trace"]
    names = {t.name for t in picture.tensors}
    assert {"w", "x", "b", "z", "loss"} <= names
    assert sum(1 for e in picture.events if e.get("kind") == "backward") == 1
