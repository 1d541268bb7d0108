"""Which line of the user's code made which tensor or node, and back."""

from __future__ import annotations

from collections import defaultdict

from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.events import OpEvent


class SourceMap:
    """Links trace ids (tensors `t…`, nodes `n…`) to the source line that created them."""

    def __init__(self, trace: Trace) -> None:
        self.line_of: dict[str, int] = {}
        for _, e in trace.index.each(OpEvent):
            if not e.line:
                continue
            for key in (*e.outputs, *e.grad_fn):
                if key:
                    self.line_of.setdefault(key, e.line)
        for node in trace.nodes:  # AccumulateGrad belongs to the line that made its leaf
            if node.variable and node.variable in self.line_of:
                self.line_of.setdefault(node.id, self.line_of[node.variable])
            # A node no op returned (a custom Function's, SignSTEBackward) belongs to the
            # line that made its tensor, not to the first line that used it.
            elif node.tensor and node.tensor in self.line_of:
                self.line_of.setdefault(node.id, self.line_of[node.tensor])
        self._inherit_inner_nodes(trace)
        self._ids: dict[int, list[str]] = defaultdict(list)
        for key, line in self.line_of.items():
            self._ids[line].append(key)

    def _inherit_inner_nodes(self, trace: Trace) -> None:
        """A node no op returned as a grad_fn (the TBackward0 that F.linear makes behind
        AddmmBackward0) was made by the same call as the node that feeds it
        gradients: it gets that node's line."""
        nodes = trace.index.nodes
        for _, e in trace.index.each(OpEvent):  # in order: the earliest call claims a node
            if not e.line:
                continue
            stack = [n for n in e.grad_fn if n]
            while stack:
                node = nodes.get(stack.pop())
                if node is None:
                    continue
                for inner in node.next:
                    known = nodes.get(inner)
                    if inner not in self.line_of and known is not None and not known.variable:
                        self.line_of[inner] = e.line
                        stack.append(inner)

    def ids_on(self, line: int) -> list[str]:
        """Every tensor and node created on `line`."""
        return list(self._ids.get(line, ()))
