"""Open documents as the server sees them: text, version, language and the edits applied;
and files that are not open but hold code written outside the editor (`opened` false: their
text as read from disk, kept while warnings are shown on them, see file_watch.py).

Positions are converted in the position encoding negotiated with the client (UTF-16 unless
the client asked for UTF-8 or UTF-32). Offsets are Python string indices.
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from dataclasses import dataclass, field

from lsprotocol import types

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"

# How many recent edits a document remembers, to re-base results computed on older text.
EDIT_LOG_SIZE = 512


_EOL = re.compile(r"\r\n|\r|\n")


def char_units(ch: str, encoding: str) -> int:
    """Code units one character takes in `encoding`."""
    o = ord(ch)
    if encoding == UTF16:
        return 2 if o > 0xFFFF else 1
    if encoding == UTF8:
        if o < 0x80:
            return 1
        if o < 0x800:
            return 2
        if o < 0x10000:
            return 3
        return 4
    return 1


def units(text: str, encoding: str) -> int:
    """Length of `text` in code units of `encoding`."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    return sum(char_units(ch, encoding) for ch in text)


def offset_in(text: str, line: int, character: int, encoding: str = UTF16) -> int:
    """Offset in `text` of a (line, character) position relative to the start of `text`,
    clamped to the text and to the end of the line. Lines end at `\r\n`, `\r` or `\n`,
    as LSP counts them."""
    start = 0
    breaks = _EOL.finditer(text)
    for _ in range(max(line, 0)):
        m = next(breaks, None)
        if m is None:
            return len(text)
        start = m.end()
    m = _EOL.search(text, start)
    end = m.start() if m else len(text)
    return start + _column_to_index(text[start:end], character, encoding)


def _column_to_index(line_text: str, character: int, encoding: str) -> int:
    if character <= 0:
        return 0
    if encoding == UTF32 or line_text.isascii():
        return min(character, len(line_text))
    count = 0
    for i, ch in enumerate(line_text):
        if count >= character:
            return i
        count += char_units(ch, encoding)
    return len(line_text)


@dataclass(frozen=True)
class Edit:
    """One applied change: `text[start:old_end]` was replaced by `text[start:new_end]`."""

    seq: int
    start: int
    old_end: int
    new_end: int
    inserted: str

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end


def map_span(start: int, end: int, edit: Edit) -> tuple[int, int, bool]:
    """Where the span `[start, end)` lies after `edit`, and whether the edit touched it.

    Text inserted exactly at the start of the span moves the span; text inserted exactly at
    its end does not extend it. A touched span covers the edited text.
    """
    if edit.old_end < start or (edit.old_end == start and edit.start < edit.old_end):
        return start + edit.delta, end + edit.delta, False
    if edit.start == edit.old_end == start:
        return start + edit.delta, end + edit.delta, False
    if edit.start >= end:
        return start, end, False
    new_start = min(start, edit.start)
    new_end = end + edit.delta if edit.old_end <= end else edit.new_end
    return new_start, max(new_start, new_end), True


