"""Writing a shard: its documents' word ids back to back and their suffix arrays.

The local builder and the Spark builder call `write_shard` with the same documents and get
the same files (`store/shards.py` describes them).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from pydivsufsort import divsufsort

from ..store.shards import IDENT_ID, MAX_SHARD_WORDS, SEPARATOR, shard_file, write_array

_CHUNK = 1 << 24  # suffix array entries filtered at a time (bounds the temporary arrays)


def suffix_array(ids: np.ndarray) -> np.ndarray:
    """The positions of `ids` (big-endian uint32, separators included) sorted by the ids
    that follow them, separators' own suffixes left out, as little-endian uint32.

    The bytes are sorted (byte order is id order in big-endian) and the suffixes that start
    at a word kept: divsufsort works on bytes, so 4 entries are made per word for a moment.
    """
    if not len(ids):
        return np.empty(0, dtype="<u4")
    sa = divsufsort(ids.view(np.uint8))
    out = []
    for i in range(0, len(sa), _CHUNK):
        part = sa[i : i + _CHUNK]
        part = part[(part & 3) == 0] >> 2
        out.append(part[ids[part] != SEPARATOR].astype("<u4"))
    return np.concatenate(out)


def joined(docs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, document starts): the documents back to back, a separator before, between and
    after them."""
    sizes = np.fromiter((len(d) + 1 for d in docs), dtype=np.int64, count=len(docs))
    starts = np.cumsum(sizes) - sizes + 1
    ids = np.zeros(int(sizes.sum()) + 1, dtype=">u4")
    for d, s in zip(docs, starts.tolist()):
        ids[s : s + len(d)] = d
    return ids, starts


def write_shard(
    gen: Path, index: int, docs: list[np.ndarray], identifiers: list[np.ndarray | None] | None
) -> tuple[int, int]:
    """Write shard `index` of these documents (their word ids, and for the
    rename-insensitive view which words are identifiers); returns (words, documents)."""
    words = sum(len(d) for d in docs)
    if words > MAX_SHARD_WORDS:
        raise ValueError(f"a shard of {words} words (at most {MAX_SHARD_WORDS})")
    ids, starts = joined(docs)
    write_array(gen / shard_file(index, "ids"), ids)
    write_array(gen / shard_file(index, "docs"), starts.astype("<u4"))
    if identifiers is None:
        write_array(gen / shard_file(index, "sa"), suffix_array(ids))
        return words, len(docs)
    renamed = ids.copy()
    for d, mask, s in zip(docs, identifiers, starts.tolist()):
        if mask is not None:
            renamed[s : s + len(d)][mask] = IDENT_ID
    write_array(gen / shard_file(index, "rids"), renamed)
    # the two sorts run side by side (the sort releases the interpreter)
    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(suffix_array, renamed)
        write_array(gen / shard_file(index, "sa"), suffix_array(ids))
        write_array(gen / shard_file(index, "rsa"), other.result())
    return words, len(docs)
