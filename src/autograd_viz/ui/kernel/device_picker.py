"""The toolbar's device picker: auto, cpu, or one of the GPUs the kernel sees."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from autograd_viz.session import KernelSession

AUTO = "auto"


class DevicePicker(QWidget):
    """`device: [auto ▾]`. Editor runs go to the chosen device (torch's default device while
    the code runs); auto is the kernel's choice: the first GPU when there is one."""

    def __init__(self, session: KernelSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 0)
        layout.addWidget(QLabel("device:"))
        self.combo = QComboBox()
        self.combo.setToolTip(
            "Where the editor's code runs: auto (the first GPU when torch sees one, else the "
            "CPU), the CPU, or a GPU. Tensors made without a device land there."
        )
        layout.addWidget(self.combo)
        self.wanted = AUTO  # kept until the kernel says which devices it has
        self._fill([AUTO, "cpu"], AUTO)
        self.combo.currentTextChanged.connect(self._chosen)
        session.kernel_info.connect(self._kernel_info)

    @property
    def device(self) -> str:
        """The device chosen now."""
        return self.combo.currentText()

    def set_device(self, device: str) -> None:
        """Choose a device by name; one the kernel has not listed yet is chosen once it
        does (a GPU the kernel turns out not to have leaves the choice on auto)."""
        self.wanted = device
        index = self.combo.findText(device)
        if index >= 0:
            self.combo.setCurrentIndex(index)

    def _fill(self, devices: list[str], keep: str) -> None:
        self.combo.blockSignals(True)
        self.combo.clear()
        self.combo.addItems(devices)
        self.combo.setCurrentIndex(max(0, self.combo.findText(keep)))
        self.combo.blockSignals(False)

    def _kernel_info(self, info: dict) -> None:
        devices = [AUTO, *info.get("devices", ["cpu"])]
        self._fill(devices, self.wanted)
        self._chosen(self.device)

    def _chosen(self, device: str) -> None:
        if self.sender() is self.combo:
            self.wanted = device  # the learner picked it
        self.session.set_device(device or AUTO)
