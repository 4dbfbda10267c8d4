"""A brute-force reference matcher: every diagonal of every file compared word by word.

It knows nothing of fingerprints, postings or caps. Given the indexed files (identical
files grouped as the index groups them) and a query, it returns the quoted spans with the
files that hold each one whole, and the regions, primary spans and parts the matcher must
report, by the rules `index_tools.match.matcher` states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import groupby

import numpy as np

from index_tools.match.matcher import (
    DEFINITION_HEADS,
    MAX_PARTS,
    MIN_KEYWORDS,
    MIN_SAME_NAMES,
    PART_SHARE,
    SAME_NAMES_WITHOUT_KEYWORDS,
    SPILL,
)
from index_tools.text.normalize import identifier_mask, keywords
from index_tools.text.words import WORD_RE


@dataclass
class RefSpan:
    start: int
    end: int
    docs: set[int] = field(default_factory=set)  # unique texts holding the span whole
    files: int = 0  # files holding it (identical files counted each)
    words: tuple[str, ...] = ()  # the query's words [start, end)
    exact: bool = True  # False: a renamed copy (`reference_renamed_spans`)
    # a renamed span: the renames (source name, name here) of each longest run holding it
    renamed: list[tuple[tuple[str, str], ...]] = field(default_factory=list)

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def text(self) -> tuple[str, ...]:
        """Its words, each run of an equal word as one (a separator line is one word)."""
        return tuple(w for w, _ in groupby(self.words))


def _runs(query: np.ndarray, doc: np.ndarray) -> list[tuple[int, int]]:
    """Every maximal run of equal words on every diagonal, as query (start, end)."""
    return [(a, b) for a, b, _ in _diagonal_runs(query[:, None] == doc[None, :])]


def _diagonal_runs(eq: np.ndarray) -> list[tuple[int, int, int]]:
    """Every maximal run of True on every diagonal of `eq` (query words by document
    words), as (query start, query end, document position minus query position)."""
    out = []
    n, m = eq.shape
    for d in range(-(n - 1), m):
        diag = np.diagonal(eq, offset=d)
        if not diag.any():
            continue
        padded = np.concatenate(([False], diag, [False]))
        edges = np.flatnonzero(padded[1:] != padded[:-1])
        q0 = max(0, -d)
        for a, b in zip(edges[0::2].tolist(), edges[1::2].tolist()):
            out.append((q0 + a, q0 + b, d))
    return out


def reference_spans(
    files: list[str], context: str, suggestion: str, min_tokens: int
) -> dict[tuple[int, int], RefSpan]:
    """Spans of at least `min_tokens` words reaching into the suggestion, by (start, end)."""
    texts: dict[str, int] = {}
    for t in files:
        texts[t] = texts.get(t, 0) + 1
    vocab: dict[str, int] = {}

    def ids(words: list[str]) -> np.ndarray:
        return np.array([vocab.setdefault(w, len(vocab)) for w in words], dtype=np.int64)

    cw = WORD_RE.findall(context)
    qwords = cw + WORD_RE.findall(suggestion)
    q = ids(qwords)
    per_doc: list[tuple[int, list[tuple[int, int]]]] = []
    for text, n in texts.items():
        runs = [
            (a, b)
            for a, b in _runs(q, ids(WORD_RE.findall(text)))
            if b - a >= min_tokens and b > len(cw)
        ]
        per_doc.append((n, runs))
    spans: dict[tuple[int, int], RefSpan] = {}
    for _, runs in per_doc:
        for a, b in runs:
            spans.setdefault((a, b), RefSpan(a, b, words=tuple(qwords[a:b])))
    for span in spans.values():
        for doc, (n, runs) in enumerate(per_doc):
            if any(a <= span.start and b >= span.end for a, b in runs):
                span.docs.add(doc)
                span.files += n
    return spans


@dataclass
class RefRegion:
    start: int
    end: int
    primary: RefSpan
    parts: list[RefSpan]


def reference_regions(spans: dict[tuple[int, int], RefSpan]) -> list[RefRegion]:
    """Overlapping spans grouped; the longest (then an exact copy, most files, the first)
    is primary (its parts are the rule's for spans of one view, exact copies); a
    span is a part when it is held by `PART_SHARE` times the documents of the primary
    span and of each part that holds most of its words, and no part shown has its text
    (nor the primary span, unless the span lies inside it) nor is one word repeated;
    spans visited by the length of their text, longest first, then by length, shortest
    first; the first `MAX_PARTS`."""
    ordered = sorted(spans.values(), key=lambda s: (s.start, -s.end))
    groups: list[list[RefSpan]] = []
    end = -1
    for s in ordered:
        if groups and s.start < end:
            groups[-1].append(s)
            end = max(end, s.end)
        else:
            groups.append([s])
            end = s.end
    out = []
    for g in groups:
        primary = max(g, key=lambda s: (s.length, s.exact, len(s.docs), -s.start))
        shown = [primary]
        for s in sorted(g, key=lambda s: (-len(s.text), s.length, s.start)):
            if len(shown) > MAX_PARTS:  # the first MAX_PARTS shown (a listing bound)
                break
            if s is primary or any(o.text == s.text for o in shown[1:]):  # the same text
                continue
            if len(s.text) == 1:  # one word over and over
                continue
            inside = primary.start <= s.start and s.end <= primary.end
            if s.text == primary.text and not inside:
                continue
            if all(
                len(s.docs) >= PART_SHARE * len(o.docs)
                for o in shown
                if 2 * (min(o.end, s.end) - max(o.start, s.start)) > s.length
            ):
                shown.append(s)
        parts = sorted(shown[1:], key=lambda s: (s.start, -s.end))
        out.append(RefRegion(min(s.start for s in g), max(s.end for s in g), primary, parts))
    return out


def _edge_lines(
    q: list[str], qline: list[int], kws: frozenset[str], lo: int, hi: int
) -> tuple[int, int]:
    """A renamed part [lo, hi) without first lines of closing brackets alone (the end of
    the code before the copy), nor a last line that opens with a definition's keyword (or
    `@`) and goes on past the part (the head of the user's next definition)."""
    while lo < hi:  # each first line of closing brackets alone
        first = [i for i in range(lo, hi) if qline[i] == qline[lo]]
        if not all(q[i] in {"}", ")", "]", ";", ","} for i in first):
            break
        lo = first[-1] + 1
    if lo < hi < len(q) and qline[hi] == qline[hi - 1]:
        last = [i for i in range(lo, hi) if qline[i] == qline[hi - 1]]
        head = q[last[0]]
        if head == "@" or (head in kws and head in DEFINITION_HEADS):
            hi = last[0]
    return lo, hi


def _line_breaks(text: str) -> int:
    return len(re.findall(r"\r\n|\r|\n", text))


def _word_lines(text: str, first: int) -> list[int]:
    """The line each word of `text` is on, counted from `first`."""
    out, line, at = [], first, 0
    for m in WORD_RE.finditer(text):
        line += _line_breaks(text[at : m.start()])
        at = m.start()
        out.append(line)
    return out


def _consistent_parts(
    q: list[str],
    qmask: list[bool],
    d: list[str],
    a: int,
    b: int,
    off: int,
    edge=lambda lo, hi: (lo, hi),
) -> list[tuple[int, int, tuple[tuple[str, str], ...], float]]:
    """A run [a, b) of the rename-insensitive view on the diagonal where query word i is
    document word i + off, cut where the renaming stops being consistent (a source name
    mapped to a second name here, or a name here to a second source name; the parts start
    at the name that broke it), then each part stopped where the copy stops: while its
    first (last) renamed name is renamed by a pairing found nowhere else in the part, that
    name and what lies beyond it are left out, at most `SPILL` words at each edge; then
    its edge lines (`edge`: `_edge_lines`). (start, end, renames, share of names kept) of
    the parts with a renamed name left."""
    parts = []
    start, fwd, back, names = a, {}, {}, []

    def close(end: int) -> None:
        pairs = [(i, (d[i + off], q[i])) for i, kept in names if not kept]
        lo, hi = start, end
        while (
            pairs
            and sum(p == pairs[0][1] for _, p in pairs) == 1
            and pairs[0][0] + 1 - start <= SPILL
        ):
            lo = pairs.pop(0)[0] + 1
        while (
            pairs and sum(p == pairs[-1][1] for _, p in pairs) == 1 and end - pairs[-1][0] <= SPILL
        ):
            hi = pairs.pop()[0]
        if not pairs:
            return
        lo, hi = edge(lo, hi)
        pairs = [(i, p) for i, p in pairs if lo <= i < hi]
        if hi <= lo or not pairs:
            return
        inside = [kept for i, kept in names if lo <= i < hi]
        renames = tuple(dict.fromkeys(p for _, p in pairs))
        parts.append((lo, hi, renames, sum(inside) / len(inside)))

    for i in range(a, b):
        if not qmask[i]:
            continue  # equal words (the run compares them exactly)
        theirs, mine = d[i + off], q[i]
        if theirs == mine:
            names.append((i, True))
            continue
        if fwd.get(theirs, mine) != mine or back.get(mine, theirs) != theirs:
            close(i)
            start, fwd, back, names = i, {}, {}, []
        fwd[theirs], back[mine] = mine, theirs
        names.append((i, False))
    close(b)
    return parts


def reference_renamed_spans(
    files: list[str],
    context: str,
    suggestion: str,
    min_tokens: int,
    exact: dict[tuple[int, int], RefSpan],
    language: str = "python",
) -> dict[tuple[int, int], RefSpan]:
    """The renamed copies the matcher reports with a language, by (start, end): every
    maximal run, on every diagonal of every file, of words equal in the rename-insensitive
    view (a name here facing a name there, any other word equal to itself), cut into
    consistent parts stopped where the copy stops (`_consistent_parts`); a part is kept when
    it has `min_tokens` words reaching into the suggestion, keeps `MIN_SAME_NAMES` of its
    names (and `MIN_KEYWORDS` distinct keywords unless it keeps
    `SAME_NAMES_WITHOUT_KEYWORDS`), and adds a third of `min_tokens` words that the `exact`
    spans (`reference_spans`) leave uncovered. A span's documents are those with a kept
    part around it."""
    texts: dict[str, int] = {}
    for t in files:
        texts[t] = texts.get(t, 0) + 1
    cw = WORD_RE.findall(context)
    q = cw + WORD_RE.findall(suggestion)
    qmask = identifier_mask(q, language).tolist()
    kws = keywords(language) or frozenset()
    qline = _word_lines(context, 0) + _word_lines(suggestion, _line_breaks(context))

    def edge(lo: int, hi: int) -> tuple[int, int]:
        return _edge_lines(q, qline, kws, lo, hi)

    qnames = np.array(qmask, dtype=bool)

    def view_equal(d: list[str], dmask: list[bool]) -> np.ndarray:
        names = np.array(dmask, dtype=bool)
        vocab = {w: k for k, w in enumerate(dict.fromkeys(q + d))}
        qi = np.array([vocab[w] for w in q], dtype=np.int64)
        di = np.array([vocab[w] for w in d], dtype=np.int64)
        both = qnames[:, None] & names[None, :]
        neither = ~qnames[:, None] & ~names[None, :]
        return both | (neither & (qi[:, None] == di[None, :]))

    covered = np.zeros(len(q), dtype=bool)
    for a, b in exact:
        covered[a:b] = True
    if covered.all():
        return {}
    least = max(1, min_tokens // 3)
    per_doc: list[tuple[int, list[tuple[int, int, tuple, float]]]] = []
    for text, n in texts.items():
        d = WORD_RE.findall(text)
        dmask = identifier_mask(d, language).tolist()
        kept = []
        for a, b, off in _diagonal_runs(view_equal(d, dmask)):
            if b - a >= min_tokens and b > len(cw):
                kept += _consistent_parts(q, qmask, d, a, b, off, edge)
        good = []
        for s, e, renames, share in kept:
            if e - s < min_tokens or e <= len(cw) or share < MIN_SAME_NAMES:
                continue
            if share < SAME_NAMES_WITHOUT_KEYWORDS and len(kws.intersection(q[s:e])) < MIN_KEYWORDS:
                continue
            if (~covered[s:e]).sum() < least:
                continue
            good.append((s, e, renames))
        per_doc.append((n, good))
    spans: dict[tuple[int, int], RefSpan] = {}
    for _, parts in per_doc:
        for s, e, _ in parts:
            spans.setdefault((s, e), RefSpan(s, e, words=tuple(q[s:e]), exact=False))
    for span in spans.values():
        longest = 0
        for doc, (n, parts) in enumerate(per_doc):
            around = [p for p in parts if p[0] <= span.start and p[1] >= span.end]
            if not around:
                continue
            span.docs.add(doc)
            span.files += n
            best = max(e - s for s, e, _ in around)
            if best > longest:
                longest, span.renamed = best, []
            if best == longest:
                span.renamed += [r for s, e, r in around if e - s == best]
    return spans
