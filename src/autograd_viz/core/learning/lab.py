"""The autograd lab of lesson 2: loss = (w·x + b − 5)² with w=3, x=2, b=1.

Every action the learner takes is a real Python statement, run for real in the kernel's
"lab" namespace, so the action log *is* an equivalent script. After each action
`lab_state` reads the tensors back from torch (value, requires_grad, is_leaf, .grad,
grad_fn); the `Lab` model keeps those readings, and the tasks in `core.lab_tasks` are
predicates over them. Nothing here computes a gradient by hand: what a backward or an
action would do is measured by torch on a copy of the lab (`core.learning.lab_measure`).

torch is imported inside the functions that run in the kernel, so the app's process can
hold a `Lab` without loading torch.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import sys
from dataclasses import dataclass, field
from typing import Any

from psygnal import Signal

from autograd_viz.core.learning.lab_measure import (
    LEAVES,
    LOG_KEY,
    TENSOR_NAMES,
    describe_tensor,
    format_number,
    next_backward,
    one_backward_adds,
    previews,
    reaches_leaves,
    script_of,
)

LAB_SOURCE = "<lab>"  # the file name lab code runs as (traces carry it as `source`)
LAB_SPACE = "lab"  # the kernel namespace the lab's tensors live in
START_VALUES = {"w": 3.0, "x": 2.0, "b": 1.0}
DEFAULT_REQUIRES_GRAD = {"w": True, "x": False, "b": True}
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


def formula_text(state: dict[str, Any]) -> str:
    """The loss's formula with the values torch reported: `… with w = 3, … → loss = 4`."""
    tensors = state.get("tensors", {})
    values = ", ".join(
        f"{n} = {format_number(tensors[n]['value'])}" for n in LEAVES if n in tensors
    )
    text = FORMULA + (f"     with {values}" if values else "")
    if "loss" in tensors:
        text += f"  →  loss = {format_number(tensors['loss']['value'])}"
    return text


def toggle_code(name: str, on: bool) -> str:
    """The statement that switches a leaf's requires_grad (its .grad is kept)."""
    if name not in LEAVES:
        raise ValueError(f"only {', '.join(LEAVES)} have a requires_grad toggle, not {name!r}")
    return f"{name}.requires_grad_({on})"


# ---- in the kernel ---------------------------------------------------------------


def reset_lab(namespace: dict[str, Any]) -> dict[str, Any]:
    """Empty the lab's namespace in place: every tensor and graph in it is dropped."""
    namespace.clear()
    namespace.update({"__name__": "__main__", "__builtins__": builtins, LOG_KEY: []})
    return {"cleared": True}


def lab_step(
    namespace: dict[str, Any], code: str, fresh: bool = False, label: str = ""
) -> dict[str, Any]:
    """Run one action under capture, then read the lab's state back from torch.

    `fresh` empties the namespace first (Reset and Replay start from nothing). The
    result carries the picture of the whole log (the trace the Graph tab would draw for
    `script_of(log)`, so every tensor the graph was built from is in it), the error torch
    raised, if any, how many backward calls the engine saw, and `lab_state` afterwards. A
    traceback reaches the console under a "Lab: …" header, with the lab's own lines only.
    """
    from autograd_viz.core.kernel.runner import run_source

    if fresh:
        reset_lab(namespace)
    # A namespace lab_step did not start has no log: its copies start from what is logged.
    namespace.setdefault(LOG_KEY, [])
    with contextlib.redirect_stderr(io.StringIO()):  # said below, with a header
        trace = run_source(code, LAB_SOURCE, namespace)
    error = trace.error
    namespace[LOG_KEY].append({"code": code, "error": None if error is None else error["type"]})
    if error is not None:
        sys.stderr.write(console_report(label or code.splitlines()[0], error))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        picture = run_source(script_of(namespace[LOG_KEY]), LAB_SOURCE, {"__name__": "__main__"})
    return {
        "trace": picture,
        "error": None
        if error is None
        else {"type": error["type"], "message": error["message"], "line": error.get("line")},
        "backward_passes": sum(1 for e in trace.events if e.get("kind") == "backward"),
        "state": lab_state(namespace),
    }


def console_report(label: str, error: dict[str, Any]) -> str:
    """What the console gets for a lab action that raised: a header naming the action, then
    the traceback with only the lab's own frames (torch's internals are not the learner's)."""
    message = error["message"]
    first = message.split(". ")[0].split(" (")[0].rstrip(".")  # the whole text closes it
    lines = [f"Lab: {label} raised {error['type']}: {first}"]
    blocks = _traceback_frames(error.get("traceback") or "")
    lines.append("Traceback (most recent call last):")
    lines.extend(block for block in blocks if block.startswith(f'  File "{LAB_SOURCE}"'))
    lines.append(f"{error['type']}: {message}" if message else error["type"])
    return "\n".join(lines) + "\n"


def _traceback_frames(text: str) -> list[str]:
    """The frame blocks of a formatted traceback ('  File …' and the lines under it)."""
    blocks: list[str] = []
    for line in text.splitlines():
        if line.startswith('  File "'):
            blocks.append(line)
        elif blocks and line.startswith("    "):
            blocks[-1] += "\n" + line
        elif blocks:
            break  # the exception's own lines: the frames are over
    return blocks


def lab_state(namespace: dict[str, Any]) -> dict[str, Any]:
    """The lab's tensors as torch has them now, and what actions would do, measured by
    torch on copies of the lab (its log replayed in a fresh namespace)."""
    import torch

    tensors = {
        name: describe_tensor(value)
        for name in TENSOR_NAMES
        if isinstance(value := namespace.get(name), torch.Tensor)
    }
    item = namespace.get("z_item")
    loss = namespace.get("loss")
    log = namespace.get(LOG_KEY) or []
    return {
        "tensors": tensors,
        "z_item": float(item) if isinstance(item, (int, float)) else None,
        "forward": _forward_serial(namespace, loss),
        "reaches": reaches_leaves(namespace, loss),
        "adds": one_backward_adds(namespace, ACTIONS["forward"].code),
        "next_backward": next_backward(log) if log else {},
        "previews": previews(log, {k: a.code for k, a in ACTIONS.items()}) if log else {},
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
        return script_of(
            [{"code": s.code, "error": s.error["type"] if s.error else None} for s in self.steps]
        )
