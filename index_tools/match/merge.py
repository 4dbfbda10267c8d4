"""Matches of one query found in several indexes (a local one and an index service),
merged so that one quoted region is still one `Match`.

Regions that overlap (in query words) become one region: the match with the longest primary
span is its headline (its count and sources first); the others become parts, their sources
follow the headline's. File counts are not added up (two indexes can hold the same file):
when another index holds the headline's span too, the larger count is kept as a lower bound.
"""

from __future__ import annotations

import copy

from ..model import Match, Part, Position, Range, Source
from ..text.words import WORD_RE


def merge_matches(*found: list[Match]) -> list[Match]:
    """One list, in query order, with no two regions overlapping."""
    ordered = sorted((m for ms in found for m in ms), key=lambda m: (m.query_start, m.query_end))
    groups: list[list[Match]] = []
    for m in ordered:
        if groups and m.query_start < max(g.query_end for g in groups[-1]):
            groups[-1].append(m)
        else:
            groups.append([m])
    return [g[0] if len(g) == 1 else _merged(g) for g in groups]


def _source_key(s: Source) -> tuple:
    return (s.repository, s.path, s.commit, s.start_line, s.end_line)


def _merged(group: list[Match]) -> Match:
    head = max(group, key=lambda m: (m.primary_length, m.file_count, -m.query_start))
    out = copy.deepcopy(head)
    others = [m for m in group if m is not head]
    out.query_start = min(m.query_start for m in group)
    out.query_end = max(m.query_end for m in group)
    out.length = out.query_end - out.query_start
    out.char_start = min(m.char_start for m in group)
    out.char_end = max(m.char_end for m in group)
    # where the suggestion begins in the query, as the matches tell it
    suggestion_at = min(m.query_end - m.suggestion_words for m in group)
    out.suggestion_words = out.query_end - max(out.query_start, suggestion_at)
    out.range = _union_range([m.range for m in group])
    out.text = _joined_text(group)
    known = {_source_key(s) for s in out.sources}
    for m in others:
        same_span = (m.primary_start, m.primary_end) == (head.primary_start, head.primary_end)
        if same_span:
            if {_source_key(s) for s in m.sources} != {_source_key(s) for s in head.sources}:
                out.file_count = max(out.file_count, m.file_count)
                out.file_count_exact = False
        else:
            out.parts.append(_as_part(m))
        out.parts.extend(copy.deepcopy(m.parts))
        for s in m.sources:
            if _source_key(s) not in known:
                known.add(_source_key(s))
                out.sources.append(copy.deepcopy(s))
    out.parts.sort(key=lambda p: (p.query_start, p.query_end))
    return out


def _as_part(m: Match) -> Part:
    return Part(
        kind=m.kind,
        length=m.length,
        query_start=m.query_start,
        query_end=m.query_end,
        file_count=m.file_count,
        file_count_exact=m.file_count_exact,
        sources=copy.deepcopy(m.sources),
        range=copy.deepcopy(m.range),
        suggestion_words=m.suggestion_words,
        exact=m.exact,
        renamed=list(m.renamed),
    )


def _union_range(ranges: list[Range | None]) -> Range | None:
    known = [r for r in ranges if r is not None]
    if not known:
        return None
    start = min((r.start.line, r.start.character) for r in known)
    end = max((r.end.line, r.end.character) for r in known)
    return Range(Position(*start), Position(*end))


def _joined_text(group: list[Match]) -> str:
    """The region's text: each match's text past the words already covered."""
    text, covered = "", None
    for m in sorted(group, key=lambda m: m.query_start):
        if covered is None:
            text, covered = m.text, m.query_end
            continue
        if m.query_end <= covered:
            continue
        skip = covered - m.query_start
        words = list(WORD_RE.finditer(m.text))
        if 0 < skip <= len(words):
            text += m.text[words[skip - 1].end() :]
        elif skip <= 0:
            text += " " + m.text
        covered = m.query_end
    return text
