"""Python syntax highlighting for Qt text documents, driven by Pygments tokens."""

from __future__ import annotations

from pygments.lexer import ExtendedRegexLexer, LexerContext
from pygments.lexers import PythonLexer
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    String,
    _TokenType,
)
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

# Categories the palettes define, in the order the editor and tests refer to them.
CATEGORIES = (
    "keyword",
    "builtin",
    "string",
    "number",
    "comment",
    "function",
    "class",
    "decorator",
    "operator",
)

# Light colours follow VS Code's "Light+", dark ones its "Dark+", so they read as familiar.
LIGHT_PALETTE: dict[str, str] = {
    "keyword": "#0000ff",
    "builtin": "#267f99",
    "string": "#a31515",
    "number": "#098658",
    "comment": "#008000",
    "function": "#795e26",
    "class": "#267f99",
    "decorator": "#af00db",
    "operator": "#5c5c5c",
}
DARK_PALETTE: dict[str, str] = {
    "keyword": "#569cd6",
    "builtin": "#4ec9b0",
    "string": "#ce9178",
    "number": "#b5cea8",
    "comment": "#6a9955",
    "function": "#dcdcaa",
    "class": "#4ec9b0",
    "decorator": "#c586c0",
    "operator": "#b4b4b4",
}

# Most specific token types first: lookup walks up a token's parents until one matches,
# so e.g. Operator.Word ("and", "not", "in") reads as a keyword rather than an operator.
_TOKEN_CATEGORIES: dict[_TokenType, str] = {
    Operator.Word: "keyword",
    Keyword: "keyword",
    Name.Builtin: "builtin",
    Name.Exception: "builtin",
    Name.Function: "function",
    Name.Class: "class",
    Name.Decorator: "decorator",
    String: "string",
    Number: "number",
    Comment: "comment",
    Operator: "operator",
}

# Block state 0 is "top level"; the default -1 of an unhighlighted block means the same.
_ROOT_STATE = 0
# Pathological input could mint unbounded lexer stacks; past this we stop carrying state.
_MAX_STATES = 4096


class _StackTrackingPythonLexer(ExtendedRegexLexer):
    """PythonLexer's own rules, run by the lexer variant that exposes its state stack."""

    # ExtendedRegexLexer keeps the stack in a LexerContext we own, so after lexing one
    # line we can read where the lexer stopped (e.g. inside a triple-quoted string) and
    # resume from there on the next line without re-lexing anything above it.
    name = "Python (line-resumable)"
    tokens = PythonLexer.tokens
    flags = PythonLexer.flags


def category_for(ttype: _TokenType) -> str | None:
    """Return the palette category of a Pygments token type, or None for plain text."""
    while ttype is not None:
        category = _TOKEN_CATEGORIES.get(ttype)
        if category is not None:
            return category
        ttype = ttype.parent
    return None


class PythonHighlighter(QSyntaxHighlighter):
    """Colours Python source one block at a time, resuming multi-line strings via block state."""

    def __init__(self, document: QTextDocument | None = None, *, dark: bool = False) -> None:
        # Build everything highlightBlock needs before the base class attaches to the document.
        self._lexer = _StackTrackingPythonLexer()
        self._stacks: list[tuple[str, ...]] = [("root",)]
        self._stack_ids: dict[tuple[str, ...], int] = {("root",): _ROOT_STATE}
        self._dark = dark
        self._formats: dict[str, QTextCharFormat] = {}
        self._token_formats: dict[_TokenType, QTextCharFormat | None] = {}
        self._build_formats()
        super().__init__(document)

    @property
    def dark(self) -> bool:
        """Whether the dark palette is in use."""
        return self._dark

    def set_dark(self, dark: bool) -> None:
        """Switch between the light and dark palette and recolour the document."""
        if dark == self._dark:
            return
        self._dark = dark
        self._build_formats()
        self.rehighlight()

    def _build_formats(self) -> None:
        palette = DARK_PALETTE if self._dark else LIGHT_PALETTE
        self._formats = {}
        for category in CATEGORIES:
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(palette[category]))
            if category == "comment":
                fmt.setFontItalic(True)
            elif category in ("keyword", "class"):
                fmt.setFontWeight(QFont.Weight.DemiBold)
            self._formats[category] = fmt
        self._token_formats = {}

    def _format_for(self, ttype: _TokenType) -> QTextCharFormat | None:
        try:
            return self._token_formats[ttype]
        except KeyError:
            category = category_for(ttype)
            fmt = self._formats[category] if category is not None else None
            self._token_formats[ttype] = fmt
            return fmt

    def _state_id(self, stack: tuple[str, ...]) -> int:
        state = self._stack_ids.get(stack)
        if state is None:
            if len(self._stacks) >= _MAX_STATES:
                return _ROOT_STATE
            state = len(self._stacks)
            self._stacks.append(stack)
            self._stack_ids[stack] = state
        return state

    def highlightBlock(self, text: str) -> None:
        """Lex one block, starting in the lexer state the previous block ended in."""
        previous = self.previousBlockState()
        start = self._stacks[previous] if 0 <= previous < len(self._stacks) else ("root",)
        # The trailing newline lets the lexer see the end of the line exactly as it would
        # in the whole file (single-quoted strings end there, triple-quoted ones do not).
        context = LexerContext(text + "\n", 0, stack=list(start))
        offsets = _utf16_offsets(text)
        length = len(text)
        for pos, ttype, value in self._lexer.get_tokens_unprocessed(context=context):
            if pos >= length:
                break
            fmt = self._format_for(ttype)
            if fmt is None:
                continue
            end = min(pos + len(value), length)
            if offsets is None:
                self.setFormat(pos, end - pos, fmt)
            else:
                self.setFormat(offsets[pos], offsets[end] - offsets[pos], fmt)
        self.setCurrentBlockState(self._state_id(tuple(context.stack)))


def _utf16_offsets(text: str) -> list[int] | None:
    """Map Python string indices to Qt's UTF-16 positions, or None when they coincide."""
    # Characters outside the BMP take two UTF-16 units in Qt but one index in Python.
    if text.isascii() or all(ord(ch) <= 0xFFFF for ch in text):
        return None
    offsets = [0]
    for ch in text:
        offsets.append(offsets[-1] + (2 if ord(ch) > 0xFFFF else 1))
    return offsets
