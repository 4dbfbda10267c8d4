"""The seed note's "words": a run of identifier characters is one word, every other
non-whitespace character is a word of its own, whitespace is ignored."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple

import numpy as np

TOKENIZER_VERSION = 1
WORD_RE = re.compile(r"\w+|[^\w\s]")


class Word(NamedTuple):
    text: str
    start: int  # character offset (Python str index) of the first character
    end: int  # one past the last character


def tokenize(text: str) -> list[Word]:
    """Words of `text` with their character offsets."""
    return [Word(m.group(), m.start(), m.end()) for m in WORD_RE.finditer(text)]


def word_texts(text: str, pos: int = 0, endpos: int | None = None) -> list[str]:
    """Just the words (the fast path used when offsets are not needed)."""
    if endpos is None:
        return WORD_RE.findall(text, pos)
    return WORD_RE.findall(text, pos, endpos)


# each ASCII character's class under WORD_RE: 0 whitespace, 1 identifier, 2 a word alone
# (a table for bytes.translate)
_CLASS_OF_BYTE = bytes(
    1 if re.fullmatch(r"\w", chr(c)) else 0 if chr(c).isspace() else 2 for c in range(128)
) + bytes(128)


def word_spans(text: str, pos: int = 0, endpos: int | None = None) -> list[tuple[int, int]]:
    """(start, end) character offsets of the words of `text[pos:endpos]` (ASCII text by
    character classes, several times faster than matching; any other text by WORD_RE)."""
    starts, ends = word_bounds(text, pos, endpos)
    return list(zip(starts.tolist(), ends.tolist()))


def word_bounds(
    text: str, pos: int = 0, endpos: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """`word_spans` as two arrays, the words' starts and their ends (for a reader of a few
    of them)."""
    end = len(text) if endpos is None else min(endpos, len(text))
    piece = text[pos:end]
    if not piece.isascii():
        spans = [m.span() for m in WORD_RE.finditer(text, pos, end)]
        bounds = np.array(spans, dtype=np.int64).reshape(-1, 2)
        return bounds[:, 0], bounds[:, 1]
    # each character's class, a whitespace one before and after: a word starts where the
    # class is greater than "identifier before" (1 or 0), and ends likewise
    kind = np.frombuffer(b"\0" + piece.encode("ascii").translate(_CLASS_OF_BYTE) + b"\0", np.int8)
    ident = kind == 1
    inner = kind[1:-1]
    return np.flatnonzero(inner > ident[:-2]) + pos, np.flatnonzero(inner > ident[2:]) + (pos + 1)


def count_words(text: str) -> int:
    return sum(1 for _ in WORD_RE.finditer(text))


def utf16_len(s: str) -> int:
    """Length of `s` in UTF-16 code units."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


class LineIndex:
    """Maps character offsets of a text to LSP positions (line, UTF-16 character); lines
    end at `\r\n`, `\r` or `\n`, as LSP counts them."""

    def __init__(self, text: str):
        self.text = text
        self.line_starts = [0]
        for m in re.finditer("\r\n|\r|\n", text):
            self.line_starts.append(m.end())

    def line_of(self, offset: int) -> int:
        """0-based line containing character `offset`."""
        return max(0, bisect_right(self.line_starts, offset) - 1)

    def position(self, offset: int) -> tuple[int, int]:
        line = self.line_of(offset)
        start = self.line_starts[line]
        return line, utf16_len(self.text[start:offset])
