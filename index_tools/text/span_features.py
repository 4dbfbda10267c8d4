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
from dataclasses import dataclass, field
from functools import lru_cache

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


@dataclass
class SpanFeatures:
    words: int  # the note's words in the span
    prose_words: int  # lowercase natural-language words in comments and strings
    comment_words: int  # words inside comments
    string_words: int  # words inside string literals
    sentence_words: int = 0  # words in sentences anywhere, code included
    specific_numbers: int = 0  # distinct numeric literals in code other than 0, 1, 2...
    code_names: set[str] = field(default_factory=set)  # identifiers outside comments/strings
    defined: set[str] = field(default_factory=set)  # names the span binds (assign, def, for)
    parallel_assignments: int = 0  # `a, b, c = ...`: a state tuple updated together
    own_variables: set[str] = field(default_factory=set)  # composed variable names, not API
    members: set[str] = field(default_factory=set)  # `self.conv1`: the author's class members
    messages: int = 0  # distinct string literals that are labels or messages in words
    comment_run: int = 0  # most lowercase words in one comment (an explanatory comment)

    @property
    def specific_names(self) -> set[str]:
        """Names the span itself defines that carry an author's choice: compound names
        (`frame_delta`, `firstFrame`), not one-word generic ones (`arr`, `pivot`, `n`)."""
        return {n for n in self.defined if n not in _COMMON_NAMES and is_compound(n)}


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
    docstring): up to its first one is string."""
    return list(iter_segments(text))


def iter_segments(text: str) -> Iterator[tuple[str, str]]:
    """`segments`, one piece at a time (a reader may stop at the first piece it needs)."""
    pos = 0
    for quote in ('"""', "'''"):
        first = text.find(quote)
        if (
            first >= 0
            and text.count(quote) % 2 == 1
            and text.find("'''" if quote == '"""' else '"""') < 0
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
    prose = comment = string = comment_run = 0
    code_parts: list[str] = []
    pieces = segments(text)
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
    code = "\n".join(code_parts)
    sentences = 0
    for m in _SENTENCE_RE.finditer(text):
        run = m.group().replace(",", " ").replace(".", " ").split()
        if sum(len(w) >= 4 for w in run) >= 3:
            sentences += len(run)
    numbers = set(_NUMBER_RE.findall(code)) - _PLAIN_NUMBERS
    strings = {p.strip("'\"") for k, p in pieces if k == "string"}
    defined: set[str] = set()
    for m in _DEFINED_RE.finditer(code):
        for g in m.groups():
            if g:
                defined.update(n for n in re.split(r"[,\s]+", g) if n)
    return SpanFeatures(
        words=len(words),
        prose_words=prose,
        comment_words=comment,
        string_words=string,
        sentence_words=sentences,
        specific_numbers=len(numbers),
        code_names=set(_NAME_RE.findall(code)),
        defined=defined,
        parallel_assignments=len(_PARALLEL_RE.findall(code)),
        own_variables={
            n
            for n in _VARIABLE_RE.findall(code)
            if is_compound(n) and not is_common_name(n) and (n in defined or not n.isupper())
        },
        members={n for n in _MEMBER_RE.findall(code) if not is_common_name(n)},
        messages=sum(bool(_MESSAGE_RE.fullmatch(s.strip())) for s in strings),
        comment_run=comment_run,
    )
