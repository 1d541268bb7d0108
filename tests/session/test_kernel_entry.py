"""`autograd-viz --kernel -f FILE` is a working Jupyter kernel (how a frozen bundle starts
its kernel: the bundle has no separate Python to run `-m ipykernel_launcher` with)."""

from __future__ import annotations

import sys

import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

pytestmark = pytest.mark.kernel


class _EntrySpecs(KernelSpecManager):
    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        argv = [sys.executable, "-m", "autograd_viz", "--kernel", "-f", "{connection_file}"]
        return KernelSpec(argv=argv, display_name="entry", language="python")


def test_cli_kernel_entry_runs_code(tmp_path) -> None:
    km = KernelManager(kernel_name="entry", kernel_spec_manager=_EntrySpecs())
    km.connection_file = str(tmp_path / "kernel.json")
    km.start_kernel()
    kc = km.client()
    outputs: list[dict] = []
    try:
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        reply = kc.execute_interactive(
            "import torch; x = torch.tensor(3.0, requires_grad=True); (x * x).backward();"
            " print('grad', x.grad.item())",
            timeout=60,
            output_hook=outputs.append,
        )
        assert reply["content"]["status"] == "ok"
        text = "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")
        assert "grad 6.0" in text
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
