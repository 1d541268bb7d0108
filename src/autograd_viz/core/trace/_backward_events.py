"""The typed events of backward passes: a call, each node the engine ran, each `.grad`
it accumulated or retained, and the call's end."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from autograd_viz.core.trace._change_events import change_dict, read_change
from autograd_viz.core.trace._event_base import (
    ChangeEvent,
    Lookup,
    TraceEvent,
    ValueChange,
    ValueMemo,
    quick_maker,
    read_values,
    read_written,
    tensor_name,
    write_value,
    write_values,
    write_written,
)
from autograd_viz.core.trace._records import NodeInfo, TensorValue
from autograd_viz.core.trace.value_text import format_number, scalar, show_change, show_value


@dataclass(frozen=True, slots=True)
class BackwardEvent(TraceEvent):
    """A backward call starts; its node and accumulate events follow."""

    kind: ClassVar[str] = "backward"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {
        "call", "roots", "root_nodes", "retain_graph", "create_graph", "graph_freed", "depth",
        "thread",
    }  # fmt: skip

    call: str  # .backward(), torch.autograd.backward(), torch.autograd.grad()
    roots: Sequence[str]
    root_nodes: Sequence[str | None]
    retain_graph: bool
    create_graph: bool
    graph_freed: bool | None  # None when the call raised
    depth: int | None = None  # 0; 1 for a pass inside a pass (absent before version 3)
    thread: str | None = None  # absent on the script's main thread

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> BackwardEvent:
        """From the JSON form."""
        return cls(
            data.get("line"),
            data.get("call", ""),
            data.get("roots", ()),
            data.get("root_nodes", ()),
            data.get("retain_graph", False),
            data.get("create_graph", False),
            data.get("graph_freed"),
            data.get("depth"),
            data.get("thread"),
            source=data,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {
            "kind": "backward",
            "line": self.line,
            "call": self.call,
            "roots": list(self.roots),
            "root_nodes": list(self.root_nodes),
            "retain_graph": self.retain_graph,
            "create_graph": self.create_graph,
            "graph_freed": self.graph_freed,
        }
        if self.depth is not None:
            out["depth"] = self.depth
        if self.thread is not None:
            out["thread"] = self.thread
        return self._finish(out)

    def tensor_ids(self) -> tuple[str, ...]:
        """The roots it starts from."""
        return tuple(self.roots)

    def node_ids(self) -> tuple[str, ...]:
        """The roots' nodes."""
        return tuple(n for n in self.root_nodes if n)

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The roots and their nodes."""
        return (*self.roots, *self.root_nodes)

    def caption(self, lookup: Lookup) -> str:
        """`line 7: .backward() from loss — frees what its nodes saved`."""
        roots = ", ".join(tensor_name(lookup, t) for t in self.roots)
        # torch frees the tensors nodes saved for backward, not the nodes: a pass through
        # nodes that saved nothing (AddBackward0) can run again.
        kept = "graph kept (retain_graph)" if self.retain_graph else "frees what its nodes saved"
        caption = f"{self.where}{self.call} from {roots} — {kept}"
        if self.depth:  # run by a node's own backward (a reentrant checkpoint)
            caption += " — a backward pass run inside the one before it"
        if self.thread:
            caption += f" — on thread {self.thread}"
        return caption


@dataclass(frozen=True, slots=True)
class BackwardEndEvent(TraceEvent):
    """A backward call returned (closing the pass its `backward` event opened); for
    `torch.autograd.grad()`, with the gradients it returned."""

    kind: ClassVar[str] = "backward_end"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {
        "depth", "ok", "results", "values", "assigned", "grad_fn",
    }  # fmt: skip

    depth: int
    ok: bool  # False when the call raised
    results: Sequence[str | None] = ()  # torch.autograd.grad()'s tensors (None: unused)
    values: tuple[TensorValue | None, ...] = ()  # one per result
    # The variable the user's line bound each result to (`g, = grad(y, x)`), or None.
    assigned: Sequence[str | None] | None = None
    # With create_graph: the node that made each result (the engine made it), or None.
    grad_fn: Sequence[str | None] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> BackwardEndEvent:
        """From the JSON form."""
        return cls(
            data.get("line"),
            data.get("depth", 0),
            data.get("ok", True),
            tuple(data.get("results") or ()),
            read_values(data.get("values"), memo),
            data.get("assigned"),
            data.get("grad_fn"),
            source=data,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out = {"kind": "backward_end", "line": self.line, "depth": self.depth, "ok": self.ok}
        if self.results:
            out["results"] = list(self.results)
            out["values"] = write_values(self.values)
        if self.assigned is not None:
            out["assigned"] = list(self.assigned)
        if self.grad_fn is not None:
            out["grad_fn"] = list(self.grad_fn)
        return self._finish(out)

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The gradients `torch.autograd.grad()` returned (and, with `create_graph`,
        the node that made each)."""
        nodes = [getattr(lookup.tensors.get(t), "grad_fn", None) for t in self.results if t]
        return (*self.results, *nodes, *(self.grad_fn or ()))

    def changes(self) -> tuple[ValueChange, ...]:
        """The values of the gradients `torch.autograd.grad()` returned."""
        return tuple(
            ValueChange(t, False, None, v)
            for t, v in zip(self.results, self.values, strict=False)
            if t is not None
        )

    def caption(self, lookup: Lookup) -> str:
        """Whether the pass finished, and what `torch.autograd.grad()` returned."""
        if not self.results:
            return f"{self.where}the backward pass {'ended' if self.ok else 'raised'}"
        said = [
            f"{tensor_name(lookup, t)} = {show_value(v)}" if t is not None else "None"
            for t, v in zip(self.results, self.values, strict=False)
        ]
        return f"{self.where}torch.autograd.grad() returned {', '.join(said)}"


