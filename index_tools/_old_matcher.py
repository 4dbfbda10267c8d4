"""From a suggestion and its context to verified matches.

Words of context + suggestion -> every k-gram looked up (dense) -> hits grouped by document
and diagonal (document position - query position) -> each group verified word by word
against the stored text and extended to a maximal span -> spans of at least `min_tokens`
words that overlap the suggestion, clustered into matches with ranked sources.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .classify import COMMON_FILES, classify
from .fingerprint import kgram_fingerprints
from .model import Match, Position, Range, Source
from .words import WORD_RE, LineIndex, word_texts

MAX_CONTEXT_WORDS = 20_000  # context beyond this cannot change a match in practice
MAX_DOCS = 64  # documents verified per query, most hits first
MAX_DIAGONALS_PER_DOC = 32  # alignments verified per document, most hits first
MAX_DIAGONALS = 384  # alignments verified per query


@dataclass
class _Span:
    qa: int  # query word span [qa, qb)
    qb: int
    doc: int
    diag: int  # document position = query position + diag


@dataclass
class _Cluster:
    qa: int
    qb: int
    members: dict  # doc id -> _Span (the longest one of that document)


def _hits(index, fps: np.ndarray):
    """Arrays (doc, diag, qpos) of every hit, and a per-position 'capped' mask."""
    uniq, inverse = np.unique(fps, return_inverse=True)
    found = index.postings(uniq)
    capped = np.zeros(len(fps), dtype=bool)
    if not found:
        return None, capped
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    docs, diags, qposes = [], [], []
    for j, (count, pairs) in found.items():
        qpos = order[bounds[j] : bounds[j + 1]]
        if count > len(pairs):
            capped[qpos] = True
        d = np.repeat(pairs[:, 0].astype(np.int64), len(qpos))
        p = np.repeat(pairs[:, 1].astype(np.int64), len(qpos))
        q = np.tile(qpos.astype(np.int64), len(pairs))
        docs.append(d)
        diags.append(p - q)
        qposes.append(q)
    return (np.concatenate(docs), np.concatenate(diags), np.concatenate(qposes)), capped


def _doc_groups(hits):
    """Per document, most hits first: (doc, [(diag, sorted query positions), ...]) with the
    diagonals of each document ordered by their number of hits."""
    docs, diags, qpos = hits
    order = np.lexsort((qpos, diags, docs))
    docs, diags, qpos = docs[order], diags[order], qpos[order]
    change = np.concatenate(([True], (docs[1:] != docs[:-1]) | (diags[1:] != diags[:-1])))
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], len(docs))
    by_doc: dict[int, list] = {}
    for s, e in zip(starts.tolist(), ends.tolist()):
        by_doc.setdefault(int(docs[s]), []).append((int(diags[s]), qpos[s:e].tolist()))
    ranked = sorted(by_doc.items(), key=lambda kv: -sum(len(q) for _, q in kv[1]))
    for doc_id, groups in ranked:
        groups.sort(key=lambda g: -len(g[1]))
        yield doc_id, groups


def _runs(eq: np.ndarray, seeds: np.ndarray, k: int) -> set[tuple[int, int]]:
    """Maximal runs of True in `eq` that contain a whole k-gram starting at a seed offset."""
    breaks = np.append(np.flatnonzero(~eq), len(eq))  # a sentinel break at the end
    # first break at or after each seed, last break before it
    after = np.searchsorted(breaks, seeds, side="left")
    ends = breaks[after]
    starts = np.where(after > 0, breaks[np.maximum(after - 1, 0)] + 1, 0)
    ok = ends - seeds >= k
    return set(zip(starts[ok].tolist(), ends[ok].tolist()))


def _verify(index, hashes: np.ndarray, doc_groups, k: int):
    """Maximal spans along each hit diagonal where query and document words agree (compared
    by their 64-bit hashes here; the reported spans are confirmed on the words themselves).
    Returns the spans and whether the verification budget ran out."""
    spans: list[_Span] = []
    n = len(hashes)
    exhausted = False
    budget = MAX_DIAGONALS
    for ndocs, (doc_id, groups) in enumerate(doc_groups):
        if ndocs >= MAX_DOCS or budget <= 0:
            exhausted = True
            break
        if len(groups) > min(MAX_DIAGONALS_PER_DOC, budget):
            exhausted = True
            groups = groups[: min(MAX_DIAGONALS_PER_DOC, budget)]
        budget -= len(groups)
        doc = index.document(doc_id)
        for diag, qposes in groups:
            lo, hi = max(0, diag), min(doc.words, n + diag)  # document positions on this diagonal
            if hi - lo < k:
                continue
            dh = doc.word_hashes(lo, hi, index._hasher)
            eq = dh == hashes[lo - diag : hi - diag]
            seeds = np.asarray(qposes, dtype=np.int64) + diag - lo
            for a, b in _runs(eq, seeds, k):
                spans.append(_Span(a + lo - diag, b + lo - diag, doc_id, diag))
    return spans, exhausted


def _confirm(index, words: list[str], span: _Span) -> bool:
    doc = index.document(span.doc)
    return doc.word_texts(span.qa + span.diag, span.qb + span.diag) == words[span.qa : span.qb]


def _covers(outer: tuple[int, int], inner: tuple[int, int], slack: int) -> bool:
    return outer[0] <= inner[0] + slack and outer[1] >= inner[1] - slack


def _cluster(spans: list[_Span]) -> list[_Cluster]:
    """Matches from verified spans. Spans whose ends agree within 5% form one match; a
    file counts for a match when one of its spans covers the match's span (within 5%), so
    a long quote found in one file and its boilerplate tail found in thirty are two matches
    with honest counts."""
    clusters: list[_Cluster] = []
    for s in sorted(spans, key=lambda s: (s.qa - s.qb, s.qa, s.doc)):
        for c in clusters:
            slack = (c.qb - c.qa) // 20
            if abs(s.qa - c.qa) <= slack and abs(s.qb - c.qb) <= slack:
                if (
                    s.doc not in c.members
                    or c.members[s.doc].qb - c.members[s.doc].qa < s.qb - s.qa
                ):
                    c.members[s.doc] = s
                break
        else:
            clusters.append(_Cluster(s.qa, s.qb, {s.doc: s}))
    # files whose longer spans contain a shorter match count for it too
    for c in clusters:
        slack = (c.qb - c.qa) // 20
        for s in spans:
            if s.doc not in c.members and _covers((s.qa, s.qb), (c.qa, c.qb), slack):
                c.members[s.doc] = s
    # a match nested in another that adds no file says nothing new
    kept = []
    for c in clusters:
        if any(
            o is not c
            and o.qb - o.qa > c.qb - c.qa
            and _covers((o.qa, o.qb), (c.qa, c.qb), 0)
            and set(c.members) <= set(o.members)
            for o in clusters
        ):
            continue
        kept.append(c)
    return kept


def _sources(index, cluster: _Cluster, max_sources: int) -> list[Source]:
    ranked = []
    for doc_id, s in cluster.members.items():
        oa, ob = max(s.qa, cluster.qa), min(s.qb, cluster.qb)
        ranked.append((ob - oa, doc_id, s, oa, ob))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    out: list[Source] = []
    for words, doc_id, s, oa, ob in ranked:
        if len(out) >= max_sources:
            break
        doc = index.document(doc_id)
        if ob <= oa:
            continue
        a = doc.line_of(doc.word_offsets(oa + s.diag)[0])
        b = doc.line_of(doc.word_offsets(ob - 1 + s.diag)[1] - 1)
        origins = doc.origins or []
        for i, o in enumerate(origins):
            if len(out) >= max_sources:
                break
            extra = doc.occurrences - len(origins) if i == len(origins) - 1 else 0
            out.append(
                Source(
                    repository=o.repository,
                    path=o.path,
                    commit=o.commit,
                    license=o.license,
                    url=o.url(a, b),
                    start_line=a,
                    end_line=b,
                    occurrences=1 + extra,
                    words=words,
                )
            )
    return out


def _offsets(text: str, i: int) -> tuple[int, int]:
    """Character offsets of the i-th word of `text`."""
    for j, m in enumerate(WORD_RE.finditer(text)):
        if j == i:
            return m.start(), m.end()
    raise IndexError(i)


def find_matches(
    index,
    suggestion: str,
    context: str = "",
    min_tokens: int = 60,
    *,
    max_sources: int = 20,
    common_files: int = COMMON_FILES,
) -> list[Match]:
    """Matches of `suggestion` (with `context` before it) in `index`, in query order."""
    min_tokens = max(int(min_tokens), 1)
    k = index.k
    ctx_all = word_texts(context) if context else []
    ctx = ctx_all[-MAX_CONTEXT_WORDS:]
    ctx_skip = len(ctx_all) - len(ctx)
    sug = word_texts(suggestion)
    nc = len(ctx)
    words = ctx + sug
    n = len(words)
    if not sug or n < max(k, min_tokens):
        return []
    hashes = index.word_hashes(words)
    fps = kgram_fingerprints(hashes, k)
    hits, capped = _hits(index, fps)
    if hits is None:
        return []
    spans, exhausted = _verify(index, hashes, _doc_groups(hits), k)
    spans = [
        s for s in spans if s.qb - s.qa >= min_tokens and s.qb > nc and _confirm(index, words, s)
    ]
    lines = LineIndex(suggestion)
    offset = len(context)
    matches = []
    for c in _cluster(spans):
        count = sum(index.document(d).occurrences for d in c.members)
        exact = not exhausted and not capped[c.qa : max(c.qa + 1, c.qb - k + 1)].any()
        sa = max(c.qa, nc) - nc
        sb = c.qb - nc
        s_start, _ = _offsets(suggestion, sa)
        _, s_end = _offsets(suggestion, sb - 1)
        start, end = lines.position(s_start), lines.position(s_end)
        cs = _offsets(context, ctx_skip + c.qa)[0] if c.qa < nc else offset + s_start
        ce = offset + s_end
        text = (
            context[cs:] + suggestion[: ce - offset]
            if cs < offset
            else suggestion[cs - offset : ce - offset]
        )
        matches.append(
            Match(
                kind=classify(words[c.qa : c.qb], count, common_files),
                length=c.qb - c.qa,
                query_start=c.qa,
                query_end=c.qb,
                char_start=cs,
                char_end=ce,
                text=text,
                file_count=count,
                file_count_exact=exact,
                sources=_sources(index, c, max_sources),
                range=Range(Position(*start), Position(*end)),
                suggestion_words=sb - sa,
            )
        )
    matches.sort(key=lambda m: m.query_start)
    return matches
