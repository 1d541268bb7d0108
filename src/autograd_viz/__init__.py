"""autograd_viz: watch PyTorch's autograd build and walk the computation graph."""

__version__ = "0.1.0"
