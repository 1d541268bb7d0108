"""Exports: PNG and SVG of the canvas, an animated GIF of the replay, the replay page,
also from the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from autograd_viz.core.graph.graph_model import LEAF
from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import Player
from autograd_viz.resources import EXAMPLES
from autograd_viz.ui.graph._graph_style import STYLES
from autograd_viz.ui.graph.export import AnimationExporter, _frame_plan, export_png, export_svg
from autograd_viz.ui.graph.graph_canvas import GraphCanvas
from tests.core.fidelity_cases import CASES


@pytest.fixture
def canvas(qtbot) -> GraphCanvas:
    widget = GraphCanvas()
    widget.resize(800, 500)
    qtbot.addWidget(widget)
    widget.show()
    widget.show_trace(run_source(CASES["leaf_example"]))
    return widget


def test_png_export_has_the_leaf_colour(canvas, tmp_path: Path) -> None:
    out = tmp_path / "graph.png"
    assert export_png(canvas, out)
    image = QImage(str(out))
    leaf = next(n for n in canvas.graph.nodes.values() if n.kind == LEAF)
    at = canvas.widget_position(leaf.id)
    assert QColor(image.pixel(at.x(), at.y())).name() == QColor(STYLES[LEAF].fill).name()


def test_svg_export_renders_markers_as_shapes(canvas, tmp_path: Path) -> None:
    out = tmp_path / "graph.svg"
    assert export_svg(canvas, out)
    text = out.read_text()
    assert "<svg" in text and "MulBackward0" in text  # labels stay text
    renderer = QSvgRenderer(str(out))
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    renderer.render(painter, QRectF(0, 0, canvas.width(), canvas.height()))
    painter.end()
    leaf = next(n for n in canvas.graph.nodes.values() if n.kind == LEAF)
    at = canvas.widget_position(leaf.id)
    assert QColor(image.pixel(at.x(), at.y())).name() == QColor(STYLES[LEAF].fill).name()


def test_animation_has_a_frame_per_step(canvas, qtbot, tmp_path: Path) -> None:
    player = Player(canvas.trace, canvas.graph)
    out = tmp_path / "replay.gif"
    exporter = AnimationExporter(player, canvas, out, lambda: canvas.show_frame(player.frame()))
    with qtbot.waitSignal(exporter.finished, timeout=60_000) as done:
        exporter.start()
    assert done.args == [True, str(out)]
    frames = Image.open(out).n_frames
    assert (
        frames
        == len(_frame_plan(player))
        == (len(player.steps_in("forward")) + 1 + len(player.steps_in("backward")) + 1)
    )
    assert player.position == -1 and player.mode == "forward"  # restored afterwards


@pytest.mark.kernel
def test_cli_exports_graph_and_animation(tmp_path: Path) -> None:
    graph, gif, page = tmp_path / "g.svg", tmp_path / "a.gif", tmp_path / "replay.html"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograd_viz",
            str(EXAMPLES / "first_graph.py"),
            "--export-graph",
            str(graph),
            "--export-animation",
            str(gif),
            "--export-page",
            str(page),
            "--timeout",
            "90",
        ],
        capture_output=True,
        text=True,
        timeout=150,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert graph.read_text().startswith("<?xml") and Image.open(gif).n_frames > 10
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and 'id="replay-data"' in html


def test_the_menu_writes_the_shown_runs_page_with_its_folds(canvas, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QMainWindow

    from autograd_viz.core.playback.run_view import prepare_run
    from autograd_viz.core.share import page_html
    from autograd_viz.ui.graph.export_actions import ExportActions

    window = QMainWindow()
    window.setWindowTitle("linear step")
    trace = run_source((EXAMPLES / "linear_step.py").read_text(encoding="utf-8"))
    first = prepare_run(trace)
    folded = prepare_run(trace, frozenset(first.graph.folds))  # every module a box
    actions = ExportActions(window, canvas, canvas, lambda: folded.player)
    assert "Export replay page (HTML)…" in [a.text() for a in actions.actions()]
    out = tmp_path / "page.html"
    assert actions.write_page(out)
    html = out.read_text(encoding="utf-8")
    assert html == page_html(trace, title="linear step", collapsed=folded.graph.collapsed)
    assert html != page_html(trace, title="linear step")  # the folds as shown, not the first
    assert ExportActions(window, canvas, canvas, lambda: None).write_page(out) is False
    # The title as the title bar shows it: Qt's "[*]" placeholder reached the page as is.
    window.setWindowTitle("first.py[*] — autograd-viz")
    assert actions.write_page(out)
    assert "<title>first.py — autograd-viz</title>" in out.read_text(encoding="utf-8")
    window.setWindowModified(True)
    assert actions.write_page(out)
    assert "<title>first.py* — autograd-viz</title>" in out.read_text(encoding="utf-8")
    window.close()


def test_the_menu_writes_the_page_off_the_gui_thread(canvas, qtbot, tmp_path, monkeypatch) -> None:
    from PySide6.QtWidgets import QMainWindow

    from autograd_viz.core.playback.run_view import prepare_run
    from autograd_viz.core.share import page_html
    from autograd_viz.ui.graph import export_actions
    from autograd_viz.ui.graph.export_actions import ExportActions

    window = QMainWindow()
    window.setWindowTitle("first graph")
    trace = run_source((EXAMPLES / "first_graph.py").read_text(encoding="utf-8"))
    run = prepare_run(trace)
    actions = ExportActions(window, canvas, canvas, lambda: run.player)
    out = tmp_path / "page.html"
    actions.start_page(out)
    assert window.statusBar().currentMessage().startswith("Writing the replay page")
    # The page may be written before a wait on its signal could begin: wait on the result.
    qtbot.waitUntil(lambda: not actions.writing, timeout=30_000)
    assert out.read_text(encoding="utf-8") == page_html(
        trace, title="first graph", collapsed=run.graph.collapsed
    )
    assert window.statusBar().currentMessage() == f"Saved {out}"
    # A folder that cannot be written says why in a dialog, and the app goes on.
    warned: list[str] = []
    monkeypatch.setattr(export_actions.QMessageBox, "warning", lambda *a: warned.append(a[2]))
    actions.start_page(tmp_path / "missing" / "page.html")
    qtbot.waitUntil(lambda: bool(warned), timeout=30_000)
    assert "Could not write" in warned[0] and not actions.writing
    window.close()
