"""torch's process-wide settings that a script can leave changed, and putting them back.

A kernel runs many programs one after another in one process. `python FILE` starts each
with torch's defaults; here a script's `torch.set_grad_enabled(False)` at top level, an
`inference_mode()` or `no_grad()` it entered and never left, `torch.set_default_device`,
`torch.set_default_dtype` or `set_detect_anomaly(True)` would carry into the next run and
break it with no hint. `TorchDefaults.restore()` puts each back before every run. The RNG
is left alone: seeding is the script's own business, as it is under `python FILE`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch._C import _len_torch_function_stack
from torch.overrides import _pop_mode

# Guards that turned a leaked inference mode off (see restore). A guard puts back the state
# it found when it is destroyed, so each is kept for the life of the kernel: tiny, and at
# most one per run that leaked an inference mode it still holds.
_INFERENCE_OFF: list[object] = []


def default_device_set() -> torch.device | None:
    """The device `torch.set_default_device` made the default, None when none is set.

    torch.get_default_device() says "cpu" both when nothing is set and when cpu was set;
    only the latter routes every torch call through a mode (3-4x slower on small ops).
    """
    context = getattr(torch._GLOBAL_DEVICE_CONTEXT, "device_context", None)
    return None if context is None else context.device


@dataclass(frozen=True)
class TorchDefaults:
    """The settings every run starts from: those of the kernel when it was set up."""

    device: torch.device | None = None  # set with set_default_device; None: none set
    dtype: torch.dtype = torch.float32
    function_modes: int = 0  # torch function modes on the stack (a device context is one)

    @classmethod
    def now(cls) -> TorchDefaults:
        """The settings as they are now (taken once, when the kernel is set up)."""
        return cls(default_device_set(), torch.get_default_dtype(), _len_torch_function_stack())

    def restore(self) -> list[str]:
        """Put back grad mode (on), inference mode (off), the default device and dtype,
        anomaly detection (off) and the torch function mode stack; say what was changed."""
        changed: list[str] = []
        if torch.is_inference_mode_enabled():
            # Only a live guard object keeps inference mode on (the script still holds its
            # `inference_mode()`); a guard of our own switches it off without touching theirs.
            _INFERENCE_OFF.append(torch._C._InferenceMode(False))
            changed.append("inference mode")
        if not torch.is_grad_enabled():
            torch.set_grad_enabled(True)
            changed.append("grad mode")
        if default_device_set() != self.device:
            try:
                torch.set_default_device(self.device)
            except AssertionError:  # the script also left a `with torch.device(...)` open
                torch._GLOBAL_DEVICE_CONTEXT.device_context = None
                torch.utils._device.CURRENT_DEVICE = None
                torch.set_default_device(self.device)
            changed.append("default device")
        # A `torch.device("meta").__enter__()` (or any mode entered and never left) stays on
        # the stack and routes every later torch call through it.
        extra = _len_torch_function_stack() - self.function_modes
        for _ in range(max(0, extra)):
            _pop_mode()
        if extra > 0:
            changed.append("torch function modes")
        if torch.get_default_dtype() != self.dtype:
            torch.set_default_dtype(self.dtype)
            changed.append("default dtype")
        if torch.is_anomaly_enabled() or not torch.is_anomaly_check_nan_enabled():
            torch.autograd.set_detect_anomaly(False)
            changed.append("anomaly detection")
        return changed
