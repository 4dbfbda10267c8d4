"""Which of the note's buckets a verified match falls in.

`license`: license or legal text; `repetitive`: a span made of few distinct word shapes
(regexes like `\\s+\\d+\\s+...`, tables of numbers); `common`: a standard idiom found in very
many files; anything else is a `recitation`.
"""

from __future__ import annotations

import numpy as np

from .model import Kind

COMMON_FILES = 50  # a span found in at least this many files is a common idiom

_LICENSE_PHRASES = (
    "permission is hereby granted",
    "without warranty",
    "warranties of merchantability",
    "licensed under",
    "the above copyright notice",
    "redistribution and use in source and binary forms",
    "gnu general public license",
    "gnu lesser general public license",
    "apache license",
    "mozilla public license",
    "spdx - license - identifier",
    "all rights reserved",
    "this program is free software",
    "this library is free software",
    "you may not use this file except in compliance",
    "provided that the above copyright",
    "copyright ( c )",
    "python software foundation license",
)


_LICENSE_WORDS = frozenset(
    [
        "permission",
        "warranty",
        "warranties",
        "license",
        "licensed",
        "licence",
        "copyright",
        "redistribution",
        "gnu",
        "spdx",
        "rights",
    ]
)


def is_license(words: list[str]) -> bool:
    if not any(w.lower() in _LICENSE_WORDS for w in set(words)):
        return False
    text = " ".join(w.lower() for w in words)
    return sum(p in text for p in _LICENSE_PHRASES) >= 2


def is_repetitive(words: list[str]) -> bool:
    """Few distinct words, or a short pattern (numbers counted alike) repeated throughout."""
    n = len(words)
    if n == 0:
        return False
    if len(set(words)) / n < 0.2:
        return True
    ids: dict[str, int] = {}
    seq = np.array([ids.setdefault("0" if w[0].isdigit() else w, len(ids)) for w in words])
    if len(ids) / n > 0.3:
        return False
    for period in range(1, min(16, n // 4) + 1):
        if (seq[period:] == seq[:-period]).mean() >= 0.9:
            return True
    return False


def classify(words: list[str], file_count: int, common_files: int = COMMON_FILES) -> Kind:
    if is_license(words):
        return "license"
    if is_repetitive(words):
        return "repetitive"
    if file_count >= common_files:
        return "common"
    return "recitation"