@dataclass
class TextDocument:
    uri: str
    text: str
    version: int | None = None
    language_id: str = ""
    encoding: str = UTF16
    seq: int = 0  # number of edits applied so far
    opened: bool = True  # false: a file on disk the editor has not opened (file_watch.py)
    edits: deque[Edit] = field(default_factory=lambda: deque(maxlen=EDIT_LOG_SIZE))
    _line_starts: list[int] | None = None

    # -- positions -----------------------------------------------------------------------

    @property
    def line_starts(self) -> list[int]:
        """Offsets where lines start; lines end at `\r\n`, `\r` or `\n` (as LSP counts)."""
        if self._line_starts is None:
            if "\r" in self.text:
                self._line_starts = [0] + [m.end() for m in _EOL.finditer(self.text)]
            else:
                starts = [0]
                find = self.text.find
                i = find("\n")
                while i >= 0:
                    starts.append(i + 1)
                    i = find("\n", i + 1)
                self._line_starts = starts
        return self._line_starts

    def line_count(self) -> int:
        return len(self.line_starts)

    def line_text(self, line: int) -> str:
        """The text of a line, without its line break."""
        starts = self.line_starts
        if line < 0 or line >= len(starts):
            return ""
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        text = self.text[starts[line] : end]
        if text.endswith("\r\n"):
            return text[:-2]
        return text[:-1] if text.endswith(("\r", "\n")) else text

    def offset_at(self, position: types.Position) -> int:
        """Offset of an LSP position, clamped to the document."""
        starts = self.line_starts
        if position.line >= len(starts):
            return len(self.text)
        if position.line < 0:
            return 0
        start = starts[position.line]
        return start + _column_to_index(
            self.line_text(position.line), position.character, self.encoding
        )

    def position_at(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        start = self.line_starts[line]
        return types.Position(line, units(self.text[start:offset], self.encoding))

    def range_of(self, start: int, end: int) -> types.Range:
        return types.Range(self.position_at(start), self.position_at(end))

    # -- edits ---------------------------------------------------------------------------

    def apply(self, change: types.TextDocumentContentChangeEvent) -> Edit:
        """Apply one content change (incremental or whole-document) and record it."""
        if isinstance(change, types.TextDocumentContentChangePartial):
            start = self.offset_at(change.range.start)
            end = max(start, self.offset_at(change.range.end))
            new_text = change.text
        else:
            start, end, new_text = _diff(self.text, change.text)
        self.text = self.text[:start] + new_text + self.text[end:]
        self._line_starts = None
        self.seq += 1
        edit = Edit(self.seq, start, end, start + len(new_text), new_text)
        # the history only needs where text moved, not the text itself
        self.edits.append(Edit(edit.seq, start, end, edit.new_end, ""))
        return edit

    def edits_since(self, seq: int) -> list[Edit] | None:
        """Edits applied after edit number `seq`, or None when they are no longer known."""
        if seq == self.seq:
            return []
        if not self.edits or self.edits[0].seq > seq + 1:
            return None
        return [e for e in self.edits if e.seq > seq]

    def rebase(self, start: int, end: int, since: int) -> tuple[int, int, bool] | None:
        """Map a span of the text as it was at edit `since` to the current text.

        Returns (start, end, touched) or None when the history is too short to tell.
        """
        edits = self.edits_since(since)
        if edits is None:
            return None
        touched = False
        for e in edits:
            start, end, t = map_span(start, end, e)
            touched = touched or t
        return start, end, touched


def _diff(old: str, new: str) -> tuple[int, int, str]:
    """The single replacement turning `old` into `new`: (start, old_end, inserted)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return prefix, len(old) - suffix, new[prefix : len(new) - suffix]


class DocumentStore:
    """The open documents, and the files on disk with warnings (`opened` false), by URI."""

    def __init__(self) -> None:
        self._docs: dict[str, TextDocument] = {}
        self.encoding = UTF16

    def open(self, item: types.TextDocumentItem) -> TextDocument:
        doc = TextDocument(
            uri=item.uri,
            text=item.text,
            version=item.version,
            language_id=item.language_id or "",
            encoding=self.encoding,
        )
        self._docs[item.uri] = doc
        return doc

    def get(self, uri: str) -> TextDocument | None:
        return self._docs.get(uri)

    def get_open(self, uri: str) -> TextDocument | None:
        """The document the editor has open at `uri` (not a file only read from disk)."""
        doc = self._docs.get(uri)
        return doc if doc is not None and doc.opened else None

    def add_from_disk(self, uri: str, text: str, language_id: str) -> TextDocument:
        """A file that is not open, as read from disk."""
        doc = TextDocument(
            uri=uri, text=text, language_id=language_id, encoding=self.encoding, opened=False
        )
        self._docs[uri] = doc
        return doc

    def adopt(self, doc: TextDocument, item: types.TextDocumentItem) -> TextDocument:
        """A file read from disk, now opened by the editor under `item.uri`: the same
        document (its matches and pending checks stay with it); its text is the caller's
        to bring up to the editor's."""
        if doc.uri != item.uri:
            self._docs.pop(doc.uri, None)
        doc.uri, doc.version, doc.opened = item.uri, item.version, True
        doc.language_id = item.language_id or doc.language_id
        self._docs[item.uri] = doc
        return doc

    def close(self, uri: str) -> TextDocument | None:
        return self._docs.pop(uri, None)

    def __iter__(self):
        return iter(list(self._docs.values()))


class DocumentLines:
    """A document's lines as a sequence, read only where asked (attribution search)."""

    def __init__(self, doc: TextDocument):
        self._doc = doc

    def __len__(self) -> int:
        return self._doc.line_count()

    def __getitem__(self, line: int) -> str:
        return self._doc.line_text(line)
