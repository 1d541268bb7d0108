"""Predict first: before an action the learner picks what they expect; torch decides.

`question_for` offers a question and its choices (numbers in the choices come from the
state torch reported, never from a formula of ours); after the action `judge` reads the
real outcome from the step and says whether the prediction held, and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autograd_viz.core.learning.lab import Step, format_number

ERROR = "an error"
YES, NO = "yes", "no"


@dataclass(frozen=True)
class Question:
    """What the learner is asked before one action."""

    action: str
    text: str
    choices: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    """The prediction against what torch did."""

    question: Question
    predicted: str
    actual: str
    why: str

    @property
    def held(self) -> bool:
        """The learner's choice is what really happened."""
        return self.predicted == self.actual

    def message(self) -> str:
        """One line for the lab: held or not, and the reason."""
        if self.held:
            return f"✓ Your prediction held: {self.actual}. {self.why}"
        return f"✗ You predicted {self.predicted}; PyTorch gave {self.actual}. {self.why}"


def _grad_text(value: Any) -> str:
    return "None" if value is None else format_number(value)


def _tensor(state: dict[str, Any], name: str) -> dict[str, Any] | None:
    return state.get("tensors", {}).get(name)


def question_for(action: str, state: dict[str, Any]) -> Question | None:
    """The question to ask before `action`, given the state now (None: nothing to ask)."""
    if action in ("backward", "backward_retain"):
        w = _tensor(state, "w")
        now = None if w is None else w["grad"]
        one = state.get("adds", {}).get("w", {}).get("grad")
        numbers: list[float] = []
        if one is not None:
            numbers = sorted({float(one), 2.0 * one, (now or 0.0) + one})
        choices = ("None", *(format_number(n) for n in numbers), ERROR)
        return Question(action, "What will w.grad be after this backward?", choices)
    if action in ("item", "detach"):
        what = ".item()" if action == "item" else ".detach()"
        return Question(
            action, f"Carrying on with z{what}: is the new loss still connected to w?", (YES, NO)
        )
    if action in ("forward", "forward_no_grad"):
        return Question(action, "Will loss require grad?", (YES, NO))
    if action in ("zero_none", "zero_inplace"):
        w = _tensor(state, "w")
        now = None if w is None else w["grad"]
        choices = ["None", "0"]
        if now is not None and now != 0:
            choices.append(format_number(now))
        return Question(action, "What will w.grad be afterwards?", tuple(choices))
    if action == "retain_grad":
        return Question(action, "After z.retain_grad(), is z a leaf?", (YES, NO))
    return None


def outcome_of(action: str, step: Step) -> str:
    """What really happened, in the terms of the action's question."""
    if step.error is not None:
        return ERROR
    if action in ("backward", "backward_retain", "zero_none", "zero_inplace"):
        return _grad_text(step.grad("w"))
    if action in ("item", "detach"):
        return YES if step.state.get("reaches", {}).get("w") else NO
    if action in ("forward", "forward_no_grad"):
        loss = step.tensor("loss")
        return YES if loss and loss["requires_grad"] else NO
    if action == "retain_grad":
        z = step.tensor("z")
        return YES if z and z["is_leaf"] else NO
    return ""


def _why(action: str, before: dict[str, Any], step: Step, actual: str) -> str:
    if actual == ERROR:
        assert step.error is not None
        first = step.error["message"].split(". ")[0].split(" (")[0].rstrip(".")
        return f"PyTorch raised {step.error['type']}: {first}."
    w_before = (_tensor(before, "w") or {}).get("grad")
    if action in ("backward", "backward_retain"):
        w_after = step.grad("w")
        if w_after is None:
            return "w got nothing: it does not require grad, or loss has no path back to it."
        if w_before is None:
            return f"w.grad was None; this backward put {format_number(w_after)} there."
        added = format_number(w_after - w_before)
        return f"w.grad was {format_number(w_before)}; this backward added {added}: it accumulates."
    if action in ("item", "detach"):
        call = "z.item()" if action == "item" else "z.detach()"
        made = "a plain Python float" if action == "item" else "a tensor with no history"
        if actual == NO:
            return (
                f"{call} is {made}, so the new loss has no path back to w: "
                "a backward now gives w nothing."
            )
        return "The new loss still has a path back to w."
    if action in ("forward", "forward_no_grad"):
        if actual == NO and action == "forward_no_grad":
            return "Recording was off inside torch.no_grad(): loss has no grad_fn."
        if actual == NO:
            return "None of the tensors loss was computed from requires grad."
        return f"loss was recorded: its grad_fn is {step.tensor('loss')['grad_fn']}."
    if action in ("zero_none", "zero_inplace"):
        if action == "zero_none":
            return "= None drops the gradient tensor; the next backward starts a new one."
        if w_before is None:
            return "w.grad was None: there is no tensor to zero, so it stays None."
        return ".zero_() keeps the gradient tensor and writes zeros into it."
    if action == "retain_grad":
        z = step.tensor("z") or {}
        return f"retain_grad() only keeps z's gradient; z is still made by {z.get('grad_fn')}."
    return ""


def judge(question: Question, predicted: str, before: dict[str, Any], step: Step) -> Verdict:
    """Compare the prediction with the step torch just ran."""
    actual = outcome_of(question.action, step)
    step.prediction, step.outcome = predicted, actual
    return Verdict(question, predicted, actual, _why(question.action, before, step, actual))
