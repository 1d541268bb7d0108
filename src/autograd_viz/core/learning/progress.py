"""The learner's progress (lab tasks, exercises, quiz), kept between launches."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from psygnal import Signal

from autograd_viz.core.platform.user_data import data_dir, read_json, write_atomic


@dataclass(eq=False)
class Progress:
    """What the learner has done, by kind ("task", "exercise", "quiz", "lesson") and key."""

    path: Path | None = None
    done: dict[str, dict[str, bool]] = field(default_factory=dict)

    changed = Signal(str, str, bool)  # kind, key, done
    was_reset = Signal()

    def is_done(self, kind: str, key: str) -> bool:
        """Whether the learner has done this task / exercise / question."""
        return bool(self.done.get(kind, {}).get(key, False))

    def mark(self, kind: str, key: str, done: bool = True) -> None:
        """Record an outcome and save it at once (a crash must not lose it)."""
        if self.is_done(kind, key) == done and key in self.done.get(kind, {}):
            return
        self.done.setdefault(kind, {})[key] = done
        self.save()
        self.changed.emit(kind, key, done)

    def count(self, kind: str) -> tuple[int, int]:
        """(done, recorded) for one kind."""
        entries = self.done.get(kind, {})
        return sum(entries.values()), len(entries)

    def reset(self) -> None:
        """Forget everything (the Reset progress action)."""
        self.done = {}
        self.save()
        self.was_reset.emit()

    def save(self) -> None:
        """Write the progress file atomically; in-memory progress (no path) is not saved."""
        if self.path is not None:
            write_atomic(self.path, json.dumps({"version": 1, "done": self.done}, indent=1))


def progress_path() -> Path:
    """The file progress lives in."""
    return data_dir() / "progress.json"


def load_progress(path: Path | None = None) -> Progress:
    """The saved progress (an empty one when there is none or the file is damaged)."""
    path = path or progress_path()
    done = read_json(path, {}, expect=dict).get("done", {})
    if not isinstance(done, dict):
        done = {}
    clean = {
        str(kind): {str(k): v is True for k, v in entries.items()}
        for kind, entries in done.items()
        if isinstance(entries, dict)
    }
    return Progress(path=path, done=clean)


# How the progress summary names each kind, in the order it lists them.
SUMMARY_LABELS = {
    "lesson": "Sections",
    "task": "Lab tasks",
    "exercise": "Exercises",
    "quiz": "Quiz",
}


def summary_line(progress: Progress, totals: dict[str, int] | None = None) -> str:
    """One line such as "Sections 3/14 · Lab tasks 2/9 · Quiz 4/11" (a kind without a
    known total shows its done count only)."""
    totals = totals or {}
    parts = []
    for kind, label in SUMMARY_LABELS.items():
        done = progress.count(kind)[0]
        total = totals.get(kind)
        parts.append(f"{label} {done}/{total}" if total else f"{label} {done}")
    return " · ".join(parts)
