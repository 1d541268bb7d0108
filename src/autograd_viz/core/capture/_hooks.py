"""The hooks on every autograd node the run gives an id: how backward passes are seen."""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from autograd_viz.core.capture._guards import unseen
from autograd_viz.core.capture._registry import grad_fn_of

if TYPE_CHECKING:
    from torch.overrides import TorchFunctionMode

    from autograd_viz.core.capture._recording import Recording

_Python_backward = torch.autograd.function.BackwardCFunction  # a custom Function's node
_push_mode = torch.overrides._push_mode
_pop_mode = torch.overrides._pop_mode


class NodeHooks:
    """Hooks a node the moment it gets an id, so a backward pass needs no graph walk.

    Each node gets a post hook (`Node.register_hook`: the gradients in and out, in the
    engine's real order), AccumulateGrad a pre hook too (the leaf's `.grad` before), and
    a custom Function's node a pre hook that runs its backward with the tracer's mode on.
    They record only while a backward call is running; `remove` takes them all off.
    """

    def __init__(self, recording: Recording, mode: TorchFunctionMode) -> None:
        self.recording = recording
        self.mode = mode  # the tracer's: a custom Function's backward runs with it on
        self._handles: list[Any] = []
        self._post: list[Any] = []  # our Node post hooks, kept last in line
        self._user_cells: list[list[Any]] = []  # see `with_mode`

    def hook(self, node: Any, nid: str) -> None:
        """Hook `node`, whose id is `nid`."""
        name = type(node).__name__
        variable = getattr(node, "variable", None)
        try:
            if isinstance(variable, torch.Tensor):
                leaf = weakref.ref(variable)
                self._handles.append(node.register_prehook(self._leaf_prehook(nid, leaf)))
            else:
                leaf = None
            entered: list[bool] | None = None  # for a custom Function's node only
            if isinstance(node, _Python_backward):
                entered = []
                self._handles.append(node.register_prehook(self._enter_backward(entered)))
            handle = node.register_hook(self._post_hook(nid, name, leaf, entered))
            self._handles.append(handle)
            self._post.append(handle)
        except RecursionError:
            raise
        except (RuntimeError, TypeError):  # a node that takes no hooks is drawn, not replayed
            pass

    def remove(self) -> None:
        """Take every hook off; the user's post-accumulate hooks run bare from now on."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._post.clear()
        for cell in self._user_cells:
            cell.clear()  # their wrappers outlive the run: they must not keep it alive
        self._user_cells.clear()

    def with_mode(self, hook: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """`hook`, run with the tracer's mode on while a backward of this run calls it.

        The engine runs a tensor's post-accumulate-grad hook (`w.register_post_accumulate_
        grad_hook(step)`, an optimizer fused into backward) with every mode off: what it
        does to the weight (`p.sub_(lr * p.grad)`, `p.grad = None`) went unrecorded, and
        the replay kept the old weight to the end."""
        cell: list[Any] = [self.recording, self.mode]
        self._user_cells.append(cell)

        @functools.wraps(hook)
        def run(t: Any) -> Any:
            if not cell:
                return hook(t)
            recording, mode = cell
            backward = None if recording.ended else recording.passes.current()
            if backward is None:
                return hook(t)
            with unseen():
                backward.accumulated(t)
            _push_mode(mode)
            try:
                return hook(t)
            finally:
                with contextlib.suppress(RuntimeError):
                    _pop_mode()

        return run

    def _leaf_prehook(self, nid: str, leaf: Any):
        passes = self.recording.passes

        def pre(grad_outputs: tuple) -> None:
            backward = passes.current()
            if backward is not None:
                with unseen():
                    backward.leaf_before(nid, leaf(), grad_outputs)

        return pre

    def _enter_backward(self, entered: list[bool]):
        """A pre hook for a custom Function's node: its backward() runs with our mode on.

        torch switches a mode off while its __torch_function__ runs, and the backward
        call is made from there: the engine would run every node without the mode, and
        what a custom backward does in Python (its ops, an autograd.grad or a reentrant
        checkpoint's backward inside it) would go unrecorded. The engine restores the
        thread's modes after each node; the post hook leaves it earlier when it can.
        """
        recording, mode = self.recording, self.mode

        def pre(grad_outputs: tuple) -> None:
            if not recording.ended and recording.passes.current() is not None:
                _push_mode(mode)
                entered.append(True)

        return pre

    def _post_hook(self, nid: str, name: str, leaf: Any, entered: list[bool] | None):
        passes = self.recording.passes

        def post(grad_inputs: tuple, grad_outputs: tuple) -> None:
            if entered:
                entered.pop()
                with contextlib.suppress(RuntimeError):
                    _pop_mode()
            backward = passes.current()
            if backward is not None:
                with unseen():
                    backward.node_ran(
                        nid, name, leaf() if leaf else None, grad_inputs, grad_outputs
                    )

        return post

    def last_in_line(self) -> None:
        """Put each of our Node post hooks after the user's on the same node.

        A node's Python post hooks live in one ordered dict and run in order, each free
        to replace the gradients it sends on (`register_hook(lambda gi, go: …)`); ours
        was added when the node was first seen, usually before the user's, and would
        record what the node computed rather than what it really sent. Run before each
        backward call; handles of nodes that have died are dropped here too.
        """
        alive = []
        for handle in self._post:
            hooks = handle.hooks_dict_ref()
            if hooks is None:
                continue
            alive.append(handle)
            if len(hooks) > 1 and next(reversed(hooks)) != handle.id:
                # Taken out and put back: torch walks the dict's own storage order
                # (PyDict_Next), which an OrderedDict's move_to_end leaves as it was.
                with contextlib.suppress(KeyError):
                    hooks[handle.id] = hooks.pop(handle.id)
        self._post = alive


def record_user_hook(rec: Recording, t: torch.Tensor) -> None:
    """The code hooked `t`'s gradient (`t.register_hook`): say so on the node that receives
    it (a leaf's AccumulateGrad is given its hooks when the run ends: it may not exist yet)."""
    with rec.own_reads():
        hook = {"tensor": rec.tid(t), "line": rec.user_line()}
        node = grad_fn_of(t)
        if node is None:
            rec.registry.leaf_hooks.setdefault(hook["tensor"], []).append(hook)
            return
        hook["output"] = int(getattr(t, "output_nr", 0))
        nid = rec.registry.node_id(node)
        if nid is not None:
            rec.registry.nodes[nid].hooks.append(hook)
