"""What identifies a quote by its content, wherever it sits: for dismissals and baselines.

A quote is known by a hash of its words (`id`) and by a winnowed set of fingerprints of
its word 8-grams. A later match is the same quote, or a piece of it, when all of its own
fingerprints are among the recorded ones: a dismissal survives edits elsewhere in the file,
restarts, and a quote found whole in one scan and in pieces in another (every fingerprint
a piece selects is selected in the whole, as winnowing picks the minimum of each window).
A longer quote is new; so is one changed inside (a changed word brings a window of new
8-grams, hence a fingerprint of its own), while a change in its last few words may not be.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import accumulate

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..text.words import word_texts

GRAM = 8  # words per hashed gram
WINDOW = 8  # grams per winnowing window
SHORTEST = GRAM + WINDOW - 1  # fewer words than this are known by their id alone


def _hash(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=4).digest()
    return int.from_bytes(digest, "big")


def quote_id(words: Sequence[str]) -> str:
    joined = "\x1f".join(words).encode("utf-8", "surrogatepass")
    return hashlib.sha1(joined).hexdigest()[:16]


def quote_fingerprints(words: Sequence[str]) -> frozenset[int]:
    """Winnowed 32-bit hashes of the word 8-grams (the minimum of each window of 8)."""
    if len(words) < SHORTEST:
        return frozenset()
    # each gram is a slice of the words joined once (the bytes `_hash` reads)
    joined = "\x1f".join(words).encode("utf-8", "surrogatepass")
    sizes = (len(w.encode("utf-8", "surrogatepass")) + 1 for w in words)
    starts = [0, *accumulate(sizes)]  # each word's byte offset, and one past the end
    blake = hashlib.blake2b
    grams = np.fromiter(
        (
            int.from_bytes(blake(joined[a : b - 1], digest_size=4).digest(), "big")
            for a, b in zip(starts, starts[GRAM:])
        ),
        dtype=np.uint32,
        count=len(words) - GRAM + 1,
    )
    return frozenset(sliding_window_view(grams, WINDOW).min(axis=1).tolist())


class QuoteIdentity:
    """A quote's `id` (its words' hash), its number of `words` and its `fingerprints`
    (made from the words when first asked for: most quotes are never compared)."""

    __slots__ = ("id", "words", "_fingerprints", "_pending")

    def __init__(self, id: str, words: int, fingerprints: frozenset[int] | None = None):
        self.id = id
        self.words = words
        self._fingerprints = fingerprints
        self._pending: list[str] | None = None  # the words, until fingerprinted

    @property
    def fingerprints(self) -> frozenset[int]:
        if self._fingerprints is None:
            self._fingerprints = quote_fingerprints(self._pending or [])
            self._pending = None
        return self._fingerprints

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QuoteIdentity):
            return NotImplemented
        return (self.id, self.words, self.fingerprints) == (
            other.id, other.words, other.fingerprints,
        )  # fmt: skip

    def __hash__(self) -> int:
        return hash((self.id, self.words))

    def __repr__(self) -> str:
        return f"QuoteIdentity(id={self.id!r}, words={self.words})"

    @classmethod
    def of_words(cls, words: Sequence[str]) -> QuoteIdentity:
        words = list(words)
        identity = cls(quote_id(words), len(words))
        identity._pending = words
        return identity

    @classmethod
    def of_text(cls, text: str) -> QuoteIdentity:
        return cls.of_words(word_texts(text))

    def covers(self, other: QuoteIdentity) -> bool:
        """Whether `other` is this quote or a piece of it."""
        if other.id == self.id:
            return True
        return (
            bool(other.fingerprints)
            and other.words <= self.words
            and other.fingerprints <= self.fingerprints
        )

    def fingerprint_text(self) -> str:
        return " ".join(f"{h:08x}" for h in sorted(self.fingerprints))

    @staticmethod
    def parse_fingerprints(text: str) -> frozenset[int]:
        """Hex hashes separated by spaces; raises ValueError on anything else."""
        out = set()
        for token in text.split():
            if len(token) > 8:
                raise ValueError(f"not a fingerprint: {token[:20]!r}")
            out.add(int(token, 16))
        return frozenset(out)
