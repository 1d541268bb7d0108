"""File → Connect to kernel… / Use a local kernel: attaching the app to a running Jupyter
kernel (a GPU server's, through its connection file) and coming back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from autograd_viz.session import KernelSession
from autograd_viz.ui.kernel.kernel_status import KernelStatus


def _jupyter_runtime_dir() -> str:
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        return jupyter_runtime_dir()
    except Exception:  # no jupyter_core paths: the home folder will do
        return str(Path.home())


class KernelConnection(QObject):
    """Owns the two File-menu actions and keeps the status bar saying where the kernel is."""

    def __init__(self, window: QWidget, session: KernelSession, status: KernelStatus) -> None:
        super().__init__(window)
        self.window, self.session, self.status = window, session, status
        # Tests replace this to answer the file dialog.
        self.choose_file: Callable[[], str | None] = self._ask_for_file
        self.connect_action = QAction("Connect to &kernel…", window)
        self.connect_action.setToolTip(
            "Attach to a running Jupyter kernel by its connection file (kernel-*.json), e.g. "
            "one on a GPU server reached through an SSH tunnel"
        )
        self.connect_action.triggered.connect(self.connect_dialog)
        self.local_action = QAction("Use a &local kernel", window)
        self.local_action.triggered.connect(self.use_local)
        self.local_action.setEnabled(False)
        session.kernel_info.connect(lambda _info: self._show())

    def actions(self) -> list[QAction]:
        """The menu entries, in order."""
        return [self.connect_action, self.local_action]

    def connect_dialog(self) -> None:
        """Ask for a connection file and attach to its kernel."""
        path = self.choose_file()
        if path:
            self.attach(path)

    def attach(self, connection_file: str) -> None:
        """Attach to the kernel of a connection file (the session reports how it went)."""
        self.session.attach(connection_file)
        self._show()

    def use_local(self) -> None:
        """Leave an attached kernel (it keeps running) for a kernel of the app's own."""
        self.session.attach(None)
        self._show()

    def _show(self) -> None:
        attached = self.session.existing
        self.status.set_attached(attached)
        self.local_action.setEnabled(attached is not None)

    def _ask_for_file(self) -> str | None:
        path, _ = QFileDialog.getOpenFileName(
            self.window,
            "Connect to a running kernel",
            _jupyter_runtime_dir(),
            "Kernel connection files (*.json)",
        )
        return path or None
