"""Reference data: the text of well-known templates and generated boilerplate (Sphinx's
`conf.py`, Django's project and app files...), as hashed runs of words.

A quoted span made mostly of such runs is an `idiom`: the template was copied into
hundreds of thousands of projects by a generator, nobody recited it. The data file is
made by `bench/make_templates.py` from the packages that ship the templates; it holds
only hashes, sorted, `TEMPLATE_K` words per run.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from itertools import accumulate, chain, islice

import numpy as np
import xxhash

TEMPLATE_K = 12  # words per hashed run
DATA_FILE = "templates.u64"


def iter_run_hashes(words: list[str], k: int = TEMPLATE_K) -> Iterator[int]:
    """xxh3-64 of every run of `k` consecutive words, joined by one space, in order."""
    text = " ".join(words)
    joined = text.encode()
    ascii_text = len(joined) == len(text)  # a word's bytes are then its characters
    sizes = map(len, words if ascii_text else (w.encode() for w in words))
    starts = [0, *accumulate(size + 1 for size in sizes)]  # each word's offset, and the end
    h = xxhash.xxh3_64_intdigest
    return (h(joined[a : b - 1]) for a, b in zip(starts, starts[k:]))


def run_hashes(words: list[str], k: int = TEMPLATE_K) -> np.ndarray:
    """`iter_run_hashes` as an array."""
    return np.fromiter(iter_run_hashes(words, k), dtype=np.uint64, count=max(0, len(words) - k + 1))


@lru_cache(maxsize=1)
def _reference() -> frozenset[int]:
    path = resources.files("index_tools") / "data" / DATA_FILE
    if not path.is_file():
        return frozenset()
    return frozenset(np.frombuffer(path.read_bytes(), dtype="<u8").tolist())


def is_template(words: list[str], share: float) -> bool:
    """Whether at least `share` of the span's runs of words are runs of a known template
    (runs are hashed until the answer is known: most code misses from its first half)."""
    runs = len(words) - TEMPLATE_K + 1
    ref = _reference()
    if runs <= 0 or not ref:
        return False
    need = share * runs  # runs found in the templates
    spare = runs - need  # runs that may be missed
    hashes = iter_run_hashes(words)
    # most code: none of the first spare + 1 runs is a template's, which decides it
    first = list(islice(hashes, int(spare) + 1))
    if ref.isdisjoint(first):
        return need <= 0
    found = missed = 0
    for h in chain(first, hashes):
        if h in ref:
            found += 1
            if found >= need:
                return True
        else:
            missed += 1
            if missed > spare:
                return False
    return found >= need
