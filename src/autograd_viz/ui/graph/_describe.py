"""The tooltip text of a tensor or node of a trace."""

from __future__ import annotations

from autograd_viz.core.playback.run_view import RunView
from autograd_viz.core.trace import TensorValue, Trace
from autograd_viz.core.trace.value_text import UNINITIALISED, format_value


def _data(value: TensorValue | None, missing: str) -> object:
    if value is None:
        return missing  # a .grad that torch left None; a value no event carried
    return value.data if value.data is not None else f"{format_value(value)} (summarised)"


def describe(trace: Trace, key: str, view: RunView | None = None) -> str:
    """Plain-text details of a tensor or node, for tooltips. Following `view` mid-replay,
    a tensor's value and `.grad` are those of the moment its player shows (a Forward step
    before backward() has no .grad yet), not those at the end of the run."""
    now = view if view is not None and view.trace is trace else None
    if now is not None and now.event_index() is None:
        now = None  # not replaying: the canvas shows the end of the run, and so does this
    if key.startswith("t"):
        t = trace.tensor(key)
        value, grad, exists = t.value, t.grad, True
        if now is not None:
            (value, exists), (grad, _) = now.value_now(key), now.grad_now(key)
        lines = [f"{t.name or trace.index.name_of(t.id)}  {tuple(t.shape)} {t.dtype} on {t.device}"]
        if exists:
            missing = UNINITIALISED if t.uninitialised else "(summarised)"
            lines += [f"value: {_data(value, missing)}", f".grad: {_data(grad, 'None')}"]
        else:
            lines.append("value: not computed yet at this step")
        lines.append(
            f"requires_grad={t.requires_grad}  is_leaf={t.is_leaf}  retains_grad={t.retains_grad}"
        )
        if t.grad_fn:
            lines.append(f"grad_fn: {trace.node(t.grad_fn).name}")
        if now is not None:
            at = now.player.position
            lines.append(
                f"(as at {f'step {at + 1}' if at >= 0 else 'the start'} of the "
                f"{now.mode_name()} view)"
            )
        return "\n".join(lines)
    node = trace.node(key)  # torch's full class name, however short the canvas draws it
    nexts = ", ".join(trace.node(n).name for n in node.next) or "none"
    text = f"{node.name}\npasses gradients to: {nexts}"
    if node.variable:
        leaf = trace.tensor(node.variable)
        text += f"\nwrites .grad of: {leaf.name or trace.index.name_of(leaf.id)}"
    return text


_GROUP_WORDS = {
    "module": "nn.Module",
    "repeat": "Repeated modules",
    "loop": "Loop",
    "iteration": "Loop iteration",
    "middle": "Loop iterations",
}


def canvas_tooltip(view: RunView, key: str) -> str:
    """What hovering a drawn item says: a folded group's card, a no_grad op, or a tensor
    or node (and the group it is drawn in)."""
    graph, trace = view.graph, view.trace
    node = graph.nodes.get(key)
    if trace is None or node is None:
        return ""
    if key.startswith("m:"):
        lines = graph.box_text.get(key, [node.title])
        info = graph.folds.get(key[2:])
        what = _GROUP_WORDS.get(info.kind, "Group") if info is not None else "nn.Module"
        return (
            f"{what} {node.title}, folded: {node.detail}\n"
            + "\n".join(lines[1:])
            + "\n(double-click or Enter to open)"
        )
    if key.startswith("u"):
        return (
            f"{node.title} on {node.detail}: it ran under torch.no_grad(), so autograd "
            "did not record it (no grad_fn, no backward through it)"
        )
    text = describe(trace, key, view)
    chain = view.breadcrumb(key)
    if not chain:
        return text
    info = graph.folds.get(chain[-1])
    name = chain[-1] if info is None or info.kind == "module" else info.title
    return text + f"\ninside {name} (double-click to fold)"
