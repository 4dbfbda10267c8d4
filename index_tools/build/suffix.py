"""Writing a shard: its documents' word ids back to back and their suffix arrays.

The local builder and the Spark builder call `write_shard` with the same documents and get
the same files (`store/shards.py` describes them).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from pydivsufsort import divsufsort

from ..store.shards import (
    MAX_SHARD_WORDS,
    RENAMED_WIDTH,
    SEPARATOR,
    id_bytes,
    id_width,
    renamed_ids,
    shard_file,
    write_array,
)

_CHUNK = 1 << 24  # suffix array entries filtered at a time (bounds the temporary arrays)


def suffix_array(ids: np.ndarray, width: int, stride: int = 1) -> np.ndarray:
    """The positions of `ids` (uint32, separators included) that are multiples of
    `stride`, sorted by the ids that follow them, separators' own suffixes left out, as
    little-endian uint32.

    The ids are written big-endian in `width` bytes (byte order is id order), the bytes
    sorted and the suffixes that start at a word kept: divsufsort works on bytes, so
    `width` entries are made per word for a moment. With a stride, each block of `stride`
    ids becomes one symbol first (its rank among the blocks), so only the blocks' bytes
    are sorted: the same order, since blocks compare as their ids do.
    """
    if not len(ids):
        return np.empty(0, dtype="<u4")
    symbols, symbol_width = ids, width
    if stride > 1:
        symbols = _block_ranks(ids, width, stride)
        symbol_width = 3 if int(symbols.max()) < 1 << 24 else 4  # bytes a rank needs
    sa = divsufsort(id_bytes(symbols, symbol_width))
    out = []
    for i in range(0, len(sa), _CHUNK):
        part = sa[i : i + _CHUNK]
        part = (part[part % symbol_width == 0] // symbol_width).astype(np.int64) * stride
        out.append(part[ids[part] != SEPARATOR].astype("<u4"))
    return np.concatenate(out)


def _block_ranks(ids: np.ndarray, width: int, stride: int) -> np.ndarray:
    """Each block of `stride` ids (the last one padded with separators) as its rank among
    the distinct blocks in their order: a sequence that sorts as the blocks do."""
    blocks = -(-len(ids) // stride)
    padded = np.zeros(blocks * stride, dtype=np.uint64)
    padded[: len(ids)] = ids
    rows = padded.reshape(blocks, stride)
    if width * stride <= 8:  # a block's ids in one 64-bit number, in order
        key = np.zeros(blocks, dtype=np.uint64)
        for j in range(stride):
            key = (key << np.uint64(8 * width)) | rows[:, j]
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        new = np.ones(blocks, dtype=bool)
        new[1:] = ordered[1:] != ordered[:-1]
    else:
        order = np.lexsort(rows.T[::-1])
        ordered = rows[order]
        new = np.ones(blocks, dtype=bool)
        new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    ranks = np.empty(blocks, dtype=np.uint32)
    ranks[order] = np.cumsum(new) - 1
    return ranks


def joined(docs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, document starts): the documents back to back, a separator before, between and
    after them."""
    sizes = np.fromiter((len(d) + 1 for d in docs), dtype=np.int64, count=len(docs))
    starts = np.cumsum(sizes) - sizes + 1
    ids = np.zeros(int(sizes.sum()) + 1, dtype=np.uint32)
    for d, s in zip(docs, starts.tolist()):
        ids[s : s + len(d)] = d
    return ids, starts


def write_shard(
    gen: Path,
    index: int,
    docs: list[np.ndarray],
    identifiers: list[np.ndarray | None] | None,
    stride: int,
) -> tuple[int, int, int, int]:
    """Write shard `index` of these documents (their word ids, and for the
    rename-insensitive view which words are identifiers, its suffix array sampled every
    `stride` positions); returns (words, documents, bytes per id, places of the
    rename-insensitive view's suffix array)."""
    words = sum(len(d) for d in docs)
    if words > MAX_SHARD_WORDS:
        raise ValueError(f"a shard of {words} words (at most {MAX_SHARD_WORDS})")
    ids, starts = joined(docs)
    width = id_width(int(ids.max()))
    write_array(gen / shard_file(index, "ids"), id_bytes(ids, width))
    write_array(gen / shard_file(index, "docs"), starts.astype("<u4"))
    if identifiers is None:
        write_array(gen / shard_file(index, "sa"), suffix_array(ids, width))
        return words, len(docs), width, 0
    marked = np.zeros(len(ids), dtype=bool)
    for d, mask, s in zip(docs, identifiers, starts.tolist()):
        if mask is not None:
            marked[s : s + len(d)] = mask
    renamed = renamed_ids(ids, marked)
    del marked
    write_array(gen / shard_file(index, "rids"), id_bytes(renamed, RENAMED_WIDTH))
    # the two sorts run side by side (the sort releases the interpreter)
    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(suffix_array, renamed, RENAMED_WIDTH, stride)
        write_array(gen / shard_file(index, "sa"), suffix_array(ids, width))
        rsa = other.result()
        write_array(gen / shard_file(index, "rsa"), rsa)
    return words, len(docs), width, len(rsa)
