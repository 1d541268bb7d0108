"""What an action *would* do, measured by torch on a copy of the lab, never by our arithmetic.

The lab's namespace holds non-leaf tensors and graphs, which `copy.deepcopy` refuses, so a
copy is made the honest way: the lab's log (every statement run since the last reset, in
order) is executed again in a fresh namespace, then the action is run there and the
leaves' `.grad` read before and after. The kernel's own namespace is never touched.

torch is imported inside the functions, as in `core.learning.lab`.
"""

from __future__ import annotations

import builtins
import contextlib
import io
from collections.abc import Sequence
from typing import Any

LOG_KEY = "_lab_log"  # the namespace entry holding the lab's log: [{"code", "error"}]
LEAVES = ("w", "x", "b")
# The names lab_state reads back, in the order the grad table shows them.
TENSOR_NAMES = ("w", "x", "b", "z", "z_detached", "loss")
BACKWARD = "loss.backward()"


def script_of(log: Sequence[dict[str, Any]]) -> str:
    """The log as a Python script: each statement in order, the ones that raised in a try."""
    parts = ["# The autograd lab, as a script: every action in order."]
    for entry in log:
        code, error = entry["code"], entry.get("error")
        if error is None:
            parts.append(code)
            continue
        body = "\n".join("    " + line for line in code.splitlines())
        parts.append(
            f"try:  # PyTorch raised {error} here\n{body}\n"
            "except Exception as error:\n"
            '    print(f"{type(error).__name__}: {error}")'
        )
    return "\n".join(parts) + "\n"


def _run_quietly(code: str, namespace: dict[str, Any]) -> BaseException | None:
    """Run one statement; the exception it raised (or None). Nothing reaches the console."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            exec(compile(code, "<lab copy>", "exec"), namespace)
        except Exception as exc:  # the real lab raised it too: it is part of the history
            return exc
    return None


def replayed(log: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A fresh namespace in the state the log leaves: every logged statement run again."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    for entry in log:
        _run_quietly(entry["code"], namespace)
    return namespace


def _grad_of(namespace: dict[str, Any], name: str) -> Any:
    import torch

    t = namespace.get(name)
    if not isinstance(t, torch.Tensor) or t.grad is None:
        return None
    return t.grad.detach().clone()


def _error(exc: BaseException | None) -> dict[str, str] | None:
    return None if exc is None else {"type": type(exc).__name__, "message": str(exc)}


def try_on_copy(log: Sequence[dict[str, Any]], code: str) -> dict[str, Any]:
    """Run `code` on a replayed copy of the lab: the error it raised, each leaf's .grad
    before and after and what torch added (after − before, by torch), and the copy."""
    namespace = replayed(log)
    before = {n: _grad_of(namespace, n) for n in LEAVES}
    exc = _run_quietly(code, namespace)
    leaves: dict[str, dict[str, Any]] = {}
    for name in LEAVES:
        old, new = before[name], _grad_of(namespace, name)
        if new is None:
            added = None  # nothing was stored: there is no gradient to add up
        elif old is None:
            added = new
        else:
            added = new - old  # torch's subtraction of the two .grad tensors
        leaves[name] = {"before": _number(old), "after": _number(new), "added": _number(added)}
    return {"error": _error(exc), "leaves": leaves, "namespace": namespace}


def next_backward(log: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What `loss.backward()` run now would add to each leaf's .grad, or the error it raises.

    `missing` says there is no loss yet (nothing to measure)."""
    import torch

    result = try_on_copy(log, BACKWARD)
    missing = not isinstance(result["namespace"].get("loss"), torch.Tensor)
    return {"error": result["error"], "missing": missing, "leaves": result["leaves"]}


def round_adds(log: Sequence[dict[str, Any]], forward_code: str) -> dict[str, Any]:
    """What one fresh forward and its backward add to each leaf, on a copy: torch's numbers,
    with the inner value (w·x + b − 5) that the chain rule is written with."""
    import torch

    result = try_on_copy(log, f"{forward_code}\n{BACKWARD}")
    namespace = result["namespace"]
    inner = None
    if all(isinstance(namespace.get(n), torch.Tensor) for n in ("z", "b")):
        with torch.no_grad():
            inner = _number(namespace["z"] + namespace["b"] - 5)
    return {"error": result["error"], "leaves": result["leaves"], "inner": inner}


def _number(t: Any) -> Any:
    if t is None:
        return None
    t = t.detach().cpu()
    return t.item() if t.numel() == 1 else t.tolist()


def describe_tensor(t: Any) -> dict[str, Any]:
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


def reaches_leaves(namespace: dict[str, Any], loss: Any) -> dict[str, bool]:
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


def previews(log: Sequence[dict[str, Any]], actions: dict[str, str]) -> dict[str, dict[str, Any]]:
    """For each action: what torch does when it runs next, tried on a copy of the lab (the
    error, the tensors and what the loss reaches afterwards). Predict first asks around it."""
    import torch

    found: dict[str, dict[str, Any]] = {}
    for key, code in actions.items():
        tried = try_on_copy(log, code)
        copy = tried["namespace"]
        found[key] = {
            "error": tried["error"],
            "tensors": {
                n: describe_tensor(t)
                for n in TENSOR_NAMES
                if isinstance(t := copy.get(n), torch.Tensor)
            },
            "reaches": reaches_leaves(copy, copy.get("loss")),
        }
    return found


def one_backward_adds(namespace: dict[str, Any], forward_code: str) -> dict[str, dict[str, Any]]:
    """What one round (a fresh forward, then its backward) adds to each leaf's .grad, and why.

    torch computes the numbers, on a copy of the lab (its log replayed, the forward action
    and a backward run there, .grad diffed); the "why" is the chain rule with the copy's
    numbers written in.
    """
    import torch

    leaves = {name: namespace.get(name) for name in LEAVES}
    log = namespace.get(LOG_KEY)
    if not log or not all(isinstance(t, torch.Tensor) for t in leaves.values()):
        return {}
    measured = round_adds(log, forward_code)
    got = {n: m["added"] for n, m in measured["leaves"].items()}
    values = {n: format_number(_number(t)) for n, t in leaves.items()}
    inner_text = format_number(measured["inner"])
    formulas = {
        "w": f"∂loss/∂w = 2(w·x+b−5)·x = 2·{inner_text}·{values['x']}",
        "x": f"∂loss/∂x = 2(w·x+b−5)·w = 2·{inner_text}·{values['w']}",
        "b": f"∂loss/∂b = 2(w·x+b−5) = 2·{inner_text}",
    }
    reaches = reaches_leaves(namespace, namespace.get("loss"))
    adds: dict[str, dict[str, Any]] = {}
    for name in LEAVES:
        if got.get(name) is None or not leaves[name].requires_grad:
            why = f"{name} does not require grad, so a backward gives {name} nothing"
            got[name] = None
        else:
            why = f"{formulas[name]} = {format_number(got[name])} per forward + backward"
            if isinstance(namespace.get("loss"), torch.Tensor) and not reaches.get(name):
                why += f"; but the current loss has no path back to {name}"
        adds[name] = {"grad": got.get(name), "why": why}
    return adds


def format_number(value: Any) -> str:
    """A number as the lesson writes it: 8, 2.5, −3 (no trailing .0)."""
    if isinstance(value, float):
        return f"{value:g}".replace("-", "−")
    return str(value)
