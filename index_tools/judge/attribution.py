"""Whether a quote carries its attribution, and the attributions Recitation writes.

A quote is attributed when a line near it names one of its sources: a line up to
`LINES_ABOVE` above its first line, inside it, or right after it, that holds the source's
link (any commit: the repository and the path are what count) or its repository and path
together, as `# Adapted from <link>` and SPDX snippet tags do. A file name alone is not an
attribution; nor is a link to another file. A region that joins quotes of different files
is attributed when each of them is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..model import Match, Source
from ..safe_text import printable

LINES_ABOVE = 6  # an SPDX snippet header is up to five lines
_LINE_BREAK = re.compile("\r\n|\r|\n")


@dataclass(frozen=True)
class Attribution:
    line: int  # 0-based line of the text that names the source
    source: Source


def split_lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def _names(source: Source) -> list[tuple[str, ...]]:
    """Groups of strings that, all present in one line, name `source`."""
    groups = []
    repo = (source.repository or "").strip("/").lower()
    path = (source.path or "").strip("/").lower()
    if repo and path:
        groups.append((repo, path))
    elif path.count("/") >= 1 and len(path) >= 8:
        groups.append((path,))
    url = (source.url or "").split("#", 1)[0].lower()
    if "://" in url:
        groups.append((url.split("://", 1)[1],))
    return groups


def quote_sources(match: Match) -> Iterator[list[Source]]:
    """The sources each quote of a region needs named (or allowed), one quote at a time:
    its primary span's, then those of each part reaching past it (a region can join quotes
    of different files), read only when asked for (a lookup can leave its parts for later:
    most quotes are not attributed, and then their primary span's sources say so). A part
    inside the primary span is also in the primary's files."""
    if match.sources:
        yield list(match.sources)
    for p in match.outer_parts():
        if p.sources:
            yield list(p.sources)


def source_groups(match: Match) -> list[list[Source]]:
    """Every quote's sources of a region at once (`quote_sources`)."""
    return list(quote_sources(match))


def find_region_attribution(
    lines: Sequence[str], first_line: int, last_line: int, match: Match
) -> Attribution | None:
    """An attribution naming a source of every quote of the region, or None."""
    found = None
    for group in quote_sources(match):
        found = find_attribution(lines, first_line, last_line, group)
        if found is None:
            return None
    return found


def find_attribution(
    lines: Sequence[str], first_line: int, last_line: int, sources: Iterable[Source]
) -> Attribution | None:
    """The line near `[first_line, last_line]` (0-based) naming one of `sources`."""
    lo = max(0, first_line - LINES_ABOVE)
    hi = min(len(lines) - 1, last_line + 1)
    # names found nowhere near are no line's: most quotes have no attribution at all
    near = "\n".join(lines[i] for i in range(lo, hi + 1)).lower()
    named = [(s, _names(s)) for s in sources]
    named = [(s, [g for g in gs if all(part in near for part in g)]) for s, gs in named]
    named = [(s, g) for s, g in named if g]
    if not named:
        return None
    for i in range(lo, hi + 1):
        line = lines[i].lower()
        if len(line) < 8:
            continue
        for source, groups in named:
            if any(all(part in line for part in group) for group in groups):
                return Attribution(i, source)
    return None


# -- writing -----------------------------------------------------------------------------


def _where(source: Source) -> str:
    if source.url:
        return source.url
    lines = f"L{source.start_line}" + (
        f"-L{source.end_line}" if source.end_line != source.start_line else ""
    )
    return " ".join(p for p in (source.repository, source.path, lines) if p) or "public code"


def plain_attribution(source: Source | None) -> str:
    """`Adapted from <link> (MIT)`."""
    if source is None:
        return "Adapted from public code"
    text = f"Adapted from {_where(source)}"
    if source.license and source.license != "NOASSERTION":
        text += f" ({source.license})"
    return printable(text, 1000)


def spdx_snippet_tags(source: Source | None) -> tuple[list[str], list[str]]:
    """(lines before, lines after) a quoted region: SPDX 2.3 snippet tags as the REUSE
    tools write them. The copyright line is written when the source knows its holder."""
    before = ["SPDX-SnippetBegin"]
    if source is not None and getattr(source, "copyright", ""):
        before.append(f"SPDX-SnippetCopyrightText: {printable(source.copyright, 300)}")
    license = source.license if source is not None else ""
    before.append(
        f"SPDX-License-Identifier: {printable(license, 200) if license else 'NOASSERTION'}"
    )
    before.append(f"SPDX-SnippetComment: {plain_attribution(source)}")
    return before, ["SPDX-SnippetEnd"]
