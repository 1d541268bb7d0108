"""`nn.Parameter(t)` makes a new tensor on `t`'s memory, and no TorchFunctionMode sees it:
a parameter the user made (`w = nn.Parameter(torch.randn(3))`, or `self.w = …` in their
own module's `__init__`) had no value in the replay until its first use. While the user's
code runs, a wrapper around `Parameter.__new__` hands such a call to the tracer's dispatch
as an op, `Parameter(randn(…)) → w`, and so are the copies torch's `__deepcopy__` makes
while a module is being built (see `_copied`). Other parameters made inside torch
(`nn.Linear`'s, `module.to()`'s) pass straight through: their modules' own ops say what
they hold."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch

from autograd_viz.core.capture._guards import unseen
from autograd_viz.core.capture._naming import building_statement
from autograd_viz.core.capture._recording import Recording

_NEW = torch.nn.Parameter.__dict__["__new__"]  # a staticmethod
_PARAMETER_FILE = inspect.getsourcefile(torch.nn.parameter)


class ParameterRecording:
    """Puts the wrapper on `nn.Parameter` (`install`) and takes it off (`remove`)."""

    def __init__(self, recording: Recording, dispatch: Callable[[Any, tuple, dict], Any]) -> None:
        self.recording, self.dispatch = recording, dispatch

    def install(self) -> None:
        """Record the user's `nn.Parameter(…)` calls from now on."""
        torch.nn.Parameter.__new__ = staticmethod(self._wrapper())

    def remove(self) -> None:
        """Give `nn.Parameter` its own `__new__` back."""
        torch.nn.Parameter.__new__ = _NEW

    def _wrapper(self) -> Callable[..., Any]:
        recording, dispatch, new = self.recording, self.dispatch, _NEW.__func__

        def __new__(cls: type, data: Any = None, requires_grad: bool = True) -> Any:
            caller = sys._getframe(1)
            if (
                recording.quiet
                or recording.ended
                or not isinstance(data, torch.Tensor)
                or not (caller.f_code.co_filename == recording.filename or _copied(caller))
            ):
                return new(cls, data, requires_grad)

            def Parameter(t: torch.Tensor) -> Any:
                return new(cls, t, requires_grad)

            with unseen():  # as inside __torch_function__: the recorder's reads unseen
                return dispatch(Parameter, (data,), {})

        return __new__


def _copied(caller: FrameType) -> bool:
    """Whether torch's `Parameter.__deepcopy__` makes this parameter while an `nn.Module`
    is being built: `nn.TransformerEncoder(layer, 6)` copies its layer's, and the step
    that builds the model listed 5 of its 29 parameters. (`nn.Linear`'s own
    `Parameter(torch.empty(…))` is not recorded: its numbers are garbage until the init
    ops after it, which the step shows.)"""
    return (
        caller.f_code.co_name == "__deepcopy__"
        and caller.f_code.co_filename == _PARAMETER_FILE
        and building_statement(caller, "") is not None
    )
