"""Images the canvas keeps between frames (the edges, the markers): transparent, at the
screen's pixel ratio."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage


def clear_image(width: float, height: float, ratio: float) -> QImage:
    """A transparent image `width` × `height` logical pixels at device pixel ratio `ratio`."""
    image = QImage(
        round(width * ratio), round(height * ratio), QImage.Format.Format_ARGB32_Premultiplied
    )
    image.setDevicePixelRatio(ratio)
    image.fill(Qt.GlobalColor.transparent)
    return image
