"""\"Why is this .grad None?\" (and \"why is it 16, not 8?\"), answered from the trace.

The reasons come in the order torch applies them: a tensor that does not require grad is
never tracked; a non-leaf keeps no `.grad` unless it called `retain_grad()`; a `.grad`
that was set and then reset to None is gone; with no backward after the tensor was made
nothing filled it; `torch.autograd.grad()` returns gradients without filling `.grad`;
and a backward whose graph never reaches the tensor's AccumulateGrad leaves it alone:
cut by `.detach()`, `.item()`, `.data`, or `torch.no_grad()` on the way, or simply not
used. Each answer names the line that caused it and, where one line can fix it, the
edit (`Edit`) that does; the tests apply that edit and let torch confirm the gradient.
A `.grad` that holds a value gets its history instead: each backward that added into it,
and each reset.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograd_viz.core.playback._why_edits import Edit
from autograd_viz.core.playback._why_moment import _Moment
from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.events import (
    BackwardEvent,
    ChangeEvent,
    GradResetEvent,
    HistoryBreakEvent,
    OpEvent,
)
from autograd_viz.core.trace.value_text import show_value

# The reasons, by key (GradAnswer.reason).
HAS_GRAD = "has_grad"
NOT_MADE = "not_made_yet"
NO_REQUIRES_GRAD = "requires_grad_false"
SWITCHED_OFF = "requires_grad_switched_off"
NO_GRAD_INPUTS = "inputs_need_no_grad"
NON_LEAF = "non_leaf"
RESET = "reset"
NO_BACKWARD = "no_backward"
AUTOGRAD_GRAD = "autograd_grad"
CUT = "cut"
NO_GRAD_MODE = "no_grad_mode"
NOT_REACHING = "not_reaching"
REACHED = "reached"

_NUMBER_BREAKS = ("item()", "tolist()", "numpy()", "float()", "int()", "bool()")
MAX_CUTS = 32  # candidate cuts whose results are followed forward


@dataclass(frozen=True)
class GradAnswer:
    """Why a tensor's `.grad` is what it is at one moment of the run."""

    tensor: str
    name: str
    reason: str  # one of the keys above
    question: str  # "Why is w.grad None?"
    answer: str  # the cause, in a sentence or two
    line: int | None = None  # the line that caused it
    fix: str = ""  # what to change, in words ("" when nothing is wrong)
    edit: Edit | None = None  # the one-line change that does it, where there is one
    history: tuple[str, ...] = ()  # for a .grad with a value: what added and reset it


def why_grad(
    trace: Trace, tensor_id: str, index: int | None = None, source: str | None = None
) -> GradAnswer:
    """Why `tensor_id`'s `.grad` is what it is once event `index` has happened (None:
    at the end of the run). `source`: the script, to point fixes at its lines."""
    return _Asker(trace, tensor_id, index, source).answer()


