"""The tooltip text of a tensor or node of a trace."""

from __future__ import annotations

from autograd_viz.core.trace import Trace


def describe(trace: Trace, key: str) -> str:
    """Plain-text details of a tensor or node, for tooltips."""
    if key.startswith("t"):
        t = trace.tensor(key)
        value = t.value.data if t.value and t.value.data is not None else "(summarised)"
        grad = (
            "None"
            if t.grad is None
            else (t.grad.data if t.grad.data is not None else "(summarised)")
        )
        lines = [
            f"{t.name or trace.index.name_of(t.id)}  {tuple(t.shape)} {t.dtype} on {t.device}",
            f"value: {value}",
            f".grad: {grad}",
            f"requires_grad={t.requires_grad}  is_leaf={t.is_leaf}  retains_grad={t.retains_grad}",
        ]
        if t.grad_fn:
            lines.append(f"grad_fn: {trace.node(t.grad_fn).name}")
        return "\n".join(lines)
    node = trace.node(key)
    nexts = ", ".join(trace.node(n).name for n in node.next) or "none"
    text = f"{node.name}\npasses gradients to: {nexts}"
    if node.variable:
        leaf = trace.tensor(node.variable)
        text += f"\nwrites .grad of: {leaf.name or trace.index.name_of(leaf.id)}"
    return text
