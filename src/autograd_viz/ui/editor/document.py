"""The file behind the editor: its path and unsaved changes, New/Open/Save/Save As, recent
files, dropped files, autosave and crash recovery, the prompt before changes are lost."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject, QTimer, Signal
from PySide6.QtGui import QAction, QDropEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from autograd_viz.core.platform.autosave import Autosave, AutosaveOwner, recoverable, remove_copy
from autograd_viz.core.platform.preferences import (
    clear_recent_files,
    forget_file,
    recent_files,
    remember_file,
)
from autograd_viz.core.platform.source_files import (
    UnreadableFile,
    read_source_file,
    save_source_file,
)
from autograd_viz.ui.editor.editor import CodeEditor
from autograd_viz.ui.editor.recovery_bar import RecoveryBar, when

AUTOSAVE_MS = 3000
APP_NAME = "autograd-viz"
DROPPABLE = (".py", ".pyw")


class Choice(str, Enum):
    """The answer to "save your changes?"."""

    SAVE = "save"
    DISCARD = "discard"
    CANCEL = "cancel"


# The dialogs, as plain functions: tests replace them (tests/ui/conftest.py) so that
# nothing ever waits on a modal box.
def ask_save_changes(parent: QWidget, name: str) -> Choice:
    """Ask whether to save the changes to `name` before they are lost."""
    buttons = QMessageBox.StandardButton
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "Unsaved changes",
        f"Do you want to save the changes to {name}?",
        buttons.Save | buttons.Discard | buttons.Cancel,
        parent,
    )
    box.setInformativeText("Your changes will be lost if you don't save them.")
    box.setDefaultButton(buttons.Save)
    answer = box.exec()
    return {buttons.Save: Choice.SAVE, buttons.Discard: Choice.DISCARD}.get(
        buttons(answer), Choice.CANCEL
    )


def show_warning(parent: QWidget, title: str, text: str) -> None:
    """Tell the learner why a file could not be opened or saved."""
    QMessageBox.warning(parent, title, text)


def ask_open_path(parent: QWidget, folder: str) -> Path | None:
    """Ask for a Python file to open (None: cancelled)."""
    name, _ = QFileDialog.getOpenFileName(
        parent, "Open Python file", folder, "Python files (*.py *.pyw);;All files (*)"
    )
    return Path(name) if name else None


def ask_save_path(parent: QWidget, suggestion: str) -> Path | None:
    """Ask where to save (None: cancelled)."""
    name, _ = QFileDialog.getSaveFileName(
        parent, "Save Python file", suggestion, "Python files (*.py)"
    )
    return Path(name) if name else None


def dropped_file(mime: QMimeData) -> Path | None:
    """The first local Python file among dragged URLs, if any."""
    for url in mime.urls() if mime.hasUrls() else []:
        if url.isLocalFile() and Path(url.toLocalFile()).suffix.lower() in DROPPABLE:
            return Path(url.toLocalFile())
    return None


class Document(QObject):
    """What the editor holds: a file (or an untitled buffer) and whether it has changed.

    The window's title shows the name and a `*` while there are unsaved changes. Every
    few seconds a changed buffer is copied to the user's data folder; when the app starts
    on a document whose copy differs (it crashed, or was killed), the recovery bar offers it.
    """

    message = Signal(str)  # a line for the status bar
    path_changed = Signal(object)  # the new Path, or None for an untitled buffer

    def __init__(
        self,
        window: QWidget,
        editor: CodeEditor,
        recovery_bar: RecoveryBar,
        autosave_ms: int = AUTOSAVE_MS,
    ) -> None:
        super().__init__(window)
        self.window, self.editor, self.recovery_bar = window, editor, recovery_bar
        self.path: Path | None = None
        self.recovery: Autosave | None = None  # an offer the learner has not answered yet
        self.recovery_path: Path | None = None  # whose autosave the offer is
        self._autosaved: str | None = None  # the text of the autosave this session wrote
        self._autosave_failed = False
        self.autosaves = AutosaveOwner()  # this window's copies, no other's
        editor.document().modificationChanged.connect(window.setWindowModified)
        recovery_bar.restore_requested.connect(self.restore)
        recovery_bar.discard_requested.connect(self.discard_recovery)
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(autosave_ms)
        self.autosave_timer.timeout.connect(self.autosave_now)
        self.autosave_timer.start()
        window.setAcceptDrops(True)
        window.installEventFilter(self)
        editor.viewport().installEventFilter(self)  # the editor would paste the file's name
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self._update_title()

    # ---- state -----------------------------------------------------------------
    @property
    def name(self) -> str:
        """The file name, or "untitled"."""
        return self.path.name if self.path is not None else "untitled"

    @property
    def is_modified(self) -> bool:
        """Whether the editor holds changes that are not in the file."""
        return self.editor.document().isModified()

    def _update_title(self) -> None:
        self.window.setWindowTitle(f"{self.name}[*] — {APP_NAME}")
        self.window.setWindowModified(self.is_modified)

    # ---- the hooks tests answer ------------------------------------------------
    def ask_save_changes(self) -> Choice:
        """Save / Discard / Cancel, asked before unsaved changes would be lost."""
        return ask_save_changes(self.window, self.name)

    def show_warning(self, title: str, text: str) -> None:
        """A message box (tests replace it)."""
        show_warning(self.window, title, text)

    def ask_open_path(self) -> Path | None:
        """The file dialog of Open (tests replace it)."""
        return ask_open_path(self.window, str(self._folder()))

    def ask_save_path(self) -> Path | None:
        """The file dialog of Save As (tests replace it)."""
        return ask_save_path(self.window, str(self._folder() / f"{self.path_stem()}.py"))

    def path_stem(self) -> str:
        """The name Save As suggests, without its suffix."""
        return self.path.stem if self.path is not None else "untitled"

    def _folder(self) -> Path:
        if self.path is not None:
            return self.path.parent
        recent = recent_files()
        return recent[0].parent if recent else Path.home()

    # ---- menus -----------------------------------------------------------------
    def fill_file_menu(self, menu: QMenu) -> None:
        """New, Open…, Open Recent, Save, Save As…"""
        for text, slot, key in (
            ("&New", self.new, QKeySequence.StandardKey.New),
            ("&Open…", self.open_dialog, QKeySequence.StandardKey.Open),
        ):
            menu.addAction(self._action(text, slot, key))
        menu.addMenu(self.recent_menu)
        menu.addSeparator()
        menu.addAction(self._action("&Save", self.save, QKeySequence.StandardKey.Save))
        menu.addAction(self._action("Save &As…", self.save_as, QKeySequence.StandardKey.SaveAs))

    def _action(self, text: str, slot, key: QKeySequence.StandardKey) -> QAction:
        action = QAction(text, self.window)
        action.setShortcut(QKeySequence(key))
        action.triggered.connect(lambda _=False: slot())
        return action

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        paths = recent_files()
        for number, path in enumerate(paths, start=1):
            action = self.recent_menu.addAction(f"&{number % 10} {path.name}   {path.parent}")
            action.setData(str(path))
            action.triggered.connect(lambda _=False, p=path: self.open_recent(p))
        if not paths:
            self.recent_menu.addAction("No recent files").setEnabled(False)
        self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("Clear list", clear_recent_files)
        clear.setEnabled(bool(paths))

    def recent_paths(self) -> list[Path]:
        """The files the Open Recent menu lists (missing files are left out)."""
        return recent_files()

    # ---- opening ---------------------------------------------------------------
    def set_text(self, text: str, path: Path | None) -> None:
        """Show text as the (unchanged) content of `path`, or of a new untitled buffer.
        Never runs it. Offers the document's autosave if one was left behind."""
        self._forget_own_autosave()
        self._drop_offer()
        self.path = Path(path).absolute() if path is not None else None
        self.editor.set_text(text)
        self.editor.document().setModified(False)
        self._update_title()
        self.path_changed.emit(self.path)
        if self.path is not None:
            remember_file(self.path)
        self._offer_recovery()

    def new(self) -> bool:
        """An empty untitled buffer (after asking about unsaved changes)."""
        if not self.maybe_save():
            return False
        self.set_text("", None)
        return True

    def open_text(self, text: str) -> bool:
        """Put text (an example, an exercise's starter) in an untitled buffer, asking first."""
        if not self.maybe_save():
            return False
        self.set_text(text, None)
        return True

    def open_dialog(self) -> bool:
        """Ask for a file and open it."""
        path = self.ask_open_path()
        return self.open_path(path) if path is not None else False

    def open_path(self, path: Path, as_copy: bool = False) -> bool:
        """Open a file (as an untitled copy when `as_copy`), or say why it cannot be
        opened and change nothing."""
        try:
            text = read_source_file(Path(path))
        except UnreadableFile as exc:
            self.show_warning("Cannot open file", f"{exc}\n\n{path}")
            return False
        if not self.maybe_save():
            return False
        self.set_text(text, None if as_copy else Path(path))
        self.message.emit(f"Opened {path}")
        return True

    def open_recent(self, path: Path) -> bool:
        """Open a file from the recent list; a file that has gone leaves the list."""
        if not Path(path).is_file():
            forget_file(path)
            self.show_warning("Cannot open file", f"{path} no longer exists.")
            return False
        return self.open_path(path)

    # ---- saving ----------------------------------------------------------------
    def save(self) -> bool:
        """Save to the current file, asking for a name the first time."""
        if self.path is None:
            return self.save_as()
        return self.save_to(self.path)

    def save_as(self) -> bool:
        """Save under a new name."""
        path = self.ask_save_path()
        return self.save_to(path) if path is not None else False

    def save_to(self, path: Path) -> bool:
        """Write the editor's text to `path` atomically; the document becomes that file."""
        path = Path(path).absolute()
        try:
            save_source_file(path, self.editor.text())
        except OSError as exc:
            self.show_warning("Cannot save", f"{path}\n\n{exc.strerror or exc}")
            return False
        self._forget_own_autosave()
        if path != self.path:
            self.path = path
            self.path_changed.emit(path)
        self.editor.document().setModified(False)
        self._update_title()
        remember_file(path)
        self.message.emit(f"Saved {path}")
        return True

    def maybe_save(self) -> bool:
        """Before unsaved changes would be lost: Save / Discard / Cancel. True: go on."""
        if not self.is_modified:
            return True
        choice = self.ask_save_changes()
        if choice is Choice.SAVE:
            return self.save()
        if choice is Choice.DISCARD:
            self._forget_own_autosave()
            return True
        return False

    def close(self) -> bool:
        """The window is closing: ask about changes; a clean exit leaves no autosave."""
        if not self.maybe_save():
            return False
        self.autosave_timer.stop()
        self._forget_own_autosave()
        self.autosaves.release()
        return True

    # ---- autosave and recovery -------------------------------------------------
    def autosave_now(self) -> Path | None:
        """Copy the buffer to the data folder if it has changes not copied yet (the timer
        and every run call this); returns the file written."""
        if self.recovery is not None:
            return None  # writing now would overwrite the text on offer
        if not self.is_modified:
            self._forget_own_autosave()  # undone back to the file's text
            return None
        text = self.editor.text()
        if text == self._autosaved:
            return None
        try:
            written = self.autosaves.write(self.path, text)
        except OSError as exc:
            if not self._autosave_failed:
                self._autosave_failed = True
                self.message.emit(f"Autosave failed: {exc.strerror or exc}")
            return None
        self._autosaved, self._autosave_failed = text, False
        return written

    def _forget_own_autosave(self) -> None:
        if self._autosaved is not None:
            self.autosaves.remove(self.path)
            self._autosaved = None

    def _offer_recovery(self) -> None:
        saved = recoverable(self.path, self.editor.text())
        if saved is not None:
            self.recovery, self.recovery_path = saved, self.path
            self.recovery_bar.offer(self.name, saved.saved_at)

    def _drop_offer(self) -> None:
        self.recovery = None
        self.recovery_bar.hide()

    def restore(self) -> None:
        """Put the recovered text in the editor, marked as unsaved (Ctrl+Z brings back
        the file's text)."""
        saved = self.recovery
        if saved is None:
            return
        self._drop_offer()
        cursor = QTextCursor(self.editor.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(saved.text)
        self.editor.document().setModified(True)
        if self.autosave_now() is not None:  # the text lives on as this window's copy
            remove_copy(saved)
        self.message.emit(f"Restored the unsaved text from {when(saved.saved_at)}.")

    def discard_recovery(self) -> None:
        """Delete the recovered text for good."""
        if self.recovery is None:
            return
        saved = self.recovery
        self._drop_offer()
        remove_copy(saved)
        self.message.emit("Discarded the recovered text.")

    # ---- dropped files ---------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A .py file dragged onto the window (or the editor) opens when dropped."""
        if isinstance(event, QDropEvent):  # drag enter and drag move are drop events too
            path = dropped_file(event.mimeData())
            if path is not None:
                event.acceptProposedAction()
                if event.type() == QEvent.Type.Drop:
                    # After the drop returns: the prompt must not block the drag source.
                    QTimer.singleShot(0, lambda: self.open_path(path))
                return True
        return super().eventFilter(watched, event)
