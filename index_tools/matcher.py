"""From a suggestion and its context to verified matches.

Words of context + suggestion -> every k-gram looked up (dense) -> hits grouped by document
and diagonal (document position - query position) -> each group verified word by word
against the stored text and extended to a maximal span -> spans of at least `min_tokens`
words that overlap the suggestion, clustered into matches with ranked sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .classify import COMMON_FILES, classify
from .fingerprint import kgram_fingerprints, winnow
from .model import Match, Position, Range, Source
from .normalize import canonical, identifier_mask, keywords, normalized_hashes
from .words import WORD_RE, LineIndex, word_texts

_WORD = re.compile(r"\w")
MAX_CONTEXT_WORDS = 20_000  # context beyond this cannot change a match in practice
MAX_DOCS = 16  # documents compared word by word per query, most hits first
MAX_CANDIDATES = 64  # documents looked at (for byte-identical copies of verified spans)
MAX_DIAGONALS_PER_DOC = 32  # alignments verified per document, most hits first
MAX_DIAGONALS = 384  # alignments verified per query
MIN_SAME_NAMES = 0.1  # share of its identifiers a renamed copy keeps (APIs, attributes...)
MIN_KEYWORDS = 2  # distinct keywords a renamed copy contains ...
SAME_NAMES_WITHOUT_KEYWORDS = 0.4  # ... unless it keeps at least this share of its names
MAX_KNOWN = 8  # verified spans looked for as byte-identical copies in later documents


@dataclass
class _Span:
    qa: int  # query word span [qa, qb)
    qb: int
    doc: int
    diag: int | None  # document position = query position + diag (None: not yet known)
    chars: tuple[int, int] | None = None  # character range in the document, when known
    renamed: list | None = None  # (source name, query name) pairs of a renamed copy
    same_names: float = 1.0  # share of the identifiers a renamed copy kept as they are


@dataclass
class _Cluster:
    qa: int
    qb: int
    members: dict  # doc id -> _Span (the longest one of that document)


def _hits(index, all_fps: np.ndarray, renamed: bool = False, skip: np.ndarray | None = None):
    """Arrays (doc, diag, qpos) of every hit, and a per-position 'capped' mask.

    The query is winnowed with the index's own window and only the kept k-grams are looked
    up: in every window of k-grams inside a common run both sides keep the same minimum, so
    every common run of t = window + k - 1 words or more still shares a fingerprint, at a
    twentieth of the lookups. `skip` marks k-grams not to look up at all."""
    picks = winnow(all_fps, index.window)
    if skip is not None:
        picks = picks[~skip[picks]]
    fps = all_fps[picks]
    capped = np.zeros(len(all_fps), dtype=bool)
    uniq, inverse = np.unique(fps, return_inverse=True)
    found = index.postings(uniq, renamed=renamed)
    if not found:
        return None, capped
    order = np.argsort(inverse, kind="stable")  # query positions grouped by fingerprint
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    js = np.fromiter(found.keys(), dtype=np.int64, count=len(found))
    pairs = np.concatenate([p for _, p in found.values()]).astype(np.int64)
    sizes = np.fromiter((len(p) for _, p in found.values()), dtype=np.int64, count=len(found))
    truncated = np.fromiter((c > len(p) for c, p in found.values()), dtype=bool, count=len(found))
    for j in js[truncated].tolist():
        capped[picks[order[bounds[j] : bounds[j + 1]]]] = True
    # every posting of fingerprint j pairs with every query position of j
    owner = np.repeat(js, sizes)  # fingerprint of each posting
    per = bounds[owner + 1] - bounds[owner]  # query positions of that fingerprint
    row = np.repeat(np.arange(len(pairs)), per)
    first = np.repeat(np.cumsum(per) - per, per)
    qpos = picks[order[bounds[owner[row]] + np.arange(len(row)) - first]].astype(np.int64)
    return (pairs[row, 0], pairs[row, 1] - qpos, qpos), capped


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


def _find_copy(text: str, raw: str) -> int:
    """Offset of `raw` in `text` where it begins and ends on word boundaries, or -1."""
    start = text.find(raw)
    while start >= 0:
        end = start + len(raw)
        before_ok = start == 0 or not (_WORD.match(raw, 0) and _WORD.match(text, start - 1))
        after_ok = end == len(text) or not (
            _WORD.match(raw, len(raw) - 1) and _WORD.match(text, end)
        )
        if before_ok and after_ok:
            return start
        start = text.find(raw, start + 1)
    return -1


def _verify(index, hashes: np.ndarray, doc_groups, k: int, min_tokens: int, doc_hashes=None):
    """Maximal spans along each hit diagonal where query and document words agree.

    Documents are taken most hits first. The first ones are compared word by word (by their
    64-bit word hashes; reported spans are confirmed on the words themselves). A later
    document that holds a byte-identical copy of an already verified span (found with one
    `str.find`, on word boundaries) contains that span without being tokenized; only its hits
    outside such spans are compared word by word. Returns the spans and whether the
    verification budget ran out.
    """
    spans: list[_Span] = []
    n = len(hashes)
    exhausted = False
    budget = MAX_DIAGONALS
    known: dict[tuple[int, int], _Span] = {}  # verified spans, the longest ones
    texts: dict[tuple[int, int], str] = {}  # their text in the document they were found in
    compared = 0  # documents compared word by word
    for ndocs, (doc_id, groups) in enumerate(doc_groups):
        if ndocs >= MAX_CANDIDATES:
            exhausted = True
            break
        doc = index.document(doc_id)
        copied = np.zeros(n, dtype=bool)  # query positions inside spans copied verbatim here
        for key, span in known.items():
            raw = texts.get(key)
            if raw is None:
                src = index.document(span.doc)
                cs, _ = src.word_offsets(span.qa + span.diag)
                _, ce = src.word_offsets(span.qb - 1 + span.diag)
                raw = texts[key] = src.text[cs:ce]
            qa, qb = key
            at = _find_copy(doc.text, raw)
            if at >= 0:
                spans.append(_Span(qa, qb, doc_id, None, (at, at + len(raw))))
                copied[qa:qb] = True
        if copied.any():
            groups = [g for g in groups if not copied[np.asarray(g[1])].all()]
        if not groups:
            continue
        if compared >= MAX_DOCS:
            exhausted = True
            continue
        compared += 1
        # diagonals are taken most hits first; one whose hits all fall inside spans already
        # found in this document is another alignment of the same words (self-similar code)
        # and is skipped
        mine = np.zeros(n, dtype=bool)  # k-gram starts inside spans found in this document
        tried = 0
        for diag, qposes in groups:
            if mine[np.asarray(qposes)].all():
                continue
            if tried >= MAX_DIAGONALS_PER_DOC or budget <= 0:
                exhausted = True
                break
            tried += 1
            budget -= 1
            lo, hi = max(0, diag), min(doc.words, n + diag)  # document positions on this diagonal
            if hi - lo < k:
                continue
            if doc_hashes is None:
                dh = doc.word_hashes(lo, hi, index._hasher)
            else:
                dh = doc_hashes(doc, lo, hi)
            eq = dh == hashes[lo - diag : hi - diag]
            seeds = np.asarray(qposes, dtype=np.int64) + diag - lo
            for a, b in _runs(eq, seeds, k):
                qa, qb = a + lo - diag, b + lo - diag
                spans.append(_Span(qa, qb, doc_id, diag))
                mine[qa : qb - k + 1] = True
                if qb - qa >= min_tokens and (qa, qb) not in known:
                    known[(qa, qb)] = spans[-1]
        if len(known) > MAX_KNOWN:
            longest = sorted(known, key=lambda key: key[0] - key[1])[:MAX_KNOWN]
            known = {key: known[key] for key in longest}
    return spans, exhausted


def _confirm(index, words: list[str], span: _Span) -> bool:
    if span.diag is None:
        return True  # a byte-identical copy of a confirmed span
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
        if s.diag is None:
            s.diag = doc.word_at(s.chars[0]) - s.qa
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


def _consistent(index, words: list[str], mask: np.ndarray, span: _Span) -> list[_Span]:
    """Parts of a rename-insensitive span where the renaming is consistent: each name of the
    source maps to one name here and back. Names kept as they are never conflict."""
    doc = index.document(span.doc)
    if span.diag is None:
        span.diag = doc.word_at(span.chars[0]) - span.qa
    dwords = doc.word_texts(span.qa + span.diag, span.qb + span.diag)
    out: list[_Span] = []
    start, fwd, back = span.qa, {}, {}
    same = changed = 0

    def close(end: int) -> None:
        if fwd:  # a copy without any renamed name is the exact matcher's business
            pairs = list(fwd.items())
            share = same / (same + changed)
            out.append(_Span(start, end, span.doc, span.diag, renamed=pairs, same_names=share))

    for i in range(span.qa, span.qb):
        if not mask[i]:
            continue
        mine, theirs = words[i], dwords[i - span.qa]
        if mine == theirs:
            same += 1
            continue
        if fwd.get(theirs, mine) != mine or back.get(mine, theirs) != theirs:
            close(i)
            start, fwd, back = i, {}, {}
            same = changed = 0
        fwd[theirs] = mine
        back[mine] = theirs
        changed += 1
    close(span.qb)
    return out


def _matches(
    index, words, spans, exhausted, capped, nc, k, ctx_skip, context, suggestion,
    max_sources, common_files,
) -> list[Match]:  # fmt: skip
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
        sources = _sources(index, c, max_sources)
        best = max(c.members.values(), key=lambda s: s.qb - s.qa)
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
                sources=sources,
                range=Range(Position(*start), Position(*end)),
                suggestion_words=sb - sa,
                exact=best.renamed is None,
                renamed=list(best.renamed or []),
            )
        )
    return matches


def find_matches(
    index,
    suggestion: str,
    context: str = "",
    min_tokens: int = 60,
    *,
    language: str | None = None,
    max_sources: int = 10,
    common_files: int = COMMON_FILES,
) -> list[Match]:
    """Matches of `suggestion` (with `context` before it) in `index`, in query order.

    With the suggestion's `language` and an index that has rename-insensitive fingerprints
    for it, copies with consistently renamed identifiers are reported too (`exact` false),
    where no exact match covers them.
    """
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
    args = (nc, k, ctx_skip, context, suggestion, max_sources, common_files)
    hashes = index.word_hashes(words)
    matches: list[Match] = []
    hits, capped = _hits(index, kgram_fingerprints(hashes, k))
    if hits is not None:
        spans, exhausted = _verify(index, hashes, _doc_groups(hits), k, min_tokens)
        spans = [
            s
            for s in spans
            if s.qb - s.qa >= min_tokens and s.qb > nc and _confirm(index, words, s)
        ]
        matches = _matches(index, words, spans, exhausted, capped, *args)
    lang = canonical(language)
    if lang and lang in index.header.renamed_languages:
        matches += _renamed_matches(index, words, hashes, lang, matches, min_tokens, args)
    matches.sort(key=lambda m: m.query_start)
    return matches


def _renamed_matches(index, words, hashes, lang, exact_matches, min_tokens, args) -> list[Match]:
    nc, k = args[0], args[1]
    mask = identifier_mask(words, lang)
    if mask is None or not mask.any():
        return []
    normalized = normalized_hashes(hashes, mask)
    fps = kgram_fingerprints(normalized, k)
    # k-grams inside exact matches are not looked up again: what they quote is said
    covered = np.zeros(len(words), dtype=bool)
    for m in exact_matches:
        covered[m.query_start : m.query_end] = True
    inside = np.convolve(covered, np.ones(k, dtype=np.int64), mode="valid") == k
    if inside.all():
        return []
    hits, capped = _hits(index, fps, renamed=True, skip=inside)
    if hits is None:
        return []

    def doc_hashes(doc, lo: int, hi: int) -> np.ndarray:
        dmask = identifier_mask(doc.word_texts(lo, hi), doc.language or lang)
        dh = doc.word_hashes(lo, hi, index._hasher)
        return dh if dmask is None else normalized_hashes(dh, dmask)

    spans, exhausted = _verify(index, normalized, _doc_groups(hits), k, min_tokens, doc_hashes)
    kws = keywords(lang) or frozenset()
    kept = []
    for span in spans:
        if span.qb - span.qa < min_tokens or span.qb <= nc:
            continue
        for part in _consistent(index, words, mask, span):
            if part.qb - part.qa < min_tokens or part.qb <= nc:
                continue
            # code, not a list of names in the same shape: some names kept as they are
            # (APIs, attributes, globals), and keywords unless many names were kept
            if part.same_names < MIN_SAME_NAMES:
                continue
            if (
                part.same_names < SAME_NAMES_WITHOUT_KEYWORDS
                and len(kws.intersection(words[part.qa : part.qb])) < MIN_KEYWORDS
            ):
                continue
            if (~covered[part.qa : part.qb]).sum() < k:
                continue  # exact matches already say it
            kept.append(part)
    return _matches(index, words, kept, exhausted, capped, *args)
