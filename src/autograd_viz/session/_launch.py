"""How the app launches a kernel of its own: this very interpreter (or the bundle itself)
runs ipykernel, with our package importable whatever the working directory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

from autograd_viz.core.platform.process_tree import RUN_MARK

__all__ = ["OwnKernelSpecs", "kernel_env"]


class OwnKernelSpecs(KernelSpecManager):
    """Always launch ipykernel with this very interpreter, whatever kernelspecs exist."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        # A frozen bundle (PyInstaller) has no Python to run `-m` with: it is its own kernel.
        # `-P` (3.11+): the app's working directory is not put on the kernel's sys.path, so
        # an `inspect.py` or `torch.py` there cannot replace what the kernel imports.
        safe_path = ["-P"] if sys.version_info >= (3, 11) else []
        launcher = (
            ["--kernel"]
            if getattr(sys, "frozen", False)
            else [*safe_path, "-m", "ipykernel_launcher"]
        )
        return KernelSpec(
            argv=[
                sys.executable,
                *launcher,
                "-f",
                "{connection_file}",
                "--HistoryManager.enabled=False",
            ],
            display_name="autograd-viz (Python)",
            language="python",
        )


def kernel_env(mark: str | None = None) -> dict[str, str]:
    """The environment the kernel starts with: ours, with the package on PYTHONPATH, and
    `mark` as RUN_MARK (every process the user's code starts inherits it)."""
    env = dict(os.environ)
    if mark is not None:
        env[RUN_MARK] = mark
    # The kernel imports autograd_viz.core, also when the app runs from a source tree.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env
