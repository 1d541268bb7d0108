"""File → Export…: the graph as PNG or SVG, the replay as an animated GIF or as one
self-contained HTML page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QWidget

from autograd_viz.core.platform.atomic_files import write_text_atomic
from autograd_viz.core.platform.gil_sharing import gil_shared
from autograd_viz.core.playback.player import Player
from autograd_viz.core.share import page_html
from autograd_viz.core.trace import Trace
from autograd_viz.ui.graph.export import AnimationExporter, export_png, export_svg
from autograd_viz.ui.graph.graph_canvas import GraphCanvas


class _PageSignals(QObject):
    done = Signal(str, str)  # the path, and what went wrong ("" when written)


class PageWriter(QRunnable):
    """Builds a replay page and writes it, off the GUI thread: the page lays the run out
    again and steps its own player through every step (seconds for an 8k-node run)."""

    def __init__(self, trace: Trace, collapsed: frozenset[str], title: str, path: Path) -> None:
        super().__init__()
        self.trace, self.collapsed, self.title, self.path = trace, collapsed, title, path
        self.signals = _PageSignals()

    def run(self) -> None:
        try:
            with gil_shared():
                html = page_html(self.trace, title=self.title, collapsed=self.collapsed)
            write_text_atomic(self.path, html)
            self.signals.done.emit(str(self.path), "")
        except Exception as exc:  # a full disk, a denied folder: said, never raised here
            self.signals.done.emit(str(self.path), str(exc) or type(exc).__name__)
        finally:
            self.trace = None  # PySide keeps a started runnable alive: not its trace


class ExportActions(QObject):
    """The export menu entries of a window; they say how it went in its status bar."""

    def __init__(
        self,
        window: QMainWindow,
        canvas: GraphCanvas,
        area: QWidget,
        player: Callable[[], Player | None],
    ) -> None:
        super().__init__(window)
        self.window, self.canvas, self.area = window, canvas, area
        self.player = player
        self.writing: list[PageWriter] = []  # pages being written (their signals live)

    def actions(self) -> list[QAction]:
        """The menu entries, in order."""
        entries = (
            ("Export graph as PNG…", lambda: self.export_graph_dialog("png")),
            ("Export graph as SVG…", lambda: self.export_graph_dialog("svg")),
            ("Export animation (GIF)…", self.export_animation_dialog),
            ("Export replay page (HTML)…", self.export_page_dialog),
        )
        made = []
        for text, slot in entries:
            action = QAction(text, self.window)
            action.triggered.connect(slot)
            made.append(action)
        return made

    def _say(self, text: str, ms: int = 0) -> None:
        self.window.statusBar().showMessage(text, ms)

    def export_graph_dialog(self, kind: str) -> None:
        """Ask for a file name and save the canvas there as PNG or SVG."""
        name, _ = QFileDialog.getSaveFileName(
            self.window,
            f"Export graph as {kind.upper()}",
            f"graph.{kind}",
            f"{kind.upper()} (*.{kind})",
        )
        if not name:
            return
        save = export_svg if kind == "svg" else export_png
        if save(self.canvas, name):
            self._say(f"Saved {name}", 4000)
        else:
            QMessageBox.warning(self.window, "Export failed", f"Could not write {name}.")

    def export_animation_dialog(self) -> None:
        """Ask for a file name and render the replay there."""
        if self.player() is None:
            self._say("Run some code first: there is nothing to animate.")
            return
        name, _ = QFileDialog.getSaveFileName(
            self.window, "Export animation", "autograd.gif", "Animated GIF (*.gif)"
        )
        if name:
            exporter = self.export_animation(Path(name))
            if exporter is not None:
                exporter.finished.connect(
                    lambda ok, msg: self._say(
                        f"Saved {msg}" if ok else f"Export failed: {msg}", 6000
                    )
                )

    def export_animation(self, path: Path) -> AnimationExporter | None:
        """Replay the forward and backward passes into an animated GIF (in the background)."""
        player = self.player()
        if player is None:
            return None
        exporter = AnimationExporter(player, self.area, path)  # the panes follow the player
        exporter.progress.connect(lambda done, total: self._say(f"Rendering frame {done}/{total}…"))
        exporter.start()
        return exporter

    def export_page_dialog(self) -> None:
        """Ask for a file name and write the replay there as one self-contained page."""
        if self.player() is None:
            self._say("Run some code first: there is nothing to replay.")
            return
        name, _ = QFileDialog.getSaveFileName(
            self.window, "Export replay page", "replay.html", "Web page (*.html)"
        )
        if name:
            self.start_page(Path(name))

    def start_page(self, path: Path) -> PageWriter | None:
        """Write the shown run's replay page in the background (its folds as they are now);
        the status bar says when it is written, a dialog if it could not be."""
        player = self.player()
        if player is None:
            return None
        title = self._page_title()
        writer = PageWriter(player.trace, player.graph.collapsed, title, path)
        writer.setAutoDelete(False)
        writer.signals.done.connect(lambda p, error: self._page_done(writer, p, error))
        self.writing.append(writer)
        self._say(f"Writing the replay page {path.name}…")
        QThreadPool.globalInstance().start(writer)
        return writer

    def _page_done(self, writer: PageWriter, path: str, error: str) -> None:
        self.writing.remove(writer)
        if error:
            self._say("")
            QMessageBox.warning(self.window, "Export failed", f"Could not write {path}: {error}")
        else:
            self._say(f"Saved {path}", 4000)

    def _page_title(self) -> str:
        """The window's title as its title bar shows it: Qt's `[*]` placeholder is a `*`
        while the editor has unsaved changes, else nothing (it reached the page as is)."""
        shown = self.window.windowTitle().replace(
            "[*]", "*" if self.window.isWindowModified() else ""
        )
        return shown or "autograd-viz replay"

    def write_page(self, path: Path) -> bool:
        """Write the shown run's replay page, with the picture's folds as they are now
        (False: no run is shown)."""
        player = self.player()
        if player is None:
            return False
        title = self._page_title()
        html = page_html(player.trace, title=title, collapsed=player.graph.collapsed)
        write_text_atomic(path, html)
        return True
