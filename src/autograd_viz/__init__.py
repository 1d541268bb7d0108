"""autograd_viz: watch PyTorch's autograd build and walk the computation graph."""

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """`%load_ext autograd_viz`: register `%%autograd_viz` and `%autograd_viz open`."""
    from autograd_viz.core.kernel.notebook_magic import AutogradVizMagics

    ipython.register_magics(AutogradVizMagics)
