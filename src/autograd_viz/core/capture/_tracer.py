"""The tracer: a TorchFunctionMode that records forward ops, backward calls, resets and
history breaks, tied to the user's source lines."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import warnings
import weakref
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from autograd_viz.core.capture._attributes import attribute, history_break
from autograd_viz.core.capture._backward import BackwardRecorder
from autograd_viz.core.capture._calls import (
    BACKWARD_CALLS,
    ESCAPES,
    HISTORY_BREAKS,
    METADATA_ONLY,
    SKIP,
    WRITES_INPUTS,
    flatten,
    in_place,
    tensors_in,
    written_inputs,
)
from autograd_viz.core.capture._compiled import NOT_RECORDED, CompiledCalls
from autograd_viz.core.capture._context import ModuleAndOptimizerHooks
from autograd_viz.core.capture._first_met import first_met, foreign_inputs, named_in_transform
from autograd_viz.core.capture._guards import plain, unseen
from autograd_viz.core.capture._hooks import NodeHooks, record_user_hook
from autograd_viz.core.capture._naming import (
    assigned_name,
    building_statement,
    iterated_name,
)
from autograd_viz.core.capture._parameter_new import ParameterRecording
from autograd_viz.core.capture._passes import ThreadRecording
from autograd_viz.core.capture._recording import Recording
from autograd_viz.core.capture._registry import Registry, grad_fn_of
from autograd_viz.core.capture._tensor_set import TensorSetRecording
from autograd_viz.core.trace.events import VIEW_ATTRIBUTES

DEFAULT_MAX_EVENTS = 50_000
# Recording allocates many small, long-lived objects; at Python's default thresholds the
# cyclic collector rescans them (and the whole heap, torch included, on a full pass) all
# the time and costs more than the recording: a single full pass measured 0.4 s. While
# tracing, young passes are rarer and passes over the older generations wait until the
# tracer exits, when the user's own thresholds come back. (A generation-1 pass every 50
# young ones rescanned the whole recording so far: 50-115 ms of the 8k-node RNN's run in
# the kernel, measured; the kernel keeps them waiting until the trace is sent and gone.)
TRACING_GC_THRESHOLD = (50_000, 1_000_000, 1_000_000)

_is_compiling = torch.compiler.is_compiling
_transform_level = torch._C._functorch.maybe_current_level
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)  # what `plain` says yes to, checked first
_dispatch_modes = torch._C._len_torch_dispatch_stack
# optimizer.step() runs inside torch.autograd.profiler.record_function: its exit is how a
# step that raised is noticed (see ModuleAndOptimizerHooks.step_record).
_RECORD_ENTER = torch.ops.profiler._record_function_enter_new
_RECORD_EXIT = torch.ops.profiler._record_function_exit._RecordFunction
# Ops whose result is memory torch allocated and did not write: its numbers are whatever
# was there before, and showing them would teach nothing true.
_UNINITIALISED = frozenset({"empty", "empty_like", "new_empty", "empty_strided"})


_OPTIM_DIR = os.path.join(os.path.dirname(torch.__file__), "optim") + os.sep


class _Mode(TorchFunctionMode):
    def __init__(self, tracer: Tracer) -> None:
        super().__init__()
        self.recording = tracer.recording
        self.dispatch = tracer.dispatch
        self.step_record = tracer.context.step_record

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if _is_compiling():  # dynamo is tracing this very code: it must add nothing
            return func(*args, **kwargs) if kwargs else func(*args)
        if self.recording.quiet:  # checked here: inside optimizer.step() this runs per read
            if func is _RECORD_ENTER or func is _RECORD_EXIT:
                self.step_record(entering=func is _RECORD_ENTER)
            return func(*args, **kwargs) if kwargs else func(*args)
        return self.dispatch(func, args, kwargs or {})


class Tracer:
    """Records everything torch does while user code runs inside `with tracer:`."""

    def __init__(
        self,
        events: list[dict[str, Any]],
        filename: str,
        registry: Registry,
        namespace: dict[str, Any],
        max_events: int = DEFAULT_MAX_EVENTS,
    ) -> None:
        # What the parts below share, and all they know of the tracer.
        self.recording = recording = Recording(events, filename, registry, max_events)
        registry.clock = events.__len__  # stamps when nodes that saved tensors come and go
        self.context = ModuleAndOptimizerHooks(recording, namespace)
        self.mode = _Mode(self)
        self.hooks = NodeHooks(recording, self.mode)
        self.compiled = CompiledCalls(recording, self.context.module_stack)
        self._threads = ThreadRecording(self.mode, lambda: recording.ended)
        self._base_frame: FrameType | None = None  # see __enter__
        self._set = TensorSetRecording(recording, self.dispatch)  # `x.set_(y)` too
        self._parameters = ParameterRecording(recording, self.dispatch)  # `nn.Parameter(t)`
        self._updated: list[torch.Tensor] | None = None  # see WRITES_INPUTS

    @property
    def events_capped(self) -> bool:
        """Whether the run produced more events than `max_events` (the rest were dropped)."""
        return self.recording.events_capped

    # ---- lifetime -----------------------------------------------------------------
    def __enter__(self) -> Tracer:
        # The frame that runs the user's code: no op's stack below it is the user's.
        self._base_frame = sys._getframe(1)
        self._gc_threshold = gc.get_threshold()
        gc.set_threshold(*TRACING_GC_THRESHOLD)
        self.recording.registry.on_new_node = self.hooks.hook
        self.context.install()
        self.mode.__enter__()
        self._threads.install()  # threads the script starts record too
        self._set.install()
        self._parameters.install()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._parameters.remove()
            self._set.remove()
            self._threads.remove()
            self.mode.__exit__(*exc)
            self.compiled.end()
        finally:
            self.recording.end()  # a thread still running records no more
            self.recording.registry.end()
            self.context.remove()
            self.recording.registry.on_new_node = None
            self.hooks.remove()
            self.recording.snapshots.finish()
            self._base_frame = None  # the frame holds this tracer: no cycle left behind
            gc.set_threshold(*self._gc_threshold)

    def release(self) -> None:
        """Let go of the events and nodes recorded, once the trace holds them.

        The tracer's parts point at each other (the mode calls back into the tracer), a
        cycle that only the cyclic collector frees; while it held the trace's events and
        nodes, they waited for that collector too, past the trace's own end: 180,000
        objects for the 8k-node RNN, a 120 ms full pass at the next run (measured).
        """
        self.recording.events = []
        self.recording.registry.nodes = {}

    # ---- the dispatch ---------------------------------------------------------------
    def dispatch(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """Run one torch call for real and record what it means."""
        rec = self.recording
        if rec.quiet:
            return func(*args, **kwargs)
        if self.compiled.running is not None:
            self.compiled.returned(sys._getframe(1))
        name = getattr(func, "__name__", "")
        if name in ("__get__", "__set__", "__delete__"):
            attr = getattr(getattr(func, "__self__", None), "__name__", "")
            if name != "__get__" or attr not in VIEW_ATTRIBUTES:
                return attribute(rec, func, name, args, kwargs)
            name = attr  # `m.T`, `z.real`: a view, recorded as the op it is
        call = BACKWARD_CALLS.get(func)
        if call is not None:
            return BackwardRecorder(rec, self.hooks, func, call, args, kwargs).run()
        if name in ESCAPES:
            rec.snapshots.escaped()
            if rec.registry.empties and args:  # `e.numpy()[:] = 1` writes what NumPy got
                rec.registry.may_write(args[0])
        if name in HISTORY_BREAKS:
            result = self._call_warning_at_user_line(func, args, kwargs)
            history_break(rec, HISTORY_BREAKS[name], args[0] if args else None, result)
            return result
        if name in ("zero_", "_foreach_zero_"):
            return self._zeroing(func, name, args, kwargs)
        if name == "retain_grad" and args and isinstance(args[0], torch.Tensor):
            rec.retained[rec.tid(args[0])] = weakref.ref(args[0])
        if name in SKIP or (
            name == "requires_grad_" and sys._getframe(2).f_code.co_filename.startswith(_OPTIM_DIR)
        ):  # (`zero_grad(set_to_none=False)` turns each grad's flag off: not the user's)
            return func(*args, **kwargs)
        if name == "register_post_accumulate_grad_hook" and len(args) == 2 and callable(args[1]):
            with contextlib.suppress(TypeError):  # a tensor-like without weakref support
                rec.post_accumulate[id(args[0])] = weakref.ref(args[0])
            return func(args[0], self.hooks.with_mode(args[1]), **kwargs)
        if name == "register_hook" and args and isinstance(args[0], torch.Tensor):
            result = func(*args, **kwargs)
            record_user_hook(rec, args[0])
            return result
        try:
            result = func(*args, **kwargs)
        except Exception as exc:
            self._failed(exc, name, args, kwargs)
            raise
        if name in WRITES_INPUTS:
            self._updated = written_inputs(func, args, kwargs)
        inplace = in_place(func, name, args, kwargs)
        if inplace or "out" in kwargs:  # a write the version counters of aliases may miss
            rec.snapshots.changed()
            if rec.registry.empties:  # `w.data.fill_(2)`: w's memory, through another object
                rec.registry.may_write(
                    kwargs["out"] if "out" in kwargs else args[0] if args else None
                )
        if (type(result) in _PLAIN_TYPES and not _dispatch_modes()) or (
            plain(result) and (not inplace or plain(args[0] if args else None))
        ):
            self._op(name, args, kwargs, result, inplace)
        else:
            with unseen():
                self._op(name, args, kwargs, result, inplace)
        self._updated = None  # (an op `_op` returned early from keeps none for the next)
        return result

    def _failed(self, exc: Exception, name: str, args: tuple, kwargs: dict) -> None:
        """Remember the call that raised and what it was given (`h @ W2` of mismatched
        shapes: h and W2), for the error event if the exception ends the script."""
        rec = self.recording
        try:
            tid = rec.registry.tensor_id
            given = [tid(t) for t in tensors_in(args) + tensors_in(list(kwargs.values()))]
        except Exception:  # a tensor-like the registry cannot name: say nothing of it
            return
        rec.failed = (exc, name.strip("_") or name, list(dict.fromkeys(given)))

    def _call_warning_at_user_line(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """Call func; a warning it raises (\"Converting a tensor with requires_grad=True to a
        scalar…\") points at the user's line, as it would without the tracer."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = func(*args, **kwargs)
        line = self.recording.user_line()
        for w in caught:
            warnings.warn_explicit(
                w.message, w.category, self.recording.filename, line or 0, module="__main__"
            )
        return result

    def _op(self, name: str, args: tuple, kwargs: dict, result: Any, inplace: bool) -> None:
        # Runs inside the mode's __torch_function__, where torch has switched the mode off:
        # the tensor reads below do not come back through it. This is the hottest path of
        # a trace (once per forward op), so it is written out flat.
        if isinstance(result, torch.Tensor):
            outputs: list[torch.Tensor] = [result]
        elif result is None and inplace and args and isinstance(args[0], torch.Tensor):
            outputs = [args[0]]  # `x[i] = v` returns nothing: what it wrote is x
        elif result is None and inplace and args and isinstance(args[0], (list, tuple)):
            outputs = tensors_in(args[0])  # `_foreach_mul_(grads, c)` (clip_grad_norm_)
        else:
            outputs = tensors_in([result])
            if not outputs:
                self.compiled.asked(sys._getframe(3))  # inductor's runtime, maybe
                return
        rec = self.recording
        if rec.events_capped:
            return
        line = self.compiled.locate(sys._getframe(3))  # _op ← dispatch ← __torch_function__
        registry = rec.registry
        node_id = registry.node_id
        if line is not None and not isinstance(line, int):  # compiled code's own op
            made = [node_id(grad_fn_of(t)) for t in outputs]  # hooked now: its backward
            if line is not NOT_RECORDED:
                used = tensors_in(args) + tensors_in(kwargs.values())
                self.compiled.note(line, outputs, made, used)
            return
        if line is None and not rec.passes.on_main_thread():
            return  # a thread of torch's own (a compile worker), not the script's code
        tid = registry.tensor_id
        try:
            fns = [t.grad_fn for t in outputs]
        except RecursionError:
            raise
        except RuntimeError:  # a view torch will not describe (see grad_fn_of)
            fns = [grad_fn_of(t) for t in outputs]
        seen_before = registry.tensor_count
        if name == "__deepcopy__":  # its memo dict holds what was copied before: no input
            args, kwargs = args[:1], {}
        inputs: list[str] = []
        constants: list[str] = []
        for v in args:
            if isinstance(v, torch.Tensor):
                inputs.append(tid(v))
            elif isinstance(v, (int, float)):
                constants.append(repr(v))
            elif isinstance(v, (list, tuple, dict)):
                for w in v.values() if isinstance(v, dict) else v:
                    if isinstance(w, torch.Tensor):
                        inputs.append(tid(w))
                    elif isinstance(w, (int, float)):
                        constants.append(repr(w))
        if kwargs:
            inputs += [tid(v) for v in flatten(kwargs.values()) if isinstance(v, torch.Tensor)]
        if registry.tensor_count != seen_before:
            if rec.snapshots.sharing:
                foreign_inputs(rec, args)
            seen, named = first_met(rec, args, kwargs, outputs, seen_before, sys._getframe(3))
        else:
            seen = named = None
        if _transform_level() is not None:  # inside torch.func: the user's names for it
            named = named_in_transform(rec, args, kwargs, sys._getframe(3), named)
        # The nodes after the inputs: a node describes what it saved by tensor id, and an
        # input first seen here (`x * x.grad`) has one only from now on.
        grad_fns = [node_id(fn) for fn in fns]
        op = name.strip("_") or name
        unwritten = (  # `empty(0, 2)` holds no numbers to be left over: its value is [0×2]
            op in _UNINITIALISED
            and not inplace
            and "out" not in kwargs
            and any(t.numel() for t in outputs)
        )
        value = rec.value
        caller = sys._getframe(3)
        event = {
            "kind": "op",
            "line": line,
            "op": op,
            "inputs": inputs,
            "outputs": [tid(t) for t in outputs],
            "grad_fn": grad_fns,
            "grad_enabled": torch.is_grad_enabled(),
            "inplace": inplace,
            "modules": self.context.module_stack(),
            "values": [None] * len(outputs) if unwritten else [value(t) for t in outputs],
        }
        if constants:
            event["constants"] = constants
        if inputs and event["grad_enabled"] and not any(grad_fns):
            # Why it made no node, as it was then: a later `w.requires_grad_()` changes w.
            event["inputs_need_grad"] = any(
                t.requires_grad for t in tensors_in(args) + tensors_in(list(kwargs.values()))
            )
        if seen:
            event["seen"] = seen
        if named:
            event["input_names"] = named
        if event["modules"]:
            event["calls"] = self.context.module_calls()
        if unwritten:
            event["uninitialised"] = True
            for t in outputs:
                registry.made_empty(t, tid(t))
        if len(outputs) == 1:
            bound = assigned_name(caller, rec.filename)
            if bound is not None:
                # In place, the variable binds the tensor the op wrote: a name for one
                # only what made it named (`w = torch.ones(2).requires_grad_()`).
                event["assigned"] = bound
                if not inplace and not outputs[0].requires_grad:  # drawn where it feeds
                    registry.kept_constant(outputs[0], event["outputs"][0], event["values"][0])
        elif outputs and not inplace and (bound := iterated_name(caller, rec.filename)):
            event["assigned"] = bound  # `for row in X:`: each output is `row` in its pass
        building = building_statement(caller, rec.filename, self._base_frame)
        if building is not None:
            event["construction"] = building
        if rec.grads_known:  # `w.grad.zero_()`: say whose .grad an input is
            owners = {
                tid(v): leaf
                for v in tensors_in(args)  # a foreach op's lists too
                if (leaf := rec.grad_owner(v)) is not None
            }
            if owners:
                event["grad_of"] = owners
        if rec.passes.running and rec.passes.current() is not None:
            event["in_backward"] = True  # a hook's or custom backward's own op
        if inplace and outputs and name not in METADATA_ONLY:
            # What the write changed through shared memory (of each tensor a foreach op
            # wrote: an optimizer's step over a tied weight).
            mine = set(event["outputs"])
            written = {
                wid: value(w)
                for out in outputs
                for wid, w in registry.sharing_memory(out)
                if wid not in mine
            }
            if written:
                event["written"] = written
        updated, self._updated = self._updated, None
        if updated:  # `F.batch_norm`'s running statistics, written in place
            event["updated"] = {tid(t): value(t) for t in updated}
            mine = set(event["outputs"]) | set(event["updated"])
            shared = {  # and what shares their memory (`stats[0]`'s base, a state_dict's)
                wid: value(w)
                for t in updated
                for wid, w in registry.sharing_memory(t)
                if wid not in mine
            }
            if shared:
                event["written"] = {**event.get("written", {}), **shared}
        nodes = registry.nodes
        for t, nid in zip(outputs, grad_fns, strict=True):
            if nid is not None:
                info = nodes[nid]
                if info.tensor is None and t.output_nr == 0:
                    info.tensor = tid(t)
                if info.saved_tensors:  # what it saved of the op's outputs: its result,
                    for out in outputs:  # and an output of no grad (sort's indices)
                        registry.saved_output(info, out, tid(out))
        if len(rec.events) < rec.max_events:
            rec.events.append(event)
        else:
            rec.events_capped = True

    def _zeroing(self, func: Any, name: str, args: tuple, kwargs: dict) -> Any:
        """`x.grad.zero_()` (or a foreach zero over grads): a grad reset, before and after."""
        rec = self.recording
        targets = list(args[0]) if name == "_foreach_zero_" and args else list(args[:1])
        with rec.own_reads():
            line = rec.user_line()
            resets = [
                (leaf, grad, rec.recall(grad))
                for grad in targets
                if (leaf := rec.grad_owner(grad)) is not None
            ]
        result = func(*args, **kwargs)
        rec.snapshots.changed()
        with rec.own_reads():
            for leaf, grad, before in resets:
                rec.emit(
                    {
                        "kind": "grad_reset",
                        "line": line,
                        "tensor": leaf,
                        "how": ".grad.zero_()",
                        "before": before,
                        "after": rec.recall(grad),
                    }
                )
        with unseen():
            self._op(name, args, kwargs, result, inplace=True)
        return result
