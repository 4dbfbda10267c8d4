"""A brute-force reference matcher: every diagonal of every file compared word by word.

It knows nothing of fingerprints, postings or caps. Given the indexed files (identical
files grouped as the index groups them) and a query, it returns the quoted spans with the
files that hold each one whole, and the regions, primary spans and parts the matcher must
report, by the rules `index_tools.match.matcher` states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby

import numpy as np

from index_tools.match.matcher import MAX_PARTS, PART_SHARE
from index_tools.text.words import WORD_RE


@dataclass
class RefSpan:
    start: int
    end: int
    docs: set[int] = field(default_factory=set)  # unique texts holding the span whole
    files: int = 0  # files holding it (identical files counted each)
    words: tuple[str, ...] = ()  # the query's words [start, end)

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def text(self) -> tuple[str, ...]:
        """Its words, each run of an equal word as one (a separator line is one word)."""
        return tuple(w for w, _ in groupby(self.words))


def _runs(query: np.ndarray, doc: np.ndarray) -> list[tuple[int, int]]:
    """Every maximal run of equal words on every diagonal, as query (start, end)."""
    eq = query[:, None] == doc[None, :]
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
            out.append((q0 + a, q0 + b))
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
    """Overlapping spans grouped; the longest (then most files, then first) is primary; a
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
        primary = max(g, key=lambda s: (s.length, len(s.docs), -s.start))
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
