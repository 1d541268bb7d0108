"""What the app remembers between launches besides progress: recent files, the theme."""

from __future__ import annotations

import json
from pathlib import Path

from autograd_viz.core.platform.user_data import data_dir, read_json, write_atomic

RECENT_LIMIT = 10
THEMES = ("system", "light", "dark")


def _recent_file() -> Path:
    return data_dir() / "recent.json"


def _settings_file() -> Path:
    return data_dir() / "settings.json"


def recent_files() -> list[Path]:
    """The files opened last, newest first; files that no longer exist are dropped."""
    names = read_json(_recent_file(), {}, expect=dict).get("files", [])
    if not isinstance(names, list):
        return []
    # Only the first names are looked at: a list of a million must not stat a million files.
    paths = [Path(name) for name in names[: RECENT_LIMIT * 5] if isinstance(name, str)]
    return [path for path in paths if _is_file(path)][:RECENT_LIMIT]


def _is_file(path: Path) -> bool:
    """Whether a listed path is a file; a NUL byte or a 5,000-character name is not one."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _store_recent(paths: list[Path]) -> None:
    record = {"version": 1, "files": [str(path) for path in paths[:RECENT_LIMIT]]}
    write_atomic(_recent_file(), json.dumps(record, indent=1))


def remember_file(path: Path) -> list[Path]:
    """Put a file at the top of the recent list (once); returns the new list."""
    path = Path(path).absolute()
    paths = [path, *(p for p in recent_files() if p != path)][:RECENT_LIMIT]
    _store_recent(paths)
    return paths


def forget_file(path: Path) -> list[Path]:
    """Take a file off the recent list; returns the new list."""
    path = Path(path).absolute()
    paths = [p for p in recent_files() if p != path]
    _store_recent(paths)
    return paths


def clear_recent_files() -> None:
    """Empty the recent list."""
    _store_recent([])


def _settings() -> dict:
    stored = read_json(_settings_file(), {}, expect=dict)
    # Settings are flat: a nested value (a hand edit, a hostile file) could not be written
    # back by json.dumps without overflowing the stack, and no setting needs one.
    return {str(k): v for k, v in stored.items() if isinstance(v, (str, int, float, bool))}


def load_theme() -> str:
    """The theme the learner chose: "system" (follow the desktop), "light" or "dark"."""
    theme = _settings().get("theme")
    return theme if theme in THEMES else "system"


def save_theme(theme: str) -> None:
    """Remember the theme choice."""
    if theme not in THEMES:
        raise ValueError(f"theme must be one of {THEMES}, not {theme!r}")
    settings = _settings()
    settings["theme"] = theme
    write_atomic(_settings_file(), json.dumps(settings, indent=1))


def load_keep_variables() -> bool:
    """Whether editor runs keep their variables for the next run (off unless chosen)."""
    return _settings().get("keep_variables") is True


def save_keep_variables(keep: bool) -> None:
    """Remember whether editor runs keep their variables."""
    settings = _settings()
    settings["keep_variables"] = bool(keep)
    write_atomic(_settings_file(), json.dumps(settings, indent=1))
