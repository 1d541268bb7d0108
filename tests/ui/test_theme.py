"""Light and dark: the editor and the graph canvas change colour, for real pixels, and
follow the desktop's palette live in System mode."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.platform.preferences import load_theme
from autograd_viz.ui.graph._graph_style import DARK, LIGHT
from autograd_viz.ui.main_window import MainWindow
from autograd_viz.ui.theme import dark_palette


@pytest.fixture
def window(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1100, 700)
    win.show()
    yield win
    win.theme.set_mode("system")
    QApplication.setPalette(QPalette())  # no test leaves its palette to the next
    win.close()


def _pixels(window: MainWindow) -> tuple[str, str]:
    """The colour of an empty spot of the editor and of the canvas, as painted."""
    editor = window.editor.viewport().grab().toImage()
    canvas = window.canvas.grab().toImage()
    return (
        editor.pixelColor(editor.width() - 5, editor.height() - 5).name(),
        canvas.pixelColor(8, 8).name(),
    )


def test_dark_theme_repaints_editor_and_canvas(window, qtbot) -> None:
    window.canvas.show_trace(run_source("import torch\nx = torch.ones(2, requires_grad=True)\n"))
    assert _pixels(window) == ("#ffffff", LIGHT.background)
    menu = {a.text(): a.menu() for a in window.menuBar().actions()}["&View"]
    theme_menu = next(a.menu() for a in menu.actions() if a.text() == "&Theme")
    next(a for a in theme_menu.actions() if a.text() == "&Dark").trigger()
    assert window.theme.dark and load_theme() == "dark"
    assert window.editor.palette().color(QPalette.ColorRole.Base) == QColor("#1e1e1e")
    qtbot.waitUntil(lambda: _pixels(window) == ("#1e1e1e", DARK.background), timeout=2000)
    assert window.canvas._overlay.colours is DARK  # labels and lines too
    assert window.lab.canvas.dark  # the lab's own graph follows
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
    window.theme.set_mode("light")
    qtbot.waitUntil(lambda: _pixels(window) == ("#ffffff", LIGHT.background), timeout=2000)


def test_the_choice_is_remembered(window, qtbot) -> None:
    window.theme.set_mode("dark")
    later = MainWindow()
    qtbot.addWidget(later)
    assert later.theme.mode == "dark" and later.canvas.dark
    later.close()


def test_system_mode_follows_the_desktop_palette_live(window, qtbot) -> None:
    assert window.theme.mode == "system" and not window.theme.dark
    QApplication.setPalette(dark_palette())  # what a desktop switching to dark does
    qtbot.waitUntil(lambda: window.theme.dark and window.canvas.dark, timeout=2000)
    assert window.editor.palette().color(QPalette.ColorRole.Base) == QColor("#1e1e1e")
    QApplication.setPalette(QPalette())
    qtbot.waitUntil(lambda: not window.theme.dark, timeout=2000)


def test_descent_plots_and_inspector_follow_the_theme(window, qtbot) -> None:
    pane = window.show_descent()
    qtbot.waitUntil(lambda: pane.sweep is not None, timeout=60_000)

    def corner(plot) -> str:
        image = plot.grab().toImage()
        return image.pixelColor(3, 3).name()

    # (Under load the first grab can come before the plot's background is painted: it
    # read #828b97 once in a full run.)
    qtbot.waitUntil(lambda: corner(pane.loss_plot) == "#ffffff", timeout=2000)
    window.theme.set_mode("dark")
    qtbot.waitUntil(lambda: corner(pane.loss_plot) == "#1e1e1e", timeout=2000)
    assert corner(pane.surface_plot) == "#1e1e1e"
    # The inspector's plot is hidden until a node is clicked: its brush, not its pixels.
    assert window.inspector.plot.backgroundBrush().color().name() == "#1e1e1e"
    item = next(i for i in window.lab.tasks.items.values() if not i.text().startswith("✓"))
    assert item.data(Qt.ItemDataRole.ForegroundRole) is None  # the palette's text colour
    text = QApplication.palette().color(QPalette.ColorRole.Text)
    assert text.lightness() > 128  # which reads on dark
    window.theme.set_mode("light")
    qtbot.waitUntil(lambda: corner(pane.loss_plot) == "#ffffff", timeout=2000)
