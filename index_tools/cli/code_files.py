"""How `check` reads a file of code: decoded whatever it was saved as, read in windows of
bounded size so that a file of any length is checked, never skipped for its size.

- Encoding: a byte order mark (UTF-8, UTF-16 and UTF-32, either byte order) says it; without
  one, text whose every other (or every fourth) byte is NUL is UTF-16 (UTF-32) read as
  such; anything else is UTF-8, an undecodable byte becoming U+FFFD.
- Binary: a file whose first 64 KiB are mostly NUL and other control bytes or not UTF-8 is
  not text (`NotText`); a few stray NUL bytes in text do not make it binary (they are read
  as spaces, which no word holds).
- Windows: `WINDOW_CHARS` characters at a time, cut at a line break, each matched with the
  `MARGIN_CHARS` before it as context and after it as lookahead; a match belongs to the
  window where it starts (`Window.keeps`), so a quote across a cut is reported once.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..model import Match, Position, Range
from ..store.small_files import NotRegularFile, kind_of
from ..text.words import utf16_len

CHUNK_BYTES = 1 << 20
SAMPLE_BYTES = 64 << 10  # what the encoding and binary tests look at
WINDOW_CHARS = 1 << 20  # characters matched at once (files up to WINDOW + MARGIN: one window)
MARGIN_CHARS = 256 << 10  # context before a window and lookahead past its end
BINARY_SHARE = 0.3  # control bytes and undecodable bytes in the sample: more is binary

_BOMS = (  # UTF-32 first: its little-endian mark begins with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BREAK = re.compile("\r\n|\r|\n")
# C0 controls that text does not hold (tab, line feed, vertical tab, form feed, carriage
# return and escape are text), and the replacement character of an undecodable byte
_NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\ufffd]")
_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class NotText(ValueError):
    """A binary file: nothing in it reads as code."""


def sniff(sample: bytes) -> tuple[str, int]:
    """(the encoding, the length of its byte order mark) of a file beginning with `sample`;
    NotText for a binary file."""
    for bom, encoding in _BOMS:
        if sample.startswith(bom):
            return encoding, len(bom)
    if b"\0" in sample:
        wide = _wide_encoding(sample)
        if wide:
            return wide, 0
    text = sample.decode("utf-8", errors="replace")
    if text and len(_NOT_TEXT.findall(text)) > BINARY_SHARE * len(text):
        raise NotText("binary (not text in UTF-8, or UTF-16/32 with or without a byte order mark)")
    return "utf-8", 0


def _wide_encoding(sample: bytes) -> str | None:
    """UTF-16 or UTF-32 without a byte order mark, told by where the NUL bytes are (text
    that is mostly ASCII or Latin: the high bytes of each code unit)."""

    def nul_share(start: int, step: int) -> float:
        part = sample[start::step]
        return part.count(0) / len(part) if part else 0.0

    n = len(sample) - len(sample) % 4
    if n >= 8:
        s = sample[:n]
        shares = [s[i::4].count(0) / (n // 4) for i in range(4)]
        if shares[0] < 0.1 and min(shares[1:]) > 0.9:
            return "utf-32-le"
        if shares[3] < 0.1 and min(shares[:3]) > 0.9:
            return "utf-32-be"
    if len(sample) >= 4:
        even, odd = nul_share(0, 2), nul_share(1, 2)
        if even < 0.1 and odd > 0.6:
            return "utf-16-le"
        if odd < 0.1 and even > 0.6:
            return "utf-16-be"
    return None


@dataclass(frozen=True)
class Window:
    """Part of a file to match: `text` (the window, then up to MARGIN_CHARS past it) after
    `context` (up to MARGIN_CHARS before it)."""

    context: str
    text: str
    end: int  # where the window proper ends in `text` (the rest is lookahead)
    offset: int  # character offset of text[0] in the file
    line: int  # 0-based line of text[0] in the file
    column: int  # UTF-16 column of text[0] (0 unless a line longer than a window was cut)
    first: bool
    last: bool
    margin: int = MARGIN_CHARS  # the lookahead the previous window had past its end

    @property
    def context_lines(self) -> int:
        """Line breaks in the context: the window's first line in `split_lines(context +
        text)`."""
        return len(_BREAK.findall(self.context))

    def keeps(self, m: Match) -> bool:
        """Whether `m` (found in context + text) is this window's to report: it starts in
        the window proper, or before it but reaches past what the previous window saw."""
        start = m.char_start - len(self.context)
        if start >= 0:
            return start < self.end or self.last
        end = m.char_end - len(self.context)
        return self.first or end > self.margin

    def placed(self, m: Match) -> Match:
        """`m` with its ranges in the file's lines and its character offsets the file's."""
        if self.line == 0 and self.column == 0 and self.offset == 0:
            return m
        shift = self.offset - len(self.context)
        return replace(
            m,
            range=self._range(m.range),
            char_start=m.char_start + shift,
            char_end=m.char_end + shift,
            parts=[replace(p, range=self._range(p.range)) for p in m.parts],
        )

    def _range(self, r: Range | None) -> Range | None:
        if r is None:
            return None
        return Range(self._position(r.start), self._position(r.end))

    def _position(self, p: Position) -> Position:
        return Position(p.line + self.line, p.character + (self.column if p.line == 0 else 0))


def window_matches(idx, windows: Iterator[Window], **options) -> Iterator[tuple[Window, Match]]:
    """(window, match) of each match of a file read in windows, once (`Window.keeps`); the
    match as the window saw it (`Window.placed` puts it in the file)."""
    for w in windows:
        for m in kept_matches(idx, w, **options):
            yield w, m


def kept_matches(idx, window: Window, **options) -> list[Match]:
    """The matches of a window that are its own to report (`Window.keeps`), as the window
    saw them."""
    return [m for m in idx.match(window.text, window.context, **options) if window.keeps(m)]


def open_code(path: str | os.PathLike) -> int:
    """A descriptor of a regular file, opened without blocking (a file swapped for a named
    pipe since it was listed is refused, not waited on)."""
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFile(errno.EINVAL, f"{kind_of(st.st_mode)}, not a regular file")
    return fd


def read_windows(
    path: str | os.PathLike, window: int = WINDOW_CHARS, margin: int = MARGIN_CHARS
) -> Iterator[Window]:
    """The windows of a file of code, read as it goes (memory: a window and its margins).
    OSError when it cannot be read, NotText when it is binary (before any window)."""
    with os.fdopen(open_code(path), "rb") as f:
        yield from windows_of(_chunks(f), window, margin)


def _chunks(f) -> Iterator[bytes]:
    while chunk := f.read(CHUNK_BYTES):
        yield chunk


def windows_of(chunks: Iterator[bytes], window: int, margin: int) -> Iterator[Window]:
    raw = b""
    for chunk in chunks:  # the sample: enough bytes to tell the encoding
        raw += chunk
        if len(raw) >= SAMPLE_BYTES:
            break
    encoding, bom = sniff(raw[:SAMPLE_BYTES])
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def decoded() -> Iterator[str]:
        yield decoder.decode(raw[bom:])
        for chunk in chunks:
            yield decoder.decode(chunk)
        yield decoder.decode(b"", final=True)

    texts = decoded()
    buf, buf_start = "", 0  # decoded text from file offset buf_start
    pos, line, column, done, first = 0, 0, 0, False, True
    while True:
        while not done and len(buf) - (pos - buf_start) < window + margin:
            try:
                buf += next(texts).replace("\0", " ")
            except StopIteration:
                done = True
        at = pos - buf_start
        rest = len(buf) - at
        last = done and rest <= window + margin
        end = rest if last else _cut(buf, at, window) - at
        yield Window(
            context=buf[max(0, at - margin) : at],
            text=buf[at : at + (rest if last else end + margin)],
            end=end,
            offset=pos,
            line=line,
            column=column,
            first=first,
            last=last,
            margin=margin,
        )
        if last:
            return
        segment = buf[at : at + end]
        breaks = list(_BREAK.finditer(segment))
        if breaks:
            line += len(breaks)
            column = utf16_len(segment[breaks[-1].end() :])
        else:
            column += utf16_len(segment)
        pos += end
        first = False
        drop = max(0, pos - margin - buf_start)
        buf, buf_start = buf[drop:], buf_start + drop


def _cut(buf: str, at: int, window: int) -> int:
    """Where a window starting at `at` ends: after the last line break in its second half,
    else after its last whitespace, else at `window` characters (never between `\\r` and
    `\\n`)."""
    lo, hi = at + window // 2, at + window
    for pattern in ("\n", "\r"):
        i = buf.rfind(pattern, lo, hi)
        if i >= 0:
            cut = i + 1
            break
    else:
        spaces = [m.end() for m in re.finditer(r"\s+", buf[lo:hi])]
        cut = lo + spaces[-1] if spaces else hi
    if buf[cut - 1 : cut + 1] == "\r\n":
        cut += 1
    return cut
