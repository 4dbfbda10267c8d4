"""What a quoted span is made of, as the classifier reads it: its comments and strings, the
prose in them, the names it defines and the literal items it lists.

A light lexer, not a parser: a span can start in the middle of a line, a string or a
comment, and comes in any language. `#` line comments, `/* */` block comments and
single-, double- and triple-quoted strings are recognised.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterator
from functools import cached_property, lru_cache
from typing import NamedTuple

from .vocabulary import is_common_name

_SEGMENT_RE = re.compile(  # the lookahead passes over plain code fast
    r"""(?=[\#/'"])(?:(?P<comment>\#[^\n]*|/\*.*?(?:\*/|$))
      |(?P<string>'''.*?(?:'''|$)|\"\"\".*?(?:\"\"\"|$)|'(?:\\.|[^'\\\n])*'?|"(?:\\.|[^"\\\n])*"?))""",
    re.S | re.X,
)
_PROSE_WORD_RE = re.compile(r"(?<![\w./\\%-])[a-z]{2,}(?![\w/\\%-])")
_NAME_RE = re.compile(r"[A-Za-z_]\w*")
_DEFINED_RE = re.compile(  # (a name is tried from its first letter and read once: a
    # match from inside it would have matched from the letter before)
    r"\b(?:def|class)\s+([A-Za-z_]\w*)"  # def / class names
    r"|(?<![A-Za-z_])([A-Za-z_]\w*+)\s*(?:[-+*/%|&^]|//|\*\*)?=(?!=)"  # assignment targets
    r"|\bfor\s+([A-Za-z_][\w, ]*?)\s+in\b"  # loop targets
)
_COMMON_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"self", "cls"}
_MIN_PROSE_RUN = 4  # lowercase words in one comment or string before it counts as prose
# A sentence anywhere (a docstring the span starts inside of): words joined by single spaces
# or sentence punctuation, at least three of them four letters long or more.
_SENTENCE_RE = re.compile(r"(?<![A-Za-z'])[A-Za-z']+(?:[,.;:]? [A-Za-z']+){4,}")
_NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_PLAIN_NUMBERS = frozenset({"0", "1", "2", "0.0", "1.0", "0.5", "10", "100"})
# `a, b, c = ...` at the start of a line: three or more names updated together
_PARALLEL_RE = re.compile(r"^[ \t]*[A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*){2,}[ \t]*=(?!=)", re.M)
_MEMBER_RE = re.compile(r"\b(?:self|this)\.([A-Za-z_]\w*)")
# A plain variable: not an attribute (`.name`), not called (`name(`)
_VARIABLE_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\b(?!\s*\()")
# A message or label: two or more words of letters, nothing else (`'learning rate'`)
_MESSAGE_RE = re.compile(r"[A-Za-z][a-z']*(?: [A-Za-z][A-Za-z0-9']*)+[.!?:]?")


class _Pieces(NamedTuple):
    """A span read once: its comments, strings and code, and the words of the first two."""

    pieces: list[tuple[str, str]]
    prose: int
    comment: int
    string: int
    comment_run: int
    code: str  # its code alone, the pieces joined by newlines


class SpanFeatures:
    """What a span of code is made of, each feature read from its text when first asked
    for (`is_authored` asks in order and stops at the first sign of an author)."""

    def __init__(self, text: str, words: list[str]):
        self.text = text
        self.words = len(words)  # the note's words in the span

    @cached_property
    def _pieces(self) -> _Pieces:
        prose = comment = string = comment_run = 0
        code_parts: list[str] = []
        pieces = segments(self.text)
        for kind, piece in pieces:
            if kind == "code":
                code_parts.append(piece)
                continue
            n = len(_PIECE_WORD_RE.findall(piece))
            if kind == "comment":
                comment += n
            else:
                string += n
            lower = _PROSE_WORD_RE.findall(piece)
            if kind == "comment":
                comment_run = max(comment_run, len(lower))
            if len(lower) >= _MIN_PROSE_RUN:
                prose += len(lower)
        return _Pieces(pieces, prose, comment, string, comment_run, "\n".join(code_parts))

    @property
    def prose_words(self) -> int:
        """Lowercase natural-language words in comments and strings."""
        return self._pieces.prose

    @property
    def comment_words(self) -> int:
        """Words inside comments."""
        return self._pieces.comment

    @property
    def string_words(self) -> int:
        """Words inside string literals."""
        return self._pieces.string

    @property
    def comment_run(self) -> int:
        """Most lowercase words in one comment (an explanatory comment)."""
        return self._pieces.comment_run

    @cached_property
    def sentence_words(self) -> int:
        """Words in sentences anywhere, code included."""
        sentences = 0
        for m in _SENTENCE_RE.finditer(self.text):
            run = m.group().replace(",", " ").replace(".", " ").split()
            if sum(len(w) >= 4 for w in run) >= 3:
                sentences += len(run)
        return sentences

    @cached_property
    def messages(self) -> int:
        """Distinct string literals that are labels or messages in words."""
        strings = {p.strip("'\"") for k, p in self._pieces.pieces if k == "string"}
        return sum(bool(_MESSAGE_RE.fullmatch(s.strip())) for s in strings)

    @cached_property
    def defined(self) -> set[str]:
        """Names the span binds (assign, def, for)."""
        defined: set[str] = set()
        for m in _DEFINED_RE.finditer(self._pieces.code):
            for g in m.groups():
                if g:
                    defined.update(n for n in re.split(r"[,\s]+", g) if n)
        return defined

    @property
    def specific_names(self) -> set[str]:
        """Names the span itself defines that carry an author's choice: compound names
        (`frame_delta`, `firstFrame`), not one-word generic ones (`arr`, `pivot`, `n`)."""
        return {n for n in self.defined if n not in _COMMON_NAMES and is_compound(n)}

    @cached_property
    def own_variables(self) -> set[str]:
        """Composed variable names that are no API's."""
        defined = self.defined
        return {
            n
            for n in _VARIABLE_RE.findall(self._pieces.code)
            if is_compound(n) and not is_common_name(n) and (n in defined or not n.isupper())
        }

    @cached_property
    def members(self) -> set[str]:
        """`self.conv1`: the author's class members."""
        return {n for n in _MEMBER_RE.findall(self._pieces.code) if not is_common_name(n)}

    @cached_property
    def parallel_assignments(self) -> int:
        """`a, b, c = ...`: a state tuple updated together."""
        return len(_PARALLEL_RE.findall(self._pieces.code))

    @cached_property
    def specific_numbers(self) -> int:
        """Distinct numeric literals in code other than 0, 1, 2..."""
        return len(set(_NUMBER_RE.findall(self._pieces.code)) - _PLAIN_NUMBERS)

    @cached_property
    def code_names(self) -> set[str]:
        """Identifiers outside comments and strings."""
        return set(_NAME_RE.findall(self._pieces.code))


_LETTERS_RE = re.compile(r"[A-Za-z]{2}")
_CAMEL_RE = re.compile(r"[a-z][A-Z]")
_PIECE_WORD_RE = re.compile(r"\w+|[^\w\s]")


@lru_cache(maxsize=65536)
def is_compound(name: str) -> bool:
    """`snake_case` with two alphabetic parts or `camelCase`: a name somebody composed."""
    parts = [p for p in name.strip("_").split("_") if _LETTERS_RE.search(p)]
    if len(parts) >= 2:
        return True
    return bool(_CAMEL_RE.search(name))


def segments(text: str) -> list[tuple[str, str]]:
    """(kind, text) pieces of `text`: kind is "code", "comment" or "string". A span with an
    odd number of one kind of triple quote starts inside such a string (the end of a
    docstring): up to its first one is string; unless that quote opens a string (it follows
    `:`, `=`, a bracket or a comma, or starts the span): then the span ends inside the last
    one (a class and the first words of the next function's docstring)."""
    return list(iter_segments(text))


_OPENS_AFTER = frozenset(":=([{,")


def _opens(text: str, quote: int) -> bool:
    """Whether the triple quote at `quote` opens a string, by what comes before it."""
    before = text[:quote].rstrip()
    return not before or before[-1] in _OPENS_AFTER or before.endswith("return")


def iter_segments(text: str) -> Iterator[tuple[str, str]]:
    """`segments`, one piece at a time (a reader may stop at the first piece it needs)."""
    pos = 0
    for quote in ('"""', "'''"):
        first = text.find(quote)
        if (
            first >= 0
            and text.count(quote) % 2 == 1
            and text.find("'''" if quote == '"""' else '"""') < 0
            and not _opens(text, first)
        ):
            pos = first + 3
            yield "string", text[:pos]
            break
    for m in _SEGMENT_RE.finditer(text, pos):
        if m.start() > pos:
            yield "code", text[pos : m.start()]
        yield "comment" if m.group("comment") else "string", m.group()
        pos = m.end()
    if pos < len(text):
        yield "code", text[pos:]


def span_features(text: str, words: list[str]) -> SpanFeatures:
    """The span's features, read as they are asked for."""
    return SpanFeatures(text, words)
