"""From a suggestion and its context to matches, one per quoted region, with exact counts.

1. Runs. The query's words (context, then suggestion) become the vocabulary's ids; the
   suffix arrays give every maximal common run of at least `min_tokens` words that reaches
   into the suggestion (`suffix.search`): around anchors with few places, each document's
   run; where an anchor's words are everywhere (a license header), the spans from counts
   (a lookup that leaves its parts for later leaves those of an anchor inside one run's
   span: they can only be that region's parts).
2. Spans. Every distinct (start, end) of a run is a span; its files are the documents
   holding it whole (with their identical copies): exact, whatever the number of copies.
   A lookup's spans (`Spans`) are arrays of starts and ends, each made a `Span` when read:
   code vendored in hundreds of packages has hundreds of spans from counts, few of them read.
3. Regions. Overlapping spans form one region, reported as one `Match`: its primary span
   (the longest, renamed or not; exact copies first of equal ones) gives the headline and
   the source lines; the exact runs inside a renamed primary span, and spans held by a quarter more
   documents than the spans shown that hold most of their words (a boilerplate tail
   inside a function), one per text, or reaching past the primary one are its `parts`.
   Listing is bounded (`max_sources` per span; `PART_SOURCES` for a part inside the
   primary span, whose files a reader sees one or two of), counting never is.

With a language, the same runs are searched in the rename-insensitive view (identifiers
as one placeholder) where no exact span covers the code, split where the renaming stops
being consistent, stopped where the copy stops (an edge name whose renaming nothing inside
supports is the code around it: `_trimmed`; so is an edge line that only closes brackets,
or that opens the user's next definition: `_EdgeLines`), and reported with `exact` false.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple

import numpy as np

from ..model import Later, Match, Part, Position, Range, Source
from ..store.shards import ranges, renamed_ids
from ..text.kinds import classify
from ..text.normalize import canonical, identifier_mask, keywords
from ..text.templates import QueryTemplates
from ..text.words import LineIndex
from . import kernel
from .suffix import Crowded, CrowdedSpans, search

MAX_CONTEXT_WORDS = 20_000  # context beyond this cannot change a match in practice
MAX_PARTS = 32  # nested parts kept per match
# a part is held by a quarter more documents (distinct texts: identical files are one) than
# the spans shown that hold most of its words; nearer counts say nothing their lines do not
PART_SHARE = 1.25
PART_SOURCES = 3  # sources listed for a part inside the primary span (hover: 1, CLI: 2)
MIN_SAME_NAMES = 0.1  # share of its identifiers a renamed copy keeps (APIs, attributes...)
MIN_KEYWORDS = 2  # distinct keywords a renamed copy contains ...
SAME_NAMES_WITHOUT_KEYWORDS = 0.4  # ... unless it keeps at least this share of its names
SPILL = 5  # words of the code around a renamed copy it can take in at an edge (`_trimmed`)


class Run(NamedTuple):
    """A maximal run of equal words shared by the query and one document."""

    start: int  # query word positions [start, end)
    end: int
    doc: int
    doc_start: int  # the document's word position of `start`
    # a renamed copy's (source name, name here) pairs, in order (`_renamed_pairs`), each
    # source name as its place in `theirs`: the document's ids where its words differ
    renamed: tuple[tuple[int, str], ...] = ()
    theirs: Sequence[int] = ()
    same_names: float = 1.0  # share of the identifiers a renamed copy kept as they are

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass(slots=True)
class Span:
    """A distinct quoted word span and the documents that hold it whole: their runs around
    it, or (a span found from counts) the documents and where each holds it."""

    start: int
    end: int
    crowded: Crowded | None = None
    exact: bool = True  # False: found in the rename-insensitive view only
    # the runs around it (`_spans`): the lookup's runs as `Run`s (or None: made from the
    # table), their table (start, end, document, its position of start), and which of them
    # are this span's (each document's first, by document: `_Around.of(k)`, this span's k);
    # made into `runs` when asked
    _held: tuple[list[Run] | None, np.ndarray, _Around, int] | None = field(
        default=None, compare=False, repr=False
    )
    _runs: dict[int, Run] | None = field(default=None, compare=False, repr=False)

    @property
    def runs(self) -> dict[int, Run]:
        """Document -> its run around the span (none for a span found from counts)."""
        if self._runs is None:
            self._runs = {}
            if self._held is not None:
                runs, table, at = self._held[0], self._held[1], self.held_at()
                if runs is None:
                    made = (Run(*row) for row in table[at].tolist())
                else:
                    made = map(runs.__getitem__, at.tolist())
                for r in made:
                    self._runs[r.doc] = r
        return self._runs

    @property
    def length(self) -> int:
        return self.end - self.start

    def _listed(self) -> int:
        return len(self.held_at()) if self._held is not None else len(self.runs)

    @property
    def documents(self) -> int:
        return self.crowded.documents if self.crowded is not None else self._listed()

    @property
    def places(self) -> int:
        """At least `documents`: known without reading any place."""
        return self.crowded.places if self.crowded is not None else self._listed()

    def fewer_places_than(self, most: float) -> bool:
        """`places < most`, for a span found from counts without searching its start's
        spans when a span inside it says so."""
        if self.crowded is not None:
            return self.crowded.fewer_places_than(most)
        return self._listed() < most

    def fewer_documents_than(self, most: float) -> bool:
        """`documents < most`, for a span found from counts without counting its documents
        when a span inside it says so."""
        if self.crowded is not None:
            return self.crowded.fewer_documents_than(most)
        return self._listed() < most

    def doc_ids(self) -> np.ndarray:
        if self.crowded is not None:
            return self.crowded.listing()
        if self._held is not None:
            return self._held[1][self.held_at(), 2]
        return np.fromiter(self.runs, dtype=np.int64, count=len(self.runs))

    def held_at(self) -> np.ndarray:
        """Its runs' rows in the table (a span with runs)."""
        _, _, around, k = self._held
        return around.of(k)


