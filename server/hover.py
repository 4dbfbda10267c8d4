"""Hover on a flagged range: the sources as links, how common the snippet is, and why it
was flagged. Every piece of corpus metadata is reduced to printable text (no control or
bidi characters, no credentials) and escaped; only clean http(s) links are rendered."""

from __future__ import annotations

import re
from urllib.parse import quote

from index_tools import printable

from .diagnostics import StoredMatch, files_phrase, is_web_link, line_span

MAX_SOURCES = 5
MAX_PARTS = 4
KIND_NAMES = {
    "recitation": "quoted code",
    "repetitive": "repetitive code",
    "license": "license text",
    "inventory": "a standard inventory",
    "idiom": "a common idiom or template",
}

KIND_REASONS = {
    "recitation": "a recitation: this code reproduces indexed public code verbatim",
    "repetitive": "repetitive code (a long run of repeated lines), so it is probably harmless",
    "license": "license or legal text, which is meant to be copied",
    "inventory": "a standard inventory (list/table), such as numbers, letters or tickers",
    "idiom": "a common idiom, template or generated boilerplate",
}

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&\"'=:$%^])")


def escape(text: object) -> str:
    """Markdown-safe printable text on one line: special characters are backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", printable(text, 1000))


def safe_url(url: str) -> str:
    """The link percent-encoded so it cannot break out of `(...)`."""
    return quote(url, safe=":/?#@!$&*+,;=%-._~")


def source_line(source: dict) -> str:
    repo = source.get("repository") or ""
    path = source.get("path") or ""
    label = escape(" ".join(p for p in (repo, path, line_span(source)) if p) or "indexed file")
    url = source.get("url") or ""
    head = f"[{label}]({safe_url(url)})" if is_web_link(url) else label
    details = []
    if source.get("license"):
        details.append(escape(source["license"]))
    if source.get("commit"):
        details.append("commit " + escape(str(source["commit"])[:12]))
    occurrences = int(source.get("occurrences") or 1)
    if occurrences > 1:
        details.append(f"{occurrences} identical files")
    return f"- {head}" + (" \u00b7 " + " \u00b7 ".join(details) if details else "")


def renamed_pairs(match: dict) -> list[tuple[str, str]]:
    """(name in the source, name here) for a copy with renamed identifiers."""
    pairs = []
    for r in match.get("renamed") or []:
        if isinstance(r, dict) and "from" in r and "to" in r:
            pairs.append((str(r["from"]), str(r["to"])))
    return pairs


def hover_markdown(matches: list[StoredMatch], max_sources: int = MAX_SOURCES) -> str:
    blocks = []
    for m in matches:
        match = m.match
        kind = m.kind
        lines = [
            f"**Recitation**: {m.length} words quoted from public code, "
            f"{escape(files_phrase(match))}.",
            "",
            f"Flagged as {escape(KIND_REASONS.get(kind, kind))}.",
            "",
        ]
        renamed = renamed_pairs(match)
        if renamed:
            shown = ", ".join(f"{escape(a)} \u2192 {escape(b)}" for a, b in renamed[:6])
            more = f", and {len(renamed) - 6} more" if len(renamed) > 6 else ""
            lines[-1:-1] = [f"A copy with renamed identifiers: {shown}{more}.", ""]
        sources = m.sources
        if sources:
            lines.append("Sources:")
            lines.extend(source_line(s) for s in sources[:max_sources])
            if len(sources) > max_sources:
                lines.append(f"- and {len(sources) - max_sources} more")
        parts = match_parts(match)
        if parts:
            lines += ["", "Parts of it found in other files:"]
            for p in parts[:MAX_PARTS]:
                first = (p.get("sources") or [None])[0]
                where = f": {source_line(first)[2:]}" if first else ""
                lines.append(f"- {part_phrase(p)}{where}")
            if len(parts) > MAX_PARTS:
                lines.append(f"- and {len(parts) - MAX_PARTS} more parts")
        blocks.append("\n".join(lines))
    return "\n\n---\n\n".join(blocks)


def match_parts(match: dict) -> list[dict]:
    """The nested parts of a match that carry their own counts (well-formed ones only)."""
    parts = match.get("parts") or []
    return [p for p in parts if isinstance(p, dict) and "length" in p and "file_count" in p]


def _plain(text: object) -> str:
    return printable(text, 1000)


def part_phrase(part: dict, esc=escape) -> str:
    lines = ""
    r = part.get("range")
    if isinstance(r, dict):
        try:
            lines = f" (lines {int(r['start']['line']) + 1}\u2013{int(r['end']['line']) + 1})"
        except (KeyError, TypeError, ValueError):
            lines = ""
    kind = KIND_NAMES.get(part.get("kind", ""), "quoted code")
    return f"{int(part['length'])} words{lines}, {kind}, {esc(files_phrase(part))}"


def hover_plaintext(matches: list[StoredMatch], max_sources: int = MAX_SOURCES) -> str:
    """The same content for clients that cannot render markdown."""
    blocks = []
    for m in matches:
        lines = [
            f"Recitation: {m.length} words quoted from public code, {files_phrase(m.match)}.",
            f"Flagged as {KIND_REASONS.get(m.kind, m.kind)}.",
        ]
        sources = m.sources
        if sources:
            lines.append("Sources:")
            for source in sources[:max_sources]:
                parts = (source.get("repository"), source.get("path"), line_span(source))
                label = " ".join(str(p) for p in parts if p) or "indexed file"
                url = source.get("url") or ""
                extra = [str(source[k]) for k in ("license",) if source.get(k)]
                if is_web_link(url):
                    extra.append(url)
                lines.append(
                    "- " + _plain(label) + (" (" + _plain(", ".join(extra)) + ")" if extra else "")
                )
            if len(sources) > max_sources:
                lines.append(f"- and {len(sources) - max_sources} more")
        parts = match_parts(m.match)
        if parts:
            lines.append("Parts of it found in other files:")
            for p in parts[:MAX_PARTS]:
                lines.append("- " + part_phrase(p, _plain))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
