"""The end-of-run picture: the user's tensors, the graph behind them, in trace form."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

import torch

from autograd_viz.core.capture import Registry, grad_fn_of, is_leaf
from autograd_viz.core.capture._held import MAX_CONTAINED, modules_held
from autograd_viz.core.trace import TensorInfo, TensorValue, Trace
from autograd_viz.core.trace.values import TensorValues

# Walking a very deep graph from Python and then freeing it can crash PyTorch
# (pytorch#109948), and no picture of that many nodes is readable anyway: cap the walk.
DEFAULT_MAX_NODES = 20_000
MAX_TENSORS = 5_000  # tensors listed at the end of a run (events still name every tensor)

_HIDDEN_NAMES = {"In", "Out", "exit", "quit", "get_ipython"}
_EVENT_TENSOR_KEYS = ("inputs", "outputs", "roots", "results")
_EVENT_TENSOR_KEY = ("tensor", "result")


def namespace_roots(namespace: Mapping[str, Any]) -> list[tuple[str, torch.Tensor]]:
    """The (name, tensor) pairs the user bound: variables, and module parameters by path."""
    roots: list[tuple[str, torch.Tensor]] = []
    script = namespace.get("__name__")
    for name, obj in list(namespace.items()):
        if name.startswith("_") or name in _HIDDEN_NAMES:
            continue
        if isinstance(obj, torch.Tensor):
            roots.append((name, obj))
        elif type(obj) not in (list, tuple, dict):  # (containers: namespace_containers)
            # A model, or one an object of the script's own class holds (`trainer.model`).
            for path, held in modules_held(name, obj, script):
                roots.extend((f"{path}.{p}", t) for p, t in held.named_parameters())
    return roots


def namespace_buffers(namespace: Mapping[str, Any]) -> list[tuple[str, torch.Tensor]]:
    """The buffers of the modules the user bound, by path (`bn.running_mean`)."""
    found: list[tuple[str, torch.Tensor]] = []
    for name, obj in list(namespace.items()):
        if isinstance(obj, torch.nn.Module) and not name.startswith("_"):
            found.extend((f"{name}.{b}", t) for b, t in obj.named_buffers())
    return found


def namespace_attributes(namespace: Mapping[str, Any]) -> list[tuple[str, torch.Tensor]]:
    """Tensors held as plain attributes, by path: a module's that are neither parameters
    nor buffers (`self.w = torch.ones(2, requires_grad=True)` makes `m.w`), and those of
    an object of a class the script defined (`model.w` of a hand-written `LinReg`)."""
    found: list[tuple[str, torch.Tensor]] = []
    script = namespace.get("__name__")
    for name, obj in list(namespace.items()):
        if name.startswith("_") or name in _HIDDEN_NAMES or isinstance(obj, type):
            continue
        if isinstance(obj, torch.nn.Module):
            for path, module in obj.named_modules():
                prefix = f"{name}.{path}." if path else f"{name}."
                found.extend(
                    (prefix + attr, t)
                    for attr, t in vars(module).items()
                    if isinstance(t, torch.Tensor) and not attr.startswith("_")
                )
        elif type(obj).__module__ == script and hasattr(obj, "__dict__"):
            attributes = list(vars(obj).items())[:MAX_CONTAINED]
            found.extend(
                (f"{name}.{attr}", t)
                for attr, t in attributes
                if isinstance(t, torch.Tensor) and not attr.startswith("_")
            )
    return found


def namespace_containers(namespace: Mapping[str, Any]) -> list[tuple[str, torch.Tensor]]:
    """Tensors the user bound inside a list, tuple or dict, by how to reach them:
    `v = torch.autograd.grad(y, (a, b))` makes `v[0]`, `v[1]`; `g = torch.func.grad(f)(p)`
    with a dict `p` makes `g['weight']`. One level in, small containers only."""
    found: list[tuple[str, torch.Tensor]] = []
    for name, obj in list(namespace.items()):
        if name.startswith("_") or name in _HIDDEN_NAMES:
            continue
        if type(obj) in (list, tuple) and len(obj) <= MAX_CONTAINED:
            items = [(f"{name}[{i}]", t) for i, t in enumerate(obj)]
        elif type(obj) is dict and len(obj) <= MAX_CONTAINED:
            items = [(f"{name}[{k!r}]", t) for k, t in obj.items() if isinstance(k, (str, int))]
        else:
            continue
        for path, item in items:
            if _tensor(item):
                found.append((path, item))
            elif isinstance(item, torch.nn.Module):  # `models = {"a": nn.Linear(2, 1), …}`
                found.extend((f"{path}.{p}", t) for p, t in item.named_parameters())
    return found


def _tensor(t: Any) -> bool:
    # Parameters too: `params = [nn.Parameter(…) for …]` makes params[0], params[1]
    # (a module's keep the path they were named by first, `model.0.weight`).
    return isinstance(t, torch.Tensor)


def _grads_bound(
    infos: dict[str, TensorInfo],
    objects: dict[str, torch.Tensor],
    referenced: set[str],
    live: dict[str, torch.Tensor],
) -> None:
    """Mark the named tensors no event met that are a leaf's `.grad` now (`g = w.grad`):
    the player gives them that grad's values (TensorInfo.grad_of)."""
    unmet = {id(t): tid for tid, t in objects.items() if tid not in referenced and tid in infos}
    if not unmet:
        return
    for tid, t in live.items():
        if tid in infos and t.is_leaf and t.requires_grad:
            grad = t.grad
            if grad is not None and id(grad) in unmet:
                infos[unmet[id(grad)]].grad_of = tid