@dataclass
class Query:
    """The words looked up: the context's last words, then the suggestion's."""

    context: str
    suggestion: str
    words: list[str]
    ids: np.ndarray
    context_words: int  # words of the context kept (the suggestion starts here)
    context_skipped: int  # context words before those
    starts: list[int]  # where each of the suggestion's words starts in it
    ends: list[int]  # and ends
    context_starts: np.ndarray  # where each of the context's words starts in it

    @property
    def size(self) -> int:
        return len(self.words)


@dataclass
class Options:
    min_tokens: int
    max_sources: int
    check: Callable[[], None] = lambda: None  # the deadline's check (see find_matches)
    defer_parts: bool = False  # parts inside the primary span: kind and sources made later


def _spans(
    table: np.ndarray, exact: bool, runs: list[Run] | None = None, alone_first: bool = False
) -> list[Span]:
    """Distinct spans, each with the documents whose run contains it (the longest one).
    `table`: the runs, rows (start, end, document, its position of start) as the search
    gives them; `runs`: the same as `Run`s where they carry more (a renamed copy's names),
    else each row made a `Run` only for the spans whose runs are read (most are counted
    only). `alone_first`: the first span asked finds its runs alone (`_Around`)."""
    if not len(table):
        return []
    starts, ends = table[:, 0], table[:, 1]
    # each distinct span once, in the order first found
    # (np.unique's first call imports numpy.ma: 10 ms in a lookup)
    key = starts * (int(ends.max()) + 1) + ends
    by_key = np.argsort(key, kind="stable")
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[by_key[1:]] != key[by_key[:-1]]
    first = np.sort(by_key[new])
    bounds = table[first, :2]
    around = _Around(table, bounds, alone_first)
    out = []
    for k, (a, b) in enumerate(bounds.tolist()):
        span = Span(a, b, exact=exact)
        span._held = (runs, table, around, k)
        out.append(span)
    return out


class _Around:
    """The runs around each of a table's distinct spans (`bounds`: rows start, end), the
    first of each document, by document (`_held_runs`): found for all at once when first
    asked, or (`alone_first`) for the first span asked alone, for all when another is. A
    lookup that leaves its parts for later reads its primary span's alone before its
    answer; a quote of widely copied code has dozens of spans over hundreds of runs."""

    def __init__(self, table: np.ndarray, bounds: np.ndarray, alone_first: bool = False):
        self.table, self.bounds, self.alone_first = table, bounds, alone_first
        self._all: tuple[np.ndarray, list[int]] | None = None
        self._one: tuple[int, np.ndarray] | None = None

    def of(self, k: int) -> np.ndarray:
        """Span k's runs: their rows in the table."""
        if self._all is not None:
            held, cuts = self._all
            return held[cuts[k] : cuts[k + 1]]
        if self._one is None and self.alone_first:
            self._one = k, self._alone(k)
        if self._one is not None and self._one[0] == k:
            return self._one[1]
        self._all = self._each()
        return self.of(k)

    def _alone(self, k: int) -> np.ndarray:
        """`_held_runs` of span k alone: the runs around it, by document, each document's
        first in `_each`'s order (the same keys over fewer rows)."""
        table, (a, b) = self.table, self.bounds[k].tolist()
        inside = np.flatnonzero((table[:, 0] <= a) & (table[:, 1] >= b))
        rows = table[inside]
        order = np.lexsort((rows[:, 3], rows[:, 0] - rows[:, 1], rows[:, 2]))  # (stable)
        docs = rows[order, 2]
        first = np.ones(len(order), dtype=bool)
        first[1:] = docs[1:] != docs[:-1]
        return inside[order[first]]

    def _each(self) -> tuple[np.ndarray, list[int]]:
        """`_held_runs` of every span: the runs held, and each span's among them."""
        table = self.table
        # each document's runs, its longest first; of equal ones, the first in the file
        # (then the first found)
        order = np.lexsort((np.arange(len(table)), table[:, 3], table[:, 0] - table[:, 1],
                            table[:, 2]))  # fmt: skip
        rows = table[order]
        a, b = self.bounds[:, 0], self.bounds[:, 1]
        held, cuts = _held_runs(rows[:, 0], rows[:, 1], rows[:, 2], a, b)
        return order[held], cuts


HELD_AT_ONCE = 1 << 21  # (span, run) pairs compared in one step of `_held_runs`


