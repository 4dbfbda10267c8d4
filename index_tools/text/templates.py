"""Reference data: the text of well-known templates and generated boilerplate (Sphinx's
`conf.py`, Django's project and app files...), as hashed runs of words.

A quoted span made mostly of such runs is an `idiom`: the template was copied into
hundreds of thousands of projects by a generator, nobody recited it. The data files are
made by `bench/make_templates.py` from the packages that ship the templates: the runs'
hashes, sorted, `TEMPLATE_K` words per run, and the words they are made of (a run with
another word is no template's: it is not hashed).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from itertools import accumulate

import numpy as np
import xxhash

TEMPLATE_K = 12  # words per hashed run
SAMPLE_STRIDE = 3  # `QueryTemplates._too_few`: every third word read first
CHAIN = TEMPLATE_K // SAMPLE_STRIDE  # the words read of each run
DATA_FILE = "templates.u64"
WORDS_FILE = "templates.words"


def _joined(words: list[str]) -> tuple[bytes, list[int]]:
    """The words joined by one space, as UTF-8, and each word's offset there (and the end)."""
    text = " ".join(words)
    joined = text.encode()
    ascii_text = len(joined) == len(text)  # a word's bytes are then its characters
    sizes = map(len, words if ascii_text else (w.encode() for w in words))
    return joined, [0, *accumulate(size + 1 for size in sizes)]


def iter_run_hashes(words: list[str], k: int = TEMPLATE_K) -> Iterator[int]:
    """xxh3-64 of every run of `k` consecutive words, joined by one space, in order."""
    joined, starts = _joined(words)
    h = xxhash.xxh3_64_intdigest
    return (h(joined[a : b - 1]) for a, b in zip(starts, starts[k:]))


def run_hashes(words: list[str], k: int = TEMPLATE_K) -> np.ndarray:
    """`iter_run_hashes` as an array."""
    return np.fromiter(iter_run_hashes(words, k), dtype=np.uint64, count=max(0, len(words) - k + 1))


@lru_cache(maxsize=1)
def _reference() -> tuple[frozenset[int], frozenset[str]]:
    """The templates' run hashes and words (none without the data files)."""
    data = resources.files("index_tools") / "data"
    runs, words = data / DATA_FILE, data / WORDS_FILE
    if not runs.is_file() or not words.is_file():
        return frozenset(), frozenset()
    hashes = frozenset(np.frombuffer(runs.read_bytes(), dtype="<u8").tolist())
    return hashes, frozenset(words.read_text(encoding="utf-8").split("\n")[:-1])


def is_template(words: list[str], share: float) -> bool:
    """Whether at least `share` of the span's runs of words are runs of a known template.
    Only runs made of the templates' words can be: they alone are hashed, and none when
    they are too few (most code). A run of one word repeated (a separator line, which
    templates have too) is none."""
    return QueryTemplates(words).is_template(0, len(words), share)


