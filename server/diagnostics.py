"""The one store of matches per document, and how a match becomes a diagnostic.

A stored match keeps the engine's typed `Match` and its span as document offsets; every
edit moves it, and an edit that changes the quoted words removes it. Diagnostics are always
built from this store, with the verdict the team's decisions give (see `index_tools.judge`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from lsprotocol import types

from index_tools import Match, QuoteIdentity, Source, Verdict, clean_link, describe_match, printable

from .documents import Edit, TextDocument, map_span
from .protocol import SOURCE, PlainJson
from .words import words_of

SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


@dataclass
class StoredMatch:
    id: str
    match: Match
    start: int  # document offsets of the quoted range
    end: int
    words: tuple[str, ...]  # the words of the quoted range when it was found
    identity: QuoteIdentity  # what identifies the quote by its content (dismissals)
    generation: str | None = None  # the index generation that found it, when known
    outside: bool = False  # found in code written to the file outside the editor

    @classmethod
    def create(
        cls,
        match: Match,
        start: int,
        end: int,
        words: tuple[str, ...],
        generation: str | None = None,
        outside: bool = False,
    ) -> StoredMatch:
        identity = QuoteIdentity.of_words(words)
        return cls(uuid.uuid4().hex[:12], match, start, end, words, identity, generation, outside)

    @property
    def kind(self) -> str:
        return self.match.kind

    @property
    def length(self) -> int:
        return self.match.length

    @property
    def sources(self) -> list[Source]:
        return self.match.sources

    @property
    def best_url(self) -> str:
        best = self.match.best_source
        return best.url if best is not None and is_web_link(best.url) else ""

    def data(self, verdict: Verdict | None = None) -> dict:
        """The match's JSON, its parts without their kinds and sources (made after the
        diagnostic: the hover and the `recitation/match` notification list them)."""
        out = PlainJson(
            self.match.to_dict(parts_listed=False), id=self.id, quoteId=self.identity.id
        )
        if verdict is not None:
            out["verdict"] = verdict.to_dict()
        return out


@dataclass
class Announcement:
    """A new quote for the references log (`recitation/match`), as the document had it
    when found: sent once the parts its lookup left for later are made."""

    uri: str
    range: dict  # the flagged range, as LSP JSON
    stored: StoredMatch
    text: str  # the flagged text


def is_web_link(url: str) -> bool:
    """An http(s) link without credentials or anything unprintable (the engine cleans the
    links it makes; this also holds for what a client or an older engine sends)."""
    if not isinstance(url, str):
        return False
    base, _, fragment = url.partition("#")
    return bool(base) and clean_link(base) == base and fragment == printable(fragment)


def line_span(source: Source) -> str:
    a, b = source.start_line, source.end_line
    if not a:
        return ""
    return f"L{a}" if not b or b == a else f"L{a}\u2013L{b}"


def message_for(match: Match, verdict: Verdict | None = None, parts: bool = True) -> str:
    """One line, what matters first (the engine's wording, shared with the CLI and the
    references log); an attributed quote says so first. Its parts are said once made (a
    lookup can leave them for after the diagnostic), not with `parts` false."""
    text = describe_match(match, parts)
    if verdict is not None and verdict.state == "attributed":
        text = "Attributed: " + text.split(": ", 1)[-1]
    return printable(text, 4000)  # corpus metadata never breaks or reorders the line


def to_diagnostic(
    doc: TextDocument, stored: StoredMatch, verdict: Verdict, first_line_only: bool = False
) -> types.Diagnostic:
    href = stored.best_url
    end = stored.end
    if first_line_only:
        line = doc.position_at(stored.start).line
        starts = doc.line_starts
        if line + 1 < len(starts):
            end = min(end, starts[line + 1])
            while end > stored.start and doc.text[end - 1] in "\r\n":
                end -= 1
    return types.Diagnostic(
        range=doc.range_of(stored.start, end),
        message=message_for(stored.match, verdict),
        severity=SEVERITIES.get(verdict.action, types.DiagnosticSeverity.Warning),
        source=SOURCE,
        code=stored.kind,
        code_description=types.CodeDescription(href=href) if href else None,
        data=stored.data(verdict),
        tags=None,
    )


def _same_quote(before: Match, found: Match) -> bool:
    """Whether a quote found again is the one stored, said the same way (its parts too,
    when both are made: a lookup can leave them for later)."""
    parts = before.parts_made and found.parts_made
    return message_for(before, parts=parts) == message_for(found, parts=parts)


class MatchStore:
    """Matches per document URI."""

    def __init__(self) -> None:
        self._by_uri: dict[str, list[StoredMatch]] = {}

    def get(self, uri: str) -> list[StoredMatch]:
        return self._by_uri.get(uri, [])

    def add(self, uri: str, stored: StoredMatch) -> bool:
        """Store a match unless the same words are already flagged at the same place."""
        items = self._by_uri.setdefault(uri, [])
        for other in items:
            if other.start == stored.start and other.end == stored.end:
                return False
        items.append(stored)
        items.sort(key=lambda m: (m.start, m.end))
        return True

    def replace(self, uri: str, items: list[StoredMatch]) -> None:
        self._by_uri[uri] = sorted(items, key=lambda m: (m.start, m.end))

    def replace_span(
        self, uri: str, start: int, end: int, items: list[StoredMatch]
    ) -> tuple[list[StoredMatch], bool]:
        """The matches inside `[start, end]` replaced by `items` (what a check of that span
        on another index or generation found). Returns the matches that are new there (a
        place not flagged before, or flagged with other sources) and whether anything
        changed."""
        kept = [m for m in self.get(uri) if not (start <= m.start and m.end <= end)]
        old = {(m.start, m.end): m for m in self.get(uri) if start <= m.start and m.end <= end}
        placed, new = [], []
        for m in items:
            before = old.get((m.start, m.end))
            if before is not None and _same_quote(before.match, m.match):
                placed.append(before)  # the same quote, said the same way: its id stays
            else:
                placed.append(m)
                new.append(m)
        self.replace(uri, kept + placed)
        return new, bool(new) or len(placed) != len(old)

    def find(self, uri: str, match_id: str) -> StoredMatch | None:
        return next((m for m in self.get(uri) if m.id == match_id), None)

    def overlapping(self, uri: str, start: int, end: int) -> list[StoredMatch]:
        """Matches whose range overlaps `[start, end]` (touching counts)."""
        return [m for m in self.get(uri) if m.start <= end and start <= m.end]

    def clear(self, uri: str) -> None:
        self._by_uri.pop(uri, None)

    def move(self, old_uri: str, new_uri: str) -> None:
        """The document's matches, now under another URI."""
        items = self._by_uri.pop(old_uri, None)
        if items is not None:
            self._by_uri[new_uri] = items

    def on_edit(self, doc: TextDocument, edit: Edit) -> bool:
        """Move the document's matches with `edit`; drop those whose words changed.
        Returns whether anything moved or went."""
        items = self._by_uri.get(doc.uri)
        if not items:
            return False
        changed = False
        keep: list[StoredMatch] = []
        for m in items:
            start, end, touched = map_span(m.start, m.end, edit)
            if (start, end) != (m.start, m.end):
                changed = True
            if touched and tuple(words_of(doc.text[start:end])) != m.words:
                changed = True
                continue
            m.start, m.end = start, end
            keep.append(m)
        self._by_uri[doc.uri] = keep
        return changed
