"""The seam to the kernel process: jupyter_client messages re-emitted as Qt signals; each
run or call answered on its own KernelCall."""

from autograd_viz.session._call import KernelCall
from autograd_viz.session._kernel import INTERRUPT_GRACE_MS, KernelSession, KernelState

__all__ = ["INTERRUPT_GRACE_MS", "KernelCall", "KernelSession", "KernelState"]