class _Asker(_Moment):
    # ---- the answer -------------------------------------------------------------------
    def answer(self) -> GradAnswer:
        grad = self._grad_now()
        if grad is not None:
            return self._has_grad(grad)
        question = f"Why is {self.name}.grad None?"
        if self.made is not None and self.made > self.last:
            return self._say(NOT_MADE, question, f"{self.name} is not made yet at this step.")
        for check in (
            self._requires_grad,
            self._non_leaf,
            self._reset,
            self._no_backward,
            self._cut_or_unused,
        ):
            found = check(question)
            if found is not None:
                return found
        raise AssertionError("unreachable: _cut_or_unused always answers")

    def _say(self, reason: str, question: str, answer: str, **more) -> GradAnswer:
        return GradAnswer(self.tid, self.name, reason, question, answer, **more)

    # ---- the reasons, in torch's order ---------------------------------------------------
    def _requires_grad(self, question: str) -> GradAnswer | None:
        switched = [
            (i, e)
            for i in self.mine
            if isinstance(e := self.ix.event(i), OpEvent)
            and e.op == "requires_grad"
            and e.inputs[:1] == [self.tid]
        ]
        if switched:
            _, e = switched[-1]
            if "False" in (e.constants or ()):
                return self._say(
                    SWITCHED_OFF,
                    question,
                    f"{self.name}.requires_grad_(False) on line {e.line} switched autograd off"
                    f" for {self.name}: no backward fills its .grad after that.",
                    line=e.line,
                    fix=f"Remove line {e.line}.",
                    edit=self._blank(e.line),
                )
            return None
        if self.t.requires_grad:
            return None
        made = self.ix.event(self.made) if self.made is not None else None
        if isinstance(made, OpEvent) and not made.grad_enabled and made.inputs:
            return self._no_grad_op(question, self.made, made)
        if self.t.is_leaf:
            what = f"{self.name} was created without requires_grad=True"
            where = f" ({self._quoted(self.made_line)})" if self.made_line else ""
            return self._say(
                NO_REQUIRES_GRAD,
                question,
                f"{what}{where}: autograd does not track it, so no backward fills its .grad.",
                line=self.made_line,
                fix=f"Create it with requires_grad=True, or call {self.name}.requires_grad_()"
                " after making it.",
                edit=self._insert_after(self.made_line, f"{self.name}.requires_grad_()"),
            )
        where = f" on line {self.made_line}" if self.made_line else ""
        return self._say(
            NO_GRAD_INPUTS,
            question,
            f"{self.name} was computed{where} from tensors that do not require grad: autograd"
            " has nothing to track, so it has no .grad (and no grad_fn).",
            line=self.made_line,
            fix="Make the leaf it comes from require grad (requires_grad=True).",
        )

    def _non_leaf(self, question: str) -> GradAnswer | None:
        if self.t.is_leaf or self.t.retains_grad:
            return None
        where = f" ({self._quoted(self.made_line)})" if self.made_line else ""
        return self._say(
            NON_LEAF,
            question,
            f"{self.name} is not a leaf: it was computed by an op{where}. PyTorch fills .grad"
            " only on leaf tensors, unless a non-leaf asks with retain_grad() before the"
            " backward.",
            line=self.made_line,
            fix=f"Call {self.name}.retain_grad() before backward().",
            edit=self._insert_after(self.made_line, f"{self.name}.retain_grad()"),
        )

    def _reset(self, question: str) -> GradAnswer | None:
        positions = [i for i in self.grad_events if i <= self.last]
        if not positions:
            return None
        e = self.ix.event(positions[-1])
        if not isinstance(e, GradResetEvent) or e.after is not None:
            return None
        return self._say(
            RESET,
            question,
            f"{self.name}.grad was {show_value(e.before)} until it was set to None on"
            f" {self._quoted(e.line)} (optimizer.zero_grad() and module.zero_grad() do, by"
            " default).",
            line=e.line,
            fix=f"Read {self.name}.grad before line {e.line}, or run backward() again after it.",
            edit=self._blank(e.line),
        )

    def _no_backward(self, question: str) -> GradAnswer | None:
        passes = self._backwards()
        if not passes:
            earlier = [e for i, e in self.ix.each(BackwardEvent) if i <= self.last]
            if earlier:
                answer = (
                    f"The backward() on line {earlier[-1].line} ran before {self.name} was made"
                    f" (line {self.made_line}), and none ran after."
                )
            else:
                answer = "No backward() ran" + (" yet" if self.last < self._end() else "") + "."
            root = self._loss_after()
            fix = "Call .backward() on the loss."
            edit = None
            if root is not None:
                fix = f"Call {root}.backward()."
                edit = Edit(self._line_count(), "insert", f"{root}.backward()")
            return self._say(NO_BACKWARD, question, answer, fix=fix, edit=edit)
        if all(e.call == "torch.autograd.grad()" for _, e in passes):
            line = passes[-1][1].line
            return self._say(
                AUTOGRAD_GRAD,
                question,
                f"torch.autograd.grad() on line {line} returns the gradients instead of"
                " adding them into .grad.",
                line=line,
                fix="Read the gradients torch.autograd.grad() returned, or call"
                " .backward() to fill .grad.",
            )
        return None

    def _cut_or_unused(self, question: str) -> GradAnswer:
        passes = [(i, e) for i, e in self._backwards() if e.call != "torch.autograd.grad()"]
        roots = {r for _, e in passes for r in e.roots}
        root_names = ", ".join(sorted({self.ix.name_of(r) for r in roots}))
        e = passes[-1][1]
        if self._reached(passes):
            return self._say(
                REACHED,
                question,
                f"The backward() on line {e.line} reached {self.name}'s AccumulateGrad, yet"
                " nothing was added (an `inputs=` argument may have left it out).",
                line=e.line,
            )
        descendants = self._descendants(self.made if self.made is not None else -1)
        cuts = []
        for j in range(max(self.made or 0, 0), self.last + 1):
            c = self.ix.event(j)
            if isinstance(c, HistoryBreakEvent) and c.tensor in descendants:
                cuts.append((j, c, [c.result] if c.result else []))
            elif isinstance(c, OpEvent) and not c.grad_enabled and set(c.inputs) & descendants:
                cuts.append((j, c, list(c.outputs)))
        for j, c, outputs in cuts[:MAX_CUTS]:
            if outputs and self._descendants(j, set(outputs)) & roots:
                if isinstance(c, HistoryBreakEvent):
                    return self._history_break(question, c)
                return self._no_grad_op(question, j, c)
        numbers = [c for _, c, _ in cuts if isinstance(c, HistoryBreakEvent) and not c.result]
        if numbers:
            return self._history_break(question, numbers[-1])
        return self._say(
            NOT_REACHING,
            question,
            f"{self.name} is not used in computing {root_names}, the tensor backward() was"
            f" called on (line {e.line}): no gradient flows back to it.",
            line=e.line,
            fix=f"Use {self.name} in computing {root_names}.",
        )

    # ---- the causes -----------------------------------------------------------------------
    def _history_break(self, question: str, c: HistoryBreakEvent) -> GradAnswer:
        source = self.ix.name_of(c.tensor) if c.tensor else self.name
        if c.result is None or c.how in _NUMBER_BREAKS:
            answer = (
                f"{source}.{c.how.rstrip('()')}() on line {c.line} turned it into a Python"
                " number: autograd cannot follow a number, so the loss made from it sends"
                f" no gradient back to {self.name}."
            )
            fix = f"Keep it a tensor (no .{c.how}) where the loss is computed from it."
            return self._say(CUT, question, answer, line=c.line, fix=fix)
        shown = c.how if c.how.startswith(".") else f".{c.how}"
        answer = (
            f"{source}{shown} on line {c.line} made a tensor without autograd history: the"
            f" loss computed from it cannot send a gradient back to {self.name}."
        )
        edit = self._without(c.line, shown)
        return self._say(
            CUT, question, answer, line=c.line, fix=f"Use {source} instead of {source}{shown}.",
            edit=edit,
        )  # fmt: skip

    def _no_grad_op(self, question: str, position: int, e: OpEvent) -> GradAnswer:
        block = self._grad_off_line(e.line)
        where = self._quoted(block) if block else "torch.no_grad() or inference_mode()"
        answer = (
            f"{e.op} on line {e.line} ran with gradient tracking off ({where}): autograd"
            f" recorded nothing there, so no gradient flows back through it to {self.name}."
        )
        edit = None
        if block is not None and self.lines is not None:
            text = self.lines[block - 1]
            indent = text[: len(text) - len(text.lstrip())]
            edit = Edit(
                block, "replace", "" if text.lstrip().startswith("@") else f"{indent}if True:"
            )
        fix = "Compute it outside the no_grad block."
        return self._say(NO_GRAD_MODE, question, answer, line=block or e.line, fix=fix, edit=edit)

    # ---- a gradient that has a value ---------------------------------------------------------
    def _has_grad(self, grad) -> GradAnswer:
        shown = show_value(grad)
        history: list[str] = []
        added = 0
        for i in self.grad_events:
            if i > self.last:
                break
            e = self.ix.event(i)
            assert isinstance(e, ChangeEvent)
            if isinstance(e, GradResetEvent):
                history.append(f"line {e.line}: reset ({e.how}) → {show_value(e.after)}")
                added = 0
            elif e.kind == "grad_assign":
                history.append(f"line {e.line}: assigned → {show_value(e.after)}")
                added = 0
            else:
                added += 1
                history.append(
                    f"line {e.line}: backward() added → {show_value(e.before)} becomes"
                    f" {show_value(e.after)}"
                )
        answer = f"{self.name}.grad is {shown}."
        fix = ""
        if added > 1:
            answer += (
                f" {added} backward passes added into it since it was last reset: PyTorch"
                " accumulates gradients, it does not replace them."
            )
            fix = (
                f"Reset it before each backward(): optimizer.zero_grad() or {self.name}.grad"
                " = None."
            )
        return self._say(
            HAS_GRAD,
            f"Why is {self.name}.grad {shown}?",
            answer,
            fix=fix,
            history=tuple(history),
        )
