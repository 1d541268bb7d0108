"""Capture: record what torch really does, with torch's own hooks.

`Tracer` wraps the execution of user code. Forward ops come from a TorchFunctionMode,
backward steps from hooks on the autograd graph's nodes, module and optimizer context
from torch's global module and optimizer hooks. Every hook is removed when the tracer
exits; nothing in torch is patched.
"""

from autograd_viz.core.capture._registry import Registry, grad_fn_of, is_leaf
from autograd_viz.core.capture._tracer import DEFAULT_MAX_EVENTS, Tracer

__all__ = ["DEFAULT_MAX_EVENTS", "Registry", "Tracer", "grad_fn_of", "is_leaf"]
