"""Predict first: before an action the learner picks what they expect; torch decides.

`question_for` takes torch's real outcome first (the action tried on a copy of the lab,
`lab_state`'s previews) and builds the choices around it: the real one, plausible wrong
ones and "an error". After the action `judge` reads the outcome from the real step and
says whether the prediction held, and why.
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
    expected: str = ""  # torch's outcome on a copy of the lab (what the judge will find)
    hides: tuple[str, ...] = ()  # grad-table columns kept hidden until it is answered


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


def _w_grad(state: dict[str, Any]) -> Any:
    return (_tensor(state, "w") or {}).get("grad")


def unchanged(value: Any) -> str:
    """The choice for a backward that leaves w.grad as it was: `unchanged (24)`."""
    return f"unchanged ({_grad_text(value)})"


def outcome_text(action: str, before: dict[str, Any], after: dict[str, Any]) -> str:
    """What an action did, in its question's terms. `after` is a state or a preview: its
    "error", "tensors" and "reaches" as torch left them; `before` the state it ran on."""
    if after.get("error") is not None:
        return ERROR
    if action in ("backward", "backward_retain"):
        old, new = _w_grad(before), _w_grad(after)
        if new is not None and old is not None and new == old:
            return unchanged(old)
        return _grad_text(new)
    if action in ("zero_none", "zero_inplace"):
        return _grad_text(_w_grad(after))
    if action in ("item", "detach"):
        return YES if after.get("reaches", {}).get("w") else NO
    if action in ("forward", "forward_no_grad"):
        loss = _tensor(after, "loss")
        return YES if loss and loss["requires_grad"] else NO
    if action == "retain_grad":
        z = _tensor(after, "z")
        return YES if z and z["is_leaf"] else NO
    return ""


def _order(choice: str) -> tuple[int, float, str]:
    """None first, then numbers up, then `unchanged (…)`, yes/no, and `an error` last: an
    order that says nothing about which choice is right."""
    if choice == "None":
        return (0, 0.0, choice)
    try:
        return (1, float(choice.replace("−", "-")), choice)
    except ValueError:
        pass
    rank = {YES: 3, NO: 4, ERROR: 6}.get(choice, 2 if choice.startswith("unchanged") else 5)
    return (rank, 0.0, choice)


def _wrong_choices(action: str, state: dict[str, Any]) -> list[str]:
    """Plausible answers to offer beside the real one (they may include it)."""
    now = _w_grad(state)
    if action in ("backward", "backward_retain"):
        one = state.get("adds", {}).get("w", {}).get("grad")
        choices = ["None"]
        if isinstance(one, (int, float)):
            numbers = {float(one), 2.0 * one}
            if isinstance(now, (int, float)):
                numbers.add(now + one)
            choices += [format_number(n) for n in numbers if n != now]
        if now is not None:
            choices.append(unchanged(now))
        return choices
    if action in ("zero_none", "zero_inplace"):
        choices = ["None", "0"]
        if isinstance(now, (int, float)) and now != 0:
            choices.append(format_number(now))
        return choices
    return [YES, NO]


_TEXTS = {
    "backward": "What will w.grad be after this backward?",
    "backward_retain": "What will w.grad be after this backward?",
    "item": "Carrying on with z.item(): is the new loss still connected to w?",
    "detach": "Carrying on with z.detach(): is the new loss still connected to w?",
    "forward": "Will loss require grad?",
    "forward_no_grad": "Will loss require grad?",
    "zero_none": "What will w.grad be afterwards?",
    "zero_inplace": "What will w.grad be afterwards?",
    "retain_grad": "After z.retain_grad(), is z a leaf?",
}
# The grad table's columns that would give a question's answer away while it is open.
_HIDES = {"backward": ("+ next backward",), "backward_retain": ("+ next backward",)}


def question_for(action: str, state: dict[str, Any]) -> Question | None:
    """The question to ask before `action`, given the state now (None: nothing to ask).

    torch's real outcome comes first: the state's preview of the action, run on a copy of
    the lab. The choices are built around it, so they always hold it, and "an error"."""
    preview = state.get("previews", {}).get(action)
    if preview is None or action not in _TEXTS:
        return None
    real = outcome_text(action, state, preview)
    choices = set(_wrong_choices(action, state)) | {real, ERROR}
    ordered = tuple(sorted(choices, key=_order))
    return Question(action, _TEXTS[action], ordered, real, _HIDES.get(action, ()))


def outcome_of(action: str, before: dict[str, Any], step: Step) -> str:
    """What really happened in the step, in the terms of the action's question."""
    return outcome_text(action, before, {**step.state, "error": step.error})


def _why(action: str, before: dict[str, Any], step: Step, actual: str) -> str:
    if actual == ERROR:
        assert step.error is not None
        first = step.error["message"].split(". ")[0].split(" (")[0].rstrip(".")
        return f"PyTorch raised {step.error['type']}: {first}."
    w_before = _w_grad(before)
    if action in ("backward", "backward_retain"):
        w_after = step.grad("w")
        if actual.startswith("unchanged"):
            return (
                f"w.grad stays {format_number(w_before)}: this backward added nothing to it "
                "(loss has no path back to w, or w does not require grad)."
            )
        if w_after is None:
            return "w got nothing: it does not require grad, or loss has no path back to it."
        if w_before is None:
            return f"w.grad was None; this backward put {format_number(w_after)} there."
        # torch's own difference, measured on a copy of the lab before the action ran
        added = before.get("next_backward", {}).get("leaves", {}).get("w", {}).get("added")
        did = f"this backward added {format_number(added)}" if added is not None else "it grew"
        return f"w.grad was {format_number(w_before)}; {did}: it accumulates."
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
    actual = outcome_of(question.action, before, step)
    step.prediction, step.outcome = predicted, actual
    return Verdict(question, predicted, actual, _why(question.action, before, step, actual))
