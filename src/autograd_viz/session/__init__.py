"""The seam to the kernel process: jupyter_client messages re-emitted as Qt signals."""

from autograd_viz.session._kernel import KernelSession, KernelState

__all__ = ["KernelSession", "KernelState"]
