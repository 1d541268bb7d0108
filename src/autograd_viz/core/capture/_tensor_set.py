"""`Tensor.set_` swaps a tensor's memory for another's, and no TorchFunctionMode sees it
(torch leaves it out of `__torch_function__`): while the user's code runs, a wrapper hands
it to the tracer's dispatch like any in-place op, or the replay kept showing the old value.
Calls from inside torch's own package pass straight through when the tensor is one the run
has not met (torch.load's rebuild of a new tensor); on one it has, they are recorded:
`nn.utils.parametrize` writes a parametrization's `original` so, and the replay kept
showing its value from before."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import torch

from autograd_viz.core.capture._guards import unseen
from autograd_viz.core.capture._recording import Recording

_TENSOR_SET = torch.Tensor.set_
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


class TensorSetRecording:
    """Puts the wrapper on `torch.Tensor` (`install`) and takes it off (`remove`)."""

    def __init__(self, recording: Recording, dispatch: Callable[[Any, tuple, dict], Any]) -> None:
        self.recording, self.dispatch = recording, dispatch
        self._before: Any = None  # torch.Tensor's own `set_` entry, if it had one

    def install(self) -> None:
        """Record `set_` calls from now on."""
        self._before = torch.Tensor.__dict__.get("set_")
        torch.Tensor.set_ = self._wrapper()

    def remove(self) -> None:
        """Give torch.Tensor its `set_` back as it was."""
        if self._before is None:
            del torch.Tensor.set_
        else:
            torch.Tensor.set_ = self._before

    def _wrapper(self) -> Any:
        recording, dispatch = self.recording, self.dispatch

        def set_(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename
            if (
                recording.quiet
                or recording.ended
                or (caller.startswith(_TORCH_DIR) and recording.registry.known_id(self) is None)
            ):
                return _TENSOR_SET(self, *args, **kwargs)
            with unseen():  # as inside __torch_function__: the recorder's reads unseen
                return dispatch(_TENSOR_SET, (self, *args), kwargs)

        set_.__name__ = "set_"
        set_.__doc__ = _TENSOR_SET.__doc__
        return set_
