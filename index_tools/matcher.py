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
from .model import Match, Position, Range, Source
from .words import WORD_RE, LineIndex, word_texts

MAX_CONTEXT_WORDS = 20_000  # context beyond this cannot change a match in practice
MAX_DOCS = 64  # documents verified per query, most hits first
MAX_DIAGONALS_PER_DOC = 512  # alignments verified per document, most hits first


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


def _verify(index, words: list[str], doc_groups, k: int):
    """Maximal verified spans, and whether the verification budget ran out."""
    spans: list[_Span] = []
    n = len(words)
    exhausted = False
    for ndocs, (doc_id, groups) in enumerate(doc_groups):
        if ndocs >= MAX_DOCS:
            exhausted = True
            break
        if len(groups) > MAX_DIAGONALS_PER_DOC:
            exhausted = True
            groups = groups[:MAX_DIAGONALS_PER_DOC]
        doc = index.document(doc_id)
        # one pass over the part of the document any of these diagonals can reach
        lo = max(0, min(d for d, _ in groups))
        hi = min(doc.words, max(d for d, _ in groups) + n)
        dwords = doc.word_texts(lo, hi)
        hi = lo + len(dwords)
        for diag, qposes in groups:
            done_until = -1
            for q in qposes:
                if q < done_until:
                    continue
                base = q + diag - lo
                if (
                    base < 0
                    or base + k > len(dwords)
                    or words[q : q + k] != dwords[base : base + k]
                ):
                    continue  # a fingerprint collision: the words differ
                a = q
                while a > 0 and a - 1 + diag >= lo and words[a - 1] == dwords[a - 1 + diag - lo]:
                    a -= 1
                b = q + k
                while b < n and b + diag < hi and words[b] == dwords[b + diag - lo]:
                    b += 1
                spans.append(_Span(a, b, doc_id, diag))
                done_until = b
    return spans, exhausted


def _cluster(spans: list[_Span], min_tokens: int) -> list[_Cluster]:
    clusters: list[_Cluster] = []
    for s in sorted(spans, key=lambda s: (s.qa - s.qb, s.qa, s.doc)):
        for c in clusters:
            if min(s.qb, c.qb) - max(s.qa, c.qa) >= min_tokens:
                c.members.setdefault(s.doc, s)
                break
        else:
            clusters.append(_Cluster(s.qa, s.qb, {s.doc: s}))
    return clusters


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
    fps = index.kgrams(words)
    hits, capped = _hits(index, fps)
    if hits is None:
        return []
    spans, exhausted = _verify(index, words, _doc_groups(hits), k)
    spans = [s for s in spans if s.qb - s.qa >= min_tokens and s.qb > nc]
    lines = LineIndex(suggestion)
    offset = len(context)
    matches = []
    for c in _cluster(spans, min_tokens):
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
