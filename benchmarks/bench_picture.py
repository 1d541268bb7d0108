"""Ctrl+Enter → first picture: the real window, the real kernel, offscreen.

    QT_QPA_PLATFORM=offscreen AUTOGRAD_VIZ_THREADS=1 python -m benchmarks.bench_picture

For each lesson example (resources/examples), the 8k-node RNN (2,000 unrolled steps, 16
wide) and one training step of the side-by-side table's ResNet-18, 6-layer encoder and
GPT-2-small shapes (benchmarks/models.py; each built by a run before, its variables kept),
the script is put in the editor, Ctrl+Enter is pressed, and the clock runs until
the canvas says the graph is drawn (`GraphCanvas.trace_drawn`). The time is split by
what the kernel's payload and the app's decoding report:

    capture   press → the kernel has the trace (request sent, user code under the tracer)
    encode    the kernel turning the trace into its wire parts and sending each (payload
              `encode_s`)
    transfer  the kernel's last send (`sent_at`) → the app's worker has the payload
    decode    inflating and parsing the parts into a Trace, on the worker thread: each
              part as it arrives, while the kernel encodes the next, so this overlaps
              `encode` (the columns add up to more than the picture's time)
    crossing  the kernel starts encoding → the app has the Trace: what encode, transfer
              and decode cost together, overlaps counted once (capture + crossing +
              layout = picture)
    layout    decoded → drawn (layout on a worker for big traces, then the drawing)

It prints bytes per event on the wire and the longest the GUI thread went without running
a 5 ms timer while the run was under way (a stall). Figures of one run; nothing asserted.
As the app does once its preload thread has imported torch, what is loaded when the
kernel is up is frozen out of the collector's sight. `--repeat N` runs each case N times:
from the second on, the picture replaces one as big as itself, which is freed meanwhile.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer
from PySide6.QtTest import QTest

import autograd_viz.session._replies as replies_module  # where replies are decoded
from autograd_viz.core.platform.gc_pause import freeze_loaded_objects
from autograd_viz.session import KernelState
from autograd_viz.ui.app import _application
from autograd_viz.ui.main_window import MainWindow

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "resources" / "examples"
# The side-by-side table's models (benchmarks/models.py), built by a first run and
# stepped by a second, so the picture times one training step as the peers' rows do.
MODELS = ("resnet18", "encoder", "gpt2")
MODEL_SETUP = """import sys
sys.path.insert(0, {repo!r})
from benchmarks.models import BUILDERS
_w = BUILDERS[{key!r}]()
model, X, Y, loss_of = _w.model, _w.x, _w.y, _w.loss_of
"""
STEP = "loss = loss_of(model(X), Y)\nloss.backward()\n"
RNN = """import torch
torch.manual_seed(0)
x = torch.randn(2000, 1, 16)
W = torch.randn(16, 16, requires_grad=True)
U = torch.randn(16, 16, requires_grad=True)
h = torch.zeros(1, 16)
for t in range(2000):
    h = torch.tanh(x[t] @ W + h @ U)
