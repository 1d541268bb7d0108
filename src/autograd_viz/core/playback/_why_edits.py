"""The script a "why is this .grad None?" answer points at: its lines, quoted, and the
one-line edits (`Edit`) that fix what the answer found."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A block or decorator that turns gradient tracking off.
_GRAD_OFF = re.compile(r"\b(no_grad|inference_mode)\b|set_grad_enabled\(\s*False")


@dataclass(frozen=True)
class Edit:
    """A one-line change to the script: `insert` a line after `line`, or `replace` it."""

    line: int  # 1-based
    action: str  # "insert" (after the line) or "replace"
    text: str

    def apply(self, source: str) -> str:
        """The script with this edit made."""
        lines = source.split("\n")
        if self.action == "insert":
            lines.insert(self.line, self.text)
        else:
            lines[self.line - 1] = self.text
        return "\n".join(lines)


class _ScriptEdits:
    """The script's lines (None: no script was given), and the edits made of them."""

    lines: list[str] | None

    def _line_count(self) -> int:
        return len(self.lines) if self.lines is not None else 0

    def _quoted(self, number: int | None) -> str:
        """`line 4: with torch.no_grad():`, or just `line 4` without the script."""
        text = self._line(number)
        return f"line {number}" + (f": {text.strip()}" if text and text.strip() else "")

    def _line(self, number: int | None) -> str | None:
        if number is None or self.lines is None or not 1 <= number <= len(self.lines):
            return None
        return self.lines[number - 1]

    def _insert_after(self, number: int | None, statement: str) -> Edit | None:
        text = self._line(number)
        if text is None or number is None or text.rstrip().endswith((":", "\\", ",", "(")):
            return None
        indent = text[: len(text) - len(text.lstrip())]
        return Edit(number, "insert", indent + statement)

    def _blank(self, number: int | None) -> Edit | None:
        """The line replaced by `pass` (an emptied loop body stays valid Python)."""
        text = self._line(number)
        if text is None or number is None:
            return None
        indent = text[: len(text) - len(text.lstrip())]
        return Edit(number, "replace", f"{indent}pass")

    def _without(self, number: int | None, piece: str) -> Edit | None:
        text = self._line(number)
        if text is None or number is None or text.count(piece) != 1:
            return None
        return Edit(number, "replace", text.replace(piece, ""))

    def _grad_off_line(self, number: int | None) -> int | None:
        """The `with torch.no_grad():` line (or decorator) enclosing line `number`."""
        text = self._line(number)
        if text is None or number is None or self.lines is None:
            return None
        depth = len(text) - len(text.lstrip())
        for n in range(number - 1, 0, -1):
            above = self.lines[n - 1]
            indent = len(above) - len(above.lstrip())
            header = above.strip() and indent < depth
            decorator = above.lstrip().startswith("@") and indent <= depth
            if header or decorator:
                if _GRAD_OFF.search(above):
                    return n
                depth = min(depth, indent)
        return None
