"""License detection: license file texts and package metadata to SPDX identifiers.

`detect_license(text)` reads the text of a LICENSE / COPYING file (or a file header) and
returns the SPDX id of the license it states, or "NOASSERTION". Detection is by distinctive
phrases of each license, compared on a normalized form of the text (lower case, words only)
so that line wrapping, comment markers and punctuation do not matter. When a text contains
several licenses, the one stated first wins (a GPL text mentions the Affero GPL later on, the
MPL mentions the GPL as a secondary license, ...). An `SPDX-License-Identifier:` line near
the top wins over everything else.

GNU licenses are reported as `-or-later` only when the text itself says "or (at your option)
any later version" outside the "How to Apply These Terms" appendix of the full license text
(that appendix is a template for other projects); the bare license text is `-only`.

`license_from_name(value)` turns a short license name or id from package metadata ("MIT
License", "Apache 2.0", "GPLv3+") into an SPDX id, and `license_from_classifiers` does the
same for Trove classifiers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

NOASSERTION = "NOASSERTION"

# How much of a license text is examined (the longest common texts are ~35 KB).
_MAX_TEXT = 200_000

# An SPDX-License-Identifier line counts near the top only (later ones are about bundled parts).
_SPDX_HEAD = 4000
_SPDX_LINE = re.compile(r"SPDX-License-Identifier:[ \t]*([^\r\n]*)")
_EXPRESSION = re.compile(r"[A-Za-z0-9.+\-() \t]+")


def _normalize(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text[:_MAX_TEXT].lower()))


def _spdx_line(text: str) -> str | None:
    m = _SPDX_LINE.search(text[:_SPDX_HEAD])
    if not m:
        return None
    expr = _EXPRESSION.match(m.group(1).strip())
    if not expr:
        return None
    found = " ".join(expr.group(0).split())
    if not found or len(found) > 200 or found.count("(") != found.count(")"):
        return None
    return found


# ---------------------------------------------------------------- license texts


def _gnu(norm: str, m: re.Match) -> str | None:
    family = (m.group(1) or "").strip()
    after = norm[m.end() : m.end() + 300]
    v = re.search(r"\bversion (\d)(?: ([01]))?\b", after)
    if v is None:
        before = norm[max(0, m.start() - 60) : m.start()]
        v = re.search(r"\bversion (\d)(?: ([01]))? of the $", before)
    if v is None:
        v = re.match(r" v ?(\d)(?: ([01]))?\b", after)
    if v is None:
        return None
    major, minor = v.group(1), v.group(2) or "0"
    version = f"{major}.{minor}"
    if family == "affero":
        if major != "3":
            return None
        name = "AGPL"
    elif family == "lesser":
        if version not in ("2.1", "3.0"):
            return None
        name = "LGPL"
    elif family == "library":
        if major != "2":
            return None
        name, version = "LGPL", "2.0"
    else:
        if major not in ("1", "2", "3"):
            return None
        name = "GPL"
    # Only the stated terms count, not the appendix that shows others how to apply them.
    terms = norm.split("how to apply these terms", 1)[0]
    later = "at your option any later version" in terms
    spdx = f"{name}-{version}-{'or-later' if later else 'only'}"
    if spdx == "GPL-2.0-only" and "subject to the classpath exception" in norm:
        spdx += " WITH Classpath-exception-2.0"  # OpenJDK's files, and its LICENSE
    return spdx


def _bsd(norm: str, m: re.Match) -> str:
    window = norm[m.end() : m.end() + 2000]
    if "all advertising materials mentioning features" in window:
        return "BSD-4-Clause"
    if "to endorse or promote products derived" in window:
        return "BSD-3-Clause"
    return "BSD-2-Clause"


def _isc(norm: str, m: re.Match) -> str:
    window = norm[m.end() : m.end() + 200]
    if window.startswith(" provided that the above copyright notice"):
        return "ISC"
    return "0BSD"


def _mit(norm: str, m: re.Match) -> str:
    window = norm[m.end() : m.end() + 1000]
    if "subject to the following conditions" in window:
        return "MIT"
    return "MIT-0"


def _versioned(ids: dict[str, str]):
    def pick(norm: str, m: re.Match) -> str | None:
        return ids.get(m.group("v"))

    return pick


def _const(spdx: str):
    return lambda norm, m: spdx


# (phrase regex on the normalized text, function(norm, match) -> SPDX id or None)
_RULES: list[tuple[re.Pattern, object]] = [
    (re.compile(r"gnu (affero |lesser |library )?general public license"), _gnu),
    (
        re.compile(
            r"apache license (?:version |v )?(?P<v>2 0|1 1)\b|apache org licenses license (?P<w>2 0)"
        ),
        lambda norm, m: "Apache-2.0" if (m.group("v") or m.group("w")) == "2 0" else "Apache-1.1",
    ),
    (
        re.compile(r"mozilla public license (?:version |v )?(?P<v>2 0|1 1)\b"),
        _versioned({"2 0": "MPL-2.0", "1 1": "MPL-1.1"}),
    ),
    (
        re.compile(r"eclipse public license (?:version |v )?(?P<v>2 0|1 0)\b"),
        _versioned({"2 0": "EPL-2.0", "1 0": "EPL-1.0"}),
    ),
    (re.compile(r"boost software license (?:version )?1 0"), _const("BSL-1.0")),
    (
        re.compile(
            r"python software foundation license version 2|license agreement is between the python software foundation"
        ),
        _const("PSF-2.0"),
    ),
    (
        re.compile(r"this is free and unencumbered software released into the public domain"),
        _const("Unlicense"),
    ),
    (re.compile(r"\bcc0 1 0 universal|creative commons legal code cc0"), _const("CC0-1.0")),
    (
        re.compile(r"permission is hereby granted free of charge to any person obtaining a copy"),
        _mit,
    ),
    (
        re.compile(
            r"\b(?:licensed|released|distributed|available|provided) under the (?:terms of the )?mit licen[cs]e\b"
        ),
        _const("MIT"),
    ),
    (
        re.compile(
            r"redistribution and use in source and binary forms with or without modification are permitted"
        ),
        _bsd,
    ),
    (
        re.compile(
            r"permission to use copy modify and (?:or )?distribute this software for any purpose with or without fee is hereby granted"
        ),
        _isc,
    ),
    (
        re.compile(
            r"altered source versions must be plainly marked as such and must not be misrepresented as being the original software"
        ),
        _const("Zlib"),
    ),
]


def detect_license(text: str) -> str:
    """The SPDX id of the license a license file (or header) states; "NOASSERTION" if unknown."""
    if not text:
        return NOASSERTION
    spdx = _spdx_line(text)
    if spdx:
        return spdx
    stripped = text.strip()
    if len(stripped) <= 60 and "\n" not in stripped:
        short = license_from_name(stripped)
        if short:
            return short
    norm = _normalize(text)
    found: list[tuple[int, str]] = []
    for pattern, decide in _RULES:
        for m in pattern.finditer(norm):
            spdx = decide(norm, m)  # type: ignore[operator]
            if spdx:
                found.append((m.start(), spdx))
                break
    if not found:
        return NOASSERTION
    return min(found)[1]


# ---------------------------------------------------------------- metadata names

_KNOWN_IDS = [
    "0BSD", "AGPL-3.0-only", "AGPL-3.0-or-later", "Apache-1.1", "Apache-2.0", "Artistic-2.0",
    "BSD-2-Clause", "BSD-3-Clause", "BSD-4-Clause", "BSL-1.0", "CC0-1.0", "CC-BY-4.0",
    "EPL-1.0", "EPL-2.0", "EUPL-1.2", "GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0-only",
    "GPL-3.0-or-later", "HPND", "ISC", "LGPL-2.0-only", "LGPL-2.0-or-later", "LGPL-2.1-only",
    "LGPL-2.1-or-later", "LGPL-3.0-only", "LGPL-3.0-or-later", "MIT", "MIT-0", "MPL-1.1",
    "MPL-2.0", "PSF-2.0", "Python-2.0", "Unlicense", "Zlib", "WTFPL",
    # deprecated forms still seen in metadata
    "GPL-2.0", "GPL-2.0+", "GPL-3.0", "GPL-3.0+", "LGPL-2.1", "LGPL-2.1+", "LGPL-3.0",
    "LGPL-3.0+", "AGPL-3.0", "AGPL-3.0+", "LGPL-2.0", "LGPL-2.0+",
]  # fmt: skip
_BY_LOWER = {i.lower(): i for i in _KNOWN_IDS}
_ID_SHAPE = re.compile(
    r"^[A-Za-z][A-Za-z0-9.]*(?:-[A-Za-z][A-Za-z0-9.]*)*-\d[A-Za-z0-9.]*(?:-(?:only|or-later))?\+?$"
)

_NAMES = {
    "mit": "MIT",
    "mit license": "MIT",
    "the mit license": "MIT",
    "mit licence": "MIT",
    "expat": "MIT",
    "mit no attribution": "MIT-0",
    "apache": "Apache-2.0",
    "apache 2": "Apache-2.0",
    "apache 2 0": "Apache-2.0",
    "apache2": "Apache-2.0",
    "apache license": "Apache-2.0",
    "apache license 2 0": "Apache-2.0",
    "apache license version 2 0": "Apache-2.0",
    "apache software license": "Apache-2.0",
    "apache software license 2 0": "Apache-2.0",
    "apache software license version 2 0": "Apache-2.0",
    "asl 2 0": "Apache-2.0",
    "bsd 3 clause": "BSD-3-Clause",
    "3 clause bsd": "BSD-3-Clause",
    "bsd 3": "BSD-3-Clause",
    "new bsd": "BSD-3-Clause",
    "new bsd license": "BSD-3-Clause",
    "modified bsd": "BSD-3-Clause",
    "modified bsd license": "BSD-3-Clause",
    "revised bsd": "BSD-3-Clause",
    "bsd 3 clause license": "BSD-3-Clause",
    "bsd 2 clause": "BSD-2-Clause",
    "2 clause bsd": "BSD-2-Clause",
    "simplified bsd": "BSD-2-Clause",
    "freebsd": "BSD-2-Clause",
    "bsd 2 clause license": "BSD-2-Clause",
    "isc": "ISC",
    "isc license": "ISC",
    "iscl": "ISC",
    "mpl 2 0": "MPL-2.0",
    "mpl2": "MPL-2.0",
    "mozilla public license 2 0": "MPL-2.0",
    "psf": "PSF-2.0",
    "psf license": "PSF-2.0",
    "psfl": "PSF-2.0",
    "python software foundation license": "PSF-2.0",
    "unlicense": "Unlicense",
    "the unlicense": "Unlicense",
    "cc0": "CC0-1.0",
    "cc0 1 0": "CC0-1.0",
    "zlib": "Zlib",
    "zlib libpng": "Zlib",
    "boost": "BSL-1.0",
    "boost software license": "BSL-1.0",
    "gplv2": "GPL-2.0-only",
    "gpl v2": "GPL-2.0-only",
    "gplv2 or later": "GPL-2.0-or-later",
    "gplv3": "GPL-3.0-only",
    "gpl v3": "GPL-3.0-only",
    "gplv3 or later": "GPL-3.0-or-later",
    "lgplv2 1": "LGPL-2.1-only",
    "lgplv3": "LGPL-3.0-only",
    "agplv3": "AGPL-3.0-only",
}


def license_from_name(value: str) -> str | None:
    """An SPDX id (or expression) for a short license name or id; None when not recognized."""
    value = " ".join(str(value).split())
    if not value or len(value) > 100:
        return None
    if value.lower() in _BY_LOWER:
        return _BY_LOWER[value.lower()]
    plus = value.endswith("+")
    key = " ".join(re.findall(r"[a-z0-9]+", value.lower()))
    if plus and key + " or later" in _NAMES:
        return _NAMES[key + " or later"]
    if key in _NAMES:
        return _NAMES[key]
    if _ID_SHAPE.match(value):  # an SPDX-like id we do not list: "OLDAP-2.8", "EUPL-1.2"
        return value
    # An SPDX expression made only of known ids: "MIT OR Apache-2.0".
    parts = re.split(r"\s+(?:OR|AND|or|and)\s+", value.strip("() "))
    if len(parts) > 1:
        ids = [license_from_name(p.strip("() ")) for p in parts]
        if all(ids):
            return value
    return None


_CLASSIFIERS = [
    ("mit no attribution", "MIT-0"),
    ("mit license", "MIT"),
    ("apache software license", "Apache-2.0"),
    ("isc license", "ISC"),
    ("mozilla public license 2 0", "MPL-2.0"),
    ("python software foundation license", "PSF-2.0"),
    ("gnu affero general public license v3 or later", "AGPL-3.0-or-later"),
    ("gnu affero general public license v3", "AGPL-3.0-only"),
    ("gnu lesser general public license v2 or later", "LGPL-2.0-or-later"),
    ("gnu lesser general public license v2", "LGPL-2.0-only"),
    ("gnu lesser general public license v3 or later", "LGPL-3.0-or-later"),
    ("gnu lesser general public license v3", "LGPL-3.0-only"),
    ("gnu general public license v2 or later", "GPL-2.0-or-later"),
    ("gnu general public license v2", "GPL-2.0-only"),
    ("gnu general public license v3 or later", "GPL-3.0-or-later"),
    ("gnu general public license v3", "GPL-3.0-only"),
    ("the unlicense", "Unlicense"),
    ("boost software license 1 0", "BSL-1.0"),
    ("zlib libpng license", "Zlib"),
    ("eclipse public license 2 0", "EPL-2.0"),
    ("eclipse public license 1 0", "EPL-1.0"),
    ("cc0 1 0 universal", "CC0-1.0"),
    ("0 clause bsd license", "0BSD"),
]


def license_from_classifiers(classifiers: Iterable[str]) -> str | None:
    """An SPDX id from Trove `License ::` classifiers ("BSD License" alone is too vague)."""
    ids: list[str] = []
    for classifier in classifiers:
        if not classifier.startswith("License ::"):
            continue
        last = " ".join(re.findall(r"[a-z0-9]+", classifier.split("::")[-1].lower()))
        for phrase, spdx in _CLASSIFIERS:
            if last.startswith(phrase):
                if spdx not in ids:
                    ids.append(spdx)
                break
    if not ids:
        return None
    return " OR ".join(sorted(ids))


# ---------------------------------------------------------------- license files

# Preferred license file names (compared case-insensitively), best first.
LICENSE_FILES = (
    "license",
    "license.md",
    "license.txt",
    "license.rst",
    "licence",
    "licence.md",
    "licence.txt",
    "copying.lesser",
    "copying",
    "copying.md",
    "copying.txt",
)
_OTHER_LICENSE_FILE = re.compile(r"^(?:licen[cs]e|copying)[-._].+", re.IGNORECASE)


def license_from_files(names: Iterable[str], read: Callable[[str], str | None]) -> str:
    """The license of a project from the file names at its top level.

    `read(name)` returns a file's text (or None). The first preferred file that states a
    known license decides; otherwise files such as LICENSE-MIT and LICENSE-APACHE are all
    read and their licenses joined with " OR " (the usual meaning of such a pair).
    """
    names = list(names)
    by_lower: dict[str, str] = {}
    for name in sorted(names):
        by_lower.setdefault(name.lower(), name)
    for candidate in LICENSE_FILES:
        if candidate in by_lower:
            text = read(by_lower[candidate])
            spdx = detect_license(text or "")
            if spdx != NOASSERTION:
                return spdx
    found: list[str] = []
    for name in sorted(names):
        if name.lower() in LICENSE_FILES or not _OTHER_LICENSE_FILE.match(name):
            continue
        spdx = detect_license(read(name) or "")
        if spdx != NOASSERTION and spdx not in found:
            found.append(spdx)
    if not found:
        return NOASSERTION
    return " OR ".join(sorted(found))
