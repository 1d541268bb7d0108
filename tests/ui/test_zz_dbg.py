import time, json
import pytest
from autograd_viz.session import KernelState
from autograd_viz.ui.main_window import MainWindow
from autograd_viz.core import trace as trace_mod
from tests.ui._fault_report import EventLoopWatch

def test_x(qtbot, monkeypatch):
    log = []
    orig = trace_mod.Trace.from_json.__func__
    def timed(cls, text):
        t = time.monotonic(); t0 = time.perf_counter(); json.loads(text); j = time.perf_counter() - t0
        r = orig(cls, text); log.append(("from_json", t, time.monotonic() - t, "json", j)); return r
    monkeypatch.setattr(trace_mod.Trace, "from_json", classmethod(timed))
    win = MainWindow(); qtbot.addWidget(win); win.show(); win.session.start()
    qtbot.waitUntil(lambda: win.session.state is KernelState.IDLE, timeout=60_000)
    orig_show = win.show_trace
    def show(tr):
        import cProfile, pstats
        t = time.monotonic(); orig_show(tr); log.append(("show_trace", t, time.monotonic() - t))
    win.session.trace_ready.disconnect(win.show_trace)
    win.session.trace_ready.connect(show)
    code = "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x\nfor _ in range(100_000):\n    y = y * 1.0001\n"
    win.editor.set_text(code)
    gaps = []
    w = EventLoopWatch()
    orig_tick = w._tick
    def tick():
        now = time.monotonic(); gap = now - w._last
        if gap > 0.2: gaps.append((w._last, gap))
        orig_tick()
    w._timer.timeout.disconnect(w._tick); w._timer.timeout.connect(tick)
    with w:
        with qtbot.waitSignal(win.trace_shown, timeout=60_000):
            t0 = time.monotonic(); win.run_code()
        qtbot.wait(500)
    for l in log: print(l[0], round(l[1]-t0, 3), [round(x, 3) if isinstance(x, float) else x for x in l[2:]])
    for g in gaps: print("gap from", round(g[0]-t0, 3), "len", round(g[1], 3))
    win.editor.document().setModified(False)
    win.close()
