"""SARIF 2.1.0 output of `recitation-index check`, as GitHub code scanning reads it."""

from __future__ import annotations

from urllib.parse import quote

import xxhash

from ..judge.verdict import Verdict
from ..model import KINDS, Match, Part, describe_match
from ..safe_text import clean_link, printable
from .text_report import part_view

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {
    "recitation": "warning",
    "license": "note",
    "repetitive": "note",
    "inventory": "note",
    "idiom": "note",
}
_RULE_TEXT = {
    "recitation": "Code quoted from indexed public code",
    "repetitive": "Repetitive code that also occurs in indexed public code",
    "license": "License or legal text quoted from indexed public code",
    "inventory": "A standard list or table (numbers, letters, tickers...) in indexed files",
    "idiom": "A common idiom, template or generated boilerplate in indexed files",
}


def _region(r) -> dict:
    return {
        "startLine": r.start.line + 1,
        "startColumn": r.start.character + 1,
        "endLine": r.end.line + 1,
        "endColumn": r.end.character + 1,
    }


def _part_text(p: Part, m: Match) -> str:
    files = "file" if p.file_count == 1 else "files"
    bound = "" if p.file_count_exact else "at least "
    url = _link(p.sources[0].url) if p.sources else ""
    where = f": {url}" if url else ""
    how = part_view(m, p, ", ")
    return f"{p.length} words of it ({p.kind}{how}) found in {bound}{p.file_count} {files}{where}"


def _link(url: str) -> str:
    """A source's link as a message may show it: cleaned again (an index built before links
    were cleaned, a match read back from JSON), its line fragment kept."""
    base, _, fragment = url.partition("#")
    base = clean_link(base)
    return f"{base}#{printable(fragment, 40)}" if base and fragment else base


def artifact_uri(path: str) -> str:
    """A file path (`/` separated) as the relative URI reference SARIF asks for:
    percent-encoded, so a name with a newline, an escape sequence, a `%` or a backslash (a
    name character on POSIX, kept as `%5C`) stays one exact, inert value. The name's own
    bytes are encoded: one that is not UTF-8 (`os.fsdecode` gives its bytes as surrogate
    escapes) is `%FF` where it has the byte 0xFF."""
    return quote(path.encode("utf-8", "surrogateescape"), safe="/-._~!$&'()*+,;=@")


# a verdict's action as a SARIF level
_ACTION_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def _suppressions(verdict: Verdict) -> list[dict]:
    """An attributed quote is suppressed in the source; a dismissed, allowed or baselined
    one by a decision kept outside it."""
    if not verdict.suppressed:
        return []
    kind = "inSource" if verdict.state == "attributed" else "external"
    return [{"kind": kind, "status": "accepted", "justification": printable(verdict.reason, 500)}]


def _not_checked(path: str, why: str, allowed: bool) -> dict:
    return {
        "level": "note" if allowed else "error",
        "message": {
            "text": printable(f"not checked{' (allowed)' if allowed else ''}: {why}", 1000)
        },
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(path)}}}],
        "descriptor": {"id": "recitation/not-checked"},
    }


def sarif_report(
    results: list[tuple[str, Match]] | list[tuple[str, Match, Verdict | None]],
    version: str,
    not_checked: list[tuple[str, str, bool]] = (),
    notes: list[str] = (),
) -> dict:
    """`results`: (file path relative to the repository root, match[, verdict]). With a
    verdict, the level is its action and suppressed results carry `suppressions`.
    `not_checked`: (path, why, whether that is allowed) of each file not checked, and
    `notes` (untracked files left out): tool execution notifications of the run's
    invocation, which fails when a file not checked was not allowed."""
    rules = [
        {
            "id": f"recitation/{kind}",
            "name": kind.capitalize(),
            "shortDescription": {"text": _RULE_TEXT[kind]},
            "defaultConfiguration": {"level": _LEVEL[kind]},
            "helpUri": "https://docs.github.com/en/copilot/concepts/completions/code-referencing",
        }
        for kind in KINDS
    ]
    out = []
    for path, m, *rest in results:
        verdict = rest[0] if rest else None
        level = _LEVEL[m.kind] if verdict is None else _ACTION_LEVEL.get(verdict.action, "none")
        uri = artifact_uri(path)
        r = m.range
        text = describe_match(m)
        links = [u for u in (_link(s.url) for s in m.sources) if u][:5]
        if links:
            text += ". Sources: " + ", ".join(links)
        text = printable(text, 4000)
        out.append(
            {
                "ruleId": f"recitation/{m.kind}",
                "ruleIndex": KINDS.index(m.kind),
                "level": level,
                "message": {"text": text},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri},
                            "region": _region(r),
                        }
                    }
                ],
                # nested parts with their own counts: one result, its parts as locations
                "relatedLocations": [
                    {
                        "id": i + 1,
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri},
                            "region": _region(p.range),
                        },
                        "message": {"text": printable(_part_text(p, m), 2000)},
                    }
                    for i, p in enumerate(m.parts)
                    if p.range is not None
                ],
                "partialFingerprints": {
                    "recitationSpan/v1": f"{m.length}:{xxhash.xxh3_64_hexdigest(m.text.encode())}"
                },
                "properties": {
                    "length": m.length,
                    "fileCount": m.file_count,
                    "fileCountExact": m.file_count_exact,
                    "exact": m.exact,
                    "renamed": [{"from": a, "to": b} for a, b in m.renamed],
                    "sources": [s.to_dict() for s in m.sources],
                    "parts": [p.to_dict() for p in m.parts],
                    **({"verdict": verdict.to_dict()} if verdict is not None else {}),
                },
                **({"suppressions": _suppressions(verdict)} if verdict is not None else {}),
            }
        )
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "Recitation",
                        "version": version,
                        "semanticVersion": version,
                        "rules": rules,
                    }
                },
                "columnKind": "utf16CodeUnits",
                "invocations": [
                    {
                        "executionSuccessful": all(allowed for _, _, allowed in not_checked),
                        "toolExecutionNotifications": [
                            *(_not_checked(*n) for n in not_checked),
                            *(
                                {"level": "note", "message": {"text": printable(t, 1000)}}
                                for t in notes
                            ),
                        ],
                    }
                ],
                "results": out,
            }
        ],
    }
