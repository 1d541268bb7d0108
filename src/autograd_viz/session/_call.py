"""KernelCall: one request to the kernel and its one answer (qtconsole's `_request_info`,
Spyder's `call_kernel(callback=)`): whoever asked connects to its `finished`, and nobody
else sees the answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

# The `type` of an answer that the kernel never gave (not running, died, restarted, closed)
# and of one from a kernel with another autograd-viz: the message is ours, to show as is.
KERNEL_ERROR = "KernelError"
VERSION_MISMATCH = "VersionMismatch"


def failure(message: str, kind: str = KERNEL_ERROR) -> dict[str, Any]:
    """The answer of a request that got none from the kernel: ok false and why."""
    return {"ok": False, "trace": None, "error": {"type": kind, "message": message}}


@dataclass(frozen=True)
class Request:
    """What the worker sends to the kernel for one KernelCall."""

    call_id: int
    epoch: int  # the kernel it was asked of: a later kernel does not answer it
    kind: str  # "run", "call" or "fetch" (a notebook cell's trace, answered as a run)
    code: str  # the statement the kernel executes
    label: str  # what it is, in messages


class KernelCall(QObject):
    """A run or a call in the kernel; `finished` carries its answer, exactly once.

    The answer is a dict with `ok`. A run's: `trace` (a core.trace.Trace) and `namespace`
    ("fresh" or "kept"). A call's: `result` (the function's JSON result) and `trace` (a
    Trace or None); when the function raised, `ok` is false and `error` holds its `type`,
    `message` and `traceback`. When the kernel could not answer (it was not running, died,
    was restarted, or runs another autograd-viz) `ok` is false, `trace` None and `error`
    says why (`type` KernelError or VersionMismatch, `message` a sentence to show).
    """

    finished = Signal(dict)

    def __init__(self, kind: str, label: str, epoch: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.kind = kind
        self.label = label
        self.epoch = epoch
        self.answer: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        """True once `finished` has been emitted."""
        return self.answer is not None

    def finish(self, answer: dict[str, Any]) -> bool:
        """Emit `finished` with `answer` unless it was emitted already; True if it was now."""
        if self.answer is not None:
            return False
        self.answer = answer
        self.finished.emit(answer)
        return True
