"""The data model shared by the builder, the matcher, the CLI, the server and the hover.

`Origin` says where a document occurs; `Document` is what a corpus source yields;
`Match` is what the matcher returns and what every client renders.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Generic, TypeVar

from .safe_text import clean_link, printable, redact_credentials, with_fragment
from .text.kinds import KINDS as KINDS
from .text.kinds import Kind as Kind
from .text.words import count_words

T = TypeVar("T")

# What each kind is, as a sentence can say it ("...: a license text").
KIND_LABELS: dict[str, str] = {
    "recitation": "code quoted from public code",
    "license": "a license text",
    "repetitive": "a repetitive sequence",
    "inventory": "a standard inventory (list/table)",
    "idiom": "a common idiom or template",
}


def describe_kind(kind: str) -> str:
    """A short human description of a kind, for hovers and reports ("a license text")."""
    return KIND_LABELS.get(kind, kind)


# line fragment styles of the file viewers links point at: (one line, a range of lines)
LINE_FRAGMENTS: dict[str, tuple[str, str]] = {
    "": ("L{a}", "L{a}-L{b}"),  # GitHub, GitLab, Bitbucket's and most code hosts'
    "unpkg": ("L{a}", "L{a}-{b}"),  # UNPKG's file browser (npm packages)
    "prism": ("line.{a}", "line.{a}-{b}"),  # Prism's line-highlight (PyPI's inspector)
}


@dataclass(frozen=True)
class Origin:
    """One place a document occurs: a file in a repository at a commit."""

    repository: str  # e.g. "python/cpython" or "acme/widgets"; "" when unknown
    path: str  # path inside the repository, "/" separated
    commit: str = ""  # commit, tag or version the link points at
    license: str = "NOASSERTION"  # SPDX id
    link: str = ""  # web link to the file without a line fragment; "" when none
    line_anchor: bool = True  # whether the link takes a line fragment
    # how the link's host selects lines (`LINE_FRAGMENTS`); "" is GitHub's `#L<a>-L<b>`
    line_fragment: str = ""
    # the project's own repository (package metadata), when the link is not to it
    repository_url: str = ""

    def url(self, start_line: int | None = None, end_line: int | None = None) -> str:
        """The link (http(s) only, credentials removed) with a line fragment when the host
        supports one; "" when unsafe."""
        if start_line is None or not self.line_anchor:
            return clean_link(self.link)
        style = self.line_fragment if isinstance(self.line_fragment, str) else ""
        single, span = LINE_FRAGMENTS.get(style, LINE_FRAGMENTS[""])
        if end_line is None or end_line == start_line:
            return with_fragment(self.link, single.format(a=int(start_line)))
        return with_fragment(self.link, span.format(a=int(start_line), b=int(end_line)))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Origin:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def clean_origin(origin: Origin) -> Origin:
    """The origin with a clean link (see `clean_link`) and no credentials in its names;
    the same object when nothing changes. Every source's documents pass through here."""
    link = clean_link(origin.link) if origin.link else ""
    home = clean_link(origin.repository_url) if origin.repository_url else ""
    repository = redact_credentials(origin.repository)
    path = redact_credentials(origin.path)
    if (link, home, repository, path) == (
        origin.link,
        origin.repository_url,
        origin.repository,
        origin.path,
    ):
        return origin
    return dataclasses.replace(
        origin, link=link, repository_url=home, repository=repository, path=path
    )


@dataclass
class Document:
    """A text file from a corpus source."""

    text: str
    origin: Origin
    language: str = ""  # "python", "javascript", ... or "" when unknown


@dataclass
class Position:
    line: int  # 0-based
    character: int  # 0-based, UTF-16 code units (as LSP counts by default)


@dataclass
class Range:
    start: Position
    end: Position

    def to_dict(self) -> dict:
        return {
            "start": {"line": self.start.line, "character": self.start.character},
            "end": {"line": self.end.line, "character": self.end.character},
        }