class EarlierTensors:
    """The tensors a kept namespace held before a run (weakly: a run may free them).

    At the end of that run a tensor still bound from before is listed only if the run
    touched it (an event names it) or reached it through its graph; one merely still bound
    is an earlier run's, not this one's.
    """

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self._refs: dict[int, Any] = {}
        for _, t in namespace_roots(namespace):
            try:
                self._refs[id(t)] = weakref.ref(t)
            except TypeError:  # no weak reference: then it cannot be told apart; list it
                continue

    def __contains__(self, t: object) -> bool:
        ref = self._refs.get(id(t))
        return ref is not None and ref() is t


def _referenced(events: list[dict[str, Any]]) -> set[str]:
    ids: set[str] = set()
    update = ids.update
    for e in events:
        kind = e["kind"]
        if kind == "node":  # names nodes only; the most numerous kind, so skipped first
            continue
        if kind == "op":
            update(e["inputs"])
            update(e["outputs"])
            continue
        for key in _EVENT_TENSOR_KEYS:
            update(e.get(key, ()))
        for key in _EVENT_TENSOR_KEY:
            if e.get(key):
                ids.add(e[key])
    ids.discard(None)
    return ids


def _tensor_info(
    tid: str, t: torch.Tensor, name: str | None, registry: Registry, values: TensorValues
) -> TensorInfo:
    return TensorInfo(
        id=tid,
        name=name,
        shape=list(t.shape),
        dtype=str(t.dtype).removeprefix("torch."),
        device=str(t.device),
        requires_grad=bool(t.requires_grad),
        is_leaf=is_leaf(t),
        retains_grad=bool(t.retains_grad),
        grad_fn=registry.node_id(grad_fn_of(t)),
        value=values.take(t),
        grad=values.grad(t),
        output_nr=int(getattr(t, "output_nr", 0)),
        parameter=isinstance(t, torch.nn.Parameter) if t.requires_grad and is_leaf(t) else None,
    )


def _fed_constants(events: list[dict[str, Any]], candidates: set[str]) -> dict[str, Any]:
    """Which of `candidates` (tensors without grad the user named or cut off) fed an op
    of the graph, in the order they did, each with the value the last op that made or
    wrote it recorded (None where no op did: a detach keeps its own)."""
    if not candidates:
        return {}
    fed: dict[str, Any] = {}
    last: dict[str, Any] = {}
    for e in events:
        if e["kind"] != "op":
            continue
        for tid, value in zip(e["outputs"], e["values"], strict=False):
            if tid in candidates:
                last[tid] = value
        if any(e["grad_fn"]):
            for tid in e["inputs"]:
                if tid in candidates and tid not in fed:
                    fed[tid] = None
    return {tid: last.get(tid) for tid in fed}


