"""The one store of matches per document, and how a match becomes a diagnostic.

A stored match keeps its span as document offsets; every edit moves it, and an edit that
changes the quoted words removes it. Diagnostics are always built from this store.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from lsprotocol import types

from index_tools import Match, clean_link, describe_match, printable

from .documents import Edit, TextDocument, map_span
from .protocol import SOURCE
from .words import words_of

SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}

KIND_HEADLINES = {
    "recitation": "Quoted from public code",
    "repetitive": "Repetitive code also found in public code",
    "license": "License text quoted from public code",
    "inventory": "Standard inventory (list/table) also found in public code",
    "idiom": "Common idiom or template also found in public code",
}


def quote_key(words: tuple[str, ...]) -> str:
    """Identifies a quoted snippet independently of where it sits (used to dismiss it)."""
    return hashlib.sha1("\x1f".join(words).encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class StoredMatch:
    id: str
    match: dict  # the engine's Match.to_dict()
    start: int  # document offsets of the quoted range
    end: int
    words: tuple[str, ...]  # the words of the quoted range when it was found
    key: str

    @classmethod
    def create(cls, match: dict, start: int, end: int, words: tuple[str, ...]) -> StoredMatch:
        return cls(uuid.uuid4().hex[:12], match, start, end, words, quote_key(words))

    @property
    def kind(self) -> str:
        return self.match.get("kind", "recitation")

    @property
    def length(self) -> int:
        return int(self.match.get("length", 0))

    @property
    def sources(self) -> list[dict]:
        return list(self.match.get("sources") or [])

    @property
    def best_url(self) -> str:
        for source in self.sources[:1]:
            url = source.get("url") or ""
            if is_web_link(url):
                return url
        return ""

    def data(self) -> dict:
        return {**self.match, "id": self.id}


def is_web_link(url: str) -> bool:
    """An http(s) link without credentials or anything unprintable (the engine cleans the
    links it makes; this also holds for what a client or an older engine sends)."""
    if not isinstance(url, str):
        return False
    base, _, fragment = url.partition("#")
    return bool(base) and clean_link(base) == base and fragment == printable(fragment)


def line_span(source: dict) -> str:
    a, b = source.get("start_line"), source.get("end_line")
    if not a:
        return ""
    return f"L{a}" if not b or b == a else f"L{a}\u2013L{b}"


def describe_source(source: dict) -> str:
    """`python/cpython Lib/json/decoder.py L5–L20 (PSF-2.0)`."""
    parts = [p for p in (source.get("repository"), source.get("path"), line_span(source)) if p]
    text = " ".join(str(p) for p in parts) or "an indexed file"
    lic = source.get("license") or ""
    return f"{text} ({lic})" if lic else text


def files_phrase(match: dict) -> str:
    n = int(match.get("file_count", 0) or 0)
    noun = "file" if n == 1 else "files"
    if match.get("file_count_exact", True):
        return f"found in {n} {noun}"
    return f"found in at least {n} {noun}"


def message_for(match: dict) -> str:
    """One line: what was quoted, from where, and how common it is (the engine's wording,
    shared with the CLI and the references log)."""
    try:
        text = describe_match(Match.from_dict(match))
    except (KeyError, TypeError, ValueError):
        text = _fallback_message(match)
    return printable(text, 4000)  # corpus metadata never breaks or reorders the line


def _fallback_message(match: dict) -> str:
    headline = KIND_HEADLINES.get(match.get("kind", ""), KIND_HEADLINES["recitation"])
    sources = match.get("sources") or []
    where = describe_source(sources[0]) if sources else "indexed code"
    return f"{headline}: {match.get('length', 0)} words match {where}; {files_phrase(match)}"


def to_diagnostic(doc: TextDocument, stored: StoredMatch, severity: str) -> types.Diagnostic:
    href = stored.best_url
    return types.Diagnostic(
        range=doc.range_of(stored.start, stored.end),
        message=message_for(stored.match),
        severity=SEVERITIES.get(severity, types.DiagnosticSeverity.Warning),
        source=SOURCE,
        code=stored.kind,
        code_description=types.CodeDescription(href=href) if href else None,
        data=stored.data(),
    )


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

    def find(self, uri: str, match_id: str) -> StoredMatch | None:
        return next((m for m in self.get(uri) if m.id == match_id), None)

    def overlapping(self, uri: str, start: int, end: int) -> list[StoredMatch]:
        """Matches whose range overlaps `[start, end]` (touching counts)."""
        return [m for m in self.get(uri) if m.start <= end and start <= m.end]

    def remove(self, uri: str, match_id: str) -> StoredMatch | None:
        items = self.get(uri)
        for i, m in enumerate(items):
            if m.id == match_id:
                return items.pop(i)
        return None

    def remove_key(self, key: str, uris: list[str]) -> int:
        removed = 0
        for uri in uris:
            items = self.get(uri)
            keep = [m for m in items if m.key != key]
            removed += len(items) - len(keep)
            if uri in self._by_uri:
                self._by_uri[uri] = keep
        return removed

    def clear(self, uri: str) -> None:
        self._by_uri.pop(uri, None)

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
