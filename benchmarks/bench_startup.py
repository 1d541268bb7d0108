"""Startup: process start → main window shown, and → kernel ready (idle, torch imported).

    QT_QPA_PLATFORM=offscreen python -m benchmarks.bench_startup [--repeat N]

Each run is a fresh Python process (as a user's launch is); the parent times from spawning
it to the child's reports, so interpreter start and every import are included.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import sys
from PySide6.QtCore import QTimer
from autograd_viz.ui.app import _application
from autograd_viz.ui.main_window import MainWindow
from autograd_viz.session import KernelState

app = _application()
window = MainWindow()
window.show()
app.processEvents()
print("shown", flush=True)
window.session.start()  # as ui.app.launch does, once the window is up

def check():
    if window.session.state is KernelState.IDLE:
        print("ready", flush=True)
        window.close()
        app.quit()

window.session.state_changed.connect(lambda _: check())
QTimer.singleShot(120_000, app.quit)
app.exec()
"""


def _one() -> tuple[float, float]:
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env
    )
    marks: dict[str, float] = {}
    assert child.stdout is not None
    for line in child.stdout:
        marks[line.strip()] = time.perf_counter() - start
        if line.strip() == "ready":
            break
    child.wait(timeout=60)
    return marks.get("shown", float("nan")), marks.get("ready", float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = [_one() for _ in range(args.repeat)]
    shown = statistics.median(r[0] for r in runs)
    ready = statistics.median(r[1] for r in runs)
    print(f"process start → main window shown: median {shown:.2f} s")
    print(f"process start → kernel ready:      median {ready:.2f} s")


if __name__ == "__main__":
    main()
