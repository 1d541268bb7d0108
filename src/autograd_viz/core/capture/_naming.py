"""What the Python stack says about an op: the variable its result is bound to, and
whether it ran while an `nn.Module` was being built.

Both are read off frames, not off torch: a result's name is the store instruction that
follows the call in the user's bytecode (`out = a * b` stores into `out` right after the
multiply), and a module's construction is an `__init__` / `reset_parameters` frame of an
`nn.Module` on the stack.
"""

from __future__ import annotations

import bisect
import copy
import dis
import itertools
import os
import sys
from types import CodeType, FrameType
from typing import Any

import torch

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
# The files torch's own dispatch runs through between a user's call and the mode: an op
# reached through any other torch file (a module's forward, nn.init) was not called by
# the user's line directly, so that line's assignment is not its result's.
_DISPATCH_FILES = frozenset(
    _TORCH_DIR + f
    for f in ("overrides.py", "_tensor.py", "functional.py", os.path.join("nn", "functional.py"))
)
_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"})
# A module is being built in these frames: its `__init__`, its parameters' initialisation
# (a lazy module's on its first call), and `copy.deepcopy` of a module (a new module).
_BUILDING = frozenset(
    {"__init__", "reset_parameters", "_reset_parameters", "_infer_parameters", "deepcopy"}
)
_COPY_FILE = copy.__file__

# Per code object: call offset -> the name the next instruction stores into.
_stores_after: dict[CodeType, dict[int, str]] = {}
_returns_after: dict[CodeType, frozenset[int]] = {}  # offsets a `return` follows
_sums: dict[CodeType, frozenset[int]] = {}  # offsets of calls of the builtin `sum`
_starts: dict[CodeType, list[int]] = {}  # each instruction's offset, caches left out
_listed_instructions: dict[CodeType, list[dis.Instruction]] = {}  # per code object
_TUPLE_NAMES = 64  # `grads = torch.autograd.grad(loss, params)`: grads[0] … grads[63]
_MAX_RETURNS = 6  # user functions a result may be returned through and still be named
# nn.Module.__call__'s frames between a `forward` that returns its last op and the line
# that called the module (`out = model(x)`).
_MODULE_CALLS = frozenset({"_call_impl", "_wrapped_call_impl", "inner"})
_MODULE_FILE = os.path.join(_TORCH_DIR + "nn", "modules", "module.py")
_SEQUENTIAL_FORWARD = torch.nn.Sequential.forward.__code__


def _stores(code: CodeType) -> dict[int, str]:
    table = _stores_after.get(code)
    if table is None:
        table = {}
        instructions = list(dis.get_instructions(code))
        for here, after in itertools.pairwise(instructions):
            if after.opname in _STORES and isinstance(after.argval, str):
                table[here.offset] = after.argval
        table.update(_unpacked(instructions))
        if len(_stores_after) > 10_000:  # a script that makes code objects in a loop
            _stores_after.clear()
        _stores_after[code] = table
    return table


def _unpacked(instructions: list[dis.Instruction]) -> dict[int, str]:
    """The names a tuple assignment binds, by the offset of the instruction that made
    each value: `xb, yb = X[i], Y[i]` stores X[i] in xb (for 2 or 3 values CPython swaps
    them, `SWAP k`; for more it builds a tuple and unpacks it)."""
    depth, after = 0, []  # the stack's depth after each instruction, straight-line
    for ins in instructions:
        try:
            depth += dis.stack_effect(ins.opcode, ins.arg, jump=False)
        except ValueError:  # no stack effect (an opcode this Python does not list)
            return {}
        after.append(depth)
    table: dict[int, str] = {}
    for p, ins in enumerate(instructions):
        if ins.opname == "SWAP" and ins.arg in (2, 3):
            k, first = ins.arg, p + 1
        elif (
            ins.opname == "BUILD_TUPLE"
            and p + 1 < len(instructions)
            and instructions[p + 1].opname == "UNPACK_SEQUENCE"
            and instructions[p + 1].arg == ins.arg
        ):
            k, first = ins.arg, p + 2
        else:
            continue
        stores = instructions[first : first + k]
        if len(stores) < k or any(
            s.opname not in _STORES or not isinstance(s.argval, str) for s in stores
        ):
            continue
        base = after[p - 1] - k if p else -1
        # The value at level base + j was made by the last instruction that left the
        # stack that deep (nothing after it went lower: it would have used the value).
        i = p - 1
        for j in range(k, 0, -1):
            while i >= 0 and after[i] != base + j and after[i] > base:
                if instructions[i].opname.startswith(("JUMP", "POP_JUMP", "FOR_ITER")):
                    i = -1  # a branch inside the statement: depths are not straight
                    break
                i -= 1
            if i < 0 or after[i] != base + j:
                break
            table[instructions[i].offset] = stores[j - 1].argval
            i -= 1
    return table


