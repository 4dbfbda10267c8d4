"""From a suggestion and its context to verified matches, one per quoted region.

1. Lookups. The query's words (context, then suggestion) become k-gram fingerprints. Only
   the positions the builder's rule would keep are looked up: those plain winnowing keeps,
   and those winnowing keeps when capped fingerprints do not count (`winnow_past`). Any
   common run of t = window + k - 1 words therefore shares a looked-up fingerprint with
   every document that holds it, through a complete (uncapped) posting list unless every
   k-gram of the run is capped.
2. Verification. Each (document, diagonal) with hits is compared word by word along the
   diagonal, starting at its hits and extending outward until the words differ: the
   maximal runs of equal words that contain a hit are that document's runs. Nothing is
   skipped because another document or another diagonal already found the same words.
3. Spans. Every distinct (start, end) of a run at least `min_tokens` long that reaches into
   the suggestion is a span; its files are the documents with a run containing it. The
   count is exact when one of its k-grams is uncapped; when all are capped it comes from
   the capped lists and is a lower bound.
4. Regions. Overlapping spans form one region, reported as one `Match`: its primary span
   (the longest, exact copies first) gives the headline; spans held by more files than the
   spans around them (a boilerplate tail inside a function) or reaching past the primary
   one are its `parts`.

With a language, the same runs are searched in the rename-insensitive view (identifiers
as one placeholder) where no exact span covers the code, split where the renaming stops
being consistent, and reported with `exact` false.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..model import Match, Part, Position, Range, Source
from ..safe_text import printable
from ..text.fingerprint import kgram_fingerprints, winnow, winnow_past
from ..text.kinds import classify
from ..text.normalize import canonical, identifier_mask, keywords, normalized_hashes
from ..text.words import WORD_RE, LineIndex, word_texts

MAX_CONTEXT_WORDS = 20_000  # context beyond this cannot change a match in practice
MAX_DOCUMENTS = 4096  # documents compared per query; past it counts are lower bounds
MAX_HITS = 1_000_000  # (document, position) hits per query; past it, the same
MAX_DIAGONALS = 20_000  # (document, diagonal) pairs compared per query; past it, the same
MAX_RENAMED_DIAGONALS = 2_000  # the same for renamed copies (a view without a guarantee)
MAX_COMPARED_WORDS = 4_000_000  # document words compared per query; past it, the same
MANY_DIAGONALS = 2  # a document hit along this many diagonals is compared in one batch ...
WHOLE_WORDS = 4  # ... unless it is more than this many times longer than the query
MAX_RENAMED_WORDS = 200_000  # words of renamed runs checked for a consistent renaming
EXTEND = 256  # words compared at first when a run is extended past its hits ...
MARGIN = 64  # words compared beyond a diagonal's outer hits before any extension
MAX_EXTEND = 65_536  # ... doubling up to this
MAX_PARTS = 32  # nested parts kept per match
MIN_SAME_NAMES = 0.1  # share of its identifiers a renamed copy keeps (APIs, attributes...)
MIN_KEYWORDS = 2  # distinct keywords a renamed copy contains ...
SAME_NAMES_WITHOUT_KEYWORDS = 0.4  # ... unless it keeps at least this share of its names


@dataclass(frozen=True)
class Run:
    """A maximal run of equal words shared by the query and one document."""

    start: int  # query word positions [start, end)
    end: int
    doc: int
    doc_start: int  # the document's word position of `start`
    renamed: tuple[tuple[str, str], ...] = ()  # (source name, name here) of a renamed copy
    same_names: float = 1.0  # share of the identifiers a renamed copy kept as they are

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass
class Span:
    """A distinct quoted word span and the documents that hold it whole."""

    start: int
    end: int
    runs: dict[int, Run] = field(default_factory=dict)  # document -> its run around the span
    count_exact: bool = True
    exact: bool = True  # False: found in the rename-insensitive view only

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass
class Query:
    """The words looked up: the context's last words, then the suggestion's."""

    context: str
    suggestion: str
    words: list[str]
    hashes: np.ndarray
    context_words: int  # words of the context kept (the suggestion starts here)
    context_skipped: int  # context words before those

    @property
    def size(self) -> int:
        return len(self.words)


@dataclass
class Hits:
    """Every (document, diagonal, query position) of the looked-up postings; diagonal =
    document position - query position."""

    docs: np.ndarray
    diagonals: np.ndarray
    positions: np.ndarray
    capped: np.ndarray  # per query k-gram: its postings are capped
    complete: bool = True  # False when a budget cut the hits


@dataclass
class Options:
    k: int
    window: int
    min_tokens: int
    max_sources: int
    check: Callable[[], None] = lambda: None  # the deadline's check (see find_matches)


# --- 1. lookups -------------------------------------------------------------------------------


def lookup_positions(fps: np.ndarray, window: int, capped: np.ndarray) -> np.ndarray:
    """Query k-grams to look up: kept by plain winnowing or by winnowing past the capped
    ones, as the builder keeps them in every document."""
    plain = winnow(fps, window)
    if not capped.any():
        return plain
    return np.union1d(plain, winnow_past(fps, window, capped))


def _lookup(index, fps: np.ndarray, renamed: bool, skip: np.ndarray | None = None) -> Hits:
    capped = index.capped_mask(fps, renamed)
    picks = lookup_positions(fps, index.window, capped)
    if skip is not None:
        picks = picks[~skip[picks]]
    empty = np.empty(0, dtype=np.int64)
    uniq, inverse = np.unique(fps[picks], return_inverse=True)
    found = index.postings(uniq, renamed=renamed)
    if not found:
        return Hits(empty, empty, empty, capped)
    # query positions grouped by fingerprint
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    fp_ids = np.fromiter(found.keys(), dtype=np.int64, count=len(found))
    for j in fp_ids.tolist():  # a truncated list makes its k-gram capped, whatever the set says
        if found[j][0] > len(found[j][1]):
            capped[picks[order[bounds[j] : bounds[j + 1]]]] = True
    pairs = np.concatenate([p for _, p in found.values()]).astype(np.int64)
    sizes = np.fromiter((len(p) for _, p in found.values()), dtype=np.int64, count=len(found))
    # every posting of a fingerprint pairs with every query position of that fingerprint
    owner = np.repeat(fp_ids, sizes)
    per = bounds[owner + 1] - bounds[owner]
    complete = True
    if int(per.sum()) > MAX_HITS:
        complete = False
        keep = np.cumsum(per) <= MAX_HITS
        owner, per, pairs = owner[keep], per[keep], pairs[keep]
    row = np.repeat(np.arange(len(pairs)), per)
    first = np.repeat(np.cumsum(per) - per, per)
    qpos = picks[order[bounds[owner[row]] + np.arange(len(row)) - first]].astype(np.int64)
    return Hits(pairs[row, 0], pairs[row, 1] - qpos, qpos, capped, complete)


def _all_capped_windows(capped: np.ndarray, window: int) -> np.ndarray:
    """Per query k-gram: it lies in a window of `window` k-grams that are all capped."""
    n = len(capped)
    if n == 0:
        return capped
    w = min(window, n)
    full = np.convolve(capped.astype(np.int64), np.ones(w, dtype=np.int64), mode="valid") == w
    # k-gram p lies in windows p - w + 1 .. p
    return np.convolve(full.astype(np.int64), np.ones(w, dtype=np.int64), mode="full")[:n] > 0


# --- 2. verification --------------------------------------------------------------------------


def _by_document(hits: Hits, window: int) -> list[tuple[int, list[tuple[int, np.ndarray]]]]:
    """(document, [(diagonal, sorted query positions), ...]) with the most-hit documents
    first. A document reached only through capped lists can only hold runs made of capped
    k-grams, so its hits outside all-capped windows are dropped."""
    docs, diags, qpos = hits.docs, hits.diagonals, hits.positions
    if not len(docs):
        return []
    order = np.lexsort((qpos, diags, docs))
    docs, diags, qpos = docs[order], diags[order], qpos[order]
    change = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    ends = np.append(change[1:], len(docs))
    capped_hit = hits.capped[qpos]
    useful = _all_capped_windows(hits.capped, window)[qpos]
    out = []
    for s, e in zip(change.tolist(), ends.tolist()):
        if capped_hit[s:e].all():
            sel = np.flatnonzero(useful[s:e]) + s
            if not len(sel):
                continue
        else:
            sel = np.arange(s, e)
        d, q = diags[sel], qpos[sel]
        cut = np.flatnonzero(np.concatenate(([True], d[1:] != d[:-1])))
        stops = np.append(cut[1:], len(d))
        groups = [(int(d[a]), q[a:b]) for a, b in zip(cut.tolist(), stops.tolist())]
        out.append((int(docs[s]), groups, int((~capped_hit[s:e]).sum()), e - s))
    out.sort(key=lambda g: (-g[2], -g[3], g[0]))
    return [(doc, groups) for doc, groups, _, _ in out]


def _equal_runs(equal: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of True in `equal`, as (start, end) offsets."""
    padded = np.concatenate(([False], equal, [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


class _Diagonal:
    """Word-by-word comparison of the query with one document along one diagonal."""

    def __init__(self, query_hashes: np.ndarray, doc_hashes, doc_words: int, diagonal: int):
        self.q = query_hashes
        self.doc_hashes = doc_hashes  # (lo, hi) -> the document's hashes [lo, hi)
        self.diagonal = diagonal
        # query positions that have a document word on this diagonal
        self.lo = max(0, -diagonal)
        self.hi = min(len(query_hashes), doc_words - diagonal)

    def equal(self, a: int, b: int) -> np.ndarray:
        """Query positions [a, b) equal to the document's words on the diagonal."""
        d = self.diagonal
        return self.doc_hashes(a + d, b + d) == self.q[a:b]

    def extend_left(self, start: int) -> int:
        step = EXTEND
        while start > self.lo:
            a = max(self.lo, start - step)
            eq = self.equal(a, start)
            if not eq.all():
                return a + int(np.flatnonzero(~eq)[-1]) + 1
            start, step = a, min(2 * step, MAX_EXTEND)  # long runs: fewer, larger steps
        return start

    def extend_right(self, end: int) -> int:
        step = EXTEND
        while end < self.hi:
            b = min(self.hi, end + step)
            eq = self.equal(end, b)
            if not eq.all():
                return end + int(np.flatnonzero(~eq)[0])
            end, step = b, min(2 * step, MAX_EXTEND)
        return end

    def runs(self, seeds: np.ndarray, k: int) -> list[tuple[int, int]]:
        """Maximal runs along the diagonal that contain a whole seed k-gram."""
        found: list[tuple[int, int]] = []
        seeds = seeds[(seeds >= self.lo) & (seeds + k <= self.hi)]
        i = 0
        while i < len(seeds):
            # seeds close together are compared as one stretch, far ones apart
            j = i + 1
            while j < len(seeds) and seeds[j] - seeds[j - 1] <= 2 * EXTEND:
                j += 1
            a, b = int(seeds[i]), int(seeds[j - 1]) + k
            eq = self.equal(a, b)
            mine = seeds[i:j]
            for ra, rb in _equal_runs(eq):
                ra, rb = ra + a, rb + a
                inside = mine[(mine >= ra) & (mine + k <= rb)]
                if not len(inside):
                    continue
                if ra == a:
                    ra = self.extend_left(ra)
                if rb == b:
                    rb = self.extend_right(rb)
                found.append((ra, rb))
            i = j
        return found


def _document_runs(
    query_hashes: np.ndarray, doc_hashes, doc_words: int, diagonals, k: int, check=None
) -> list[tuple[int, int, int]]:
    """Maximal runs (query start, end, diagonal) of one document along all its hit
    diagonals, compared in one batch: each diagonal's hits, grouped where they are close,
    give a stretch (with a margin) compared word by word at once; a run that reaches the
    end of its stretch is extended along its diagonal until the words differ."""
    n = len(query_hashes)
    diag = np.concatenate([np.full(len(q), d, dtype=np.int64) for d, q in diagonals])
    seeds = np.concatenate([q for _, q in diagonals]).astype(np.int64)
    lo_all = np.maximum(0, -diag)
    hi_all = np.minimum(n, doc_words - diag)
    ok = (seeds >= lo_all) & (seeds + k <= hi_all)
    diag, seeds, lo_all, hi_all = diag[ok], seeds[ok], lo_all[ok], hi_all[ok]
    if not len(seeds):
        return []
    # stretches: seeds of one diagonal closer than 2 * EXTEND to the previous one
    new = np.ones(len(seeds), dtype=bool)
    new[1:] = (diag[1:] != diag[:-1]) | (seeds[1:] - seeds[:-1] > 2 * EXTEND)
    group = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    last = np.append(first[1:], len(seeds)) - 1
    d, lo, hi = diag[first], lo_all[first], hi_all[first]
    a = np.maximum(lo, seeds[first] - MARGIN)
    b = np.minimum(hi, seeds[last] + k + MARGIN)
    lowest = int((a + d).min())
    dh = doc_hashes(lowest, int((b + d).max()))
    # the stretches one after another, each followed by a separator that never matches
    sizes = b - a + 1
    starts = np.cumsum(sizes) - sizes
    which = np.repeat(np.arange(len(a)), sizes)
    offset = np.arange(int(sizes.sum())) - starts[which]
    inside = offset < (b - a)[which]
    qi = (a[which] + offset)[inside]
    eq = np.zeros(len(which), dtype=bool)
    eq[inside] = query_hashes[qi] == dh[qi + d[which[inside]] - lowest]
    # the run around each seed: from the last mismatch before it to the first after it
    breaks = np.flatnonzero(~eq)
    at = starts[group] + seeds - a[group]
    after = np.searchsorted(breaks, at, side="left")
    run_end = breaks[after]  # the separator at the latest
    run_start = np.where(after > 0, breaks[np.maximum(after - 1, 0)] + 1, 0)
    whole = run_end - at >= k
    span = len(eq) + 1
    keys = np.unique(run_start[whole] * span + run_end[whole])
    out = []
    for rs, re_ in zip((keys // span).tolist(), (keys % span).tolist()):
        if check is not None:
            check()
        i = int(which[rs])
        qa, qb = rs - int(starts[i]) + int(a[i]), re_ - int(starts[i]) + int(a[i])
        left, right = qa == a[i] and qa > lo[i], qb == b[i] and qb < hi[i]
        if left or right:
            line = _Diagonal(query_hashes, doc_hashes, doc_words, int(d[i]))
            qa = line.extend_left(qa) if left else qa
            qb = line.extend_right(qb) if right else qb
        out.append((qa, qb, int(d[i])))
    return out


class _OutOfBudget(Exception):
    pass


def _verify(
    index, query: Query, groups, k: int, min_tokens: int, doc_hashes=None,
    max_diagonals: int | None = None, language: str | None = None, check=lambda: None,
):  # fmt: skip
    """Runs of at least `min_tokens` words reaching into the suggestion, per document;
    and whether every document with hits was compared whole (within the budgets: only
    long, highly repetitive queries reach them). A run is kept only once it is maximal."""
    runs: list[Run] = []
    diagonals_left = MAX_DIAGONALS if max_diagonals is None else max_diagonals
    words_left = MAX_COMPARED_WORDS
    fetch = index.document_hashes if doc_hashes is None else doc_hashes
    for n, (doc_id, diagonals) in enumerate(groups):
        check()
        if n >= MAX_DOCUMENTS or diagonals_left <= 0:
            return runs, False
        doc = index.document(doc_id)

        whole = None
        if len(diagonals) >= MANY_DIAGONALS and doc.words <= WHOLE_WORDS * len(query.hashes):
            whole = index.document_all_hashes(doc, language)

        def hashes_of(lo: int, hi: int, doc=doc, whole=whole) -> np.ndarray:
            nonlocal words_left
            words_left -= hi - lo
            if words_left < 0:
                raise _OutOfBudget
            return whole[lo:hi] if whole is not None else fetch(doc, lo, hi)

        seen: set[tuple[int, int]] = set()
        # the most-hit and longest diagonals first: what a budget leaves out is the least
        # likely to matter
        n_query = len(query.hashes)

        def priority(item, words=doc.words, n_query=n_query):
            d, seeds = item
            return -len(seeds), max(0, -d) - min(n_query, words - d)

        if len(diagonals) >= MANY_DIAGONALS and len(diagonals) <= diagonals_left:
            # many diagonals: compared in one batch
            diagonals_left -= len(diagonals)
            try:
                found = _document_runs(query.hashes, hashes_of, doc.words, diagonals, k, check)
            except _OutOfBudget:
                return runs, False
            for a, b, diagonal in sorted(found):
                if b - a >= min_tokens and b > query.context_words and (a, b) not in seen:
                    seen.add((a, b))
                    runs.append(Run(a, b, doc_id, a + diagonal))
            continue
        for diagonal, seeds in sorted(diagonals, key=priority):
            check()
            diagonals_left -= 1
            if diagonals_left < 0:
                return runs, False
            line = _Diagonal(query.hashes, hashes_of, doc.words, diagonal)
            try:
                found = line.runs(seeds, k)
            except _OutOfBudget:
                return runs, False
            for a, b in found:
                if b - a >= min_tokens and b > query.context_words and (a, b) not in seen:
                    seen.add((a, b))
                    runs.append(Run(a, b, doc_id, a + diagonal))
    return runs, True


def _confirmed(index, words: list[str], run: Run) -> bool:
    """The run's words are the document's words (not just equal 64-bit hashes)."""
    doc = index.document(run.doc)
    return doc.word_texts(run.doc_start, run.doc_start + run.length) == words[run.start : run.end]


# --- 3. spans ---------------------------------------------------------------------------------


def _spans(runs: list[Run], capped: np.ndarray, k: int, complete: bool, exact: bool):
    """Distinct spans, each with the documents whose run contains it."""
    spans: dict[tuple[int, int], Span] = {}
    for r in runs:
        spans.setdefault((r.start, r.end), Span(r.start, r.end, exact=exact))
    if not runs:
        return []
    starts = np.fromiter((r.start for r in runs), dtype=np.int64, count=len(runs))
    ends = np.fromiter((r.end for r in runs), dtype=np.int64, count=len(runs))
    for span in spans.values():
        for i in np.flatnonzero((starts <= span.start) & (ends >= span.end)).tolist():
            r = runs[i]
            held = span.runs.get(r.doc)
            if held is None or held.length < r.length:
                span.runs[r.doc] = r
        span.count_exact = complete and not capped[span.start : span.end - k + 1].all()
    return list(spans.values())


# --- 4. regions -------------------------------------------------------------------------------


def _regions(spans: list[Span]) -> list[list[Span]]:
    """Spans grouped into regions of overlapping spans, in query order."""
    regions: list[list[Span]] = []
    end = -1
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if regions and s.start < end:
            regions[-1].append(s)
            end = max(end, s.end)
        else:
            regions.append([s])
            end = s.end
    return regions


def _primary(region: list[Span]) -> Span:
    return max(region, key=lambda s: (s.exact, s.length, len(s.runs), -s.start))


def _parts(region: list[Span], primary: Span) -> list[Span]:
    """The spans of a region worth their own line: held by files that no span around them
    has, or reaching past the primary span."""
    out = []
    files = {id(s): set(s.runs) for s in region}
    for s in region:
        if s is primary:
            continue
        mine = files[id(s)]
        if any(
            o is not s and o.start <= s.start and o.end >= s.end and files[id(o)] >= mine
            for o in region
        ):
            continue
        out.append(s)
    # repetitive text aligns in many shifted ways: the longest parts are kept
    out = sorted(out, key=lambda s: (-s.length, s.start))[:MAX_PARTS]
    return sorted(out, key=lambda s: (s.start, -s.end))


def _sources(index, span: Span, max_sources: int, shown: set[int] = frozenset()) -> list[Source]:
    """Sources of a span, longest runs first; files already `shown` (a part's files that
    the primary span lists too) after the others."""
    ranked = sorted(span.runs.values(), key=lambda r: (r.doc in shown, -r.length, r.doc))
    out: list[Source] = []
    for run in ranked:
        if len(out) >= max_sources:
            break
        doc = index.document(run.doc)
        first = run.doc_start + span.start - run.start
        a = doc.line_of(doc.word_offsets(first)[0])
        b = doc.line_of(doc.word_offsets(first + span.length - 1)[1] - 1)
        origins = doc.origins or []
        for i, o in enumerate(origins):
            if len(out) >= max_sources:
                break
            extra = doc.occurrences - len(origins) if i == len(origins) - 1 else 0
            out.append(
                Source(  # corpus metadata is untrusted: printable text, clean links
                    repository=printable(o.repository),
                    path=printable(o.path),
                    commit=printable(o.commit, 80),
                    license=printable(o.license, 120),
                    url=o.url(a, b),
                    start_line=a,
                    end_line=b,
                    occurrences=1 + extra,
                    words=span.length,
                )
            )
    return out


def _word_offsets(text: str, i: int) -> tuple[int, int]:
    """Character offsets of the i-th word of `text`."""
    for j, m in enumerate(WORD_RE.finditer(text)):
        if j == i:
            return m.start(), m.end()
    raise IndexError(i)


class _Placer:
    """Query word spans -> character offsets, text and LSP ranges in the suggestion."""

    def __init__(self, query: Query):
        self.q = query
        self.lines = LineIndex(query.suggestion)
        self.sug = [m.span() for m in WORD_RE.finditer(query.suggestion)]

    def suggestion_range(self, start: int, end: int) -> tuple[Range, int]:
        nc = self.q.context_words
        a, b = max(start, nc) - nc, end - nc
        s, e = self.sug[a][0], self.sug[b - 1][1]
        rng = Range(Position(*self.lines.position(s)), Position(*self.lines.position(e)))
        return rng, b - a

    def chars(self, start: int, end: int) -> tuple[int, int, str]:
        q, nc = self.q, self.q.context_words
        offset = len(q.context)
        e = offset + self.sug[end - nc - 1][1]
        if start < nc:
            s = _word_offsets(q.context, q.context_skipped + start)[0]
            return s, e, q.context[s:] + q.suggestion[: e - offset]
        s = offset + self.sug[start - nc][0]
        return s, e, q.suggestion[s - offset : e - offset]


def _count(index, span: Span) -> int:
    return sum(index.document(d).occurrences for d in span.runs)


def _renamed_pairs(span: Span) -> list[tuple[str, str]]:
    if span.exact:
        return []
    best = max(span.runs.values(), key=lambda r: r.length)
    return list(best.renamed)


def _matches(index, query: Query, spans: list[Span], opts: Options) -> list[Match]:
    place = _Placer(query)
    words = query.words
    out = []
    for region in _regions(spans):
        opts.check()
        primary = _primary(region)
        start = min(s.start for s in region)
        end = max(s.end for s in region)
        rng, sug_words = place.suggestion_range(start, end)
        cs, ce, text = place.chars(start, end)
        count = _count(index, primary)
        parts = []
        for s in _parts(region, primary):
            opts.check()
            prange, pwords = place.suggestion_range(s.start, s.end)
            pcount = _count(index, s)
            parts.append(
                Part(
                    kind=classify(words[s.start : s.end], place.chars(s.start, s.end)[2]),
                    length=s.length,
                    query_start=s.start,
                    query_end=s.end,
                    file_count=pcount,
                    file_count_exact=s.count_exact,
                    sources=_sources(index, s, opts.max_sources, set(primary.runs)),
                    range=prange,
                    suggestion_words=pwords,
                    exact=s.exact,
                    renamed=_renamed_pairs(s),
                )
            )
        out.append(
            Match(
                kind=classify(
                    words[primary.start : primary.end],
                    place.chars(primary.start, primary.end)[2],
                ),
                length=end - start,
                query_start=start,
                query_end=end,
                char_start=cs,
                char_end=ce,
                text=text,
                file_count=count,
                file_count_exact=primary.count_exact,
                sources=_sources(index, primary, opts.max_sources),
                range=rng,
                suggestion_words=sug_words,
                exact=primary.exact,
                renamed=_renamed_pairs(primary),
                primary_start=primary.start,
                primary_end=primary.end,
                parts=parts,
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
) -> list[Match]:
    """Matches of `suggestion` (with `context` before it) in `index`, one per quoted
    region, in query order.

    With the suggestion's `language` and an index that has rename-insensitive fingerprints
    for it, copies with consistently renamed identifiers are reported too (`exact` false)
    where no exact span covers them.

    `deadline`: an object whose `check()` raises once the lookup's time is up (the
    service's `Deadline`); it is called between the lookup's steps, so a lookup past its
    time ends with that exception, never with a shorter answer.
    """
    opts = Options(index.k, index.window, max(int(min_tokens), 1), max_sources)
    if deadline is not None:
        opts.check = deadline.check
    opts.check()
    context_all = word_texts(context) if context else []
    context_kept = context_all[-MAX_CONTEXT_WORDS:]
    suggestion_words = word_texts(suggestion)
    words = context_kept + suggestion_words
    if not suggestion_words or len(words) < max(opts.k, opts.min_tokens):
        return []
    query = Query(
        context=context,
        suggestion=suggestion,
        words=words,
        hashes=index.word_hashes(words),
        context_words=len(context_kept),
        context_skipped=len(context_all) - len(context_kept),
    )
    spans = _exact_spans(index, query, opts)
    lang = canonical(language)
    if lang and lang in index.header.renamed_languages:
        opts.check()
        spans += _renamed_spans(index, query, lang, spans, opts)
    opts.check()
    return _matches(index, query, spans, opts)


def _exact_spans(index, query: Query, opts: Options) -> list[Span]:
    fps = kgram_fingerprints(query.hashes, opts.k)
    opts.check()
    hits = _lookup(index, fps, renamed=False)
    opts.check()
    groups = _by_document(hits, opts.window)
    runs, verified = _verify(index, query, groups, opts.k, opts.min_tokens, check=opts.check)
    runs = [r for r in runs if _confirmed(index, query.words, r)]
    return _spans(runs, hits.capped, opts.k, verified and hits.complete, exact=True)


def _renamed_spans(index, query: Query, lang: str, exact: list[Span], opts: Options):
    k, words = opts.k, query.words
    mask = identifier_mask(words, lang)
    if mask is None or not mask.any():
        return []
    normalized = normalized_hashes(query.hashes, mask)
    fps = kgram_fingerprints(normalized, k)
    # k-grams inside exact spans are not looked up again: what they quote is said
    covered = np.zeros(len(words), dtype=bool)
    for s in exact:
        covered[s.start : s.end] = True
    inside = np.convolve(covered, np.ones(k, dtype=np.int64), mode="valid") == k
    if inside.all():
        return []
    hits = _lookup(index, fps, renamed=True, skip=inside)
    opts.check()

    def doc_hashes(doc, lo: int, hi: int) -> np.ndarray:
        return index.document_renamed_hashes(doc, lo, hi, lang)

    renamed_query = Query(
        query.context, query.suggestion, words, normalized, query.context_words,
        query.context_skipped,
    )  # fmt: skip
    groups = _by_document(hits, opts.window)
    runs, verified = _verify(
        index, renamed_query, groups, k, opts.min_tokens, doc_hashes, MAX_RENAMED_DIAGONALS,
        language=lang, check=opts.check,
    )  # fmt: skip
    kws = keywords(lang) or frozenset()
    kept = []
    checked = 0
    for run in runs:
        opts.check()
        checked += run.length
        if checked > MAX_RENAMED_WORDS:
            verified = False
            break
        for part in _consistent(index, words, mask, run):
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
            if (~covered[part.start : part.end]).sum() < k:
                continue  # exact spans already say it
            kept.append(part)
    return _spans(kept, hits.capped, k, verified and hits.complete, exact=False)


def _consistent(index, words: list[str], mask: np.ndarray, run: Run) -> list[Run]:
    """Parts of a rename-insensitive run where the renaming is consistent: each name of the
    source maps to one name here and back. Names kept as they are never conflict; a part
    without any renamed name is the exact matcher's business."""
    doc = index.document(run.doc)
    theirs_all = doc.word_texts(run.doc_start, run.doc_start + run.length)
    out: list[Run] = []
    start, forward, back = run.start, {}, {}
    same = changed = 0

    def close(end: int) -> None:
        if forward:
            out.append(
                Run(
                    start, end, run.doc, run.doc_start + start - run.start,
                    renamed=tuple(forward.items()), same_names=same / (same + changed),
                )
            )  # fmt: skip

    for i in range(run.start, run.end):
        if not mask[i]:
            continue
        mine, theirs = words[i], theirs_all[i - run.start]
        if mine == theirs:
            same += 1
            continue
        if forward.get(theirs, mine) != mine or back.get(mine, theirs) != theirs:
            close(i)
            start, forward, back = i, {}, {}
            same = changed = 0
        forward[theirs] = mine
        back[mine] = theirs
        changed += 1
    close(run.end)
    return out
