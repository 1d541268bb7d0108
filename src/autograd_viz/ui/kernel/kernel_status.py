"""Status-bar pieces: the kernel's state as a coloured dot and word, and its device."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

_STATE_COLOURS = {
    "starting": ("#d97706", "kernel starting…"),
    "idle": ("#16a34a", "kernel idle"),
    "busy": ("#2563eb", "kernel busy"),
    "dead": ("#dc2626", "kernel dead"),
}


class KernelStatus(QWidget):
    """Shows `● kernel idle  |  cpu · torch 2.13.0`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 0)
        layout.setSpacing(12)
        self.state_label = QLabel()
        self.state_label.setObjectName("kernelState")
        self.device_label = QLabel("device: …")
        self.device_label.setObjectName("kernelDevice")
        self.where_label = QLabel()  # "attached: kernel-1234.json" for a kernel not ours
        self.where_label.setObjectName("kernelWhere")
        self.where_label.hide()
        layout.addWidget(self.state_label)
        layout.addWidget(self.where_label)
        layout.addWidget(self.device_label)
        self.state = ""
        self.set_state("starting")

    def set_state(self, state: str) -> None:
        """Show one of starting / idle / busy / dead."""
        self.state = state
        colour, text = _STATE_COLOURS.get(state, ("#64748b", state))
        self.state_label.setText(f'<span style="color:{colour}">●</span> {text}')

    def set_info(self, info: dict) -> None:
        """Show the kernel's device (cpu or cuda:N) and torch version."""
        device = info.get("device", "?")
        name = info.get("device_name")
        text = f"device: {device}" + (f" ({name})" if name else "")
        if info.get("torch"):
            text += f"  ·  torch {info['torch']}"
        self.device_label.setText(text)

    def set_attached(self, connection_file: str | None) -> None:
        """Say which running kernel the app is attached to (None: a kernel of its own)."""
        if connection_file:
            self.where_label.setText(f"attached: {connection_file.rsplit('/', 1)[-1]}")
            self.where_label.setToolTip(connection_file)
        self.where_label.setVisible(bool(connection_file))
