"""The player's caption: always two lines high, a longer caption elided with its full text
in the tooltip, so the controls above it never jump and nothing said is lost."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent, QTextLayout
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

CAPTION_LINES = 2
_JOINER = "\u2060"  # WORD JOINER: no line break on either side
_JOINED_ELLIPSIS = f"{_JOINER}…{_JOINER}"


def elide_to_lines(text: str, font: QFont, width: int, lines: int) -> tuple[str, bool]:
    """`text` wrapped at word boundaries to `width` pixels and cut to `lines` lines, with
    "…" ending the last when the rest does not fit; the lines joined by newlines, and
    whether anything was cut."""
    width = max(1, width)
    wrapped: list[str] = []
    for paragraph in text.split("\n"):
        # A value's range stays on one line: "-0.0116…0.01" broke after its "…" and read
        # as a cut number. Word joiners hold it together while it is laid out.
        joined = paragraph.replace("…", _JOINED_ELLIPSIS)
        layout = QTextLayout(joined, font)
        layout.beginLayout()
        count = 0
        while (line := layout.createLine()).isValid():
            line.setLineWidth(width)
            start, length = line.textStart(), line.textLength()
            wrapped.append(joined[start : start + length].rstrip().replace(_JOINER, ""))
            count += 1
        layout.endLayout()
        if not count:
            wrapped.append("")
    if len(wrapped) <= lines:
        return "\n".join(wrapped), False
    rest = " ".join(part for part in wrapped[lines - 1 :] if part)
    metrics = QFontMetrics(font)
    # The rest of the caption goes on the last line, cut where "…" still fits.
    last = metrics.elidedText(rest + " …", Qt.TextElideMode.ElideRight, width)
    return "\n".join([*wrapped[: lines - 1], last]), True


class CaptionLabel(QLabel):
    """A plain-text label of a fixed number of lines; `text()` is the whole caption, the
    label shows what fits and the tooltip the rest."""

    def __init__(self, parent: QWidget | None = None, lines: int = CAPTION_LINES) -> None:
        super().__init__(parent)
        self._full = ""
        self._elided = False
        self._lines = lines
        self.setTextFormat(Qt.TextFormat.PlainText)  # a caption's "<" is not markup
        self.setWordWrap(False)  # the lines are broken here, to know where to elide
        self.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # The caption takes the width it is given and never asks for more.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._fit_height()

    def text(self) -> str:
        """The whole caption, however much of it is shown."""
        return self._full

    def shown_text(self) -> str:
        """What the label shows: at most its lines, elided."""
        return super().text()

    def is_elided(self) -> bool:
        """Whether part of the caption is only in the tooltip."""
        return self._elided

    def setText(self, text: str) -> None:
        """Show a new caption (elided to the label's lines at its width)."""
        self._full = text
        self._elide()

    def changeEvent(self, event) -> None:
        """A new font: new line height and new breaks."""
        super().changeEvent(event)
        if event.type() == event.Type.FontChange and hasattr(self, "_full"):
            self._fit_height()
            self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Another width breaks the caption elsewhere."""
        super().resizeEvent(event)
        self._elide()

    def _fit_height(self) -> None:
        margins = self.contentsMargins()
        line = self.fontMetrics().lineSpacing()
        self.setFixedHeight(self._lines * line + 2 + margins.top() + margins.bottom())

    def _elide(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin()
        shown, self._elided = elide_to_lines(self._full, self.font(), width, self._lines)
        super().setText(shown)
        self.setToolTip(self._full if self._elided else "")
