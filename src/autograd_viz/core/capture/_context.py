"""Which nn.Module an op ran in, and what optimizer.step() changed: torch's global hooks."""

from __future__ import annotations

import sys
import weakref
from typing import TYPE_CHECKING, Any

import torch
from torch.nn.modules import module as nn_module
from torch.optim import optimizer as optim_module

from autograd_viz.core.capture._held import MAX_CONTAINED, modules_held

_is_compiling = torch.compiler.is_compiling
UNATTACHED_SEARCHES = 3  # calls of a module no variable reaches that look for it again

if TYPE_CHECKING:
    from autograd_viz.core.capture._recording import Recording, Unrecorded


class ModuleAndOptimizerHooks:
    """Global module forward hooks keep a stack of module paths (`model.0`); global
    optimizer step hooks turn each `step()` into parameter-update events."""

    def __init__(self, recording: Recording, namespace: dict[str, Any]) -> None:
        self.recording = recording
        self.namespace = namespace
        self._stack: list[str] = []
        self._shared: list[str] | None = None  # the list events of the current stack share
        # Per stack entry, which call of a module it is (numbered in the order calls
        # began): two calls of one module (an RNN cell in a loop) are told apart.
        self._call_stack: list[int] = []
        self._shared_calls: list[int] | None = None
        self._calls_begun = 0
        # Every module path called, with its class and how many parameter numbers it
        # holds (its own and its children's), in the order first called.
        self.modules: dict[str, dict[str, Any]] = {}
        self._names: dict[int, str] = {}
        self._locals: dict[int, tuple[Any, str]] = {}  # see _local_name
        # Modules called while no variable reached them: id -> (a weak reference, how
        # many more times to look for them).
        self._unattached: dict[int, tuple[Any, int]] = {}
        self._handles: list[Any] = []
        # Per step() running now (one may run another's: a Lookahead wrapping SGD), the
        # parameters noted before it, innermost last.
        self._step_before: list[list[tuple[torch.Tensor, bool, int, Any]]] = []
        self._step_grads: list[list[tuple[Any, int, Any]]] = []  # see _before_step
        # Per step running: copies of its parameters as they were (the update's norm).
        self._step_copies: list[list[torch.Tensor | None]] = []
        # One entry per step() running now: how many record_function blocks inside it are
        # open. torch wraps each step (hooks included) in one; see `step_record`.
        self._steps: list[int] = []
        # One per step() running now: what keeps the optimizer's own arithmetic out of the
        # record, entered before the step and left after it.
        self._unrecorded: list[Unrecorded] = []

    def install(self) -> None:
        """Register the global hooks (removed again by `remove`)."""
        self._handles = [
            nn_module.register_module_forward_pre_hook(self._enter_module),
            nn_module.register_module_forward_hook(self._leave_module, always_call=True),
            optim_module.register_optimizer_step_pre_hook(self._before_step),
            optim_module.register_optimizer_step_post_hook(self._after_step),
        ]

    def remove(self) -> None:
        """Remove every hook this object registered."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def module_stack(self) -> list[str]:
        """Paths of the modules the current op runs in, outermost first.

        Events share one list per stack state (rebuilt when a module is entered or left),
        so consumers must not mutate it.
        """
        if self._shared is None:
            self._shared = list(self._stack)
        return self._shared

    def module_calls(self) -> list[int]:
        """Per entry of `module_stack`, the number of that module call (shared like it)."""
        if self._shared_calls is None:
            self._shared_calls = list(self._call_stack)
        return self._shared_calls

    def module_name(self, module: torch.nn.Module) -> str:
        """`model.0` for a module reachable from the user's variables, else its class name.

        A module not reachable yet is looked for again the next few times it is called:
        `register_parametrization` calls a parametrization before attaching it
        (`lin.parametrizations.weight.0` was `Sym` for the whole run)."""
        key = id(module)
        name = self._names.get(key)
        if name is not None:
            return name
        local = self._locals.get(key)
        if local is not None and local[0]() is module:
            return local[1]
        ref, left = self._unattached.get(key, (None, UNATTACHED_SEARCHES))
        if ref is not None and ref() is not module:  # an earlier module's id, reused
            left = UNATTACHED_SEARCHES
        if left > 0:
            for var, obj in list(self.namespace.items()):
                if var.startswith("_"):
                    continue
                for prefix, held in modules_held(var, obj, self.namespace.get("__name__")):
                    for path, sub in held.named_modules(prefix=prefix):
                        self._names.setdefault(id(sub), path)
            name = self._names.get(key) or self._local_name(module)
            if name is not None:
                self._unattached.pop(key, None)
                return name
            try:
                self._unattached[key] = (weakref.ref(module), left - 1)
            except TypeError:  # no weak references: looked for no more
                self._names[key] = type(module).__name__
        return type(module).__name__

    def _local_name(self, module: torch.nn.Module) -> str | None:
        """`model.0` for a module a local variable of the user's functions reaches (`def
        main(): model = …`), looked for from the outermost such function in (its
        parameters are named from there as it is first called: `_remember_paths`); a dict
        of tensors one holds names them (`params['weight']`). None if none reaches it."""
        filename = self.recording.filename
        frames = []
        frame = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            if code.co_filename == filename and code.co_name != "<module>":
                frames.append(frame)
            frame = frame.f_back
        registry = self.recording.registry
        for frame in reversed(frames):  # the outermost first: `model.fc`, not `self.fc`
            held_here = [
                (var, obj)
                for var, obj in list(frame.f_locals.items())
                if not var.startswith("_") and var != "self"
            ]
            for var, obj in held_here:
                if type(obj) is dict and len(obj) <= MAX_CONTAINED:  # what functional_call
                    for k, t in obj.items():  # takes: `params['weight']`
                        if isinstance(k, (str, int)) and isinstance(t, torch.Tensor):
                            tid = registry.known_id(t)
                            if tid is not None:
                                registry.local_paths.setdefault(tid, f"{var}[{k!r}]")
            for var, obj in held_here:
                for prefix, held in modules_held(var, obj, self.namespace.get("__name__")):
                    for path, sub in held.named_modules(prefix=prefix):
                        if sub is module:
                            self._remember_local(module, path)
                            return path
        return None

    def _remember_local(self, module: torch.nn.Module, path: str) -> None:
        try:  # by a weak reference: a function's module goes with it, and its id is reused
            self._locals[id(module)] = (weakref.ref(module), path)
        except TypeError:
            self._names[id(module)] = path

    def _remember_paths(self, module: torch.nn.Module, path: str) -> None:
        """Name a module's parameters and buffers by their paths as it is first called:
        the names they keep where the script's end reaches them no more (a function's
        model, a `del trainer`)."""
        registry = self.recording.registry
        with torch._C.DisableTorchFunction():
            # A parameter that is no nn.Parameter is what torch.func.functional_call
            # swapped in for the call (the caller's dict of plain tensors): not named so.
            held = [
                (name, t)
                for name, t in module.named_parameters(prefix=path)
                if isinstance(t, torch.nn.Parameter)
            ]
            held += list(module.named_buffers(prefix=path))
        for name, t in held:
            tid = registry.known_id(t)
            if tid is not None:
                registry.local_paths.setdefault(tid, name)

    # Dynamo inlines global hooks into what it compiles; there they must do nothing (a
    # compiled call is one op event, see _compiled.py), or they would become its code.
    def _enter_module(self, module: torch.nn.Module, args: Any) -> None:
        if _is_compiling():
            return
        path = self.module_name(module)
        self._stack.append(path)
        self._call_stack.append(self._calls_begun)
        self._calls_begun += 1
        self._shared = self._shared_calls = None
        if path not in self.modules:
            with torch._C.DisableTorchFunction():
                count = sum(p.numel() for p in module.parameters())
            self.modules[path] = {"class": type(module).__name__, "parameters": count}
            if path != type(module).__name__:  # reached by a variable, not its class's name
                self._remember_paths(module, path)

    def _leave_module(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if _is_compiling():
            return
        if self._stack:
            self._stack.pop()
            self._call_stack.pop()
        self._shared = self._shared_calls = None

    def _before_step(self, optimizer: Any, args: Any, kwargs: Any) -> Any:
        if _is_compiling():
            return None
        recording = self.recording
        # torch passes the step's own arguments: (optimizer, closure?) and kwargs.
        closure = kwargs.get("closure", args[1] if len(args) > 1 else None)
        # Hooks run in user context, where every tensor attribute read would go through
        # the tracer's mode: read the values with torch functions off. A parameter with a
        # grad gets an event (a custom step writing `p.data` moves no version counter);
        # with a closure (LBFGS) grads only appear inside step(), so every parameter is
        # noted and those whose version counter moves get one too.
        with torch._C.DisableTorchFunction():
            self._step_before.append(
                [
                    (p, p.grad is not None, p._version, recording.recall(p))
                    for group in optimizer.param_groups
                    for p in group["params"]
                    if p.grad is not None or closure is not None
                ]
            )
            noted = self._step_before[-1]
            self._step_copies.append(recording.step_stats.before([p for p, *_ in noted]))
            # Each grad as it was: a step may write it in place too (SGD with nesterov
            # and foreach adds the momentum buffer into the grads).
            grads = [p.grad for p, *_ in noted]
            self._step_grads.append(
                [(g, g._version, recording.recall(g)) if g is not None else (None, 0, None)
                 for g in grads]
            )  # fmt: skip
        unrecorded = recording.unrecorded()  # the optimizer's arithmetic is not the user's
        unrecorded.__enter__()  # left in _step_ended
        recording.snapshots.changed()  # and the tracer does not see what step() writes
        self._unrecorded.append(unrecorded)
        self._steps.append(0)
        if not callable(closure):
            return None

        name = type(optimizer).__name__

        def recorded_closure() -> Any:
            # The forward and backward inside step(closure) are the user's: record them.
            unrecorded.__exit__(None, None, None)
            try:
                self._moved_between_calls(noted, name)
                return closure()
            finally:
                unrecorded.__enter__()

        if "closure" in kwargs:
            return args, {**kwargs, "closure": recorded_closure}
        return (args[0], recorded_closure, *args[2:]), kwargs

    def _moved_between_calls(
        self, noted: list[tuple[torch.Tensor, bool, int, Any]], name: str
    ) -> None:
        """Before a step() calls its closure again, what it moved since the last call
        (LBFGS moves the weights along its search direction between calls): each such
        parameter gets its update event, and is noted as it is now. The closure's
        forward read the weights as they were after the first call (`w = [1.5, -0.5]`
        through LBFGS's second and third evaluations, where torch had moved it)."""
        recording = self.recording
        with torch._C.DisableTorchFunction():
            line = recording.user_line()
            for i, (p, had_grad, version, before) in enumerate(noted):
                if p._version == version:
                    continue
                after = recording.recall(p)
                recording.emit(
                    {
                        "kind": "param_update",
                        "line": line,
                        "tensor": recording.tid(p),
                        "how": f"{name}.step()",
                        "before": before,
                        "after": after,
                    }
                )
                noted[i] = (p, had_grad, p._version, after)

    def _after_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if _is_compiling():
            return
        recording = self.recording
        try:
            with torch._C.DisableTorchFunction():
                line = recording.user_line()
                noted = self._step_before[-1] if self._step_before else []
                copies = self._step_copies[-1] if self._step_copies else [None] * len(noted)
                first_event = None if recording.events_capped else len(recording.events)
                moved = []
                for (p, had_grad, version, before), copy in zip(noted, copies, strict=True):
                    if not had_grad and p._version == version:
                        continue  # no grad and untouched: the closure gave it none
                    moved.append((recording.tid(p), p, copy))
                    event = {
                        "kind": "param_update",
                        "line": line,
                        "tensor": recording.tid(p),
                        "how": f"{type(optimizer).__name__}.step()",
                        "before": before,
                        "after": recording.recall(p),
                    }
                    shared = recording.registry.sharing_memory(p)
                    if shared:  # a tied weight (`nn.Parameter(enc.weight.t())`) moved too
                        event["written"] = {wid: recording.value(w) for wid, w in shared}
                    recording.emit(event)
                grads = self._step_grads[-1] if self._step_grads else []
                for (p, *_), (grad, version, before) in zip(noted, grads, strict=False):
                    if grad is not None and p.grad is grad and grad._version != version:
                        recording.emit(
                            {
                                "kind": "grad_reset",
                                "line": line,
                                "tensor": recording.tid(p),
                                "how": f".grad written by {type(optimizer).__name__}.step()",
                                "before": before,
                                "after": recording.recall(grad),
                            }
                        )
                recording.step_stats.after(line, type(optimizer).__name__, first_event, moved)
        finally:
            self._step_ended()

    def _step_ended(self) -> None:
        if self._step_before:
            self._step_before.pop()
        if self._step_grads:
            self._step_grads.pop()
        if self._step_copies:
            self._step_copies.pop()  # the parameters as they were: let go of now
        if self._steps:
            self._steps.pop()
        if self._unrecorded:
            self._unrecorded.pop().__exit__(None, None, None)

    def step_record(self, entering: bool) -> None:
        """A record_function block opened or closed while a step() was running unrecorded.

        The step's own block closes after its post hook, even when step() raises; if it
        closes while the step is still open here, the post hook never ran: step() raised,
        and recording must resume (or the rest of the script would go unrecorded).
        """
        if not self._steps:
            return
        if entering:
            self._steps[-1] += 1
        elif self._steps[-1] > 0:
            self._steps[-1] -= 1
        else:
            self._step_ended()
