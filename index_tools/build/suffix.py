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
    TOP_BYTES,
    id_bytes,
    id_width,
    renamed_ids,
    shard_file,
    top_keys,
    write_array,
)

_CHUNK = 1 << 24  # suffix array entries filtered at a time (bounds the temporary arrays)


def suffix_array(ids: np.ndarray, width: int, stride: int = 1) -> np.ndarray:
    """The positions of `ids` (uint32, separators included) that are multiples of
    `stride`, sorted by the ids that follow them, separators' own suffixes left out, as
    little-endian uint32.

    divsufsort sorts bytes: the ids are written in an order-preserving prefix code (see
    `_order_code`: the most frequent ids in one byte, most of the rest in two), the bytes'
    suffixes sorted and those that start at a kept id taken. Byte order is then id order,
    so the order is the ids' (`width`: bytes an id needs). With a stride, each block of
    `stride` ids becomes one symbol first (its rank among the blocks), so only the blocks
    are sorted: the same order, since blocks compare as their ids do.
    """
    if not len(ids):
        return np.empty(0, dtype="<u4")
    symbols = ids if stride == 1 else _block_ranks(ids, width, stride)
    code, offsets = _order_code(symbols)
    # each kept suffix's position at the first byte of its symbol's code, -1 elsewhere
    kept = np.flatnonzero(ids[::stride] != SEPARATOR)
    position = np.full(len(code), -1, dtype=np.int64 if len(ids) >> 31 else np.int32)
    position[offsets[kept]] = kept * stride
    del offsets, kept
    sa = divsufsort(code)
    del code
    out = []
    for i in range(0, len(sa), _CHUNK):
        part = position[sa[i : i + _CHUNK]]
        out.append(part[part >= 0].astype("<u4"))
    return np.concatenate(out)


def _order_code(symbols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`symbols` in a prefix code whose byte order is their order, and where each
    symbol's code starts. The first `a1` symbols take one byte, the next `a2 * 256` two
    (a first byte of their own, then one), the rest three or four: first bytes split
    between the classes so that the fewest bytes are written (ids are numbered in order
    of first appearance: the frequent ones are small). A longer code's first byte is
    larger than any shorter code's, so two codes compare as their symbols do, and two
    sequences as their first different symbols."""
    n = len(symbols)
    top = int(symbols.max()) + 1
    sample = symbols[:: max(1, n >> 20)]  # the sizes compared on a sample
    small = np.bincount(np.minimum(sample, 1 << 17), minlength=(1 << 17) + 1)
    below = np.concatenate(([0], np.cumsum(small)))  # below[k]: sampled symbols < k
    m, best = len(sample), None
    for a1 in range(1, 257):
        a2 = np.arange(0, 257 - a1)
        c2 = a1 + a2 * 256  # the first symbol of three or four bytes
        rest = 256 - a1 - a2  # first bytes left for them
        last = np.where(c2 + rest * (1 << 16) >= top, 3, 4)
        fits = (c2 >= top) | ((rest > 0) & (c2 + rest * (1 << (8 * (last - 1))) >= top))
        size = m + (m - below[a1]) + (m - below[np.minimum(c2, 1 << 17)]) * (last - 1)
        size = np.where(fits, size, np.iinfo(np.int64).max)
        j = int(np.argmin(size))
        if best is None or size[j] < best[0]:
            best = (int(size[j]), a1, int(a2[j]), int(last[j]))
    _, a1, a2, last = best
    c2 = a1 + a2 * 256
    cls = (symbols >= a1).astype(np.uint8) + (symbols >= c2)
    length = np.array([1, 2, last], dtype=np.uint8)[cls]
    code = np.array(symbols, dtype=np.uint32)  # a class's first symbol has its first code:
    code -= np.array([0, a1, c2], dtype=np.uint32)[cls]
    code += np.array([0, a1 << 8, (a1 + a2) << (8 * (last - 1))], dtype=np.uint32)[cls]
    code <<= np.array([24, 16, 32 - 8 * last], dtype=np.uint32)[cls]  # left-aligned
    del cls
    used = np.arange(4, dtype=np.uint8) < length[:, None]
    code = code.astype(">u4").view(np.uint8).reshape(n, 4)[used]
    offsets = np.cumsum(length, dtype=np.int64 if len(code) >> 31 else np.int32)
    offsets -= length
    return code, offsets


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
    top_step: int = 0,
) -> tuple[int, int, int, int]:
    """Write shard `index` of these documents (their word ids, and for the
    rename-insensitive view which words are identifiers, its suffix array sampled every
    `stride` positions; with `top_step`, each suffix array's top table); returns (words,
    documents, bytes per id, places of the rename-insensitive view's suffix array)."""
    words = sum(len(d) for d in docs)
    if words > MAX_SHARD_WORDS:
        raise ValueError(f"a shard of {words} words (at most {MAX_SHARD_WORDS})")
    ids, starts = joined(docs)
    width = id_width(int(ids.max()))
    # the exact view's sort is the longest step: started first, in a thread (the sort
    # releases the interpreter), while the rest is written and the other view sorted
    with ThreadPoolExecutor(1) as pool:
        exact = pool.submit(suffix_array, ids, width)
        tok = id_bytes(ids, width)
        write_array(gen / shard_file(index, "ids"), tok)
        write_array(gen / shard_file(index, "docs"), starts.astype("<u4"))
        rsa = None
        if identifiers is not None:
            marked = np.zeros(len(ids), dtype=bool)
            for d, mask, s in zip(docs, identifiers, starts.tolist()):
                if mask is not None:
                    marked[s : s + len(d)] = mask
            renamed = renamed_ids(ids, marked)
            del marked
            rtok = id_bytes(renamed, RENAMED_WIDTH)
            write_array(gen / shard_file(index, "rids"), rtok)
            rsa = suffix_array(renamed, RENAMED_WIDTH, stride)
            del renamed
            write_array(gen / shard_file(index, "rsa"), rsa)
            if top_step:
                keys = top_keys(rtok, rsa.view(np.uint32), RENAMED_WIDTH, top_step, TOP_BYTES)
                write_array(gen / shard_file(index, "rtop"), keys)
            del rtok
        sa = exact.result()
        write_array(gen / shard_file(index, "sa"), sa)
        if top_step:
            keys = top_keys(tok, sa.view(np.uint32), width, top_step, TOP_BYTES)
            write_array(gen / shard_file(index, "top"), keys)
    return words, len(docs), width, 0 if rsa is None else len(rsa)
