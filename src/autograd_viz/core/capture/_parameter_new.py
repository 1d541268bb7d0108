"""`nn.Parameter(t)` makes a new tensor on `t`'s memory, and no TorchFunctionMode sees it:
a parameter the user made (`w = nn.Parameter(torch.randn(3))`, or `self.w = …` in their
own module's `__init__`) had no value in the replay until its first use. While the user's
code runs, a wrapper around `Parameter.__new__` hands such a call to the tracer's dispatch
as an op, `Parameter(randn(…)) → w`. Parameters made inside torch (`nn.Linear`'s, a
`deepcopy`'s, `module.to()`'s) pass straight through: their modules' own ops say what
they hold."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch

from autograd_viz.core.capture._guards import unseen
from autograd_viz.core.capture._recording import Recording

_NEW = torch.nn.Parameter.__dict__["__new__"]  # a staticmethod


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
            caller = sys._getframe(1).f_code.co_filename
            if (
                recording.quiet
                or recording.ended
                or caller != recording.filename
                or not isinstance(data, torch.Tensor)
            ):
                return new(cls, data, requires_grad)

            def Parameter(t: torch.Tensor) -> Any:
                return new(cls, t, requires_grad)

            with unseen():  # as inside __torch_function__: the recorder's reads unseen
                return dispatch(Parameter, (data,), {})

        return __new__
