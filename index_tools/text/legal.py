"""Legal text: whether a span holds a license's or a notice's wording, and whether it is
legal text as a whole or code that carries a license header.

A span holds legal text (`is_license`) when it holds one of the keys (a word or part of a
word every legal text has: `licen`, `warrant`, `copyright`...; the search kernel checks
this first step) and then one of the phrases only legal text uses, two of the phrases
common in notices, or runs of words of the licenses of the SPDX License List (shipped
reference data, `data/legal.u64`, made by `bench/make_legal.py`). Phrases and runs are read
in the span's words alone, lowercased, without punctuation: a license in a comment reads
as the same words whatever its comment marks and line breaks.

A span is license text (`is_license_text`) when it holds legal text and what is not legal
text is little: its paragraphs (lines between blank ones, or a comment block and the code
after it) that hold neither a key nor a run of a license's text have at most a quarter of
its words. A whole module copied with its license header is code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources

import numpy as np

from .templates import run_hashes
from .words import WORD_RE

# A word or two of every phrase below: text with none of them holds no phrase (most code).
LEGAL_KEYS = (
    "licen", "warrant", "permission", "copyright", "redistribut", "free software", "hope",
    "applicable law", "compliance", "in no event", "liable", "rights reserved", "terms and",
    "intellectual", "open source", "gpl",
)  # fmt: skip

# Wording only legal text uses: one of these makes a span legal text. (Lowercased words
# joined by one space, without punctuation.)
LEGAL_PHRASES = (
    "permission is hereby granted",
    "redistribution and use in source and binary forms",
    "this program is free software",
    "this library is free software",
    "distributed in the hope that it will be useful",
    "without warranty of any kind",
    "without even the implied warranty",
    "warranties of merchantability",
    "unless required by applicable law or agreed to in writing",
    "you may not use this file except in compliance",
    "the above copyright notice and this permission notice",
    "gnu general public license",
    "gnu lesser general public license",
    "gnu affero general public license",
    "mozilla public license",
    "spdx license identifier",
    "provided that the above copyright",
    "python software foundation license",
    "express or implied warranty",
    "in no event shall",
    "in no event will",
    "held liable for any damages",
    "permission is granted to anyone",
    "copyright and related rights",
)
# Wording common in legal notices; two of them make a notice.
NOTICE_PHRASES = (
    "all rights reserved",
    "licensed under",
    "this source code is licensed",
    "copyright c",
    "apache license",
    "the license",
    "copyrighted material",
    "terms and conditions",
    "license agreement",
    "intellectual property",
    "open source",
    "gpl compatible",
)

LEGAL_K = 8  # words of a run of a license's text
LEGAL_SAMPLE = 4  # runs kept in the reference: those whose hash is a multiple of this
LEGAL_RUNS = 2  # runs of the licenses' texts that make legal text
DATA_FILE = "legal.u64"
OTHER_SHARE = 0.25  # the most of a license text's words outside its legal paragraphs

_NAME_WORD_RE = re.compile(r"\w+")
_LETTER_OR_DIGIT_RE = re.compile(r"[^\W_]")
# a line that opens with a comment mark (a license header, a doc comment's line)
_COMMENTED_RE = re.compile(r"\s*(?:#|//|/\*|\*|--|;|%|<!--|\.\.|REM\b|rem\b)")


def legal_words(words: list[str]) -> list[str]:
    """The words that are runs of identifier characters, lowercased: legal text read
    without its punctuation and comment marks."""
    return _NAME_WORD_RE.findall(" ".join(words).lower())


def has_key(words: list[str]) -> bool:
    """`is_license`'s first step: one of the keys in the words joined by one space,
    lowercased (as the search kernel reads them)."""
    text = " ".join(words).lower()
    return any(k in text for k in LEGAL_KEYS)


def is_license(words: list[str]) -> bool:
    """Whether the words hold legal text: a key, then a legal phrase, two notice phrases
    or `LEGAL_RUNS` runs of the SPDX licenses' texts."""
    if not has_key(words):
        return False
    return holds_legal_wording(legal_words(words))


def holds_legal_wording(plain: list[str]) -> bool:
    """`is_license` past its first step, on `legal_words`."""
    text = " ".join(plain)
    if any(p in text for p in LEGAL_PHRASES):
        return True
    if sum(p in text for p in NOTICE_PHRASES) >= 2:
        return True
    return license_runs(plain) >= LEGAL_RUNS


def license_runs(plain: list[str]) -> int:
    """How many of the runs of `LEGAL_K` words of `plain` (`legal_words`) that the
    reference samples are runs of an SPDX-listed license's text (or standard header)."""
    ref = _reference()
    if len(plain) < LEGAL_K or not len(ref):
        return 0
    hashes = run_hashes(plain, LEGAL_K)
    sampled = hashes[hashes % np.uint64(LEGAL_SAMPLE) == 0]
    at = np.minimum(ref.searchsorted(sampled), len(ref) - 1)
    return int(np.count_nonzero(ref[at] == sampled))


@lru_cache(maxsize=1)
def _reference() -> np.ndarray:
    """The sampled runs of the SPDX licenses' texts, sorted (none without the data file)."""
    path = resources.files("index_tools") / "data" / DATA_FILE
    if not path.is_file():
        return np.zeros(0, dtype=np.uint64)
    return np.frombuffer(path.read_bytes(), dtype="<u8").astype(np.uint64)


def is_license_text(words: list[str], text: str, license=is_license) -> bool:
    """Whether a span is license text as a whole: it holds legal text (`license`: as
    `is_license` answers) and its paragraphs of other text hold at most `OTHER_SHARE` of
    its words (a share, the same at every length: a long license's headings are few of its
    words, the code after a header many)."""
    if not license(words):
        return False
    # the largest paragraphs first: code after a header passes the share in a few of them,
    # the others not read for legal text (the other text's words summed in any order)
    sized = sorted(_paragraph_words(text), key=lambda p: -p[0])
    most, other, unread = OTHER_SHARE * len(words), 0, sum(n for n, _ in sized)
    for n, paragraph in sized:
        if other + unread <= most:
            return True  # (under the share even if every paragraph left is other text)
        unread -= n
        if not _is_legal(paragraph):
            other += n
            if other > most:
                return False
    return True


def paragraphs(text: str) -> Iterator[tuple[int, bool]]:
    """(words, whether it is legal text) of each paragraph of `text` (legal: it holds a key
    or a run of an SPDX license's text): lines between lines without a letter or digit
    (blank lines, a lone `#` or `}`), a comment block apart from the code around it. The
    words of the lines between are in no paragraph."""
    for n, words in _paragraph_words(text):
        yield n, _is_legal(words)


def _paragraph_words(text: str) -> Iterator[tuple[int, list[str]]]:
    """Each paragraph's number of words and its words (`paragraphs`)."""
    lines: list[str] = []  # the paragraph's lines
    commented = None
    for line in text.splitlines():
        if not _LETTER_OR_DIGIT_RE.search(line):
            if lines:
                yield _words(lines)
            lines, commented = [], None
            continue
        is_comment = bool(_COMMENTED_RE.match(line))
        if commented is not None and is_comment != commented:
            yield _words(lines)
            lines = []
        commented = is_comment
        lines.append(line)
    if lines:
        yield _words(lines)


def _words(lines: list[str]) -> tuple[int, list[str]]:
    words = WORD_RE.findall("\n".join(lines))
    return len(words), words


def _is_legal(words: list[str]) -> bool:
    plain = legal_words(words)
    joined = " ".join(plain)
    return any(k in joined for k in LEGAL_KEYS) or license_runs(plain) > 0
