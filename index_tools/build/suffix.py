"""Writing a shard: its documents' word ids back to back and their suffix arrays.

The local builder and the Spark builder call `write_shard` with the same documents and get
the same files (`store/shards.py` describes them).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
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

_CHUNK = 1 << 20  # ids encoded, and suffix array entries mapped, at a time (bounds temporaries)


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

    Memory, besides `ids`: the code (1–2 bytes a symbol), divsufsort's array (4 bytes a
    code byte), the result and a bit per code byte; nothing else grows with the shard, so
    that a shard of 2^30 words sorts in about 14 GB.
    """
    if not len(ids):
        return np.empty(0, dtype="<u4")
    symbols = ids if stride == 1 else _block_ranks(ids, width, stride)
    code, starts = _order_code(symbols)
    del symbols
    kept = _bits(ids[::stride] != SEPARATOR)  # the symbols whose suffixes are kept
    sa = divsufsort(code)
    del code
    # a code byte's symbol is the number of symbols starting before it (a rank over the
    # bits of `starts`); the suffixes of the bytes that start a kept symbol are taken
    before = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(_popcount(starts), out=before[1:])
    out = np.empty(int(_popcount(kept).sum()), dtype="<u4")
    filled = 0
    for i in range(0, len(sa), _CHUNK):
        at = sa[i : i + _CHUNK].astype(np.int64)
        word, bit = at >> 6, (at & 63).astype(np.uint64)
        here = starts[word]
        start = ((here >> bit) & np.uint64(1)).astype(bool)
        symbol = before[word] + _popcount(here & ((np.uint64(1) << bit) - np.uint64(1)))
        symbol = symbol[start]
        symbol = symbol[((kept[symbol >> 6] >> (symbol & 63).astype(np.uint64)) & 1) == 1]
        out[filled : filled + len(symbol)] = symbol * stride
        filled += len(symbol)
    assert filled == len(out)
    return out