class QueryTemplates:
    """`is_template` of spans of one query's words, each run of words hashed at most once:
    a quote's parts overlap it and one another (a quote of vendored boilerplate has a
    dozen, each checked)."""

    def __init__(self, words: list[str]):
        self.words = words
        self._joined: tuple[bytes, list[int]] | None = None  # made when a run is hashed
        self._found: dict[int, bool] = {}  # run start -> a known template's run
        self._one_word: np.ndarray | None = None  # runs of one word before each run start
        # [k]: the runs before word k that can be a template's (its words all the templates'
        # words, not one word repeated); `_starts`: those runs' starts, ascending
        self._ok: np.ndarray | None = None
        self._starts: np.ndarray | None = None

    def is_template(self, start: int, end: int, share: float) -> bool:
        """`is_template(words[start:end], share)`: the share of runs made of the templates'
        words bounds it first; those runs hashed until the answer is known. A run of one
        word repeated (a separator line) is left out, of the runs and of the hits."""
        last = end - TEMPLATE_K + 1  # runs start in [start, last)
        ref = _reference()[0]
        if last <= start or not ref:
            return False
        if share > 0 and self._too_few(start, end, share):
            return False
        one_word = self._one_word_runs()
        runs = last - start - int(one_word[last] - one_word[start])
        if runs <= 0:
            return False
        need = share * runs
        if need <= 0:
            return True
        ok = self._candidates()
        if int(ok[last] - ok[start]) < need:
            return False
        candidates = self._starts[ok[start] : ok[last]].tolist()
        found = missed = 0
        spare = len(candidates) - need
        for i in candidates:
            hit = self._found.get(i)
            if hit is None:
                hit = self._found[i] = self._hash(i) in ref
            if hit:
                found += 1
                if found >= need:
                    return True
            else:
                missed += 1
                if missed > spare:
                    return False
        return found >= need

    def _too_few(self, start: int, end: int, share: float) -> bool:
        """Whether a span's words every SAMPLE_STRIDE-th show it short of `share` (most code,
        without reading every word): a run of TEMPLATE_K words holds CHAIN of them in a row,
        its first one of its first SAMPLE_STRIDE words, so at most SAMPLE_STRIDE runs hold
        one chain. The runs made of the templates' words are then at most SAMPLE_STRIDE
        times the chains of their words, and the runs of one word repeated (left out of the
        runs asked of) at most SAMPLE_STRIDE times the chains of one word."""
        known = _reference()[1]
        sampled = self.words[start:end:SAMPLE_STRIDE]
        theirs = alike = 0  # chains of the templates' words; of one word
        in_theirs = in_alike = 0  # the sampled words ending here in a row of each kind
        before = None
        for word in sampled:
            in_theirs = in_theirs + 1 if word in known else 0
            in_alike = in_alike + 1 if word == before else 1
            before = word
            theirs += in_theirs >= CHAIN
            alike += in_alike >= CHAIN
        runs = end - TEMPLATE_K + 1 - start - SAMPLE_STRIDE * alike  # (at least the runs asked of)
        return SAMPLE_STRIDE * theirs < share * runs

    def _candidates(self) -> np.ndarray:
        """`_ok`, made for the whole query once (the runs a span can hash are its own)."""
        if self._ok is None:
            _, known = _reference()
            n, k = len(self.words), TEMPLATE_K
            inside = np.fromiter(map(known.__contains__, self.words), dtype=bool, count=n)
            runs = max(0, n - k + 1)
            within = np.zeros(n + 1, dtype=np.int64)  # template words before each word
            np.cumsum(inside, out=within[1:])
            one_word = self._one_word_runs()
            ok = within[k : k + runs] - within[:runs] == k
            ok &= one_word[1 : runs + 1] == one_word[:runs]
            self._starts = np.flatnonzero(ok)
            self._ok = np.zeros(n + 2, dtype=np.int64)
            np.cumsum(ok, out=self._ok[1 : runs + 1])
            self._ok[runs + 1 :] = self._ok[runs]
        return self._ok

    def _one_word_runs(self) -> np.ndarray:
        """[k]: how many of the runs starting before word k are one word repeated."""
        if self._one_word is None:
            words = np.array(self.words, dtype=object)
            same = np.zeros(len(words) + 1, dtype=np.int64)  # same[k]: words[k-1] == words[k]
            same[1:-1] = words[1:] == words[:-1]
            within = np.cumsum(same)  # a run [i, i + K) is one word: K - 1 equal steps in it
            runs = max(0, len(words) - TEMPLATE_K + 1)
            steps = within[TEMPLATE_K - 1 : TEMPLATE_K - 1 + runs] - within[:runs]
            self._one_word = np.zeros(len(words) + 2, dtype=np.int64)
            np.cumsum(steps == TEMPLATE_K - 1, out=self._one_word[1 : runs + 1])
            self._one_word[runs + 1 :] = self._one_word[runs]
        return self._one_word

    def _hash(self, i: int) -> int:
        if self._joined is None:
            self._joined = _joined(self.words)
        joined, starts = self._joined
        return xxhash.xxh3_64_intdigest(joined[starts[i] : starts[i + TEMPLATE_K] - 1])
