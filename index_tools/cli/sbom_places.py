"""Where a quote sits in a file's bytes, for a bill of materials: the file's checksums and,
for a span of characters as `check` read it (decoded as `code_files` decodes it), its lines
and its byte range in the file as saved (UTF-8, UTF-16 or UTF-32, a byte order mark counted,
an undecodable byte sequence counted as the one U+FFFD it was read as)."""

from __future__ import annotations

import bisect
import hashlib
import os
import re
from dataclasses import dataclass

from .code_files import open_code, sniff

_BREAK = re.compile("\r\n|\r|\n")


@dataclass(frozen=True)
class Place:
    """A span of a file: lines 1-based and inclusive, bytes 0-based and end-exclusive."""

    first_line: int
    last_line: int
    byte_start: int
    byte_end: int
    column: int  # 1-based, in characters, of the span's first character on its line


class FileBytes:
    """A file read once: its checksums, its text as `check` reads it, and places in it."""

    def __init__(self, data: bytes):
        self.sha1 = hashlib.sha1(data).hexdigest()
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.encoding, bom = sniff(data[: 64 << 10])
        self._bom = bom
        # (character offset, first byte, end byte, text) of each piece decoded strictly,
        # and of each undecodable sequence, read as one U+FFFD
        self._pieces: list[tuple[int, int, int, str]] = []
        view, chars, at = memoryview(data), 0, bom
        while at < len(data):
            try:
                self._pieces.append((chars, at, len(data), str(view[at:], self.encoding)))
                break
            except UnicodeDecodeError as e:
                good = str(view[at : at + e.start], self.encoding)
                self._pieces.append((chars, at, at + e.start, good))
                self._pieces.append((chars + len(good), at + e.start, at + e.end, "\ufffd"))
                chars, at = chars + len(good) + 1, at + e.end
        self.text = "".join(p[3] for p in self._pieces)
        self._starts = [p[0] for p in self._pieces]
        self._lines = [0] + [m.end() for m in _BREAK.finditer(self.text)]

    @classmethod
    def read(cls, path: str | os.PathLike) -> FileBytes:
        with os.fdopen(open_code(path), "rb") as f:
            return cls(f.read())

    def byte_offset(self, char: int) -> int:
        """The byte offset in the file of the character at `char` (or of the file's end)."""
        if not self._pieces:
            return self._bom
        i = max(0, bisect.bisect_right(self._starts, char) - 1)
        start, first, end, piece = self._pieces[i]
        if char - start >= len(piece):
            return end
        return first + len(piece[: char - start].encode(self.encoding))

    def line_of(self, char: int) -> int:
        """The 1-based line of the character at `char`."""
        return bisect.bisect_right(self._lines, char)

    def char_at(self, line: int, utf16_column: int) -> int | None:
        """The character offset of an LSP position (0-based line, UTF-16 column), or None
        when the file has no such line."""
        if not 0 <= line < len(self._lines):
            return None
        at = self._lines[line]
        end = self._lines[line + 1] if line + 1 < len(self._lines) else len(self.text)
        units = 0
        while at < end and units < utf16_column:
            units += 2 if ord(self.text[at]) > 0xFFFF else 1
            at += 1
        return at

    def place(self, char_start: int, char_end: int) -> Place:
        """The place of the characters [char_start, char_end) of the text."""
        char_end = max(char_end, char_start + 1)
        first = self.line_of(char_start)
        return Place(
            first_line=first,
            last_line=max(first, self.line_of(char_end - 1)),
            byte_start=self.byte_offset(char_start),
            byte_end=self.byte_offset(char_end),
            column=char_start - self._lines[first - 1] + 1,
        )