def _bits(flags: np.ndarray) -> np.ndarray:
    """`flags` (bool) packed into uint64 words, flag j at bit j % 64 of word j // 64."""
    packed = np.packbits(flags, bitorder="little")
    padded = np.zeros(-(-len(packed) // 8) * 8, dtype=np.uint8)
    padded[: len(packed)] = packed
    return padded.view("<u8").astype(np.uint64)


_BYTE_BITS = np.array([bin(b).count("1") for b in range(256)], dtype=np.uint8)


def _popcount(words: np.ndarray) -> np.ndarray:
    """The set bits of each uint64 (int64)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words).astype(np.int64)
    return _BYTE_BITS[words.view(np.uint8)].reshape(-1, 8).sum(axis=1, dtype=np.int64)


def _order_code(symbols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`symbols` in a prefix code whose byte order is their order, and the bytes where a
    symbol's code starts (a bit each, packed by `_bits`); written a chunk at a time. The first `a1` symbols take one byte, the next `a2 * 256` two
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
    nbytes = np.array([1, 2, last], dtype=np.uint8)  # bytes of a code, by class
    first = np.array([0, a1 << 8, (a1 + a2) << (8 * (last - 1))], dtype=np.uint32)
    base = np.array([0, a1, c2], dtype=np.uint32)  # a class's first symbol has its first code
    shift = np.array([24, 16, 32 - 8 * last], dtype=np.uint32)  # codes left-aligned
    total = n  # the code's bytes: one a symbol, one more from a1 on, more from c2 on
    for i in range(0, n, _CHUNK):
        chunk = symbols[i : i + _CHUNK]
        total += int(np.count_nonzero(chunk >= a1))
        total += int(np.count_nonzero(chunk >= c2)) * (last - 2)
    code = np.empty(total, dtype=np.uint8)
    starts = np.zeros(total, dtype=bool)
    at = 0
    for i in range(0, n, _CHUNK):
        chunk = symbols[i : i + _CHUNK]
        cls = (chunk >= a1).astype(np.uint8) + (chunk >= c2)
        length = nbytes[cls]
        c = chunk.astype(np.uint32) - base[cls]
        c += first[cls]
        c <<= shift[cls]
        used = np.arange(4, dtype=np.uint8) < length[:, None]
        written = c.astype(">u4").view(np.uint8).reshape(-1, 4)[used]
        code[at : at + len(written)] = written
        offsets = np.cumsum(length, dtype=np.int64)
        offsets -= length
        starts[at + offsets] = True
        at += len(written)
    return code, _bits(starts)


def _block_ranks(ids: np.ndarray, width: int, stride: int) -> np.ndarray:
    """Each block of `stride` ids (the last one padded with separators) as its rank among
    the distinct blocks in their order: a sequence that sorts as the blocks do."""
    blocks = -(-len(ids) // stride)
    if width * stride <= 8:  # a block's ids in one 64-bit number, in order
        key = np.zeros(blocks, dtype=np.uint64)
        for j in range(stride):
            column = ids[j::stride]
            key <<= np.uint64(8 * width)
            key[: len(column)] |= column.astype(np.uint64)
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        del key
        new = np.ones(blocks, dtype=bool)
        new[1:] = ordered[1:] != ordered[:-1]
    else:
        padded = np.zeros(blocks * stride, dtype=np.uint64)
        padded[: len(ids)] = ids
        rows = padded.reshape(blocks, stride)
        order = np.lexsort(rows.T[::-1])
        ordered = rows[order]
        new = np.ones(blocks, dtype=bool)
        new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    del ordered
    ranks = np.empty(blocks, dtype=np.uint32)
    ranks[order] = np.cumsum(new, dtype=np.int64) - 1
    return ranks


def joined(docs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, document starts): the documents back to back, a separator before, between and
    after them (`joined_shard`'s, the list left as it is)."""
    shard = joined_shard(list(docs), None)
    return shard.ids, shard.starts


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
    documents, bytes per id, places of the rename-insensitive view's suffix array).
    Consumes `docs` and `identifiers` (`joined_shard`)."""
    shard = joined_shard(docs, identifiers)
    return write_joined(gen, index, shard, stride, top_step, at_once=False)


def joined_shard(
    docs: list[np.ndarray], identifiers: list[np.ndarray | None] | None
) -> JoinedShard:
    """The documents back to back, a separator before, between and after them, and their
    rename-insensitive view when `identifiers` says which words are identifiers. Consumes
    both lists: each document's arrays are let go once copied, so the documents and the
    shard are not held at once."""
    words = sum(len(d) for d in docs)
    if words > MAX_SHARD_WORDS:
        raise ValueError(f"a shard of {words} words (at most {MAX_SHARD_WORDS})")
    sizes = np.fromiter((len(d) + 1 for d in docs), dtype=np.int64, count=len(docs))
    starts = np.cumsum(sizes) - sizes + 1
    ids = np.zeros(int(sizes.sum()) + 1, dtype=np.uint32)
    marked = np.zeros(len(ids), dtype=bool) if identifiers is not None else None
    for k, s in enumerate(starts.tolist()):
        d, docs[k] = docs[k], None
        ids[s : s + len(d)] = d
        if marked is not None and identifiers is not None:
            mask, identifiers[k] = identifiers[k], None
            if mask is not None:
                marked[s : s + len(d)] = mask
        del d
    docs.clear()
    renamed = renamed_ids(ids, marked) if marked is not None else None
    return JoinedShard(ids, starts, renamed)


@dataclass
class JoinedShard:
    """A shard's documents back to back (`joined`'s ids and starts) and their
    rename-insensitive view (None: the index has none); `write_joined` lets each array go
    once written."""

    ids: np.ndarray | None
    starts: np.ndarray
    renamed: np.ndarray | None


def write_joined(
    gen: Path,
    index: int,
    shard: JoinedShard,
    stride: int,
    top_step: int = 0,
    at_once: bool = True,
    say: Callable[[str], None] = lambda step: None,
) -> tuple[int, int, int, int]:
    """Write shard `index` as `write_shard` does. With `at_once`, the two views are
    sorted side by side (faster); without, one after the other and each array let go as
    soon as it is written (less memory: compacting sorts the largest shards). `say` is
    told each step as it starts (a progress bar's)."""
    ids, starts = shard.ids, shard.starts
    words = len(ids) - len(starts) - 1  # a separator before, between and after documents
    width = id_width(int(ids.max()))
    # the exact view's sort is the longest step: started first, in a thread (the sort
    # releases the interpreter), while the rest is written and the other view sorted
    with ThreadPoolExecutor(1) as pool:
        exact = pool.submit(suffix_array, ids, width) if at_once else None
        tok = id_bytes(ids, width)
        write_array(gen / shard_file(index, "ids"), tok)
        if exact is None:  # read back from its file for the top table: no copy held
            del tok
        write_array(gen / shard_file(index, "docs"), starts.astype("<u4"))
        rplaces = 0
        if shard.renamed is not None:
            say("sorting the rename-insensitive view")
            renamed, shard.renamed = shard.renamed, None
            rtok = id_bytes(renamed, RENAMED_WIDTH)
            write_array(gen / shard_file(index, "rids"), rtok)
            rsa = suffix_array(renamed, RENAMED_WIDTH, stride)
            del renamed
            write_array(gen / shard_file(index, "rsa"), rsa)
            if top_step:
                keys = top_keys(rtok, rsa.view(np.uint32), RENAMED_WIDTH, top_step, TOP_BYTES)
                write_array(gen / shard_file(index, "rtop"), keys)
            rplaces = len(rsa)
            del rtok, rsa
        say("sorting")
        if exact is not None:
            sa = exact.result()
        else:
            shard.ids = None
            sa = suffix_array(ids, width)
            del ids
            tok = np.fromfile(gen / shard_file(index, "ids"), dtype=np.uint8)
        say("writing")
        write_array(gen / shard_file(index, "sa"), sa)
        if top_step:
            keys = top_keys(tok, sa.view(np.uint32), width, top_step, TOP_BYTES)
            write_array(gen / shard_file(index, "top"), keys)
    return words, len(starts), width, rplaces