def assigned_name(frame: FrameType | None, filename: str) -> str | None:
    """The variable the user's line binds this op's result to (`out = a * b` → "out"),
    or None when the op was not called by the user's line itself or its result is not
    stored straight into a name.

    A result the user's function returns (`return F.mse_loss(pred, y)`, a `forward`'s
    last op) is named by the line that called the function (`loss = loss_of(out, y)`,
    `out = model(x)`, through `nn.Module.__call__`): in a loop every pass's result gets
    the name, not the last pass's alone."""
    for _ in range(_MAX_RETURNS):
        while frame is not None and frame.f_code.co_filename in _DISPATCH_FILES:
            frame = frame.f_back
        if frame is None:
            return None
        if frame.f_code.co_filename != filename:
            # Torch's own code that returns the op's result as it is (`nn.Linear.forward`'s
            # `return F.linear(…)`, `Normal.rsample`'s `return loc + eps * scale`): what
            # the caller binds it to. `pred = model(x)` in a loop was named on its last
            # pass only, from the namespace at the end.
            frame = _returned_by_torch(frame)
            continue
        code, here = frame.f_code, frame.f_lasti
        stores = _stores(code)
        name = stores.get(here)
        if name is None:  # paused in a Python call (`F.relu`), it stands on its caches
            here = _instruction_at(code, here)
            name = stores.get(here)
        if name is not None and here in _summing_calls(code):
            return None  # `penalty = sum([a, b, c])`: a partial sum, not what it stores
        if name is not None or here not in _returns(code):
            return name
        frame = _caller_of_return(frame)  # `return <the op>`: what the caller binds it to
    return None


def iterated_name(frame: FrameType | None, filename: str) -> str | None:
    """The variable a `for` statement binds this op's results to in turn, when the op
    made what the loop walks (`for row in X:` runs `unbind`, `for xb in X.split(32):` runs
    `split`); else None. Each pass's `row` read `unbind(…)` but the last's."""
    while frame is not None and frame.f_code.co_filename in _DISPATCH_FILES:
        frame = frame.f_back
    if frame is None or frame.f_code.co_filename != filename:
        return None
    after = _instructions_after(frame.f_code, _instruction_at(frame.f_code, frame.f_lasti))
    if after and after[0].opname == "GET_ITER":  # `X.split(32)` made the pieces: next the
        after = after[1:]  # loop asks them for an iterator, which `for row in X` just did
    if len(after) < 2 or after[0].opname != "FOR_ITER" or after[1].opname not in _STORES:
        return None
    target = after[1].argval
    return target if isinstance(target, str) else None


def _returned_by_torch(frame: FrameType) -> FrameType | None:
    """For a frame of torch's own (outside nn.Module's call machinery) paused on a call
    whose result it returns straight away, the frame it returns to; else None. An
    `nn.Sequential` returns what its last module returned (`pred = net(x)`)."""
    code = frame.f_code
    if not code.co_filename.startswith(_TORCH_DIR) or code.co_filename == _MODULE_FILE:
        return None
    if _instruction_at(code, frame.f_lasti) not in _returns(code) and not _last_in_sequence(frame):
        return None
    return _caller_of_return(frame)


def _last_in_sequence(frame: FrameType) -> bool:
    """Whether `frame` is `nn.Sequential.forward` calling its last module, whose result
    it stores and then returns (`for module in self: input = module(input)`)."""
    if frame.f_code is not _SEQUENTIAL_FORWARD:
        return False
    here = frame.f_locals
    sequence, module = here.get("self"), here.get("module")
    return module is not None and len(sequence) > 0 and sequence[-1] is module


def _caller_of_return(frame: FrameType) -> FrameType | None:
    """The frame a `return` in `frame` hands its value to, through nn.Module.__call__."""
    caller = frame.f_back
    while caller is not None and caller.f_code.co_filename == _MODULE_FILE:
        if caller.f_code.co_name not in _MODULE_CALLS:
            return None
        caller = caller.f_back
    return caller


