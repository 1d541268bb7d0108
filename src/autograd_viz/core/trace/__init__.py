"""The trace: what a run did, as plain data (its JSON schema is docs/trace.md).

The model (`Trace`, `TensorInfo`, `NodeInfo`, `TensorValue`) and its JSON helpers have no
torch in them; `values` turns real tensors into `TensorValue`s and needs torch.
"""

from autograd_viz.core.trace._json import json_number, json_safe
from autograd_viz.core.trace._model import (
    TRACE_MIME,
    TRACE_VERSION,
    NodeInfo,
    TensorInfo,
    TensorValue,
    Trace,
)

__all__ = [
    "TRACE_MIME",
    "TRACE_VERSION",
    "NodeInfo",
    "TensorInfo",
    "TensorValue",
    "Trace",
    "json_number",
    "json_safe",
]
