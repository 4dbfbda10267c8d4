"""Hover on a flagged range: what the diagnostic line cannot hold. The editor already shows
the line (`Quoted: python/cpython Lib/shutil.py L224–L288 · PSF-2.0 · 408 words · 1 file`);
the hover adds the sources as links with their licenses, the parts found in more files with
their own counts, a renamed copy's renames, and why it shows as it does. Every piece of corpus
metadata is reduced to printable text (no control or bidi characters, no credentials) and
escaped; only clean http(s) links are rendered."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote

from index_tools import Match, Part, Source, Verdict, count_phrase, printable

from .diagnostics import StoredMatch, is_web_link, line_span

MAX_SOURCES = 5
MAX_PARTS = 4
MAX_RENAMED = 6

KIND_NOTES = {
    "repetitive": "Repetitive code: long runs of the same few words, found everywhere.",
    "license": "License text: meant to be copied, with its notice.",
    "inventory": "A standard list or table: the same facts wherever they are written down.",
    "idiom": "A common idiom or template: a standard way of writing this.",
}

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&\"'=:$%^])")


def escape(text: object) -> str:
    """Markdown-safe printable text on one line: special characters are backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", printable(text, 1000))


def safe_url(url: str) -> str:
    """The link percent-encoded so it cannot break out of `(...)`."""
    return quote(url, safe=":/?#@!$&*+,;=%-._~")


def _label(source: Source) -> str:
    return " ".join(p for p in (source.repository, source.path, line_span(source)) if p)


def source_line(source: Source, markdown: bool = True) -> str:
    """`[python/cpython Lib/shutil.py L224–L288](link) · PSF-2.0 · commit 3a1b2c3d4e5f`."""
    esc: Callable[[object], str] = escape if markdown else printable
    label = esc(_label(source) or "indexed file")
    url = source.url if is_web_link(source.url) else ""
    if markdown:
        head = f"[{label}]({safe_url(url)})" if url else label
    else:
        head = f"{label} <{url}>" if url else label
    details = [esc(source.license or "NOASSERTION")]
    if source.commit:
        details.append("commit " + esc(source.commit[:12]))
    if source.occurrences > 1:
        details.append(f"{source.occurrences} identical files")
    return f"{head} \u00b7 " + " \u00b7 ".join(details)


def _lines_of(part: Part) -> str:
    r = part.range
    if r is None:
        return ""
    a, b = r.start.line + 1, r.end.line + 1
    return f"line {a}" if a == b else f"lines {a}\u2013{b}"


def _renames(renamed: list[tuple[str, str]], esc: Callable[[object], str]) -> str:
    """`parsed \u2192 url_parts, no_proxy_hosts \u2192 excluded_hosts` (the first
    `MAX_RENAMED`)."""
    shown = ", ".join(f"{esc(a)} \u2192 {esc(b)}" for a, b in renamed[:MAX_RENAMED])
    more = len(renamed) - MAX_RENAMED
    return shown + (f", and {more} more" if more > 0 else "")


def _why(match: Match, verdict: Verdict | None) -> str:
    if verdict is None:
        return ""
    if verdict.state == "attributed":
        return f"Attributed on line {verdict.attribution.line + 1}: shown as a hint only."
    note = KIND_NOTES.get(match.kind, "")
    if verdict.reason.startswith("license policy"):
        return f"Shown as {verdict.action} by this folder's {verdict.reason}." + (
            f" {note}" if note else ""
        )
    return note


def _block(
    m: StoredMatch, verdict: Verdict | None, markdown: bool, compare: str | None = None
) -> list[str]:
    match = m.match
    esc: Callable[[object], str] = escape if markdown else printable
    bold = (lambda t: f"**{t}**") if markdown else (lambda t: t)
    lines: list[str] = []

    def section(head: str) -> None:
        if lines and markdown:
            lines.append("")  # a paragraph break between sections
        lines.append(head)

    sources = match.sources
    if sources:
        count = count_phrase(match.file_count, match.file_count_exact)
        section(bold(f"Sources ({count}):"))
        lines.extend(f"- {source_line(s, markdown)}" for s in sources[:MAX_SOURCES])
        if len(sources) > MAX_SOURCES:
            lines.append(f"- and {len(sources) - MAX_SOURCES} more")
    if compare:
        section(f"[Compare with source]({compare})")
    try:  # (made now if the lookup left them for later: its index may fail to give them)
        parts = match.parts
        first = [(p, p.sources[:1]) for p in parts[:MAX_PARTS]]
    except Exception as exc:
        section(bold("Parts:"))
        lines.append(f"- could not be read from the index: {esc(exc)}")
        parts, first = [], []
    if parts:
        # a renamed copy's parts are mostly the code it copied unchanged
        section(bold("Parts also found elsewhere:" if match.exact else "Parts:"))
        for p, sources in first:
            where = f" \u2014 {source_line(sources[0], markdown)}" if sources else ""
            span = _lines_of(p)
            if not p.exact:
                how = f", renamed copy: {_renames(p.renamed, esc)}"
            else:
                how = ", copied unchanged" if not match.exact else ""
            lines.append(
                f"- {p.length} words{f' ({span})' if span else ''}{how} in "
                f"{count_phrase(p.file_count, p.file_count_exact)}{where}"
            )
        if len(parts) > MAX_PARTS:
            lines.append(f"- and {len(parts) - MAX_PARTS} more parts")
    if match.renamed:
        section(f"{bold('Renamed copy:')} {_renames(match.renamed, esc)}")
    why = _why(match, verdict)
    if why:
        section(f"_{esc(why)}_" if markdown else why)
    return lines


def hover_markdown(
    judged: list[tuple[StoredMatch, Verdict | None]],
    compare_link: Callable[[StoredMatch], str] | None = None,
) -> str:
    """One block per quote under the cursor (quotes never overlap: usually one); with
    `compare_link` (a client that runs the compare itself), a "Compare with source" link."""
    blocks = [
        "\n".join(_block(m, v, True, compare_link(m) if compare_link and m.sources else None))
        for m, v in judged
    ]
    return "\n\n---\n\n".join(blocks)


def hover_plaintext(judged: list[tuple[StoredMatch, Verdict | None]]) -> str:
    """The same content for clients that cannot render markdown."""
    return "\n\n".join("\n".join(_block(m, v, False)) for m, v in judged)
