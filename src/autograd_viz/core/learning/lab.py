"""The autograd lab of lesson 2: loss = (w·x + b − 5)² with w=3, x=2, b=1.

Every action the learner takes is a real Python statement, run for real in the kernel's
"lab" namespace, so the action log *is* an equivalent script. After each action
`lab_state` reads the tensors back from torch (value, requires_grad, is_leaf, .grad,
grad_fn); the `Lab` model keeps those readings, and the tasks in `core.lab_tasks` are
predicates over them. Nothing here computes a gradient by hand: the "what one backward
adds" column comes from `torch.autograd.grad` on a fresh forward.

torch is imported inside the functions that run in the kernel, so the app's process can
hold a `Lab` without loading torch.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any

from psygnal import Signal

LAB_SOURCE = "<lab>"  # the file name lab code runs as (traces carry it as `source`)
LAB_SPACE = "lab"  # the kernel namespace the lab's tensors live in
LEAVES = ("w", "x", "b")
START_VALUES = {"w": 3.0, "x": 2.0, "b": 1.0}
DEFAULT_REQUIRES_GRAD = {"w": True, "x": False, "b": True}
# The names lab_state reads back, in the order the grad table shows them.
TENSOR_NAMES = ("w", "x", "b", "z", "z_detached", "loss")
# The loss's formula as the lesson writes it; the lab shows it with the current values.
FORMULA = "loss = (w * x + b - 5) ** 2"


@dataclass(frozen=True)
class Action:
    """One button of the lab: the statement it runs and what it is for."""

    key: str
    label: str
    code: str
    tip: str


ACTIONS: dict[str, Action] = {
    a.key: a
    for a in (
        Action(
            "forward",
            "forward",
            "z = w * x\nloss = (z + b - 5) ** 2",
            "Build a fresh graph: z = w·x is the named intermediate, loss = (z + b − 5)².",
        ),
        Action(
            "forward_no_grad",
            "forward in no_grad",
            "with torch.no_grad():\n    z = w * x\n    loss = (z + b - 5) ** 2",
            "The same forward with recording switched off: no graph is built.",
        ),
        Action(
            "backward",
            "backward()",
            "loss.backward()",
            "Walk loss's graph backwards and add each leaf's gradient into its .grad; "
            "the graph's saved values are freed afterwards.",
        ),
        Action(
            "backward_retain",
            "backward(retain_graph=True)",
            "loss.backward(retain_graph=True)",
            "Backward, but keep the graph's saved values so it can be walked again.",
        ),
        Action(
            "zero_none",
            "zero_grad: .grad = None",
            "w.grad = None\nx.grad = None\nb.grad = None",
            "Forget the gradients (what optimizer.zero_grad() does by default).",
        ),
        Action(
            "zero_inplace",
            "zero_grad: .grad.zero_()",
            # A None .grad has no .zero_(); like torch.optim's zero_grad(set_to_none=False),
            # only existing gradients are zeroed, so the None-vs-zeros difference stays visible.
            "for t in (w, x, b):\n    if t.grad is not None:\n        t.grad.zero_()",
            "Overwrite existing gradients with zeros in place (a .grad that is None stays "
            "None: there is no tensor to zero).",
        ),
        Action(
            "retain_grad",
            "z.retain_grad()",
            "z.retain_grad()",
            "Ask the non-leaf z to keep its gradient at the next backward.",
        ),
        Action(
            "item",
            "z.item() → loss",
            "z_item = z.item()\nloss = (z_item + b - 5) ** 2",
            "Turn z into a plain Python number and carry on computing with it.",
        ),
        Action(
            "detach",
            "z.detach() → loss",
            "z_detached = z.detach()\nloss = (z_detached + b - 5) ** 2",
            "Cut z from its history (same numbers, no grad_fn) and carry on with it.",
        ),
    )
}


def setup_code(requires_grad: dict[str, bool]) -> str:
    """The statements that create w, x and b (on the kernel's preferred device)."""
    lines = ["import torch", 'device = "cuda" if torch.cuda.is_available() else "cpu"']
    for name in LEAVES:
        flag = ", requires_grad=True" if requires_grad.get(name) else ""
        lines.append(f"{name} = torch.tensor({START_VALUES[name]!r}{flag}, device=device)")
    return "\n".join(lines)


def toggle_code(name: str, on: bool) -> str:
    """The statement that switches a leaf's requires_grad (its .grad is kept)."""
    if name not in LEAVES:
        raise ValueError(f"only {', '.join(LEAVES)} have a requires_grad toggle, not {name!r}")
    return f"{name}.requires_grad_({on})"


# ---- in the kernel ---------------------------------------------------------------


def reset_lab(namespace: dict[str, Any]) -> dict[str, Any]:
    """Empty the lab's namespace in place: every tensor and graph in it is dropped."""
    namespace.clear()
    namespace.update({"__name__": "__main__", "__builtins__": builtins})
    return {"cleared": True}


def lab_step(namespace: dict[str, Any], code: str, fresh: bool = False) -> dict[str, Any]:
    """Run one action under capture, then read the lab's state back from torch.

    `fresh` empties the namespace first (Reset and Replay start from nothing). The
    result carries the run's Trace (the app draws it), the error torch raised, if any,
    how many backward calls the engine saw, and `lab_state` afterwards.
    """
    from autograd_viz.core.kernel.runner import run_source

    if fresh:
        reset_lab(namespace)
    trace = run_source(code, LAB_SOURCE, namespace)
    error = trace.error
    return {
        "trace": trace,
        "error": None
        if error is None
        else {"type": error["type"], "message": error["message"], "line": error.get("line")},
        "backward_passes": sum(1 for e in trace.events if e.get("kind") == "backward"),
        "state": lab_state(namespace),
    }


def lab_state(namespace: dict[str, Any]) -> dict[str, Any]:
    """The lab's tensors as torch has them now, and what one backward would add."""
    import torch

    tensors = {
        name: _describe(value)
        for name in TENSOR_NAMES
        if isinstance(value := namespace.get(name), torch.Tensor)
    }
    item = namespace.get("z_item")
    loss = namespace.get("loss")
    return {
        "tensors": tensors,
        "z_item": float(item) if isinstance(item, (int, float)) else None,
        "forward": _forward_serial(namespace, loss),
        "reaches": _reaches(namespace, loss),
        "adds": one_backward_adds(namespace),
    }


def _number(t: Any) -> Any:
    t = t.detach().cpu()
    return t.item() if t.numel() == 1 else t.tolist()


def _describe(t: Any) -> dict[str, Any]:
    # A non-leaf's .grad is None unless it retains it; reading it anyway only warns.
    keeps_grad = t.is_leaf or t.retains_grad
    grad = t.grad if keeps_grad else None
    return {
        "value": _number(t),
        "requires_grad": t.requires_grad,
        "is_leaf": t.is_leaf,
        "retains_grad": t.retains_grad,
        "grad": None if grad is None else _number(grad),
        "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__,
        "device": str(t.device),
    }


def _forward_serial(namespace: dict[str, Any], loss: Any) -> int | None:
    """Which forward pass made the current loss: 1, 2, … (the tensor object is tagged)."""
    import torch

    if not isinstance(loss, torch.Tensor):
        return None
    serial = getattr(loss, "_lab_forward", None)
    if serial is None:
        serial = int(namespace.get("_lab_forwards", 0)) + 1
        namespace["_lab_forwards"] = serial
        loss._lab_forward = serial
    return serial


def _reaches(namespace: dict[str, Any], loss: Any) -> dict[str, bool]:
    """For each leaf: does the current loss's graph lead back to it (an AccumulateGrad)?"""
    import torch

    found: set[int] = set()
    root = loss.grad_fn if isinstance(loss, torch.Tensor) else None
    todo, seen = ([root] if root is not None else []), set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        todo.extend(n for n, _ in node.next_functions if n is not None)
    return {
        name: id(namespace.get(name)) in found
        for name in LEAVES
        if isinstance(namespace.get(name), torch.Tensor)
    }


def one_backward_adds(namespace: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What one backward of a fresh forward adds to each leaf's .grad, and why.

    torch computes the numbers (autograd.grad on copies of w, x, b with their current
    values and requires_grad); the "why" is the chain rule with those numbers written in.
    """
    import torch

    leaves = {name: namespace.get(name) for name in LEAVES}
    if not all(isinstance(t, torch.Tensor) for t in leaves.values()):
        return {}
    with torch.enable_grad():
        fresh = {n: t.detach().clone().requires_grad_(t.requires_grad) for n, t in leaves.items()}
        inner = fresh["w"] * fresh["x"] + fresh["b"] - 5
        loss = inner**2
        wanted = [n for n in LEAVES if fresh[n].requires_grad]
        grads = torch.autograd.grad(loss, [fresh[n] for n in wanted]) if wanted else ()
    got = {n: _number(g) for n, g in zip(wanted, grads, strict=True)}
    values = {n: format_number(_number(t)) for n, t in fresh.items()}
    inner_text = format_number(_number(inner))
    formulas = {
        "w": f"∂loss/∂w = 2(w·x+b−5)·x = 2·{inner_text}·{values['x']}",
        "x": f"∂loss/∂x = 2(w·x+b−5)·w = 2·{inner_text}·{values['w']}",
        "b": f"∂loss/∂b = 2(w·x+b−5) = 2·{inner_text}",
    }
    reaches = _reaches(namespace, namespace.get("loss"))
    adds: dict[str, dict[str, Any]] = {}
    for name in LEAVES:
        if name not in got:
            why = f"{name} does not require grad, so backward leaves {name}.grad None"
        else:
            why = f"{formulas[name]} = {format_number(got[name])}"
            if isinstance(namespace.get("loss"), torch.Tensor) and not reaches.get(name):
                why += f"; but the current loss has no path back to {name}"
        adds[name] = {"grad": got.get(name), "why": why}
    return adds


def format_number(value: Any) -> str:
    """A number as the lesson writes it: 8, 2.5, −3 (no trailing .0)."""
    if isinstance(value, float):
        return f"{value:g}".replace("-", "−")
    return str(value)


# ---- in the app ------------------------------------------------------------------


@dataclass
class Step:
    """One action as it really went: its code, torch's error, and the state after it."""

    key: str  # "setup", "toggle", or a key of ACTIONS
    code: str
    state: dict[str, Any]
    error: dict[str, Any] | None = None  # {"type", "message", "line"} as torch raised it
    backward_passes: int = 0  # backward calls the engine saw during this action
    prediction: str | None = None  # what the learner expected, if they said
    outcome: str | None = None  # what really happened, in the prediction's terms

    def tensor(self, name: str) -> dict[str, Any] | None:
        """The state of one tensor after this step (None when it does not exist)."""
        return self.state.get("tensors", {}).get(name)

    def grad(self, name: str) -> Any:
        """A tensor's .grad after this step (None where torch's is None)."""
        t = self.tensor(name)
        return None if t is None else t["grad"]

    def adds(self, name: str) -> Any:
        """What one backward adds to a leaf's .grad, as torch computed it."""
        return self.state.get("adds", {}).get(name, {}).get("grad")

    @property
    def backward_ok(self) -> bool:
        """The step ran a backward pass and torch raised nothing."""
        return self.backward_passes > 0 and self.error is None


@dataclass(eq=False)
class Lab:
    """The lab's log of steps since the last reset, and the latest state torch reported."""

    requires_grad: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_REQUIRES_GRAD))
    steps: list[Step] = field(default_factory=list)

    changed = Signal()

    def setup(self) -> str:
        """The code that (re)creates w, x, b with the toggles as they are now."""
        return setup_code(self.requires_grad)

    def code_for(self, key: str) -> str:
        """The statement an action runs."""
        return ACTIONS[key].code

    @property
    def last(self) -> Step | None:
        """The latest step, if any."""
        return self.steps[-1] if self.steps else None

    @property
    def state(self) -> dict[str, Any]:
        """The latest state read back from torch ({} before the first step)."""
        return self.last.state if self.last else {}

    def clear(self) -> None:
        """Forget the log (Reset; the kernel's namespace is emptied by `lab_step(fresh=True)`)."""
        self.steps = []
        self.changed.emit()

    def record(self, key: str, code: str, result: dict[str, Any]) -> Step:
        """Add what the kernel reported for one action (a `lab_step` result)."""
        step = Step(
            key=key,
            code=code,
            state=result.get("state") or {},
            error=result.get("error"),
            backward_passes=int(result.get("backward_passes") or 0),
        )
        for name in LEAVES:
            t = step.tensor(name)
            if t is not None:
                self.requires_grad[name] = bool(t["requires_grad"])
        self.steps.append(step)
        self.changed.emit()
        return step

    def replay_plan(self) -> list[tuple[str, str]]:
        """(key, code) of every step, to run again from an empty namespace."""
        return [(s.key, s.code) for s in self.steps]

    def script(self) -> str:
        """The log as a Python script that does what the learner did, errors included."""
        parts = ["# The autograd lab, as a script: every action in order."]
        for step in self.steps:
            if step.error is None:
                parts.append(step.code)
                continue
            body = "\n".join("    " + line for line in step.code.splitlines())
            parts.append(
                f"try:  # PyTorch raised {step.error['type']} here\n{body}\n"
                "except Exception as error:\n"
                '    print(f"{type(error).__name__}: {error}")'
            )
        return "\n".join(parts) + "\n"