def _freed(
    tid: str,
    kind: tuple[list[int], str, str],
    requires_grad: bool,
    value: dict[str, Any] | None,
    grad: dict[str, Any] | None,
) -> TensorInfo:
    """A leaf gone by the end of the run (`kind`: its shape, dtype and device), with the
    value and `.grad` its last events recorded."""
    shape, dtype, device = kind
    return TensorInfo(
        id=tid,
        name=None,
        shape=shape,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        is_leaf=True,
        retains_grad=False,
        grad_fn=None,
        value=None if value is None else TensorValue.from_event_dict(value),
        grad=None if grad is None else TensorValue.from_event_dict(grad),
        freed=True,
    )


def _freed_leaves(events: list[dict[str, Any]], gone: set[str]) -> dict[str, Any]:
    """The leaves of `gone` (AccumulateGrad nodes' leaves, not alive at the end), each
    with its value and `.grad` as the run's last events left them (None where none did):
    the value an op made or wrote (into it or through memory it shares), or an
    optimizer's step or `.data =` set; the `.grad` an accumulate, a reset, an assignment
    or an in-place op on the grad itself left. A function's `w` read its first value and
    last accumulated grad at the end though the optimizer had moved it and `zero_grad()`
    dropped the grad."""
    if not gone:
        return {}
    # In the order the run met them (a set's order put a function's model's weights in
    # the picture's column as blocks.0.ln1.bias, head.bias, blocks.1.attn…).
    found: dict[str, list[Any]] = {
        tid: [None, None]
        for tid in sorted(gone, key=lambda t: int(t[1:]) if t[1:].isdigit() else 0)
    }
    grads: dict[str, str] = {}  # a leaf's grad tensor's id -> the leaf
    for e in events:
        kind = e["kind"]
        if kind == "op":
            for tid, leaf in (e.get("grad_of") or {}).items():
                if leaf in found:
                    grads[tid] = leaf
            for tid, value in zip(e["outputs"], e["values"], strict=False):
                if tid in found:
                    found[tid][0] = value
                elif tid in grads and e.get("inplace"):  # `w.grad.clamp_(-1, 1)`
                    found[grads[tid]][1] = value
            for key in ("written", "updated"):
                for tid, value in (e.get(key) or {}).items():
                    if tid in found:
                        found[tid][0] = value
        elif kind == "param_update" and e.get("tensor") in found:
            found[e["tensor"]][0] = e.get("after")
            for tid, value in (e.get("written") or {}).items():
                if tid in found:
                    found[tid][0] = value
        elif kind in ("accumulate", "grad_reset", "grad_assign") and e.get("tensor") in found:
            found[e["tensor"]][1] = e.get("after")
    return {tid: tuple(pair) for tid, pair in found.items()}


def _never_touched_empties(events: list[dict[str, Any]]) -> set[str]:
    """Outputs of `empty`-like ops that no later event names: nothing wrote them, not
    even through a view (a view op names them as its input), so their memory was never set."""
    made: set[str] = set()
    for e in events:
        if made:
            for key in _EVENT_TENSOR_KEYS:
                made.difference_update(e.get(key) or ())
            made.difference_update(e.get(key) for key in _EVENT_TENSOR_KEY)
        if e.get("uninitialised") and e.get("kind") == "op":
            made.update(e["outputs"])
    return made


