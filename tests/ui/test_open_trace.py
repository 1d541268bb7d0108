"""Opening a recorded trace in the window: shown as if it had just run, its script
read-only under a bar that says where it was recorded; nothing runs; a bad file is one
line in the console."""

from __future__ import annotations

import subprocess
import sys

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import BACKWARD
from autograd_viz.ui.editor.recording_bar import recorded_words
from autograd_viz.ui.main_window import MainWindow

CODE = (
    "import torch\n"
    "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    "loss = (w * w).sum()\n"
    "loss.backward()\n"
)


def _window(qtbot) -> MainWindow:
    window = MainWindow()  # no kernel: opening a trace runs nothing
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    return window


def test_an_opened_trace_replays_with_its_script_read_only(qtbot, tmp_path) -> None:
    trace = run_source(CODE)
    path = tmp_path / "run.json"
    trace.save(path)
    window = _window(qtbot)
    with qtbot.waitSignal(window.trace_shown, timeout=10_000) as shown:
        window.traces.open(path)
    opened = shown.args[0]
    assert window.editor.text() == CODE and window.editor.isReadOnly()
    bar = window.editor_pane.recording_bar
    assert bar.isVisible() and recorded_words(opened, "run.json") in bar.label.text()
    assert f"with torch {trace.torch}" in bar.label.text()
    player = window.run_view.player
    player.set_mode(BACKWARD)
    player.to_end()
    w = opened.tensor_named("w").id
    assert player.grad_at(w, player.event_index()).data == [2.0, 4.0]  # torch's 2w
    window.run_code()  # a recording is not run: it says how to run it
    assert "Edit to run it here" in window.statusBar().currentMessage()
    assert not window._pending_run
    qtbot.mouseClick(bar.edit_button, Qt.MouseButton.LeftButton)
    assert not window.editor.isReadOnly() and not bar.isVisible()


def test_a_bad_file_is_one_line_and_changes_nothing(qtbot, tmp_path) -> None:
    window = _window(qtbot)
    window.editor.set_text("x = 1\n")
    path = tmp_path / "broken.json"
    path.write_text('{"events": [{"kind": 1}]}')
    window.traces.open(path)
    qtbot.waitUntil(lambda: "Could not open" in window.console.toPlainText(), timeout=10_000)
    said = [line for line in window.console.toPlainText().splitlines() if "Could not" in line]
    assert said == [
        "Could not open the trace: broken.json: events[0] must be an object with a kind"
    ]
    assert window.editor.text() == "x = 1\n" and not window.editor.isReadOnly()


def test_a_dropped_trace_opens(qtbot, tmp_path) -> None:
    path = tmp_path / "dropped.json"
    run_source(CODE).save(path)
    window = _window(qtbot)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    drop = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )  # fmt: skip
    with qtbot.waitSignal(window.trace_shown, timeout=10_000):
        window.dropEvent(drop)
    assert window.editor.text() == CODE and window.traces.opened == path


def test_the_command_says_what_is_wrong_with_a_file_in_one_line(tmp_path) -> None:
    path = tmp_path / "new.json"
    path.write_text('{"version": 9, "events": []}')
    done = subprocess.run(
        [sys.executable, "-m", "autograd_viz", "open", str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "autograd-viz: new.json was written by a newer autograd-viz (trace version 9; this"
        " one reads up to 3): update autograd-viz to open it"
    ]


def test_the_command_shows_the_trace_it_checked_in_a_screenshot(tmp_path) -> None:
    import os

    import numpy as np
    from PIL import Image

    path = tmp_path / "run.json"
    run_source(CODE).save(path)
    shot = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-m", "autograd_viz", "open", str(path), "--screenshot", str(shot),
         "--size", "1000x700"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1000, 700)
    # The leaf w is drawn: its violet fill is on the canvas.
    pixels = np.asarray(image).reshape(-1, 3).astype(int)
    r, g, b = pixels[:, 0], pixels[:, 1], pixels[:, 2]
    assert int(((r > 150) & (b > 200) & (g < 170)).sum()) > 50
