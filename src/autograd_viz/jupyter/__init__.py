"""autograd-viz in a Jupyter notebook: `%load_ext autograd_viz`, then `%%autograd_viz` at the
top of a cell runs it under the tracer and shows its graph inline; `%autograd_viz open`
starts the app attached to the notebook's kernel, where each traced cell is drawn too.

The magics need IPython, which only a kernel has: they are imported when the extension
loads, never by the app.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext autograd_viz`: register `%%autograd_viz` and `%autograd_viz open`."""
    from autograd_viz.jupyter._magic import AutogradVizMagics

    ipython.register_magics(AutogradVizMagics)
