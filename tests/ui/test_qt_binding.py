"""Guards against a Qt binding that breaks us: PySide6 6.12.0 drops a reference to True on
every signal emission, and the interpreter aborts once the count runs out."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot, QTimer
app = QCoreApplication([])
class Worker(QObject):
    done = Signal(object)
    go = Signal()
    @Slot()
    def work(self):
        for i in range(3000):
            self.done.emit(i)
got = []
worker = Worker()
thread = QThread()
worker.moveToThread(thread)
thread.start()
worker.done.connect(got.append)
worker.done.connect(lambda v: v == 2999 and app.quit())
worker.go.connect(worker.work)
worker.go.emit()
QTimer.singleShot(20000, app.quit)
app.exec()
thread.quit()
thread.wait()
print(len(got))
"""


def test_cross_thread_signals_do_not_corrupt_refcounts() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.strip() == "3000"