h.sum().backward()
"""
PROBE_MS = 5


class _Decoding:
    """Wraps the worker's trace_from_payload, and the reading of each part sent ahead of
    it, to see the payload, its bytes and the time spent reading them."""

    def __init__(self) -> None:
        self.original = replies_module.trace_from_payload
        self.last: dict[str, Any] = {}
        self.parts = {"bytes": 0, "seconds": 0.0}
        replies_module.trace_from_payload = self  # type: ignore[assignment]
        assembly = getattr(replies_module, "TraceAssembly", None)
        if assembly is not None:  # protocol 4 on: parts are read as they arrive
            parts = self.parts

            class _TimedAssembly(assembly):
                def add(self, fmt: str, buffer: Any) -> None:
                    start = time.perf_counter()
                    super().add(fmt, buffer)
                    parts["seconds"] += time.perf_counter() - start
                    parts["bytes"] += len(buffer)

            replies_module.TraceAssembly = _TimedAssembly  # type: ignore[attr-defined]

    def reset(self) -> None:
        self.last = {}
        self.parts.update(bytes=0, seconds=0.0)

    def __call__(self, payload: dict[str, Any], *buffers: Any) -> Any:
        arrived = time.time()
        start = time.perf_counter()
        trace = self.original(payload, *buffers)
        # Before protocol 3 (for a before/after run) the trace was JSON text in the payload.
        text = [payload.get("trace") or "", *payload.get("event_chunks", ())]
        wire = buffers[0] if buffers and buffers[0] else [t.encode() for t in text]
        self.last = {
            "payload": payload,
            "bytes": sum(len(b) for b in wire) + self.parts["bytes"],
            "arrived": arrived,
            "decode_s": time.perf_counter() - start + self.parts["seconds"],
            "decoded_at": time.perf_counter(),
            "decoded_wall": time.time(),
        }
        return trace


class _StallProbe:
    """A 5 ms timer on the GUI thread: the longest gap between its ticks is the worst stall,
    counted apart while the trace arrives (until it is decoded) and while it is drawn."""

    def __init__(self, decoding: _Decoding) -> None:
        self.decoding = decoding
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setInterval(PROBE_MS)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.worst_ms = {"arrive": 0.0, "draw": 0.0}

    def start(self) -> None:
        self.worst_ms = {"arrive": 0.0, "draw": 0.0}
        self.clock.start()
        self.timer.start()

    def _tick(self) -> None:
        # A gap that ends after decoding finished may have begun before: it counts as
        # drawing, so the arrival's figure never includes the drawing's work.
        phase = "draw" if self.decoding.last else "arrive"
        self.worst_ms[phase] = max(self.worst_ms[phase], self.clock.restart() - PROBE_MS)

    def stop(self) -> dict[str, float]:
        self.timer.stop()
        return {k: max(v, 0.0) for k, v in self.worst_ms.items()}


def _wait(condition: Any, timeout_s: float) -> None:
    """Run the event loop until `condition()` (the GUI keeps working meanwhile)."""
    loop = QEventLoop()
    poll = QTimer()
    poll.setInterval(10)
    poll.timeout.connect(lambda: loop.quit() if condition() else None)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    poll.start()
    loop.exec()
    poll.stop()
    if not condition():
        raise TimeoutError(f"gave up after {timeout_s} s")


def _one(window: MainWindow, decoding: _Decoding, probe: _StallProbe, code: str) -> dict:
    drawn: list[float] = []
    window.canvas.trace_drawn.connect(lambda _t: drawn.append(time.perf_counter()))
    window.document.set_text(code, None)  # as File → Open would, without asking to save
    decoding.reset()
    probe.start()
    pressed_wall, pressed = time.time(), time.perf_counter()
    QTest.keyClick(window.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    _wait(lambda: bool(drawn), 300)
    stall_ms = probe.stop()
    window.canvas.trace_drawn.disconnect()
    last = decoding.last
    payload = last["payload"]
    trace = window.canvas.trace
    assert trace is not None
    nan = float("nan")  # a kernel from before protocol 3 did not say
    sent_at, encode_s = float(payload.get("sent_at", nan)), float(payload.get("encode_s", nan))
    # Protocol 4 on: when the kernel began encoding (its parts are sent as they are made).
    encode_started_at = float(payload.get("encode_started_at", sent_at - encode_s))
    return {
        "nodes": len(trace.nodes),
        "events": len(trace.events),
        "bytes_per_event": last["bytes"] / max(1, len(trace.events)),
        "picture_s": drawn[0] - pressed,
        "capture_s": encode_started_at - pressed_wall,
        "encode_s": encode_s,
        "transfer_s": last["arrived"] - sent_at,
        "crossing_s": last["decoded_wall"] - encode_started_at,
        "decode_s": last["decode_s"],
        "layout_s": drawn[0] - last["decoded_at"],
        "stall_arrive_ms": stall_ms["arrive"],
        "stall_draw_ms": stall_ms["draw"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each case this many times, a row each (from the second on, the run it"
        " replaces is as big as itself, and is freed meanwhile)",
    )
    args = parser.parse_args()
    cases = {p.stem: p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.py"))}
    cases["rnn_8k"] = RNN
    for key in MODELS:  # one training step of each peer-table model (built beforehand)
        cases[key] = STEP
    if args.only:
        cases = {k: v for k, v in cases.items() if args.only in k}

    app = _application()
    window = MainWindow()
    window.resize(1200, 800)
    window.show()
    window.session.start()
    _wait(lambda: window.session.state is KernelState.IDLE, 120)
    # What the app does once its preload thread has imported torch (ui/app.py): what is
    # loaded by now stays out of every later collection's sight.
    freeze_loaded_objects()
    decoding = _Decoding()
    probe = _StallProbe(decoding)
    _one(window, decoding, probe, "import torch\n(torch.ones(2, requires_grad=True) * 2).sum()")

    header = (
        f"{'case':<18}{'nodes':>7}{'events':>8}{'B/event':>9}{'picture':>9}{'capture':>9}"
        f"{'encode':>8}{'transfer':>9}{'decode':>8}{'crossing':>9}{'layout':>8}{'stall<':>8}"
        f"{'stall>':>8}"
    )
    print(
        "Ctrl+Enter → first picture (s). Longest GUI-thread gap (ms): stall< while the trace"
        " arrives and is decoded, stall> while it is laid out and drawn."
    )
    print(header)
    for name, code in cases.items():
        model = name in MODELS
        if model:  # built in a run of its own; the step's run keeps its variables
            window.session.set_keep_variables(True)
            _one(window, decoding, probe, MODEL_SETUP.format(repo=str(REPO), key=name))
        for _ in range(max(1, args.repeat)):
            r = _one(window, decoding, probe, code)
            print(
                f"{name:<18}{r['nodes']:>7}{r['events']:>8}{r['bytes_per_event']:>9.0f}"
                f"{r['picture_s']:>9.3f}{r['capture_s']:>9.3f}{r['encode_s']:>8.3f}"
                f"{r['transfer_s']:>9.3f}{r['decode_s']:>8.3f}{r['crossing_s']:>9.3f}"
                f"{r['layout_s']:>8.3f}"
                f"{r['stall_arrive_ms']:>8.0f}{r['stall_draw_ms']:>8.0f}",
                flush=True,
            )
        if model:
            window.session.set_keep_variables(False)
    window.close()
    app.processEvents()


if __name__ == "__main__":
    main()