def _summing_calls(code: CodeType) -> frozenset[int]:
    """The offsets of the calls of the builtin `sum` (a name loaded as a global, not a
    method): the tensor additions it makes inside are partial sums (`sum([a, b, c])`
    runs a + b, then + c), which the line's variable never holds."""
    found = _sums.get(code)
    if found is None:
        instructions = list(dis.get_instructions(code))
        found = frozenset(
            ins.offset
            for p, ins in enumerate(instructions)
            if ins.opname.startswith("CALL")
            and (callee := _callee(instructions, p)) is not None
            and callee.opname in ("LOAD_GLOBAL", "LOAD_NAME")
            and callee.argval == "sum"
        )
        if len(_sums) > 10_000:
            _sums.clear()
        _sums[code] = found
    return found


def _callee(instructions: list[dis.Instruction], p: int) -> dis.Instruction | None:
    """The instruction that loaded what the call at `p` calls: the last one before it to
    leave the stack as deep as it stands under the call's arguments (straight-line code;
    None where a branch or an unknown opcode is in the way)."""
    call = instructions[p]
    if not isinstance(call.arg, int):
        return None
    while p and instructions[p - 1].opname in ("PRECALL", "KW_NAMES"):
        p -= 1  # (3.11) PRECALL's stack effect already counts the call's
    depth, after = 0, []
    for ins in instructions[:p]:
        try:
            depth += dis.stack_effect(ins.opcode, ins.arg, jump=False)
        except ValueError:
            return None
        after.append(depth)
    if not after:
        return None
    level = after[-1] - call.arg  # the callable, under its `arg` arguments
    for i in range(p - 1, -1, -1):
        ins = instructions[i]
        if ins.opname.startswith(("JUMP", "POP_JUMP", "FOR_ITER")):
            return None
        if after[i] == level:
            return ins
        if after[i] < level:
            return None
    return None


def _instruction_at(code: CodeType, offset: int) -> int:
    """The start of the instruction `offset` falls in: a frame paused in a call to a
    Python function reports the last of the call's inline cache entries (CPython 3.11+),
    one paused in a C function the call itself."""
    starts = _starts.get(code)
    if starts is None:
        starts = _starts[code] = [ins.offset for ins in dis.get_instructions(code)]
        if len(_starts) > 10_000:
            _starts.clear()
    i = bisect.bisect_right(starts, offset) - 1
    return starts[i] if i >= 0 else offset


def _returns(code: CodeType) -> frozenset[int]:
    """The offsets of the instructions a `return` hands on straight away."""
    found = _returns_after.get(code)
    if found is None:
        instructions = list(dis.get_instructions(code))
        found = frozenset(
            here.offset
            for here, after in itertools.pairwise(instructions)
            if after.opname == "RETURN_VALUE"
        )
        if len(_returns_after) > 10_000:
            _returns_after.clear()
        _returns_after[code] = found
    return found


def local_names(frame: FrameType | None, filename: str, tensors: dict[str, Any]) -> dict[str, str]:
    """The user's local variables holding these tensors (id -> tensor) in the frame that
    called the op, id -> variable: `g` for the gradient a custom backward or a hook was
    handed (`return g * b`), which no event had named; `grad_output[0]` for one held in
    a local tuple or list (a module backward hook's)."""
    while frame is not None and frame.f_code.co_filename in _DISPATCH_FILES:
        frame = frame.f_back
    if frame is None or frame.f_code.co_filename != filename:
        return {}
    found: dict[str, str] = {}
    for name, value in frame.f_locals.items():
        if name.startswith("_"):
            continue
        if isinstance(value, (tuple, list)) and len(value) <= _TUPLE_NAMES:
            # A hook's `grad_output` tuple: `grad_output[0] * 10` read `mul(t9)`.
            held = [(f"{name}[{i}]", item) for i, item in enumerate(value)]
        elif isinstance(value, dict) and len(value) <= _TUPLE_NAMES:  # a state_dict too
            # `sd = teacher.state_dict()`: `0.5 * sd['weight']` read `mul(t10)`.
            held = [(f"{name}[{k!r}]", item) for k, item in value.items() if isinstance(k, str)]
        else:
            held = [(name, value)]
        for label, item in held:
            for tid, t in tensors.items():
                if item is t and tid not in found:
                    found[tid] = label
    return found


