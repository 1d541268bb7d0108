"""Calls into `torch.compile`d code: recorded as one op each, never traced into.

Dynamo compiles Python code it finds on the stack, a TorchFunctionMode's
`__torch_function__` included: left to it, it would compile the recorder's own
bookkeeping into the user's graph and change what the graph computes. While dynamo
traces, the mode therefore steps aside (`torch.compiler.is_compiling()`), so the graph
holds the user's ops alone. When the compiled code then runs, its ops still pass through
the mode (the graph's own calls, or AOTAutograd's wrappers): they are not the user's
lines, so each compiled call becomes a single op event, `compiled f`, whose outputs are
what it returned (a profile function on the thread waits, while the call runs, for its
frame to return). The autograd nodes its ops built are given ids as they appear, so its
backward is recorded node by node as the engine runs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

import torch

from autograd_viz.core.capture._guards import unseen
from autograd_viz.core.capture._registry import grad_fn_of

if TYPE_CHECKING:
    from autograd_viz.core.capture._recording import Recording

_TORCH = os.path.dirname(torch.__file__)
_EVAL_FRAME = os.path.join(_TORCH, "_dynamo", "eval_frame.py")
# Code that only compiled graphs run: FX graph modules, AOTAutograd's runtime, inductor.
_COMPILED_DIRS = tuple(
    os.path.join(_TORCH, *d.split("/")) + os.sep
    for d in ("_functorch/_aot_autograd", "_inductor", "_dynamo", "_higher_order_ops")
)


_KNOWN: dict[str, bool] = {}  # per file name: is_compiled_code (asked for every op)


def is_compiled_code(filename: str) -> bool:
    """Whether a frame's file belongs to the machinery that runs a compiled graph (an FX
    graph module is that too, when it runs inside a compiled call; see Tracer._op_line)."""
    known = _KNOWN.get(filename)
    if known is None:
        known = filename.startswith("<eval_with_key") or (
            filename.startswith(_COMPILED_DIRS) and filename != _EVAL_FRAME
        )
        if len(_KNOWN) < 10_000:
            _KNOWN[filename] = known
    return known


def compiled_call(frame: FrameType | None) -> FrameType | None:
    """The `torch.compile` wrapper frame (dynamo's `compile_wrapper`) at or above `frame`."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "compile_wrapper" and code.co_filename == _EVAL_FRAME:
            return frame
        frame = frame.f_back
    return None


def on_stack(target: FrameType, frame: FrameType | None) -> bool:
    """Whether `target` is `frame` or one of its callers (still running)."""
    while frame is not None:
        if frame is target:
            return True
        frame = frame.f_back
    return False


def compiled_name(wrapper: FrameType) -> str:
    """What the user compiled, in their words: `f`, `<lambda>`, or a module's class."""
    frame: FrameType | None = wrapper
    for _ in range(8):  # a compiled module: its OptimizedModule is a few callers out
        if frame is None:
            break
        owner = frame.f_locals.get("self")
        original = getattr(owner, "_orig_mod", None)
        if isinstance(original, torch.nn.Module):
            return type(original).__name__
        frame = frame.f_back
    fn = wrapper.f_locals.get("fn")
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        return type(owner).__name__
    return getattr(fn, "__name__", None) or type(fn).__name__


def call_tensors(wrapper: FrameType) -> list[torch.Tensor]:
    """The tensors passed to the compiled call (its positional and keyword arguments)."""
    values = list(wrapper.f_locals.get("args", ()))
    values += list((wrapper.f_locals.get("kwargs") or {}).values())
    out: list[torch.Tensor] = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out += [w for w in v if isinstance(w, torch.Tensor)]
        elif isinstance(v, dict):
            out += [w for w in v.values() if isinstance(w, torch.Tensor)]
    return out


def _tensors(value: Any, depth: int = 0) -> list[Any]:
    """Tensors in a compiled call's return value (nested tuples, lists, dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 3:
        return []
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v, depth + 1)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v, depth + 1)]
    return []


@dataclass
class CompiledCall:
    """One call of compiled code in progress: what it was given and what it made; what it
    returned, once the profile function has seen it return."""

    wrapper: FrameType
    name: str
    line: int | None
    modules: list[str]
    grad_enabled: bool
    inputs: list[torch.Tensor]
    nodes: list[str] = field(default_factory=list)  # the autograd nodes its ops made
    # Per argument (by position in `inputs`), the nodes of the ops that took it.
    feeds: dict[int, list[str]] = field(default_factory=dict)
    ops: int = 0
    returned: list[torch.Tensor] | None = None  # what the call returned, once it has

    def note(
        self, outputs: list[torch.Tensor], nodes: list[str | None], used: list[torch.Tensor]
    ) -> None:
        """The compiled code's ops took `used` and made `outputs`, with the nodes `nodes`."""
        self.ops += bool(outputs)  # an op (not a query of compiled code's runtime)
        made = [n for n in nodes if n is not None]
        self.nodes += [n for n in made if n not in self.nodes]
        for t in used if made else ():
            for position, argument in enumerate(self.inputs):
                if argument is t:
                    fed = self.feeds.setdefault(position, [])
                    fed += [n for n in made if n not in fed]


# What `CompiledCalls.locate` says of an op that compiled code runs with no compiled call
# on the stack (a compiled backward, run by the engine): not the user's, not recorded.
NOT_RECORDED = object()


class CompiledCalls:
    """The tracer's view of compiled code: which ops belong to a compiled call, and the
    one op event each call becomes when it has returned."""

    def __init__(self, recording: Recording, module_stack: Callable[[], list[str]]) -> None:
        self.recording = recording
        self._module_stack = module_stack  # the modules an op runs in now
        self.running: CompiledCall | None = None  # the compiled call in progress
        self._profile: Any = None  # the thread's profile function while we watch a call
        self._watching = False

    def locate(self, frame: FrameType | None) -> Any:
        """For an op called from `frame`: the user's line; or, when compiled code runs
        it, the frame of the `torch.compile`d call it belongs to (`NOT_RECORDED` when
        no call is on the stack and a backward pass runs it)."""
        compiled = False
        wrapper = None  # torch.compile's frame, when the code it compiled is torch's own
        filename = self.recording.filename
        while frame is not None:
            code_file = frame.f_code.co_filename
            if code_file == filename:
                break
            if not compiled and is_compiled_code(code_file):
                compiled = True
                wrapper = compiled_call(frame)
            frame = frame.f_back
        if compiled:
            wrapper = wrapper or compiled_call(frame)
            if wrapper is not None:
                return wrapper
            if self.recording.passes.current() is not None:
                return NOT_RECORDED
        return frame.f_lineno if frame is not None else None

    def note(
        self,
        wrapper: FrameType,
        outputs: list[torch.Tensor],
        nodes: list[str | None],
        used: list[torch.Tensor],
    ) -> None:
        """An op of compiled code took `used` and made `outputs` (and `nodes`): noted for
        the call's one op event."""
        call = self.running
        if call is None or call.wrapper is not wrapper:
            self.end()
            filename = self.recording.filename
            caller = wrapper.f_back
            while caller is not None and caller.f_code.co_filename != filename:
                caller = caller.f_back
            call = self.running = CompiledCall(
                wrapper=wrapper,
                name=compiled_name(wrapper),
                line=caller.f_lineno if caller is not None else None,
                modules=self._module_stack(),
                grad_enabled=torch.is_grad_enabled(),
                inputs=call_tensors(wrapper),
            )
        call.note(outputs, nodes, used)
        self._watch()

    def asked(self, frame: FrameType | None) -> None:
        """A torch call that returned no tensor, from `frame`: compiled code whose
        kernels torch's dispatch never sees (inductor) still makes such calls from its
        runtime; they are how such a call is noticed at all."""
        caller = frame.f_back if frame is not None else None
        if caller is None or not is_compiled_code(caller.f_code.co_filename):
            return
        where = self.locate(frame)
        if where is not None and where is not NOT_RECORDED and not isinstance(where, int):
            self.note(where, [], [], [])

    def _watch(self) -> None:
        """Until the call in progress returns, a profile function on this thread waits
        for its return: what it returns is what its op event shows."""
        if self._watching:
            return
        self._watching = True
        self._profile = sys.getprofile()
        sys.setprofile(self._on_return)

    def _on_return(self, frame: FrameType, event: str, arg: Any) -> None:
        call = self.running
        if event != "return" or call is None or frame is not call.wrapper:
            return
        sys.setprofile(self._profile)
        self._watching = False
        call.returned = [t for t in _tensors(arg) if isinstance(t, torch.Tensor)]
        self.end()

    def returned(self, frame: FrameType | None) -> None:
        """A torch call from `frame`: if the call in progress is no longer on the stack,
        it has returned, and its event is due."""
        if self.running is not None and not on_stack(self.running.wrapper, frame):
            self.end()

    def end(self) -> None:
        """The compiled call in progress has returned: its op event, with what it made."""
        call, self.running = self.running, None
        if call is None:
            return
        call.wrapper = None  # type: ignore[assignment]  # let the frame go
        if self._watching:  # it ended another way (an exception, the run's end)
            sys.setprofile(self._profile)
            self._watching = False
        recording = self.recording
        with unseen():
            # Nothing when its return went unseen (another profile function replaced ours).
            outputs = call.returned or []
            tid, node_id = recording.tid, recording.registry.node_id
            recording.emit(
                {
                    "kind": "op",
                    "line": call.line,
                    "op": f"compiled {call.name}",
                    "inputs": [tid(t) for t in call.inputs],
                    "outputs": [tid(t) for t in outputs],
                    "grad_fn": [node_id(grad_fn_of(t)) for t in outputs],
                    "grad_enabled": call.grad_enabled,
                    "inplace": False,
                    "modules": call.modules,
                    "values": [recording.value(t) for t in outputs],
                    "compiled": {
                        "ops": call.ops,
                        "nodes": call.nodes,
                        "feeds": {tid(call.inputs[i]): fed for i, fed in call.feeds.items()},
                    },
                }
            )
