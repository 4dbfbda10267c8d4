"""A match as lines of text under its headline, for `query` and `check` on a terminal or
in a CI log."""

from __future__ import annotations

from ..model import Match, count_phrase
from ..safe_text import printable


def _source_text(s) -> str:
    """One source on one printable line (corpus metadata never forges or colours a line)."""
    text = f"{s.repository} {s.path} L{s.start_line}\u2013L{s.end_line} ({s.license}) {s.url}"
    return printable(text, 2000)


def renames_text(renamed, limit: int = 4000) -> str:
    """`parsed \u2192 url_parts, no_proxy_hosts \u2192 excluded_hosts`, printable."""
    return printable(", ".join(f"{a} \u2192 {b}" for a, b in renamed), limit)


def part_view(m: Match, p, sep: str) -> str:
    """What a part is beside its match: a renamed copy (its renames), or, inside a renamed
    copy, code copied unchanged; nothing for an exact part of an exact match."""
    if not p.exact:
        return f"{sep}renamed copy: {renames_text(p.renamed, 2000)}"
    return f"{sep}copied unchanged" if not m.exact else ""


def match_details(m: Match, reason: str = "", show_sources: int = 5) -> str:
    """The lines under a match's headline: where it sits, why it shows, the renames of a
    renamed copy, sources, parts."""
    r = m.range
    out = [
        f"  kind: {m.kind}; suggestion lines {r.start.line + 1}\u2013{r.end.line + 1}, "
        f"{m.suggestion_words} of its words" + (f"; {printable(reason, 300)}" if reason else "")
    ]
    if m.renamed:
        out.append(f"  renamed copy: {renames_text(m.renamed)}")
    for s in m.sources[:show_sources]:
        out.append(f"  - {_source_text(s)}")
    if len(m.sources) > show_sources:
        out.append(f"  ... and {len(m.sources) - show_sources} more sources")
    for p in m.parts:
        out.append(
            f"  part: {p.length} words (suggestion lines {p.range.start.line + 1}\u2013"
            f"{p.range.end.line + 1}) found in {count_phrase(p.file_count, p.file_count_exact)}; "
            f"{p.kind}{part_view(m, p, '; ')}"
        )
        for s in p.sources[:2]:
            out.append(f"    - {_source_text(s)}")
    return "\n".join(out)
