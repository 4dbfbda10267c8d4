"""npm's version ranges (node-semver), enough to resolve a package.json dependency.

    best_match(["1.2.3", "1.3.0", "2.0.0-rc.1"], "^1.2.0")   # "1.3.0"

Understood: exact versions (`1.2.3`, `v1.2.3`, `=1.2.3`), comparators (`<`, `<=`, `>`,
`>=`, `=`), caret `^`, tilde `~`, x-ranges (`1.x`, `1.2.*`, `*`, ""), partial versions
(`1`, `1.2`), hyphen ranges (`1.2.3 - 2.3`) and alternatives joined by `||`. As in npm, a
pre-release version satisfies a range only when one of its comparators names a pre-release of
the same major.minor.patch. Anything else (a git URL, `file:`, a tag name) is not a range:
`parse_range` returns None.
"""

from __future__ import annotations

import re
from functools import total_ordering

_NUM = r"0|[1-9]\d*"
_VERSION = re.compile(
    rf"^\s*[v=]?\s*({_NUM})\.({_NUM})\.({_NUM})"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?\s*$"
)
_PARTIAL = re.compile(
    r"^[v=]?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-.]+)?$"
)
_COMPARATOR = re.compile(r"^(<=|>=|<|>|=|\^|~>?|)\s*(.*)$")


@total_ordering
class Version:
    __slots__ = ("major", "minor", "patch", "pre")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple = ()) -> None:
        self.major, self.minor, self.patch, self.pre = major, minor, patch, pre

    @classmethod
    def parse(cls, text: str) -> Version | None:
        m = _VERSION.match(text or "")
        if not m:
            return None
        pre = (
            tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m.group(4) else ()
        )
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)

    @property
    def triple(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def _key(self):
        # a release sorts after its pre-releases; numeric identifiers before alphanumeric
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.triple, 1 if not self.pre else 0, pre)

    def __eq__(self, other) -> bool:
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other: Version) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        pre = "-" + ".".join(str(p) for p in self.pre) if self.pre else ""
        return f"{self.major}.{self.minor}.{self.patch}{pre}"


Comparator = tuple[str, Version]  # (operator, version)


def _partial(text: str):
    """(major, minor, patch, pre) with None for missing or wildcard parts; None if invalid."""
    m = _PARTIAL.match(text)
    if not m:
        return None
    parts = []
    for g in m.group(1, 2, 3):
        parts.append(None if g is None or g in "xX*" else int(g))
    # a wildcard makes every later part a wildcard
    for i in range(3):
        if parts[i] is None:
            parts[i + 1 :] = [None] * (2 - i)
            break
    pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m.group(4) else ()
    return parts[0], parts[1], parts[2], pre


def _expand(op: str, text: str) -> list[Comparator] | None:
    """One comparator of a range as plain comparators (an empty list: any version)."""
    p = _partial(text)
    if p is None:
        return None
    major, minor, patch, pre = p
    if op in ("", "="):
        if major is None:
            return []
        if minor is None:
            return [(">=", Version(major, 0, 0)), ("<", Version(major + 1, 0, 0, (0,)))]
        if patch is None:
            return [(">=", Version(major, minor, 0)), ("<", Version(major, minor + 1, 0, (0,)))]
        return [("=", Version(major, minor, patch, pre))]
    if op in ("~", "~>"):
        if major is None:
            return []
        if minor is None:
            return [(">=", Version(major, 0, 0)), ("<", Version(major + 1, 0, 0, (0,)))]
        low = Version(major, minor, patch or 0, pre)
        return [(">=", low), ("<", Version(major, minor + 1, 0, (0,)))]
    if op == "^":
        if major is None:
            return []
        low = Version(major, minor or 0, patch or 0, pre)
        if major > 0 or minor is None:
            high = Version(major + 1, 0, 0, (0,))
        elif minor > 0 or patch is None:
            high = Version(0, minor + 1, 0, (0,))
        else:
            high = Version(0, 0, patch + 1, (0,))
        return [(">=", low), ("<", high)]
    # <, <=, >, >= with partial versions
    if major is None:
        return [] if op in (">=", "<=") else [("<", Version(0, 0, 0, (0,)))]
    if op == ">":
        if minor is None:
            return [(">=", Version(major + 1, 0, 0))]
        if patch is None:
            return [(">=", Version(major, minor + 1, 0))]
        return [(">", Version(major, minor, patch, pre))]
    if op == ">=":
        return [(">=", Version(major, minor or 0, patch or 0, pre))]
    if op == "<":
        return [
            ("<", Version(major, minor or 0, patch or 0, pre or ((0,) if patch is None else ())))
        ]
    if op == "<=":
        if minor is None:
            return [("<", Version(major + 1, 0, 0, (0,)))]
        if patch is None:
            return [("<", Version(major, minor + 1, 0, (0,)))]
        return [("<=", Version(major, minor, patch, pre))]
    return None


def parse_range(text: str) -> list[list[Comparator]] | None:
    """Alternatives, each a list of comparators that must all hold; None if not a range."""
    if not isinstance(text, str) or len(text) > 1000:
        return None
    alternatives = []
    for alt in text.split("||"):
        alt = alt.strip()
        hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", alt)
        if hyphen:
            low, high = _expand(">=", hyphen.group(1)), _expand("<=", hyphen.group(2))
            if low is None or high is None:
                return None
            alternatives.append(low + high)
            continue
        comps: list[Comparator] = []
        tokens = re.sub(r"(<=|>=|<|>|=|\^|~>?)\s+", r"\1", alt).split()
        for token in tokens:
            m = _COMPARATOR.match(token)
            expanded = _expand(m.group(1), m.group(2)) if m else None
            if expanded is None:
                return None
            comps.extend(expanded)
        alternatives.append(comps)
    return alternatives


def _holds(op: str, v: Version, w: Version) -> bool:
    return {
        "=": v == w,
        "<": v < w,
        "<=": v <= w,
        ">": v > w,
        ">=": v >= w,
    }[op]


def satisfies(version: Version, rng: list[list[Comparator]]) -> bool:
    for comps in rng:
        if not all(_holds(op, version, w) for op, w in comps):
            continue
        if version.pre and not any(
            w.pre and w.triple == version.triple and w.pre != (0,) for _, w in comps
        ):
            continue  # a pre-release only where the range names one of the same version
        return True
    return False


def best_match(versions, text: str, prefer: str | None = None) -> str | None:
    """The highest version (as written in `versions`) satisfying the range `text`;
    `prefer` (npm's `latest` tag) wins when it satisfies it. None when none does."""
    rng = parse_range(text)
    if rng is None:
        return None
    if prefer:
        pv = Version.parse(prefer)
        if pv is not None and satisfies(pv, rng):
            return prefer
    best = None
    for raw in versions:
        v = Version.parse(raw)
        if v is not None and satisfies(v, rng) and (best is None or v > best[0]):
            best = (v, raw)
    return best[1] if best else None
