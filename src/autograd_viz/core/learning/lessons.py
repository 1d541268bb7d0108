"""The lessons shipped with the app, read from the Markdown files in resources/lessons.

A lesson file starts with a small front matter (``id:`` and ``title:`` between ``---``
lines). Each ``## Title {#section-id}`` starts a section; ``{#id tab=Descent}`` says the
section points to a tab of the app. A fenced block opened with ```` ```python Title ````
is a runnable example; everything else is the section's Markdown text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from autograd_viz import resources

_HEADING = re.compile(r"^##\s+(?P<title>.+?)\s*\{#(?P<id>[\w-]+)(?:\s+tab=(?P<tab>\w+))?\}\s*$")
_EXAMPLE_FENCE = re.compile(r"^```python[ \t]+(?P<title>\S.*?)\s*$")
_FENCE = "```"


class LessonFormatError(ValueError):
    """A lesson file does not follow the format above."""


class Example(NamedTuple):
    """A runnable example: a title and the code (unpacks as ``title, code``)."""

    title: str
    code: str


@dataclass(frozen=True)
class Section:
    """One section of a lesson: a short Markdown text and its runnable examples."""

    lesson_id: str
    id: str
    title: str
    text: str
    examples: tuple[Example, ...] = ()
    tab: str | None = None  # the app tab this section sends the learner to

    @property
    def key(self) -> str:
        """The section's key in the learner's progress ("lesson1/graph")."""
        return f"{self.lesson_id}/{self.id}"


@dataclass(frozen=True)
class Lesson:
    """A lesson: a title and its sections, in reading order."""

    id: str
    title: str
    sections: tuple[Section, ...]

    def section(self, section_id: str) -> Section:
        """The section with this id (KeyError when there is none)."""
        for section in self.sections:
            if section.id == section_id:
                return section
        raise KeyError(f"{self.id} has no section {section_id!r}")


def _front_matter(lines: list[str], name: str) -> tuple[dict[str, str], int]:
    if not lines or lines[0].strip() != "---":
        raise LessonFormatError(f"{name}: the file must start with a '---' front matter")
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return fields, number + 1
        key, sep, value = line.partition(":")
        if not sep:
            raise LessonFormatError(f"{name}:{number + 1}: expected 'key: value'")
        fields[key.strip()] = value.strip()
    raise LessonFormatError(f"{name}: the front matter is not closed with '---'")


def parse_lesson(text: str, name: str = "<lesson>") -> Lesson:
    """Read one lesson from its Markdown text."""
    lines = text.splitlines()
    fields, start = _front_matter(lines, name)
    if not fields.get("id") or not fields.get("title"):
        raise LessonFormatError(f"{name}: the front matter needs an id and a title")
    lesson_id = fields["id"]
    sections: list[Section] = []
    heading: re.Match[str] | None = None
    body: list[str] = []
    examples: list[Example] = []
    example: tuple[str, list[str]] | None = None  # open example: title, lines
    in_other_fence = False

    def close_section() -> None:
        if heading is not None:
            sections.append(
                Section(
                    lesson_id=lesson_id,
                    id=heading["id"],
                    title=heading["title"],
                    text="\n".join(body).strip(),
                    examples=tuple(examples),
                    tab=heading["tab"],
                )
            )

    for number, line in enumerate(lines[start:], start=start + 1):
        if example is not None:
            if line.strip() == _FENCE:
                examples.append(Example(example[0], "\n".join(example[1]).rstrip() + "\n"))
                example = None
            else:
                example[1].append(line)
            continue
        if in_other_fence or (line.startswith(_FENCE) and not _EXAMPLE_FENCE.match(line)):
            in_other_fence = in_other_fence != line.startswith(_FENCE)
            body.append(line)
            continue
        fence = _EXAMPLE_FENCE.match(line)
        if fence:
            if heading is None:
                raise LessonFormatError(f"{name}:{number}: an example before the first section")
            example = (fence["title"], [])
            continue
        if line.startswith("## "):
            match = _HEADING.match(line)
            if match is None:
                raise LessonFormatError(f"{name}:{number}: a section needs '## Title {{#id}}'")
            close_section()
            heading, body, examples = match, [], []
            continue
        if heading is not None:
            body.append(line)
    if example is not None or in_other_fence:
        raise LessonFormatError(f"{name}: a code block is not closed")
    close_section()
    ids = [s.id for s in sections]
    if len(set(ids)) != len(ids):
        raise LessonFormatError(f"{name}: two sections share an id")
    return Lesson(id=lesson_id, title=fields["title"], sections=tuple(sections))


@lru_cache(maxsize=1)
def load_lessons() -> tuple[Lesson, ...]:
    """Every shipped lesson, in file-name order."""
    files = resources.lessons()
    return tuple(parse_lesson(f.read_text(encoding="utf-8"), f.name) for f in files)


def all_sections(lessons: tuple[Lesson, ...] | None = None) -> list[Section]:
    """Every section of every lesson, in reading order."""
    return [s for lesson in lessons or load_lessons() for s in lesson.sections]


def find_section(key: str, lessons: tuple[Lesson, ...] | None = None) -> Section:
    """The section with this progress key ("lesson1/graph"); KeyError when there is none."""
    for section in all_sections(lessons):
        if section.key == key:
            return section
    raise KeyError(key)
