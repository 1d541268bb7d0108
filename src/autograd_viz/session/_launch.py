"""How the app launches a kernel of its own: this very interpreter (or the bundle itself)
runs ipykernel, with our package importable whatever the working directory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

__all__ = ["OwnKernelSpecs", "kernel_env"]


class OwnKernelSpecs(KernelSpecManager):
    """Always launch ipykernel with this very interpreter, whatever kernelspecs exist."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        # A frozen bundle (PyInstaller) has no Python to run `-m` with: it is its own kernel.
        launcher = ["--kernel"] if getattr(sys, "frozen", False) else ["-m", "ipykernel_launcher"]
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


def kernel_env() -> dict[str, str]:
    """The environment the kernel starts with: ours, with the package on PYTHONPATH."""
    env = dict(os.environ)
    # The kernel imports autograd_viz.core, also when the app runs from a source tree.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env