@dataclass(frozen=True, slots=True)
class NodeEvent(TraceEvent):
    """The engine ran a node: the gradients it got and the ones it sent on."""

    kind: ClassVar[str] = "node"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {"node", "name", "grads_in", "grads_out"}

    node: str
    name: str
    grads_in: tuple[TensorValue | None, ...]  # one per output of the node
    grads_out: tuple[TensorValue | None, ...]  # one per next_functions entry

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> NodeEvent:
        """From the JSON form."""
        return _make_node(
            cls,
            data.get("line"),
            data.get("node", ""),
            data.get("name", ""),
            read_values(data.get("grads_in"), memo),
            read_values(data.get("grads_out"), memo),
            source=data,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return self._finish(
            {
                "kind": "node",
                "line": self.line,
                "node": self.node,
                "name": self.name,
                "grads_in": write_values(self.grads_in),
                "grads_out": write_values(self.grads_out),
            }
        )

    def node_ids(self) -> tuple[str, ...]:
        """The node that ran."""
        return (self.node,)

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The node that ran."""
        return (self.node,)

    def sent(self, lookup: Lookup) -> Iterator[tuple[int, str, TensorValue]]:
        """(position in the node's `next`, the node sent to, the gradient) for each
        gradient it sent on."""
        node = lookup.nodes.get(self.node)
        if node is None:
            return
        grads = self.grads_out
        inputs = node.next_input or list(range(len(node.next)))
        for i, (target, slot) in enumerate(zip(node.next, inputs, strict=False)):
            grad = grads[slot] if slot < len(grads) else None
            if grad is not None:
                yield i, target, grad

    def caption(self, lookup: Lookup, returned: Collection[str] = ()) -> str:
        """The chain rule: `MulBackward0: incoming 14 × local 3 = 42 → w.grad` for scalars,
        shapes otherwise. `returned`: AccumulateGrad nodes the pass did not run (a
        `torch.autograd.grad` call hands the gradient back instead of writing `.grad`)."""
        incoming = self.grads_in[0] if self.grads_in else None
        g_in = scalar(incoming)
        parts: list[str] = []
        for _, target, grad in self.sent(lookup):
            to = _target_name(lookup, target, target in returned)
            g_out = scalar(grad)
            if g_in is not None and g_out is not None and g_in != 0:
                parts.append(
                    f"incoming {format_number(g_in)} × local "
                    f"{format_number(g_out / g_in)} = {format_number(g_out)} → {to}"
                )
            else:
                parts.append(f"{show_value(grad)} → {to}")
        # A hook's doing comes first: a two-line caption cuts its end.
        hooks = _hooks_on(lookup, self.node)
        name = f"{self.name} got {show_value(incoming)} from {hooks}" if hooks else self.name
        if not parts:
            if hooks:
                return name
            node = lookup.nodes.get(self.node)
            leaf = node.variable if node is not None else None  # an AccumulateGrad's
            whose = f" for {tensor_name(lookup, leaf)}.grad" if leaf else ""
            made = node.tensor if node is not None and not leaf else None
            if made and self.grads_out and not any(self.grads_out):
                # `y.backward(inputs=[h])` for a non-leaf h: torch runs its node's hooks,
                # and the node sends nothing on (the caption read as if it computed).
                h = tensor_name(lookup, made)
                return (
                    f"{self.name}: receives {show_value(incoming)} for {h}; the pass stops"
                    f" at {h}, so it sends nothing on"
                )
            return f"{self.name}: receives {show_value(incoming)}{whose}"
        return f"{name}: " + ";  ".join(parts)

    def edge_grads(
        self, lookup: Lookup, feeds: Mapping[tuple[str, int], str], alias: Mapping[str, str]
    ) -> dict[tuple[str, str], str]:
        """The gradient each drawn edge into this node carries, as its label shows it.

        `feeds` and `alias` are the drawn graph's (DrawnGraph.feeds, .alias): where each
        edge starts, and which box stands for a collapsed module's members.
        """
        edges: dict[tuple[str, str], str] = {}
        for i, _, grad in self.sent(lookup):
            source = feeds.get((self.node, i))
            if source is not None:
                edge = (alias.get(source, source), alias.get(self.node, self.node))
                if edge[0] != edge[1]:
                    edges[edge] = show_value(grad)
        return edges


_make_node = quick_maker(NodeEvent)


def _hooks_on(lookup: Lookup, node_id: str) -> str:
    """`the hook on h (line 19)`: the tensor hooks the code registered that hand this node
    its gradient, which they may have changed (the caption: `MulBackward0 got [5.44] from
    the hook on h (line 19): …`); "" when none."""
    node: NodeInfo | None = lookup.nodes.get(node_id)
    if node is None or not node.hooks:
        return ""
    hooks = [
        f"{tensor_name(lookup, h.get('tensor'))} (line {h['line']})"
        if h.get("line")
        else tensor_name(lookup, h.get("tensor"))
        for h in node.hooks
        if isinstance(h, dict)
    ]
    if not hooks:
        return ""
    return f"{'the hook' if len(hooks) == 1 else 'the hooks'} on {', '.join(hooks)}"


def _target_name(lookup: Lookup, node_id: str, returned: bool = False) -> str:
    node: NodeInfo | None = lookup.nodes.get(node_id)
    if node is None:
        return "?"
    if node.variable:
        name = tensor_name(lookup, node.variable)
        return f"returned for {name}" if returned else f"{name}.grad"
    if returned and node.tensor:  # a non-leaf's: the pass stopped at it, its node never ran
        return f"returned for {tensor_name(lookup, node.tensor)}"
    return node.name


@dataclass(frozen=True, slots=True)
class AccumulateEvent(ChangeEvent):
    """An AccumulateGrad node wrote a leaf's `.grad`."""

    kind: ClassVar[str] = "accumulate"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {
        "tensor", "node", "before", "after", "grad_tensor", "written",
    }  # fmt: skip

    node: str | None
    # The id of the tensor object that is the .grad now, when the run gave it one: `g =
    # w.grad` before this backward, which AccumulateGrad adds into, so g changes too.
    grad_tensor: str | None = None
    # Other tensors on that memory (`w.grad = buf[:2]`: buf): id -> value after the add.
    written: Mapping[str, TensorValue] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> AccumulateEvent:
        """From the JSON form."""
        shared = read_written(data.get("written"))
        node, grad_tensor = data.get("node"), data.get("grad_tensor")
        return cls(*read_change(data, memo), node, grad_tensor, shared, source=data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out = {
            "kind": "accumulate",
            "line": self.line,
            "tensor": self.tensor,
            "node": self.node,
            "before": write_value(self.before),
            "after": write_value(self.after),
        }
        if self.grad_tensor is not None:
            out["grad_tensor"] = self.grad_tensor
        if self.written is not None:
            out["written"] = write_written(self.written)
        return self._finish(out)

    def changes(self) -> tuple[ValueChange, ...]:
        """The leaf's .grad, and the values of the tensor that .grad is (if it has an id)
        and of the others on its memory."""
        grad = ValueChange(self.tensor, True, self.before, self.after)
        also = [ValueChange(t, False, None, v) for t, v in (self.written or {}).items()]
        if self.grad_tensor is not None:
            also.insert(0, ValueChange(self.grad_tensor, False, None, self.after))
        return (grad, *also)

    def node_ids(self) -> tuple[str, ...]:
        """The AccumulateGrad node."""
        return (self.node,) if self.node else ()

    def lights(self, lookup: Lookup) -> tuple[str | None, ...]:
        """The leaf and its AccumulateGrad node."""
        return (self.tensor, self.node)

    def caption(self, lookup: Lookup) -> str:
        """`w.grad: None → 8.0  (AccumulateGrad adds)`."""
        change = show_change(self.before, self.after)
        return f"{tensor_name(lookup, self.tensor)}.grad: {change}  (AccumulateGrad adds)"


@dataclass(frozen=True, slots=True)
class RetainedGradEvent(ChangeEvent):
    """A backward pass changed the `.grad` of a non-leaf that called retain_grad()."""

    kind: ClassVar[str] = "retained_grad"
    KEYS: ClassVar[frozenset[str]] = TraceEvent.KEYS | {"tensor", "before", "after"}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], memo: ValueMemo | None = None) -> RetainedGradEvent:
        """From the JSON form."""
        return cls(*read_change(data, memo), source=data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return self._finish(change_dict(self))

    def caption(self, lookup: Lookup) -> str:
        """`z.grad kept by retain_grad(): None → 12.0`."""
        change = show_change(self.before, self.after)
        return f"{tensor_name(lookup, self.tensor)}.grad kept by retain_grad(): {change}"