def capture_graph(
    namespace: Mapping[str, Any],
    trace: Trace | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    registry: Registry | None = None,
    earlier: EarlierTensors | None = None,
) -> Trace:
    """Fill `trace` with the user's named tensors, every live leaf of the graph and every
    live autograd tensor the events mention, and every node registered during the run.

    With `earlier` (a kept namespace), a named tensor from before the run is left out
    unless the run touched it."""
    trace = trace if trace is not None else Trace()
    registry = registry if registry is not None else Registry(max_nodes)
    referenced = _referenced(trace.events)
    touched: set[int] = set()
    if earlier is not None:  # by object: an untouched tensor must not even get an id
        touched = {id(t) for tid, t in registry.live_tensors() if tid in referenced}
    names: dict[str, str] = {}
    aliases: dict[str, list[str]] = {}
    objects: dict[str, torch.Tensor] = {}
    # Earlier tensors the run left alone: not listed, but named if this run's graph reaches them.
    untouched: dict[int, list[str]] = {}
    for name, t in namespace_roots(namespace):
        if earlier is not None and t in earlier and id(t) not in touched:
            untouched.setdefault(id(t), []).append(name)
            continue
        tid = registry.tensor_id(t)
        if names.setdefault(tid, name) != name:
            aliases.setdefault(tid, []).append(name)
        objects[tid] = t
        registry.node_id(grad_fn_of(t))  # registers the graph behind it
    buffers: set[str] = set()
    for name, t in namespace_buffers(namespace):
        tid = registry.known_id(t)  # only one the run used: the others get no id
        if tid is None or tid not in referenced:
            continue
        if tid not in names:
            names[tid], objects[tid] = name, t
            buffers.add(tid)
        elif names[tid] != name and name not in aliases.get(tid, ()):
            # Bound to a variable too (`s = m.stat`): named by its path, as a parameter
            # is, the variable an alias (captions said `s` on lines before `s` existed).
            aliases.setdefault(tid, []).insert(0, names[tid])
            names[tid] = name
    # Then what the run made and left in an object's attribute, or in a list, tuple or dict
    # of the user's, unnamed else (captions said `returned t16 = …` for `v =
    # torch.autograd.grad(…)`, and `zeros(…)#2.grad` for a hand-written model's `model.b`).
    for name, t in namespace_attributes(namespace) + namespace_containers(namespace):
        tid = registry.known_id(t)
        if tid is not None and tid in referenced and tid not in names:
            names[tid], objects[tid] = name, t
    live = dict(registry.live_tensors())
    wanted = list(names)
    wanted += [n.variable for n in registry.nodes.values() if n.variable in live]
    wanted += [
        tid
        for tid, t in live.items()
        if tid in referenced and (t.requires_grad or grad_fn_of(t) is not None)
    ]
    infos: dict[str, TensorInfo] = {}
    values = TensorValues()
    for tid in wanted:
        if tid in infos or len(infos) >= MAX_TENSORS:
            continue
        t = objects.get(tid, live.get(tid))
        if t is not None:
            named = [names[tid], *aliases.get(tid, [])] if tid in names else untouched.get(id(t))
            infos[tid] = _tensor_info(tid, t, named[0] if named else None, registry, values)
            infos[tid].aliases = named[1:] if named else []
            infos[tid].buffer = tid in buffers
    for tid, value in _fed_constants(trace.events, registry.constants.keys() - infos).items():
        if len(infos) >= MAX_TENSORS:
            break
        t = live.get(tid)
        if t is not None:  # alive, unnamed: as it is now
            infos[tid] = _tensor_info(tid, t, None, registry, values)
            continue
        shape, dtype, device, made = registry.constants[tid]
        value = value if value is not None else made
        infos[tid] = _freed(tid, (shape, dtype, device), False, value, None)
    for tid, (value, grad) in _freed_leaves(trace.events, registry.leaves.keys() - infos).items():
        if len(infos) >= MAX_TENSORS:
            break
        infos[tid] = _freed(tid, registry.leaves[tid], True, value, grad)
    for tid, path in registry.local_paths.items():  # a function's model's `model.weight`
        info = infos.get(tid)
        if info is not None and info.name is None:
            info.name = path
    _grads_bound(infos, objects, referenced, live)
    values.finish()
    for tid in (_never_touched_empties(trace.events) - registry.written_empties) & infos.keys():
        infos[tid].value, infos[tid].uninitialised = None, True
    trace.tensors = list(infos.values())
    trace.nodes = list(registry.nodes.values())
    # A node no op event listed an output for (a custom Function's, a create_graph
    # gradient's) still names the live tensor it produced.
    for info in trace.tensors:
        node = registry.nodes.get(info.grad_fn) if info.grad_fn else None
        if node is not None and node.tensor is None and info.output_nr == 0:
            node.tensor = info.id
    if registry.leaf_hooks:  # a leaf's hooks: on the AccumulateGrad node that got its grads
        for node in trace.nodes:
            node.hooks += registry.leaf_hooks.get(node.variable or "", [])
    if registry.nodes_capped:
        trace.truncated = True
        trace.notes.append(
            f"The graph has more than {max_nodes:,} nodes; nodes past the first "
            f"{registry.max_nodes:,} have no id and are not drawn."
        )
    return trace
