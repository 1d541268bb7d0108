"""Exports: the canvas as PNG or SVG, a whole forward+backward replay as an animated GIF."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from PIL import Image
from PySide6.QtCore import QObject, QRect, QSize, QTimer, Signal
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

from autograd_viz.core.platform.atomic_files import write_bytes_via
from autograd_viz.core.playback.player import BACKWARD, FORWARD, Player

MAX_FRAMES = 600  # a longer replay is sampled evenly down to this many frames
FRAME_MS = 500  # how long each step shows in the GIF
HOLD_MS = 1500  # the first and last frames of each pass stay a little longer


def export_png(widget: QWidget, path: str | Path) -> bool:
    """Save what the widget shows as a PNG."""
    return widget.grab().save(str(path), "PNG")


def export_svg(widget: QWidget, path: str | Path, title: str = "autograd-viz graph") -> bool:
    """Save the widget as an SVG (vector shapes and text, as Qt paints them)."""
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(widget.width(), widget.height()))
    generator.setViewBox(QRect(0, 0, widget.width(), widget.height()))
    generator.setTitle(title)
    vector = getattr(widget, "vector_painting", None)
    painter = QPainter()
    if not painter.begin(generator):
        return False
    with vector() if vector is not None else contextlib.nullcontext():
        widget.render(painter)
    return painter.end()


def _frame_plan(player: Player) -> list[tuple[str, int]]:
    """(mode, position) for every frame: the forward pass, then the backward pass."""
    plan: list[tuple[str, int]] = []
    for mode in (FORWARD, BACKWARD):
        count = len(player.steps_in(mode))
        plan.extend((mode, position) for position in range(-1, count))
    if len(plan) > MAX_FRAMES:
        stride = len(plan) / MAX_FRAMES
        plan = [plan[int(i * stride)] for i in range(MAX_FRAMES)] + [plan[-1]]
    return plan


class _EncoderAnswer(QObject):
    """What the encoding thread answers through. The thread holds this, never the exporter:
    the exporter dies with its widget (the window closed mid-encode), and a signal emitted
    on a QObject while the GUI thread deletes it crashes the process."""

    finished = Signal(bool, str)

    def __init__(self) -> None:
        super().__init__()  # no parent: alive while the thread holds it


class AnimationExporter(QObject):
    """Renders one frame per event-loop turn (the GUI stays responsive), then encodes the
    GIF on a worker thread. `finished` carries the path, or an error message."""

    progress = Signal(int, int)  # frames rendered, frames in all
    finished = Signal(bool, str)  # ok, path or error text

    def __init__(self, player: Player, widget: QWidget, path: str | Path, show_frame=None) -> None:
        super().__init__(widget)
        self.player, self.widget, self.path = player, widget, Path(path)
        # What makes the views follow the player, for views that do not follow it themselves
        # (the window's panes follow its RunView, which follows the player).
        self.show_frame = show_frame or (lambda: None)
        self.plan = _frame_plan(player)
        self.frames: list[Image.Image] = []
        self.durations: list[int] = []
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._render_next)
        self._restore = (player.mode, player.position)

    def start(self) -> None:
        """Begin rendering."""
        if not self.plan:
            self.finished.emit(False, "nothing to animate: the run recorded no steps")
            return
        self._timer.start()

    def _render_next(self) -> None:
        index = len(self.frames)
        if index >= len(self.plan):
            self._timer.stop()
            self._encode_in_background()
            return
        mode, position = self.plan[index]
        self.player.set_mode(mode)
        self.player.seek(position, force=True)
        self.show_frame()
        self.frames.append(_to_pil(self.widget))
        last_of_pass = index + 1 == len(self.plan) or self.plan[index + 1][0] != mode
        self.durations.append(HOLD_MS if position == -1 or last_of_pass else FRAME_MS)
        self.progress.emit(index + 1, len(self.plan))

    def _encode_in_background(self) -> None:
        mode, position = self._restore
        self.player.set_mode(mode)
        self.player.seek(position, force=True)
        self.show_frame()
        frames, durations, path = self.frames, self.durations, self.path
        answer = _EncoderAnswer()
        # Queued from the thread; Qt drops the connection if this exporter is deleted first.
        answer.finished.connect(self.finished)

        def encode() -> None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                palette = [
                    f.convert("P", palette=Image.Palette.ADAPTIVE, colors=128) for f in frames
                ]
                write_bytes_via(  # atomic: a failed encode leaves no half GIF behind
                    path,
                    lambda tmp: palette[0].save(
                        tmp,
                        format="GIF",
                        save_all=True,
                        append_images=palette[1:],
                        duration=durations,
                        loop=0,
                        optimize=False,
                    ),
                )
            except Exception as exc:  # disk full, bad path: say so
                answer.finished.emit(False, f"could not write {path}: {exc}")
                return
            answer.finished.emit(True, str(path))

        threading.Thread(target=encode, name="gif-encoder", daemon=True).start()


def _to_pil(widget: QWidget) -> Image.Image:
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    return Image.frombuffer(
        "RGB",
        (image.width(), image.height()),
        bytes(image.constBits()),
        "raw",
        "RGB",
        image.bytesPerLine(),
    ).copy()
