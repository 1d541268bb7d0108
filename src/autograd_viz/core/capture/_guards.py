"""Guards for the recorder's own reads of tensors: no code of the user's may see them.

Hooks run with the mode on, and a user's tensor subclass (`__torch_function__`) or
TorchDispatchMode (a FLOP counter, a logger, make_fx's tracer) sees every call made while
it is active: our `t.shape`, `t.clone()`, slab copies would show up in their counts, or
be traced into their graphs. Our reads go below all of them.
"""

from __future__ import annotations

from typing import Any

import torch

_torch_functions_off = torch._C.DisableTorchFunction
_dispatch_modes = torch._C._len_torch_dispatch_stack
_dispatch_off = torch._C._DisableTorchDispatch
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)  # no __torch_function__ of the user's


def unseen() -> Any:
    """A guard for the recorder's own reads of tensors: no user TorchFunctionMode or
    subclass `__torch_function__`, no user TorchDispatchMode sees them."""
    return _Unseen() if _dispatch_modes() else _torch_functions_off()


def plain(result: Any) -> bool:
    """Whether reading `result` can reach no code of the user's: a plain tensor (or
    none), and no TorchDispatchMode active. The common case skips the guard's cost."""
    if _dispatch_modes():
        return False
    if type(result) in _PLAIN_TYPES or result is None:
        return True
    if isinstance(result, (tuple, list)):
        return all(type(t) in _PLAIN_TYPES or not isinstance(t, torch.Tensor) for t in result)
    return not isinstance(result, torch.Tensor)


class _Unseen:
    __slots__ = ("_guards",)

    def __enter__(self) -> None:
        function = _torch_functions_off()
        dispatch = _dispatch_off()
        function.__enter__()
        dispatch.__enter__()
        self._guards = (dispatch, function)

    def __exit__(self, *exc: Any) -> None:
        for guard in self._guards:
            guard.__exit__(*exc)