def _held_runs(
    starts: np.ndarray, ends: np.ndarray, docs: np.ndarray, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, list[int]]:
    """For each span [a[k], b[k]): the runs around it (their positions in `starts`, `ends`,
    `docs`: runs grouped by document), the first of each document, as
    `held[cuts[k]:cuts[k + 1]]`. All spans at once (a quote of vendored code has dozens
    over hundreds of runs), in steps of HELD_AT_ONCE pairs."""
    parts, cuts = [], [0]
    step = max(1, HELD_AT_ONCE // len(starts))
    for lo in range(0, len(a), step):
        sa, sb = a[lo : lo + step, None], b[lo : lo + step, None]
        k, at = np.nonzero((starts <= sa) & (ends >= sb))  # (by span, then position)
        first = np.ones(len(at), dtype=bool)  # each document's first run around the span
        first[1:] = (k[1:] != k[:-1]) | (docs[at[1:]] != docs[at[:-1]])
        k = k[first]
        parts.append(at[first])
        cuts += (np.searchsorted(k, np.arange(1, len(sa) + 1)) + cuts[-1]).tolist()
    return (parts[0] if len(parts) == 1 else np.concatenate(parts)), cuts


# --- 4. regions -------------------------------------------------------------------------------


class Spans:
    """A lookup's spans, in one order: the exact ones with runs, those found from counts,
    the renamed ones. Their starts, ends and views as arrays; each one a `Span` when first
    read (`spans[k]`): a quote of vendored code has hundreds found from counts, of which
    the matches read few."""

    def __init__(self, listed: list[Span], crowded: CrowdedSpans):
        self._crowded = crowded
        self._made: list[Span | None] = [*listed, *[None] * len(crowded)]
        self._first = len(listed)  # the first one from counts
        self.starts, self.ends = _bounds(listed, "start"), _bounds(listed, "end")
        if len(crowded):
            self.starts = np.concatenate((self.starts, crowded.starts))
            self.ends = np.concatenate((self.ends, crowded.ends))
        self.exact = np.ones(len(self._made), dtype=bool)
        self.renamed: list[Span] = []
        self.later = crowded.later  # crowded anchors inside runs' spans, not searched

    def and_renamed(self, renamed: list[Span]) -> Spans:
        """These spans and the renamed ones after them."""
        self.renamed = renamed
        if renamed:
            self._made += renamed
            self.starts = np.concatenate((self.starts, _bounds(renamed, "start")))
            self.ends = np.concatenate((self.ends, _bounds(renamed, "end")))
            self.exact = np.append(self.exact, np.zeros(len(renamed), dtype=bool))
        return self

    def __len__(self) -> int:
        return len(self._made)

    def search_crowded(self, region: np.ndarray) -> None:
        """The intervals of the spans from counts in `region` searched at once (one call
        a shard, not one a start as each is first read: a region's parts read most)."""
        crowded = region[(region >= self._first) & (region < self._first + len(self._crowded))]
        if len(crowded):
            self._crowded.counts.fill_crowded(*self.starts[crowded].tolist())

    def __getitem__(self, k: int) -> Span:
        made = self._made[k]
        if made is None:
            c = self._crowded[k - self._first]
            made = self._made[k] = Span(c.start, c.end, crowded=c)
        return made


def _bounds(spans: list[Span], kind: str) -> np.ndarray:
    return np.fromiter([getattr(s, kind) for s in spans], dtype=np.int64, count=len(spans))


def _regions(spans: Spans) -> list[np.ndarray]:
    """Spans (their indexes) grouped into regions of overlapping spans, in query order,
    each by start, the longest first of one start."""
    if not len(spans):
        return []
    order = np.lexsort((-spans.ends, spans.starts))  # (stable: equal spans in the order given)
    starts, ends = spans.starts[order], spans.ends[order]
    # a region begins where a span starts at or past the end of every span before it
    reach = np.maximum.accumulate(ends)
    bounds = [0, *(np.flatnonzero(starts[1:] >= reach[:-1]) + 1).tolist(), len(order)]
    return [order[a:b] for a, b in zip(bounds, bounds[1:])]


def _primary(spans: Spans, region: np.ndarray) -> int:
    """The longest span, renamed or not (a renamed copy is the quote a user made, the
    exact runs inside it its parts); of equal ones an exact copy, then the one most files
    hold (documents counted for the longest only), then the first."""
    if len(region) == 1:
        return int(region[0])
    lengths = spans.ends[region] - spans.starts[region]
    longest = region[lengths == lengths.max()]
    exact = spans.exact[longest]
    if exact.any():
        longest = longest[exact]
    return max(longest.tolist(), key=lambda k: (spans[k].documents, -spans[k].start))


def _collapsed(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each query word's run of equal words (a separator line of `-` is one run), and the
    word of each run: the words of [s, e) with runs collapsed are `words[run[s] : run[e -
    1] + 1]`."""
    new = np.ones(len(ids), dtype=bool)
    new[1:] = ids[1:] != ids[:-1]
    return np.cumsum(new) - 1, ids[new]


def _parts(
    spans: Spans, region: np.ndarray, primary: int, ids: np.ndarray, check=lambda: None
) -> list[Span]:
    """The spans of a region worth their own line: held by at least `PART_SHARE` times
    the documents of the primary span and of each part shown that holds most of their
    words (a boilerplate tail inside a function: more files hold it), or reaching past the
    primary span; at most `MAX_PARTS`.

    A span's text is its words (`ids`, the query's) with each run of an equal word as
    one: a separator line matches at every shift and with every length of the line in
    other files, the same text each time. Spans are visited by the length of their text,
    longest first, so the spans around one are decided before it (a region of widely
    copied code has hundreds of spans a word apart: a part a word shorter than another,
    in 1% more files, says nothing new); of spans with one text, the shortest (held by the
    most files) first, and only one is shown. The primary span's text is shown again only
    inside it (the code under a shorter separator line, in more files); a span of one word
    over and over (the line alone) is no part. A span's places bound its documents: one
    with too few places is left out without reading them; and a span holds no more places
    or documents than one inside it, so one with a span inside it already searched or
    counted below what it needs is left out without either. A span is also left out when a
    span of the other view around it is held by all of its documents, but for the primary
    span: the exact runs inside a renamed copy are its parts, the code copied unchanged."""
    spans.search_crowded(region)
    run_of, run_words = _collapsed(ids)
    run, packed, width = run_of.tolist(), run_words.tobytes(), run_words.itemsize
    starts, ends, views = spans.starts[region], spans.ends[region], spans.exact[region]
    first_of, end_of, view_of = starts.tolist(), ends.tolist(), views.tolist()
    index_of = region.tolist()  # (the spans' indexes in `spans`)
    top = spans[primary]
    # view -> the primary span and parts shown: (start, end, documents)
    shown: dict[bool, list[tuple[int, int, int]]] = {True: [], False: []}
    shown[top.exact].append((top.start, top.end, top.documents))
    said: set[tuple[bool, bytes]] = set()  # the texts of the parts shown
    # its text again inside it: a shorter separator, maybe more files
    first = top.exact, packed[run[top.start] * width : (run[top.end - 1] + 1) * width]
    both = not views.all() and views.any()  # (spans of both views: a renamed copy's region)
    out: list[Span] = []
    longer = run_of[starts] - run_of[ends - 1]  # minus the length of its text, less one
    order = np.lexsort((starts, ends - starts, longer))
    # (one word over and over: a separator line, it says no source)
    for j in order[longer[order] != 0].tolist():
        if len(out) == MAX_PARTS:
            break
        a, b, exact = first_of[j], end_of[j], view_of[j]
        words = exact, packed[run[a] * width : (run[b - 1] + 1) * width]
        k = index_of[j]
        if k == primary or words in said:
            continue
        if words == first and not (top.start <= a and b <= top.end):
            continue
        check()  # (the deadline's: counting a span's documents reads its places)
        most = 0  # the most documents of a span shown that holds most of its words
        for o_start, o_end, o_documents in shown[exact]:
            if 2 * (min(o_end, b) - max(o_start, a)) > b - a and o_documents > most:
                most = o_documents
        most *= PART_SHARE
        s = spans[k]
        if s.fewer_places_than(most) or s.fewer_documents_than(most):
            continue
        if both:  # the spans of the other view around it
            around = region[(views != exact) & (starts <= a) & (b <= ends)].tolist()
            if any(o != primary and _holds_all(spans[o], s) for o in around):
                continue  # (inside a renamed primary span, an exact run says what is unchanged)
        shown[exact].append((a, b, s.documents))
        said.add(words)
        out.append(s)
    return sorted(out, key=lambda s: (s.start, -s.end))


def _holds_all(o: Span, s: Span) -> bool:
    """Whether span `o`, which contains `s`, is held by every document holding `s`: a
    document holding `o` holds `s`, so in one view equal numbers say it."""
    if o.exact == s.exact:
        return o.documents == s.documents
    return bool(np.isin(s.doc_ids(), o.doc_ids()).all())


_NONE = np.empty(0, dtype=np.int64)


def _places(span: Span, known: np.ndarray, batch: int) -> Iterator[tuple[int, int]]:
    """(document, its position of the span's start), longest runs first, documents already
    shown (`known`, ascending: a part's files that the primary span lists too) after the
    others; a crowded span's places found `batch` documents at a time, as they are asked
    for."""

    def seen(docs: np.ndarray) -> np.ndarray:
        if not len(known):
            return np.zeros(len(docs), dtype=bool)
        return known[np.minimum(known.searchsorted(docs), len(known) - 1)] == docs

    if span.crowded is not None:
        docs = span.crowded.listing()  # ascending
        if len(known):
            was = seen(docs)
            docs = np.concatenate((docs[~was], docs[was]))
        for k in range(0, len(docs), batch):
            some = docs[k : k + batch]
            yield from zip(some.tolist(), span.crowded.places_in(some).tolist())
        return
    if span._held is None:
        return
    held = span._held[1][span.held_at()]  # start, end, document, its position of start
    order = np.lexsort((held[:, 2], held[:, 0] - held[:, 1], seen(held[:, 2])))
    for k in range(0, len(order), batch):
        some = held[order[k : k + batch]]
        yield from zip(some[:, 2].tolist(), (some[:, 3] + span.start - some[:, 0]).tolist())


def _sources(index, span: Span, max_sources: int, shown: np.ndarray = _NONE) -> list[Source]:
    """Sources of a span (at most `max_sources`: listing is bounded, counting is not), the
    documents `shown` (ascending) last."""
    out: list[Source] = []
    for doc_id, first in _places(span, shown, max(1, max_sources)):
        if len(out) >= max_sources:
            break
        doc = index.document(doc_id)
        a, b = doc.word_lines(first, first + span.length - 1)
        origins = doc.origins or []
        for i, (o, (repository, path, commit, license_)) in enumerate(
            zip(origins, doc.shown_origins())
        ):
            if len(out) >= max_sources:
                break
            extra = doc.occurrences - len(origins) if i == len(origins) - 1 else 0
            out.append(
                Source(  # corpus metadata is untrusted: printable text, clean links
                    repository=repository,
                    path=path,
                    commit=commit,
                    license=license_,
                    url=o.url(a, b),
                    start_line=a,
                    end_line=b,
                    occurrences=1 + extra,
                    words=span.length,
                )
            )
    return out


class _Known:
    """The primary span's documents, ascending, sorted when a part's sources first ask."""

    def __init__(self, primary: Span):
        self._primary: Span | None = primary
        self._ids: np.ndarray = _NONE

    def ids(self) -> np.ndarray:
        if self._primary is not None:
            self._ids, self._primary = np.sort(self._primary.doc_ids()), None
        return self._ids


def _count(index, span: Span) -> int:
    """Files holding the span: its documents and their identical copies (a span from
    counts: counted with its documents, where the shards know their files)."""
    if span.crowded is not None:
        files = span.crowded.files
        if files is not None:
            return files
    return int(np.add.reduce(index.occurrences[span.doc_ids()], dtype=np.int64))


class _Placer:
    """Query word spans -> character offsets, text and LSP ranges in the suggestion."""

    def __init__(self, query: Query):
        self.q = query
        self.lines = LineIndex(query.suggestion)
        self.starts, self.ends = query.starts, query.ends

    def suggestion_range(self, start: int, end: int) -> tuple[Range, int]:
        nc = self.q.context_words
        a, b = max(start, nc) - nc, end - nc
        s, e = self.starts[a], self.ends[b - 1]
        rng = Range(Position(*self.lines.position(s)), Position(*self.lines.position(e)))
        return rng, b - a

    def chars(self, start: int, end: int) -> tuple[int, int, str]:
        q, nc = self.q, self.q.context_words
        offset = len(q.context)
        e = offset + self.ends[end - nc - 1]
        if start < nc:
            s = int(q.context_starts[q.context_skipped + start])
            return s, e, q.context[s:] + q.suggestion[: e - offset]
        s = offset + self.starts[start - nc]
        return s, e, q.suggestion[s - offset : e - offset]


def _renamed_pairs(index, span: Span) -> list[tuple[str, str]]:
    """The (source name, name here) pairs of a renamed span's copy, in order."""
    if span.exact:
        return []
    # the longest run; of equal ones, the first document's (whatever order they were found in)
    best = max(span.runs.values(), key=lambda r: (r.length, -r.doc))
    return [(index.word(best.theirs[j]), mine) for j, mine in best.renamed]


def _matches(index, query: Query, spans: Spans, opts: Options) -> list[Match]:
    place = _Placer(query)
    words = query.words
    templates = QueryTemplates(words)  # (a quote and its parts: each run hashed once)

    def kind(s: Span) -> str:
        def template(_words: list[str], share: float) -> bool:
            return templates.is_template(s.start, s.end, share)

        text = place.chars(s.start, s.end)[2]
        span_words = words[s.start : s.end]
        license, repetitive = kernel.word_checks(span_words)
        return classify(span_words, text, table=kernel.text_is_table, template=template,
                        license=license, repetitive=repetitive)  # fmt: skip

    lock = threading.RLock()  # (what is made later reads the spans: one at a time)

    def parts_of(spans: Spans, region: np.ndarray, top: int) -> list[Part]:
        primary = spans[top]
        known = _Known(primary)
        parts = []
        for s in _parts(spans, region, top, query.ids, opts.check):
            opts.check()
            prange, pwords = place.suggestion_range(s.start, s.end)
            # a part reaching past the primary span is a quote of its own (its attribution
            # is checked against its sources): listed in full
            inside = primary.start <= s.start and s.end <= primary.end
            listed = min(PART_SOURCES, opts.max_sources) if inside else opts.max_sources

            def made(s: Span = s, listed: int = listed):
                return kind(s), _sources(index, s, listed, known.ids())

            later = Later(made, lock) if opts.defer_parts and inside else None
            kind_, sources = (Part.LATER, Part.LATER) if later else made()
            parts.append(
                Part(
                    kind=kind_,
                    length=s.length,
                    query_start=s.start,
                    query_end=s.end,
                    file_count=_count(index, s),
                    file_count_exact=True,
                    sources=sources,
                    range=prange,
                    suggestion_words=pwords,
                    exact=s.exact,
                    renamed=_renamed_pairs(index, s),
                    later=later,
                )
            )
        return parts

    whole: list[tuple[Spans, list[np.ndarray]]] = []  # (the spans all searched, their regions)

    def parts_searched(start: int, end: int, primary: Span) -> list[Part]:
        """The parts of the region [start, end) once the crowded anchors left for later
        are searched (once for all regions): inside runs' spans, theirs are in the regions
        and shorter than the primary spans as found without them."""
        if not whole:
            found = Spans(*_exact_spans(index, query, opts, inside_runs_later=False))
            found.and_renamed(spans.renamed)
            whole.append((found, _regions(found)))
        found, regions = whole[0]
        region = next(r for r in regions if int(found.starts[r].min()) == start)
        top = _primary(found, region)
        if int(found.ends[region].max()) != end or (found.starts[top], found.ends[top]) != (
            primary.start, primary.end,
        ):  # fmt: skip
            raise AssertionError("a crowded anchor left for later changed its region")
        return parts_of(found, region, top)

    out = []
    for region in _regions(spans):
        opts.check()
        top = _primary(spans, region)
        primary = spans[top]
        start = int(spans.starts[region].min())
        end = int(spans.ends[region].max())
        rng, sug_words = place.suggestion_range(start, end)
        cs, ce, text = place.chars(start, end)
        # its parts made later (a region of one span has none): a part reaching past the
        # primary span when an attribution is looked for (`Match.outer_parts`)
        later = None
        if opts.defer_parts and spans.later:  # (a region of one span may have parts then)
            later = Later(partial(parts_searched, start, end, primary), lock)
        elif opts.defer_parts and len(region) > 1:
            later = Later(partial(parts_of, spans, region, top), lock)
        out.append(
            Match(
                kind=kind(primary),
                length=end - start,
                query_start=start,
                query_end=end,
                char_start=cs,
                char_end=ce,
                text=text,
                file_count=_count(index, primary),
                file_count_exact=True,
                sources=_sources(index, primary, opts.max_sources),
                range=rng,
                suggestion_words=sug_words,
                exact=primary.exact,
                renamed=_renamed_pairs(index, primary),
                primary_start=primary.start,
                primary_end=primary.end,
                parts=Match.LATER if later else parts_of(spans, region, top),
                parts_later=later,
            )
        )
    return out


# --- entry point ------------------------------------------------------------------------------


def find_matches(
    index,
    suggestion: str,
    context: str = "",
    min_tokens: int = 60,
    *,
    language: str | None = None,
    max_sources: int = 10,
    deadline=None,
    defer_parts: bool = False,
) -> list[Match]:
    """Matches of `suggestion` (with `context` before it) in `index`, one per quoted
    region, in query order.

    With the suggestion's `language` and an index that has the rename-insensitive view
    for it, copies with consistently renamed identifiers are reported too (`exact` false)
    where no exact span covers them.

    `deadline`: an object whose `check()` raises once the lookup's time is up (the
    service's `Deadline`); it is called between the lookup's steps (each anchor of the
    suffix-array search, each region and part), so a lookup past its time ends with that
    exception, never with a shorter answer.

    `defer_parts`: each region's parts (what a diagnostic does not show: the hover lists
    them) are made when first read (`Match.parts_later`), and so are the kind and sources
    of each part inside its primary span (`Part.later`), from `index`, which must stay
    open until they are (`Match.settle_parts`, `Part.settle`); the parts reaching past a
    primary span, quotes of their own, are made with their kinds and sources when an
    attribution is looked for (`Match.outer_parts`). The regions, counts and primary
    spans are made at once.
    """
    opts = Options(max(int(min_tokens), 1), max_sources, defer_parts=defer_parts)
    if deadline is not None:
        opts.check = deadline.check
    opts.check()
    # the words as bounds, then slices (faster than matching them; the bounds place spans)
    context_starts, context_ends = kernel.text_word_bounds(context)
    skipped = max(0, len(context_starts) - MAX_CONTEXT_WORDS)
    context_kept = _slices(
        context, context_starts[skipped:].tolist(), context_ends[skipped:].tolist()
    )
    starts, ends = (a.tolist() for a in kernel.text_word_bounds(suggestion))
    suggestion_words = _slices(suggestion, starts, ends)
    words = context_kept + suggestion_words
    if not suggestion_words or len(words) < opts.min_tokens:
        return []
    query = Query(
        context=context,
        suggestion=suggestion,
        words=words,
        ids=index.word_ids(words),
        context_words=len(context_kept),
        context_skipped=skipped,
        starts=starts,
        ends=ends,
        context_starts=context_starts,
    )
    # (a lookup leaving its parts for later leaves the crowded anchors only they need)
    spans = Spans(*_exact_spans(index, query, opts, inside_runs_later=defer_parts))
    lang = canonical(language)
    if lang and lang in index.header.renamed_languages and index.renamed_shards:
        opts.check()
        spans = spans.and_renamed(_renamed_spans(index, query, lang, spans, opts))
    opts.check()
    return _matches(index, query, spans, opts)


def _slices(text: str, starts: list[int], ends: list[int]) -> list[str]:
    return [text[a:b] for a, b in zip(starts, ends)]


def _exact_spans(
    index, query: Query, opts: Options, inside_runs_later: bool = False
) -> tuple[list[Span], CrowdedSpans]:
    """The exact spans: those around runs, and those found from counts (with
    `inside_runs_later`, but for the crowded anchors inside runs' spans: `search`)."""
    found, crowded = search(
        index.shards, query.ids, opts.min_tokens, query.context_words, check=opts.check,
        popular=getattr(index, "popular_counts", None), inside_runs_later=inside_runs_later,
    )  # fmt: skip
    return _spans(found, exact=True, alone_first=opts.defer_parts), crowded


def _renamed_spans(index, query: Query, lang: str, exact: Spans, opts: Options):
    words = query.words
    # the words some exact span holds: where more spans have started than ended
    edges = np.zeros(len(words) + 1, dtype=np.int64)
    np.add.at(edges, exact.starts, 1)
    np.add.at(edges, exact.ends, -1)
    least = max(1, opts.min_tokens // 3)  # new words a renamed span must add to exact ones
    new = np.zeros(len(words) + 1, dtype=np.int64)  # new[k]: the words before k none holds
    np.cumsum(np.cumsum(edges[:-1]) == 0, out=new[1:])
    if new[-1] < least:
        return []  # (no span can add them: nothing to search for)
    mask = identifier_mask(words, lang)
    if mask is None or not mask.any():
        return []
    renamed = renamed_ids(query.ids, mask)
    # a crowded anchor of this view is a shape many files share, not a copy: left out
    found, _ = search(
        index.renamed_shards, renamed, opts.min_tokens, query.context_words, crowded=False,
        check=opts.check,
    )  # fmt: skip
    found = found[new[found[:, 1]] - new[found[:, 0]] >= least]  # (exact spans say the rest)
    if not len(found):
        return []
    new = new.tolist()
    kws = keywords(lang) or frozenset()
    edge = _EdgeLines(words, _word_lines(query), kws)
    names_at = [0, *np.cumsum(mask).tolist()]  # [k]: the names before word k
    kept = []
    same: dict[tuple[int, int, bytes], list] = {}  # (`_consistent`'s: runs of one shape)
    for row, differ in zip(found.tolist(), _differing(index, query.ids, mask, found)):
        opts.check()
        run = Run(*row)
        for part in _consistent(words, run, differ, names_at, opts.min_tokens, edge, same):
            if part.length < opts.min_tokens or part.end <= query.context_words:
                continue
            # code, not a list of names in the same shape: some names kept as they are
            # (APIs, attributes, globals), and keywords unless many names were kept
            if part.same_names < MIN_SAME_NAMES:
                continue
            if (
                part.same_names < SAME_NAMES_WITHOUT_KEYWORDS
                and len(kws.intersection(words[part.start : part.end])) < MIN_KEYWORDS
            ):
                continue
            if new[part.end] - new[part.start] < least:
                continue
            kept.append(part)
    table = np.array([r[:4] for r in kept], dtype=np.int64).reshape(-1, 4)
    return _spans(table, exact=False, runs=kept, alone_first=opts.defer_parts)


class _Differing(NamedTuple):
    """The words of a run that differ from its document's, in order: their query positions,
    the document's ids there and whether each is a name here; and the run's shape (`key`:
    those positions and the pattern of the document's names there, each one as the place
    of its first occurrence among them: a run's parts depend on them alone, the names
    themselves only passing through)."""

    key: bytes
    positions: list[int]
    theirs: list[int]
    named: list[bool]
    first: list[int]  # each name's first occurrence among these words (-1: no name here)


DIFFER_AT_ONCE = 1 << 20  # words of runs read and compared in one step of `_differing`


def _differing(index, ids: np.ndarray, mask: np.ndarray, runs: np.ndarray) -> Iterator[_Differing]:
    """`_Differing` of each run (rows: start, end, document, its position of start), the
    documents' words read for many runs at once, in steps of about DIFFER_AT_ONCE words (a
    step's runs are checked before the next is read: the deadline's checks come between)."""
    lengths = runs[:, 1] - runs[:, 0]
    ends = np.cumsum(lengths)
    lo = 0
    while lo < len(runs):
        before = int(ends[lo - 1]) if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, before + DIFFER_AT_ONCE, side="right")))
        yield from _differing_step(index, ids, mask, runs[lo:hi], lengths[lo:hi])
        lo = hi


def _differing_step(
    index, ids: np.ndarray, mask: np.ndarray, runs: np.ndarray, lengths: np.ndarray
) -> Iterator[_Differing]:
    theirs = index.documents_ids(runs[:, 2], runs[:, 3], lengths)
    cuts = np.zeros(len(runs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=cuts[1:])
    at = ranges(runs[:, 0], lengths)  # their query positions
    differ = np.flatnonzero(ids[at] != theirs)
    bounds = np.searchsorted(differ, cuts)
    positions, their_ids, named = at[differ], theirs[differ], mask[at[differ]]
    # each differing word's first occurrence (of its id) in its run's: the names' pattern
    run_of = np.repeat(np.arange(len(runs), dtype=np.int64), np.diff(bounds))
    _, first, inverse = np.unique(
        run_of * (1 << 32) + their_ids, return_index=True, return_inverse=True
    )
    first = np.where(named, first[inverse.ravel()] - bounds[run_of], -1)
    shape = np.stack((positions, first), axis=1)  # (a run's key: its rows, as bytes)
    bounds = bounds.tolist()
    positions, their_ids = positions.tolist(), their_ids.tolist()
    named, first = named.tolist(), first.tolist()
    for k in range(len(runs)):
        x, y = bounds[k], bounds[k + 1]
        yield _Differing(
            shape[x:y].tobytes(), positions[x:y], their_ids[x:y], named[x:y], first[x:y]
        )


def _consistent(
    words: list[str],
    run: Run,
    differ: _Differing,
    names_at: list[int],
    least: int = 1,
    edge: _EdgeLines | None = None,
    same: dict[tuple[int, int, bytes], list] | None = None,
) -> list[Run]:
    """Parts of a rename-insensitive run where the renaming is consistent: each name of the
    source maps to one name here and back, every other word is the same (the view gives
    all rare words one id). Names kept as they are never conflict; a part without any
    renamed name is the exact matcher's business. The source's words are read as their
    ids in the exact view (equal ids: equal words; `differ`, the words that differ), names
    only where a match shows them (`renamed` holds the source's ids, see `_renamed_pairs`).
    `names_at[k]`: the query's names before its word k.

    Each part stops where the copy stops (`_trimmed`): in this view any name equals any
    name, so a part would otherwise take in one name of the code around the copy at each
    edge, and say it renamed; nor does it start or end on a lone word of the code around
    it (`edge`: `_EdgeLines`). Parts shorter than `least` words are not made (nor is the
    rest of the run looked at once it is shorter). Only the words that differ from the
    source's are visited, in order: a word that is no name ends a part there (the copy
    stops), a renamed name extends it or, renamed otherwise before, starts the next.

    The parts depend on the run's shape alone (`_Differing.key`: where its words differ
    and which of the source's names there are equal), the names passing through: `same`
    keeps those of runs read before by (start, end, shape), the many copies of a common
    shape (in many files, or over and over in one: a table of cases, each with names of
    its own) checked once, each run's parts then given its own document and names."""
    key = (run.start, run.end, differ.key)
    parts = same.get(key) if same is not None else None
    if parts is None:
        parts = _consistent_parts(words, run, differ, names_at, least, edge)
        if same is not None:
            same[key] = parts
    theirs, doc, shift = differ.theirs, run.doc, run.doc_start - run.start
    return [
        Run(s, e, doc, shift + s, renamed=pairs, theirs=theirs, same_names=kept)
        for s, e, pairs, kept in parts
    ]


def _consistent_parts(
    words: list[str],
    run: Run,
    differ: _Differing,
    names_at: list[int],
    least: int,
    edge: _EdgeLines | None,
) -> list[tuple[int, int, tuple[tuple[int, str], ...], float]]:
    """`_consistent`'s parts, (start, end, renamed, share of names kept), each source name
    in `renamed` as its first occurrence among the run's differing words."""
    out: list[tuple[int, int, tuple[tuple[int, str], ...], float]] = []
    start, forward, back = run.start, {}, {}
    renamed: list[tuple[int, int, str]] = []  # the part's renamed names: (position, theirs, mine)

    def close(end: int) -> None:
        if not renamed or end - start < least:
            return
        kept = _trimmed(start, end, renamed)
        if kept is None:
            return
        s, e, inside = kept
        if edge is not None:
            s, e = edge.within(s, e)
            inside = [r for r in inside if s <= r[0] < e]
            if e <= s or not inside:
                return
        pairs = {(t, mine): None for _, t, mine in inside}
        names = names_at[e] - names_at[s]
        out.append((s, e, tuple(pairs), (names - len(inside)) / names))

    for i, t, is_name in zip(differ.positions, differ.first, differ.named):
        if not is_name:  # rare words, one id in this view: the copy stops here
            close(i)
            start, forward, back, renamed = i + 1, {}, {}, []
            if run.end - start < least:
                break
            continue
        mine = words[i]
        if forward.get(t, mine) != mine or back.get(mine, t) != t:
            close(i)
            start, forward, back, renamed = i, {}, {}, []
            if run.end - start < least:
                break
        forward[t] = mine
        back[mine] = t
        renamed.append((i, t, mine))
    close(run.end)
    return out


def _trimmed(
    start: int, end: int, renamed: list[tuple[int, int, str]]
) -> tuple[int, int, list[tuple[int, int, str]]] | None:
    """A consistent part [start, end) without what lies past the copy at its edges: while
    the part's first (last) renamed name is renamed by a pairing (source name, name here)
    that occurs nowhere else in the part, that name and every word before (after) it are
    left out, up to `SPILL` words at each edge. A rename nothing inside the copy supports
    is the code around it, equal in this view because any name is (`import x` before a
    pasted function, `def main(self):` after it); code around a copy equals the source's
    around it by chance, so for a few words only (further in, a name used once is the
    copy's: a fragment's names are often bound in it and used after it). `renamed`: the
    part's renamed names in order, (position, source word id, the name here). The part
    left, with its renamed names, or None when none is left (an exact run)."""
    count: dict[tuple[int, str], int] = {}
    for _, t, mine in renamed:
        count[(t, mine)] = count.get((t, mine), 0) + 1
    lo, hi = 0, len(renamed)  # the renamed names kept: renamed[lo:hi]
    first, last = start, end
    while lo < hi and count[renamed[lo][1:]] == 1 and renamed[lo][0] + 1 - first <= SPILL:
        start = renamed[lo][0] + 1
        lo += 1
    while hi > lo and count[renamed[hi - 1][1:]] == 1 and last - renamed[hi - 1][0] <= SPILL:
        end = renamed[hi - 1][0]
        hi -= 1
    if lo == hi:
        return None
    return start, end, renamed[lo:hi]


# words that close what was opened before them: a copy's first line made of them alone is
# the end of the code before it (the user's previous function's `}`)
_CLOSERS = frozenset("})];,")
# words that open a definition (where they are the language's keywords; `@`, a decorator
# or an annotation, in any): a line opening with one is the head of the user's next one
DEFINITION_HEADS = frozenset({
    "def", "class", "function", "fn", "func", "async", "pub", "public", "private",
    "protected", "internal", "static", "export", "struct", "enum", "union", "impl", "trait",
    "interface", "abstract", "final", "template", "typedef",
})  # fmt: skip


class _EdgeLines:
    """Where a renamed copy's edges fall on its edge lines. The code around a copy equals
    the source's around it where both have a definition's keyword (`def`, `function`, `fn`)
    or a closing bracket: the user's next definition faces the source's, and a name equals
    any name in this view. So a part whose words on its last line open with a definition's
    keyword (or `@`), that line going on past the part, ends before that line (`def` or
    `function main(`, the rest of the user's next definition past it); and one whose words
    on its first line are closing brackets alone starts after that line, as many lines as
    there are (`;` ending the user's line, then its `}`)."""

    def __init__(self, words: list[str], lines: np.ndarray, keywords: frozenset[str]):
        self.words, self.lines = words, lines.tolist()
        self.heads = (DEFINITION_HEADS & keywords) | {"@"}

    def within(self, start: int, end: int) -> tuple[int, int]:
        words, lines = self.words, self.lines
        while start < end and words[start] in _CLOSERS:  # (line by line)
            k = start
            while k < end and lines[k] == lines[start]:
                k += 1
            if not all(words[i] in _CLOSERS for i in range(start, k)):
                break
            start = k
        if start < end < len(words) and lines[end] == lines[end - 1]:
            k = end - 1
            while k > start and lines[k - 1] == lines[end - 1]:
                k -= 1
            if words[k] in self.heads:
                end = k
        return start, end


def _word_lines(query: Query) -> np.ndarray:
    """The line of the query (context, then suggestion) that each of its words is on."""
    kept = query.context_starts[query.context_skipped :]
    before = _newlines(query.context)
    context = np.searchsorted(before, kept)
    suggestion = len(before) + np.searchsorted(
        _newlines(query.suggestion), np.asarray(query.starts, dtype=np.int64)
    )
    return np.concatenate((context, suggestion))


def _newlines(text: str) -> np.ndarray:
    """The offsets of the line breaks of `text` (a \\n; a \\r not before one)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    breaks = codes == 10
    breaks[:-1] |= (codes[:-1] == 13) & (codes[1:] != 10)
    if len(codes):
        breaks[-1] |= codes[-1] == 13
    return np.flatnonzero(breaks)
