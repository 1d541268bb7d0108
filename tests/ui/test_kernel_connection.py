"""File → Connect to kernel…: the window attaches to a kernel it did not start, runs code
there, says so in the status bar, and can go back to a kernel of its own."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt

from autograd_viz.session import KernelState
from autograd_viz.ui.main_window import MainWindow
from tests.session.test_remote_kernel import LAB, _separate_kernel

pytestmark = pytest.mark.kernel


def test_connect_run_and_go_back(qtbot, tmp_path) -> None:
    km = _separate_kernel(tmp_path, [sys.executable, "-m", "ipykernel_launcher"])
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    try:
        connection = win.kernel_connection
        connection.choose_file = lambda: km.connection_file
        assert not connection.local_action.isEnabled()
        with qtbot.waitSignal(win.session.kernel_info, timeout=60_000):
            connection.connect_action.trigger()
        qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=10_000)
        status = win.kernel_status.where_label
        assert status.isVisible() and status.text() == "attached: kernel-separate.json"
        assert connection.local_action.isEnabled()
        win.editor.set_text(LAB)
        win.editor.setFocus()
        with qtbot.waitSignal(win.trace_shown, timeout=30_000) as shown:
            qtbot.keyClick(win.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        assert shown.args[0].tensor_named("w").grad.data == 8.0
        with qtbot.waitSignal(win.session.kernel_info, timeout=60_000):
            connection.local_action.trigger()
        qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=10_000)
        assert not status.isVisible() and win.session.existing is None
        assert km.is_alive()
    finally:
        win.close()
        km.shutdown_kernel(now=True)
