"""Reference data: the text of well-known templates and generated boilerplate (Sphinx's
`conf.py`, Django's project and app files...), as hashed runs of words.

A quoted span made mostly of such runs is an `idiom`: the template was copied into
hundreds of thousands of projects by a generator, nobody recited it. The data file is
made by `bench/make_templates.py` from the packages that ship the templates; it holds
only hashes, sorted, `TEMPLATE_K` words per run.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import numpy as np
import xxhash

TEMPLATE_K = 12  # words per hashed run
DATA_FILE = "templates.u64"


def run_hashes(words: list[str], k: int = TEMPLATE_K) -> np.ndarray:
    """xxh3-64 of every run of `k` consecutive words, joined by one space."""
    joined = " ".join(words).encode()
    starts = [0]  # byte offset of each word in `joined`, and one past the end
    for w in words:
        starts.append(starts[-1] + len(w.encode()) + 1)
    h = xxhash.xxh3_64_intdigest
    return np.array(
        [h(joined[starts[i] : starts[i + k] - 1]) for i in range(len(words) - k + 1)],
        dtype=np.uint64,
    )


@lru_cache(maxsize=1)
def _reference() -> np.ndarray:
    path = resources.files("index_tools") / "data" / DATA_FILE
    if not path.is_file():
        return np.zeros(0, dtype=np.uint64)
    return np.sort(np.frombuffer(path.read_bytes(), dtype="<u8").astype(np.uint64))


def template_share(words: list[str]) -> float:
    """Share of the span's runs of words that are runs of a known template."""
    if len(words) < TEMPLATE_K:
        return 0.0
    ref = _reference()
    if ref.size == 0:
        return 0.0
    runs = run_hashes(words)
    at = np.minimum(np.searchsorted(ref, runs), len(ref) - 1)  # the reference is sorted
    return float((ref[at] == runs).mean())