def building_statement(
    frame: FrameType | None, filename: str, base: FrameType | None = None
) -> int | None:
    """The user's line that is constructing an `nn.Module` on this stack (its `__init__`,
    the `reset_parameters` that initialises its parameters, or a `copy.deepcopy` of a
    module is running), or None.

    The line is the statement outside the outermost such frame: `net = Net()`, not the
    `self.w = nn.Parameter(…)` inside `Net.__init__`, so one statement's ops fold together.
    The search stops at `base`, the frame that started the run: below it is the kernel's
    own stack (24 frames of ipykernel and asyncio, measured: walked for every op otherwise).
    """
    outermost: FrameType | None = None
    while frame is not None and frame is not base:
        name = frame.f_code.co_name
        if name in _BUILDING:
            if name != "deepcopy":
                owner = frame.f_locals.get("self")
            elif frame.f_code.co_filename == _COPY_FILE:  # `m2 = copy.deepcopy(m)`
                owner = frame.f_locals.get("x")
            else:
                owner = None
            if isinstance(owner, torch.nn.Module):
                outermost = frame
        frame = frame.f_back
    if outermost is None:
        return None
    caller = outermost.f_back
    while caller is not None and caller.f_code.co_filename != filename:
        caller = caller.f_back
    line = (caller or outermost).f_lineno
    return line if line is not None else 0


# Between a user's `torch.autograd.grad(...)` and the recorder: torch's own wrapper and its
# dispatch to the mode, then this package's files.
_GRAD_CALL_FILES = frozenset(
    {os.path.join(_TORCH_DIR + "autograd", "__init__.py"), _TORCH_DIR + "overrides.py"}
)
_OWN_DIR = os.path.dirname(os.path.dirname(__file__)) + os.sep  # autograd_viz/core/


def grad_results_bound(filename: str) -> dict[int, str]:
    """The names the user's line binds `torch.autograd.grad()`'s results to, by index:
    `g, = grad(y, x)` → {0: "g"}; `gx, gw = grad(loss, [x, w])` → both; `g = grad(y,
    x)[0]` → {0: "g"}; `grads = grad(loss, params)` → {i: "grads[i]"} for up to
    `_TUPLE_NAMES` results; through a user's function that returns them straight away,
    what its caller binds them to. Empty when the call was not made by the user's line
    itself (`torch.autograd.functional.vjp`'s own) or its results are not stored in names."""
    frame = _caller_outside(_GRAD_CALL_FILES)
    for _ in range(_MAX_RETURNS):
        if frame is None or frame.f_code.co_filename != filename:
            return {}
        after = _instructions_after(frame.f_code, _instruction_at(frame.f_code, frame.f_lasti))
        if not after or after[0].opname != "RETURN_VALUE":
            return _bound(after)
        frame = frame.f_back  # `return torch.autograd.grad(…)`: what the caller binds
    return {}


def _instructions_after(code: CodeType, offset: int) -> list[dis.Instruction]:
    """The instructions after the one at `offset`, as many as a binding may take."""
    instructions = _listed_instructions.get(code)
    if instructions is None:
        if len(_listed_instructions) > 1_000:
            _listed_instructions.clear()
        instructions = _listed_instructions[code] = list(dis.get_instructions(code))
    at = next((i for i, ins in enumerate(instructions) if ins.offset == offset), None)
    return [] if at is None else instructions[at + 1 : at + 2 + _TUPLE_NAMES]


def _bound(after: list[dis.Instruction]) -> dict[int, str]:
    """What the instructions after a call bind its tuple result's items to."""
    first = after[0] if after else None
    if first is None:
        return {}
    if first.opname == "UNPACK_SEQUENCE":
        stores = after[1 : 1 + first.arg]
        return {i: s.argval for i, s in enumerate(stores) if s.opname in _STORES}
    if first.opname in _STORES:
        return {i: f"{first.argval}[{i}]" for i in range(_TUPLE_NAMES)}
    if (
        first.opname == "LOAD_CONST"
        and type(first.argval) is int
        and len(after) > 2
        and after[1].opname == "BINARY_SUBSCR"
        and after[2].opname in _STORES
    ):
        return {first.argval: after[2].argval}
    return {}


def torch_building_a_module(filename: str) -> bool:
    """Whether the call being recorded was made by torch's own code while an `nn.Module`
    is being built (`nn.TransformerEncoder` deep-copying its layer reads each parameter's
    `.data`), not by the user's line."""
    frame = _caller_outside(_DISPATCH_FILES)
    if frame is None or not frame.f_code.co_filename.startswith(_TORCH_DIR):
        return False
    return building_statement(frame, filename) is not None


def _caller_outside(files: frozenset[str]) -> FrameType | None:
    """The innermost frame on the stack in neither this package nor `files` (torch's
    dispatch to the mode): whose call is being recorded."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and (
        frame.f_code.co_filename.startswith(_OWN_DIR) or frame.f_code.co_filename in files
    ):
        frame = frame.f_back
    return frame