@dataclass
class Source:
    """One indexed file that contains (part of) a match."""

    repository: str
    path: str
    commit: str
    license: str
    url: str  # http(s) link with a line fragment, or ""
    start_line: int  # 1-based, inclusive, in the source file
    end_line: int
    occurrences: int = 1  # identical files this document stands for
    words: int = 0  # how many words of the match this file contains

    def to_dict(self) -> dict:
        return {
            "url": self.url,
            "repository": self.repository,
            "path": self.path,
            "commit": self.commit,
            "license": self.license,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "occurrences": self.occurrences,
            "words": self.words,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Source:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


class Later(Generic[T]):
    """What a value is made by when first read, once: a part's kind and sources
    (`Part.later`), a match's parts (`Match.parts_later`), for a lookup that leaves them
    for after its diagnostic (`find_matches(defer_parts=True)`). Thread-safe: a hover
    reading them while the lookup's thread settles them waits for it. A making that fails
    raises again when read again (never an empty list)."""

    def __init__(self, make: Callable[[], T], lock: threading.RLock | None = None):
        self._make: Callable[[], T] | None = make
        self._made: T | None = None
        # (one lookup's values share its lock: they read the lookup's spans, one at a time)
        self._lock = lock if lock is not None else threading.RLock()

    def get(self) -> T:
        with self._lock:
            if self._made is None:
                self._made = self._make()
                self._make = None  # (what it held, the lookup's spans, let go)
            return self._made


_LATER = object()  # (a value still to be made by its `Later`: a part's kind, a match's parts)


@dataclass
class Part:
    """A quoted span nested in (or overlapping) a match's primary span, with files of its
    own: the boilerplate tail found in thirty files inside a function found in one.

    Its `kind` and `sources` can be made when first read (`later`, with both given as
    `Part.LATER`): every reader sees the values the lookup would have made at once."""

    LATER = _LATER

    kind: Kind
    length: int  # words
    query_start: int  # word span in the query, as Match's
    query_end: int
    file_count: int
    file_count_exact: bool
    sources: list[Source] = field(default_factory=list)
    range: Range | None = None  # in the suggestion (clipped to it)
    suggestion_words: int = 0
    exact: bool = True
    renamed: list[tuple[str, str]] = field(default_factory=list)
    later: Later[tuple[Kind, list[Source]]] | None = field(default=None, repr=False, compare=False)

    def to_dict(self, listed: bool = True) -> dict:
        """Its JSON; not `listed`: without its kind and sources (a diagnostic's data: what a
        part made later, `later`, has not made yet)."""
        span = {
            "length": self.length,
            "query_start": self.query_start,
            "query_end": self.query_end,
            "suggestion_words": self.suggestion_words,
            "range": self.range.to_dict() if self.range else None,
            "file_count": self.file_count,
            "file_count_exact": self.file_count_exact,
        }
        view = {"exact": self.exact, "renamed": [{"from": a, "to": b} for a, b in self.renamed]}
        if not listed:
            return {**span, **view}
        sources = [s.to_dict() for s in self.sources]
        return {"kind": self.kind, **span, "sources": sources, **view}

    @classmethod
    def from_dict(cls, d: dict) -> Part:
        return cls(
            kind=d["kind"],
            length=d["length"],
            query_start=d.get("query_start", 0),
            query_end=d.get("query_end", 0),
            file_count=d["file_count"],
            file_count_exact=d["file_count_exact"],
            sources=[Source.from_dict(s) for s in d.get("sources", [])],
            range=_range_from_dict(d.get("range")),
            suggestion_words=d.get("suggestion_words", 0),
            exact=d.get("exact", True),
            renamed=[(r["from"], r["to"]) for r in d.get("renamed", [])],
        )

    @property
    def settled(self) -> bool:
        """Whether its kind and sources are made (always, but for a deferred part)."""
        return self._kind is not _LATER and self._sources is not _LATER

    def settle(self) -> None:
        """Make its kind and sources now, if they were left for later (a thread reading them
        meanwhile waits for the one making them: `Later`)."""
        later = self.later
        if later is not None:
            kind, sources = later.get()
            made = self.__dict__
            if made["_kind"] is _LATER:
                made["_kind"] = kind
            if made["_sources"] is _LATER:
                made["_sources"] = sources
            self.later = None  # (after both: a reader that finds it gone finds them made)
        elif not self.settled:
            raise ValueError(
                "a part's kind or sources were left for later with nothing to make them"
            )

    def __getstate__(self) -> dict:
        self.settle()  # (a pickled part carries its values, not how to make them)
        return dict(self.__dict__)


def _made_later(name: str, settle: str) -> property:
    """A dataclass field whose value may be left for later (given as `LATER`): made by the
    method `settle` when first read."""
    slot = "_" + name

    def get(self):
        value = self.__dict__[slot]
        if value is _LATER:
            getattr(self, settle)()
            value = self.__dict__[slot]
        return value

    def put(self, value) -> None:
        self.__dict__[slot] = value

    return property(get, put, doc=f"Its {name} (made when first read: `{settle}`).")


Part.kind = _made_later("kind", "settle")  # type: ignore[method-assign,assignment]
Part.sources = _made_later("sources", "settle")  # type: ignore[method-assign,assignment]


def _range_from_dict(r: dict | None) -> Range | None:
    if not r:
        return None
    return Range(
        Position(r["start"]["line"], r["start"]["character"]),
        Position(r["end"]["line"], r["end"]["character"]),
    )


MATCH_JSON_VERSION = 2  # 2: one match per quoted region, nested spans in `parts`


@dataclass
class Match:
    """One quoted region of the query (context + suggestion): no two matches overlap.

    The region's headline is its primary span, the longest one found whole in indexed files:
    `file_count`, `file_count_exact` and `sources` are that span's (`primary_start`,
    `primary_end`). Other spans of the region that are held by more files (or reach past the
    primary one) are its `parts`, each with its own count and sources.

    Its `parts` can be made when first read (`parts_later`, with `parts` given as
    `Match.LATER`): they change neither its range, nor its count, nor its primary span's
    sources; the parts reaching past the primary span, whose sources an attribution must
    name too, are made when those are asked for (`outer_parts`). Every reader sees the
    parts the lookup would have made at once.
    """

    LATER = _LATER

    kind: Kind
    length: int  # words in the span, counting the part that reaches into the context
    # Word span in the query (context words first, then suggestion words).
    query_start: int
    query_end: int
    # Character offsets of the span in the query text (context + suggestion joined).
    char_start: int
    char_end: int
    text: str  # the quoted text as it appears in the query
    file_count: int  # indexed files that contain at least min_tokens words of the span
    file_count_exact: bool
    sources: list[Source] = field(default_factory=list)  # ranked, best first
    # Set by `Index.match`: the span's range inside the suggestion (clipped to it).
    range: Range | None = None
    suggestion_words: int = 0  # how many of `length` words lie in the suggestion
    exact: bool = True  # False: a copy with renamed identifiers
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (source name, name here)
    primary_start: int = -1  # word span of the primary span in the query (-1: the region)
    primary_end: int = -1
    parts: list[Part] = field(default_factory=list)  # in query order
    parts_later: Later[list[Part]] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.primary_start < 0:
            self.primary_start, self.primary_end = self.query_start, self.query_end

    @property
    def parts_made(self) -> bool:
        """Whether its parts are made (always, but for a lookup that left them for later)."""
        return self.__dict__["_parts"] is not _LATER

    @property
    def settled(self) -> bool:
        """Whether its parts and their kinds and sources are all made."""
        return self.parts_made and all(p.settled for p in self.parts)

    def settle_parts(self) -> None:
        """Make its parts now, if they were left for later (their kinds and sources may
        still be: `Part.settle`)."""
        later = self.parts_later
        if later is not None:
            parts = later.get()
            if self.__dict__["_parts"] is _LATER:
                self.__dict__["_parts"] = parts
            self.parts_later = None
        elif not self.parts_made:
            raise ValueError("a match's parts were left for later with nothing to make them")

    @property
    def reaches_past_primary(self) -> bool:
        """Whether the region is longer than its primary span (parts reach past it)."""
        return (self.primary_start, self.primary_end) != (self.query_start, self.query_end)

    def outer_parts(self) -> list[Part]:
        """Its parts reaching past the primary span (quotes of their own, whose sources an
        attribution names too), made now if they were left for later; none for a region
        that is its primary span."""
        if not self.reaches_past_primary:
            return []
        return [
            p
            for p in self.parts
            if p.query_start < self.primary_start or p.query_end > self.primary_end
        ]

    def __getstate__(self) -> dict:
        self.settle_parts()  # (a pickled match carries its parts, not how to make them)
        return dict(self.__dict__)

    @property
    def primary_length(self) -> int:
        return self.primary_end - self.primary_start

    @property
    def best_source(self) -> Source | None:
        return self.sources[0] if self.sources else None

    def to_dict(self, parts_listed: bool = True) -> dict:
        """Its JSON; not `parts_listed`: its parts without their kinds and sources (a
        diagnostic's data: the hover and the match notification list them), `null` while
        they are left for later (the diagnostic published again says them)."""
        if parts_listed:
            parts: list[dict] | None = [p.to_dict() for p in self.parts]
        elif self.parts_made:
            parts = [p.to_dict(False) for p in self.parts]
        else:
            parts = None
        return {
            "kind": self.kind,
            "length": self.length,
            "suggestion_words": self.suggestion_words,
            "range": self.range.to_dict() if self.range else None,
            "file_count": self.file_count,
            "file_count_exact": self.file_count_exact,
            "text": self.text,
            "sources": [s.to_dict() for s in self.sources],
            "exact": self.exact,
            "renamed": [{"from": a, "to": b} for a, b in self.renamed],
            "query_start": self.query_start,
            "query_end": self.query_end,
            "primary_length": self.primary_length,
            "primary_start": self.primary_start,
            "primary_end": self.primary_end,
            "parts": parts,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Match:
        rng = _range_from_dict(d.get("range"))
        return cls(
            kind=d["kind"],
            length=d["length"],
            query_start=d.get("query_start", 0),
            query_end=d.get("query_end", 0),
            char_start=d.get("char_start", 0),
            char_end=d.get("char_end", 0),
            text=d.get("text", ""),
            file_count=d["file_count"],
            file_count_exact=d["file_count_exact"],
            sources=[Source.from_dict(s) for s in d.get("sources", [])],
            range=rng,
            suggestion_words=d.get("suggestion_words", 0),
            exact=d.get("exact", True),
            renamed=[(r["from"], r["to"]) for r in d.get("renamed", [])],
            primary_start=d.get("primary_start", -1),
            primary_end=d.get("primary_end", -1),
            parts=[Part.from_dict(p) for p in d.get("parts") or []],
        )


Match.parts = _made_later("parts", "settle_parts")  # type: ignore[method-assign,assignment]


HEADLINES = {
    "recitation": "Quoted",
    "repetitive": "Repetitive code",
    "license": "License text",
    "inventory": "Standard list",
    "idiom": "Common idiom",
}


def count_phrase(n: int, exact: bool) -> str:
    """`1 file`, `132 files`, `at least 4096 files`."""
    return f"{'' if exact else 'at least '}{n:,} {'file' if n == 1 else 'files'}"


def describe_match(m: Match, parts: bool = True) -> str:
    """One line, what matters first, as the CLI, the diagnostics and the references log
    say it: `Quoted: python/cpython Lib/shutil.py L224–L288 · PSF-2.0 · 408 words · 1 file`;
    its parts said at the end (not with `parts` false, nor while they are left for later)."""
    head = HEADLINES.get(m.kind, "Quoted") if m.exact else "Renamed copy"
    fields = []
    src = m.best_source
    if src is not None:
        lines = (
            f"L{src.start_line}"
            if src.start_line == src.end_line
            else f"L{src.start_line}\u2013L{src.end_line}"
        )
        # corpus metadata: printable even when the match was read back from a client
        where = " ".join(printable(p) for p in (src.repository, src.path) if p)
        fields += [f"{where} {lines}".strip(), printable(src.license, 120) or "NOASSERTION"]
    else:
        fields.append("indexed code")
    files = count_phrase(m.file_count, m.file_count_exact)
    if 0 < m.primary_length < m.query_end - m.query_start:
        fields.append(f"{m.length:,} words, {m.primary_length:,} of them in {files}")
    else:
        fields += [f"{m.length:,} words", files]
    if m.renamed:
        shown = ", ".join(f"{printable(a)} \u2192 {printable(b)}" for a, b in m.renamed[:4])
        more = f", +{len(m.renamed) - 4} more" if len(m.renamed) > 4 else ""
        fields.append(f"renamed {shown}{more}")
    if parts and m.parts_made and m.parts:
        most = max(m.parts, key=lambda p: p.file_count)
        n = len(m.parts)
        fields.append(
            f"{n} nested part{'s' if n > 1 else ''} "
            f"(up to {count_phrase(most.file_count, most.file_count_exact)})"
        )
    return f"{head}: " + " \u00b7 ".join(fields)


def query_report(suggestion: str, context: str, matches: list[Match]) -> dict:
    """The JSON answer to one query, as `recitation-index query --json` prints it and the
    index service's `/v1/match` returns it."""
    return {
        "version": MATCH_JSON_VERSION,
        "query_words": count_words(context) + count_words(suggestion),
        "suggestion_words": count_words(suggestion),
        "matches": [m.to_dict() for m in matches],
    }
