"""The toolbar's device picker lists what the kernel has and sends editor runs there."""

from __future__ import annotations

import pytest
import torch

from autograd_viz.core.kernel.protocol import run_request
from autograd_viz.session import KernelState
from autograd_viz.ui.main_window import MainWindow

pytestmark = pytest.mark.kernel

CODE = "import torch\nt = torch.ones(2, requires_grad=True)\nloss = (t * 3).sum()\n"


def test_run_request_carries_the_device() -> None:
    assert "'cpu')" in run_request("x = 1", "<editor>", "", "cpu")
    assert run_request("x = 1").rstrip().endswith("del __avz")


def test_picker_lists_the_kernels_devices_and_runs_there(qtbot) -> None:
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    picker = win.device_picker
    try:
        with qtbot.waitSignal(win.session.kernel_info, timeout=60_000):
            win.session.start()
        qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=10_000)
        items = [picker.combo.itemText(i) for i in range(picker.combo.count())]
        expected = ["auto", "cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
        assert items == expected
        picker.combo.setCurrentText("cpu")
        assert win.session.device_choice == "cpu"
        win.editor.set_text(CODE)
        with qtbot.waitSignal(win.trace_shown, timeout=30_000) as shown:
            win.run_code()
        trace = shown.args[0]
        assert trace.device == "cpu" and trace.tensor_named("t").device == "cpu"
        # A device the kernel lacks: the run says so and goes ahead on the default device.
        errors: list[str] = []
        win.session.stderr.connect(errors.append)
        win.session.set_device("cuda:7")
        qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=10_000)
        with qtbot.waitSignal(win.trace_shown, timeout=30_000) as shown:
            win.run_code()
        assert shown.args[0].tensor_named("loss") is not None
        if torch.cuda.device_count() < 8:
            assert "Device 'cuda:7'" in "".join(errors)
    finally:
        win.close()
