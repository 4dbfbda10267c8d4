"""Licenses as SPDX expressions, through maintained libraries.

- `license-expression` (with ScanCode's LicenseDB index bundled) parses and normalizes
  ids and expressions (`GPL-2.0+`, `LGPL-2.1`, `MIT OR Apache-2.0`); `license_categories`
  gives each license its category from the same database.
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

_SPDX_LINE = re.compile(r"SPDX-License-Identifier:\s*([^\n*#]+?)\s*(?:\*/|-->|$)", re.M)
HEADER_CHARS = 4000  # where a file states its own license


@lru_cache(maxsize=1)
def _licensing():
    from license_expression import get_spdx_licensing

    return get_spdx_licensing()


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
    from .licenses import detect_license

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
    from ...text.kinds import is_license
    from ...text.words import word_texts

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
