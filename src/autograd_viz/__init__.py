"""autograd_viz: watch PyTorch's autograd build and walk the computation graph."""

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """`%load_ext autograd_viz`: the notebook magics (autograd_viz.jupyter)."""
    from autograd_viz.jupyter import load_ipython_extension as load

    load(ipython)
