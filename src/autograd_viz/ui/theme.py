"""Light and dark: the learner's choice, or the desktop's, followed live."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from autograd_viz.core.platform.preferences import THEMES, load_theme, save_theme

_LABELS = {"system": "&System", "light": "&Light", "dark": "&Dark"}
_FOLLOW = (
    QEvent.Type.PaletteChange,
    QEvent.Type.ApplicationPaletteChange,
    QEvent.Type.ThemeChange,
)


def system_is_dark() -> bool:
    """Whether the desktop asks for dark: its colour scheme where Qt knows it, else
    whether the application palette's window colour is dark."""
    hints = QGuiApplication.styleHints()
    scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else None
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    """A dark palette for the whole window, in the editor's Dark+ greys."""
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    palette = QPalette()
    for name, colour in (
        (role.Window, "#252526"),
        (role.WindowText, "#d4d4d4"),
        (role.Base, "#1e1e1e"),
        (role.AlternateBase, "#2a2d2e"),
        (role.ToolTipBase, "#252526"),
        (role.ToolTipText, "#d4d4d4"),
        (role.PlaceholderText, "#8b8b8b"),
        (role.Text, "#d4d4d4"),
        (role.Button, "#333337"),
        (role.ButtonText, "#d4d4d4"),
        (role.BrightText, "#ff6b6b"),
        (role.Light, "#505055"),
        (role.Midlight, "#3e3e42"),
        (role.Mid, "#2d2d30"),
        (role.Dark, "#1b1b1c"),
        (role.Shadow, "#000000"),
        (role.Highlight, "#264f78"),
        (role.HighlightedText, "#ffffff"),
        (role.Link, "#4da3ff"),
        (role.LinkVisited, "#c586c0"),
    ):
        palette.setColor(name, QColor(colour))
    for name in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(group.Disabled, name, QColor("#6e6e6e"))
    return palette


class Theme(QObject):
    """Holds the theme mode ("system", "light", "dark"), paints the application in it and
    says when dark turns on or off; views connect `dark_changed` to their `set_dark`."""

    dark_changed = Signal(bool)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.mode = load_theme()
        self._dark = False
        self._own_palette = False  # whether the application palette is ours, not the desktop's
        self._applying = False
        self._actions: dict[str, QAction] = {}
        window.installEventFilter(self)
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._follow_system)

    @property
    def dark(self) -> bool:
        """Whether the dark colours are in use."""
        return self._dark

    def set_mode(self, mode: str) -> None:
        """Switch to "system", "light" or "dark", remember the choice and repaint."""
        if mode not in THEMES:
            raise ValueError(f"theme must be one of {THEMES}, not {mode!r}")
        self.mode = mode
        save_theme(mode)
        if mode in self._actions:
            self._actions[mode].setChecked(True)
        self.apply()

    def apply(self) -> None:
        """Paint the application in the current mode and tell every view (always emits)."""
        app = QApplication.instance()
        self._applying = True
        try:
            if self.mode == "system":
                if self._own_palette:
                    app.setPalette(QPalette())  # back to the desktop's own
                    self._own_palette = False
                self._dark = system_is_dark()
            else:
                self._dark = self.mode == "dark"
                app.setPalette(dark_palette() if self._dark else app.style().standardPalette())
                self._own_palette = True
        finally:
            self._applying = False
        self.dark_changed.emit(self._dark)

    def build_menu(self, parent: QWidget) -> QMenu:
        """The View → Theme submenu: System / Light / Dark, the current one checked."""
        menu = QMenu("&Theme", parent)
        group = QActionGroup(menu)
        for mode in THEMES:
            action = QAction(_LABELS[mode], menu, checkable=True)
            action.setChecked(mode == self.mode)
            action.triggered.connect(lambda _=False, m=mode: self.set_mode(m))
            group.addAction(action)
            menu.addAction(action)
            self._actions[mode] = action
        return menu

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The desktop's palette or theme changed: follow it in System mode."""
        if event.type() in _FOLLOW:
            self._follow_system()
        return super().eventFilter(watched, event)

    def _follow_system(self) -> None:
        if self.mode != "system" or self._applying:
            return
        dark = system_is_dark()
        if dark != self._dark:
            self._dark = dark
            self.dark_changed.emit(dark)
