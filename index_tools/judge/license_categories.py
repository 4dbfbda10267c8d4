"""License categories from ScanCode's license database (bundled with `license-expression`).

A category is what a team's license policy is written against: `permissive`,
`weak-copyleft`, `strong-copyleft`, `network-copyleft`, `restricted` (source-available,
proprietary-free, commercial, patent-only terms) or `unknown`. ScanCode's categories map onto
these; its `Copyleft` licenses whose obligations reach users over a network (the AGPL family,
OSL, RPL, CPAL, EUPL 1.0) are `network-copyleft`. An expression combines its licenses:
`A OR B` is as free as the freer choice, `A AND B` as strict as the stricter one, and an
exception (`WITH`) can loosen a license to the exception's own category.
"""

from __future__ import annotations

import functools
from typing import Literal

Category = Literal[
    "permissive", "weak-copyleft", "strong-copyleft", "network-copyleft", "restricted", "unknown"
]
CATEGORIES: tuple[Category, ...] = (
    "permissive",
    "weak-copyleft",
    "strong-copyleft",
    "network-copyleft",
    "restricted",
    "unknown",
)
_STRICTNESS = {c: i for i, c in enumerate(CATEGORIES)}

_FROM_SCANCODE: dict[str, Category] = {
    "Permissive": "permissive",
    "Public Domain": "permissive",
    "Copyleft Limited": "weak-copyleft",
    "Copyleft": "strong-copyleft",
    "Proprietary Free": "restricted",
    "Free Restricted": "restricted",
    "Source-available": "restricted",
    "Commercial": "restricted",
    "Patent License": "restricted",
    "CLA": "restricted",
    "Unstated License": "unknown",
}
# ScanCode keys (prefixes) of copyleft licenses with network-use obligations
_NETWORK = ("agpl-", "osl-", "rpl-", "cpal-", "eupl-1.0", "nosl-", "mongodb-sspl", "sspl-")
_UNKNOWN = frozenset({"", "noassertion", "none", "unknown", "other"})


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Category]:
    """Lower-cased SPDX ids (and ScanCode keys and aliases) -> category."""
    from license_expression import get_license_index

    table: dict[str, Category] = {}
    for entry in get_license_index():
        key = entry.get("license_key") or ""
        category = _FROM_SCANCODE.get(entry.get("category") or "", "unknown")
        if category in ("strong-copyleft", "restricted") and key.startswith(_NETWORK):
            category = "network-copyleft"
        names = [
            key,
            entry.get("spdx_license_key") or "",
            *entry.get("other_spdx_license_keys", []),
        ]
        for name in names:
            if name:
                table.setdefault(name.lower(), category)
    return table


@functools.lru_cache(maxsize=1)
def _licensing():
    from license_expression import get_spdx_licensing

    return get_spdx_licensing()


def _symbol_category(key: str) -> Category:
    return _table().get(key.lower(), "unknown")


@functools.lru_cache(maxsize=4096)
def license_category(expression: str) -> Category:
    """The category of an SPDX id or expression (`MIT`, `GPL-2.0-only WITH
    Classpath-exception-2.0`, `MIT OR Apache-2.0`); `unknown` for NOASSERTION, unknown ids
    and text that is not an expression."""
    text = (expression or "").strip()
    if text.lower() in _UNKNOWN:
        return "unknown"
    direct = _table().get(text.lower())
    if direct is not None:
        return direct
    try:
        parsed = _licensing().parse(text, validate=False, simple=False)
    except Exception:  # the library raises several kinds of errors on bad text
        return "unknown"
    return _category_of(parsed) if parsed is not None else "unknown"


def _category_of(node) -> Category:
    from license_expression import AND, OR, LicenseSymbol, LicenseWithExceptionSymbol

    if isinstance(node, LicenseWithExceptionSymbol):
        base = _symbol_category(node.license_symbol.key)
        loosened = _symbol_category(node.exception_symbol.key)
        if loosened != "unknown" and _STRICTNESS[loosened] < _STRICTNESS[base]:
            return loosened
        return base
    if isinstance(node, LicenseSymbol):
        return _symbol_category(node.key)
    kids = [_category_of(a) for a in node.args]
    if isinstance(node, OR):
        return min(kids, key=_STRICTNESS.__getitem__)
    if isinstance(node, AND):
        return max(kids, key=_STRICTNESS.__getitem__)
    return "unknown"


@functools.lru_cache(maxsize=4096)
def normalize_license(expression: str) -> str:
    """The expression as SPDX writes it (`gpl-2.0` -> `GPL-2.0-only`), or the text itself
    when it cannot be parsed."""
    text = (expression or "").strip()
    if text.lower() in _UNKNOWN:
        return "NOASSERTION"
    try:
        parsed = _licensing().parse(text, validate=False, simple=False)
    except Exception:
        return text
    return parsed.render("{symbol.key}") if parsed is not None else text
