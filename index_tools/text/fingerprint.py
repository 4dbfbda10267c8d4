"""Word hashes (xxh3-64), k-gram fingerprints and winnowing.

A k-gram fingerprint combines k consecutive word hashes polynomially modulo 2**64 and
finalizes the sum with a 64-bit mixer, so fingerprints are well spread and can be computed
for a whole document with a few vectorized operations. Winnowing keeps, in every window of
`window` consecutive fingerprints, the minimum (the rightmost one on ties): any common run of
at least t = window + k - 1 words contains a whole window, so both sides keep a fingerprint
inside it.
"""

from __future__ import annotations

import numpy as np
import xxhash

HASH_NAME = "xxh3_64"
KGRAM_NAME = "poly64-fmix64"

_MULT = np.uint64(0x9E3779B97F4A7C15)
_FMIX1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)

_xxh3 = xxhash.xxh3_64_intdigest


class WordHasher:
    """xxh3-64 of each word's UTF-8 bytes, memoized (code repeats its words a lot)."""

    def __init__(self, max_entries: int = 1 << 20):
        self._cache: dict[str, int] = {}
        self._max = max_entries

    def hashes(self, words: list[str]) -> np.ndarray:
        cache = self._cache
        if len(cache) > self._max:
            cache.clear()
        for w in [w for w in set(words) if w not in cache]:
            cache[w] = _xxh3(w.encode("utf-8", "surrogatepass"))
        return np.fromiter(map(cache.__getitem__, words), dtype=np.uint64, count=len(words))


def kgram_fingerprints(word_hashes: np.ndarray, k: int) -> np.ndarray:
    """Fingerprint of every run of k consecutive words; empty when fewer than k words."""
    n = len(word_hashes) - k + 1
    if n <= 0:
        return np.empty(0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        acc = word_hashes[0:n].copy()
        for i in range(1, k):
            acc *= _MULT
            acc += word_hashes[i : i + n]
        # fmix64 finalizer: spreads the polynomial's low-entropy bits.
        acc ^= acc >> _S33
        acc *= _FMIX1
        acc ^= acc >> _S33
        acc *= _FMIX2
        acc ^= acc >> _S33
    return acc


def _sliding(a: np.ndarray, width: int, op) -> np.ndarray:
    """op-reduction of every window a[j : j + width] (len(a) - width + 1 values), computed by
    doubling: about log2(width) vectorized passes."""
    n = len(a) - width + 1
    r, span = a, 1
    while span * 2 <= width:
        r = op(r[:-span], r[span:])
        span *= 2
    if span < width:
        r = op(r[:n], r[width - span : width - span + n])
    return r[:n]


def winnow(fingerprints: np.ndarray, window: int) -> np.ndarray:
    """Positions of the fingerprints kept by winnowing, ascending.

    A position is kept when its fingerprint is the minimum of some window of `window`
    consecutive fingerprints (all tied minima are kept); a sequence shorter than one window
    keeps its minimum. Every window therefore holds at least one kept position.
    """
    n = len(fingerprints)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    if n <= window:
        return np.flatnonzero(fingerprints == fingerprints.min())
    mins = _sliding(fingerprints, window, np.minimum)  # mins[j] = min of window j
    # position p lies in windows p - window + 1 .. p; it is a window minimum exactly when the
    # largest of those windows' minima equals its own fingerprint
    pad = np.zeros(window - 1, dtype=fingerprints.dtype)
    best = _sliding(np.concatenate((pad, mins, pad)), window, np.maximum)
    return np.flatnonzero(fingerprints == best[:n])


_NONE = np.uint64(0xFFFFFFFFFFFFFFFF)


def winnow_past(fingerprints: np.ndarray, window: int, capped: np.ndarray) -> np.ndarray:
    """Positions kept by winnowing when the `capped` fingerprints (a boolean mask) do not
    count: in every window that holds an uncapped fingerprint, its smallest uncapped one.

    Both sides of a common run compute the same minima as long as they agree on which
    fingerprints are capped, so a common run of t words with an uncapped k-gram in one of
    its windows always shares an uncapped (complete) posting list."""
    if not capped.any():
        return winnow(fingerprints, window)
    masked = np.where(capped, _NONE, fingerprints)
    picks = winnow(masked, window)
    return picks[~capped[picks]]


def guarantee(k: int, window: int) -> int:
    """The shortest common run of words that is always found."""
    return window + k - 1
