"""Writing a shard: its documents' word ids back to back and their suffix arrays.

The local builder and the Spark builder call `write_shard` with the same documents and get
the same files (`store/shards.py` describes them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
    write_arrays,
)

_CHUNK = 1 << 20  # ids encoded, and suffix array entries mapped, at a time (bounds temporaries)


def suffix_array(ids: np.ndarray, width: int, stride: int = 1) -> np.ndarray:
    """The positions of `ids` (uint32, separators included) that are multiples of
    `stride`, sorted by the ids that follow them, separators' own suffixes left out, as
    little-endian uint32 (`sorted_chunks`, joined: the array held whole)."""
    chunks = list(sorted_chunks(lambda: ids, width, stride))
    return np.concatenate(chunks) if chunks else np.empty(0, dtype="<u4")


def sorted_chunks(
    take: Callable[[], np.ndarray], width: int, stride: int = 1
) -> Iterator[np.ndarray]:
    """`suffix_array` of the ids `take()` returns, in chunks (little-endian uint32) as they
    are found: a writer puts each in its file, the array is never held whole.

    divsufsort sorts bytes: the ids are written in an order-preserving prefix code (see
    `_order_code`: the most frequent ids in one byte, most of the rest in two), the bytes'
    suffixes sorted and those that start at a kept id taken. Byte order is then id order,
    so the order is the ids' (`width`: bytes an id needs). With a stride, each block of
    `stride` ids becomes one symbol first (its rank among the blocks), so only the blocks
    are sorted: the same order, since blocks compare as their ids do.

    Memory: the ids are let go once coded (when `take` handed over the only reference to
    them), so the sort holds the code (1–2 bytes a symbol), divsufsort's array (4 bytes a
    code byte) and a bit per code byte: about 5 bytes a code byte, 7–10 a word; nothing
    else grows with the shard.
    """
    ids = take()
    if not len(ids):
        return
    kept = _bits(ids[::stride] != SEPARATOR)  # the symbols whose suffixes are kept
    if stride == 1:
        symbols = ids
        del ids
    else:
        key = _block_keys(ids, width, stride)
        del ids
        symbols = _ranks(key)
        del key
    code, starts = _order_code(symbols)
    del symbols
    sa = divsufsort(code)
    del code
    # a code byte's symbol is the number of symbols starting before it (a rank over the
    # bits of `starts`); the suffixes of the bytes that start a kept symbol are taken
    before = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(_popcount(starts), out=before[1:])
    for i in range(0, len(sa), _CHUNK):
        at = sa[i : i + _CHUNK].astype(np.int64)
        word, bit = at >> 6, (at & 63).astype(np.uint64)
        here = starts[word]
        start = ((here >> bit) & np.uint64(1)).astype(bool)
        symbol = before[word] + _popcount(here & ((np.uint64(1) << bit) - np.uint64(1)))
        symbol = symbol[start]
        symbol = symbol[((kept[symbol >> 6] >> (symbol & 63).astype(np.uint64)) & 1) == 1]
        if len(symbol):
            yield (symbol * stride).astype("<u4")


def write_suffix_array(
    path: Path, take: Callable[[], np.ndarray], width: int, stride: int, top_step: int
) -> tuple[int, np.ndarray]:
    """`sorted_chunks` of `take()` written to `path` as they come; returns the places
    written and every `top_step`-th of them (the top table's; none without a step)."""
    places, tops = 0, []

    def counted() -> Iterator[np.ndarray]:
        nonlocal places
        for chunk in sorted_chunks(take, width, stride):
            if top_step:  # (a copy: a view would hold the chunk, and so the whole array)
                tops.append(chunk[-places % top_step :: top_step].copy())
            places += len(chunk)
            yield chunk

    write_arrays(path, counted())
    return places, np.concatenate(tops) if tops else np.empty(0, dtype="<u4")


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
    symbol's code starts (a bit each, packed by `_bits`); written a chunk at a time. The
    first `a1` symbols take one byte, the next `a2 * 256` two (a first byte of their own,
    then one), the rest three or four: first bytes split
    between the classes so that the fewest bytes are written (ids are numbered in order
    of first appearance: the frequent ones are small). A longer code's first byte is
    larger than any shorter code's, so two codes compare as their symbols do, and two
    sequences as their first different symbols."""
    n = len(symbols)
    top = int(symbols.max()) + 1
    # (symbols of any unsigned type: a chunk at a time as uint32, the sample as int64)
    sample = symbols[:: max(1, n >> 20)].astype(np.int64)  # the sizes compared on a sample
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
        chunk = symbols[i : i + _CHUNK].astype(np.uint32, copy=False)
        total += int(np.count_nonzero(chunk >= a1))
        total += int(np.count_nonzero(chunk >= c2)) * (last - 2)
    code = np.empty(total, dtype=np.uint8)
    starts = np.zeros(total, dtype=bool)
    at = 0
    for i in range(0, n, _CHUNK):
        chunk = symbols[i : i + _CHUNK].astype(np.uint32, copy=False)
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


def _block_keys(ids: np.ndarray, width: int, stride: int) -> np.ndarray:
    """Each block of `stride` ids (the last one padded with separators) as a key that sorts
    as the block: its ids in one 64-bit number when they fit, else a row of them."""
    blocks = -(-len(ids) // stride)
    if width * stride <= 8:  # a block's ids in one 64-bit number, in order
        key = np.zeros(blocks, dtype=np.uint64)
        for j in range(stride):
            column = ids[j::stride]
            key <<= np.uint64(8 * width)
            key[: len(column)] |= column.astype(np.uint64)
        return key
    padded = np.zeros(blocks * stride, dtype=np.uint64)
    padded[: len(ids)] = ids
    return padded.reshape(blocks, stride)


def _ranks(key: np.ndarray) -> np.ndarray:
    """Each block's rank among the distinct blocks in their order (`_block_keys`' keys):
    a sequence that sorts as the blocks do."""
    blocks = len(key)
    if key.ndim == 1:
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        new = np.ones(blocks, dtype=bool)
        new[1:] = ordered[1:] != ordered[:-1]
    else:
        order = np.lexsort(key.T[::-1])
        ordered = key[order]
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
    return write_joined(gen, index, shard, stride, top_step)


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
    return JoinedShard(ids, starts, None, marked)


@dataclass
class JoinedShard:
    """A shard's documents back to back (`joined`'s ids and starts) and their
    rename-insensitive view (None: the index has none), or which of their words are
    identifiers (`marks`: the view made from them a chunk at a time as it is written, never
    held whole); `write_joined` lets each array go once written."""

    ids: np.ndarray | None
    starts: np.ndarray
    renamed: np.ndarray | None
    marks: np.ndarray | None = None

    def take_ids(self) -> np.ndarray:
        """The ids, no longer held here (their sort lets them go once coded)."""
        ids, self.ids = self.ids, None
        if ids is None:
            raise ValueError("the shard's ids were taken already")
        return ids


def write_joined(
    gen: Path,
    index: int,
    shard: JoinedShard,
    stride: int,
    top_step: int = 0,
    say: Callable[[str], None] = lambda step: None,
) -> tuple[int, int, int, int]:
    """Write shard `index` as `write_shard` does, one view after the other, each array let
    go as soon as it is written: the ids once coded for their sort (the shard's reference
    taken), each suffix array written as it is found, the rename-insensitive view's ids
    read back from their file after the exact view is sorted (two bytes an id, all it
    holds). `say` is told each step as it starts (a progress bar's)."""
    ids, starts = shard.ids, shard.starts
    words = len(ids) - len(starts) - 1  # a separator before, between and after documents
    width = id_width(int(ids.max()))
    _write_ids(gen / shard_file(index, "ids"), ids, width)
    del ids
    write_array(gen / shard_file(index, "docs"), starts.astype("<u4"))
    renamed = shard.renamed is not None or shard.marks is not None
    if renamed:
        view = shard.renamed if shard.renamed is not None else shard.ids
        _write_ids(gen / shard_file(index, "rids"), view, RENAMED_WIDTH, shard.marks)
        shard.renamed = shard.marks = view = None
    say("sorting")
    _, top = write_suffix_array(gen / shard_file(index, "sa"), shard.take_ids, width, 1, top_step)
    say("writing")
    if top_step:
        _write_top(gen / shard_file(index, "top"), gen / shard_file(index, "ids"), top, width)
    rplaces = 0
    if renamed:
        say("sorting the rename-insensitive view")
        rids = gen / shard_file(index, "rids")
        rplaces, rtop = write_suffix_array(
            gen / shard_file(index, "rsa"), lambda: _read_renamed(rids), RENAMED_WIDTH, stride,
            top_step,
        )  # fmt: skip
        if top_step:
            _write_top(gen / shard_file(index, "rtop"), rids, rtop, RENAMED_WIDTH)
    return words, len(starts), width, rplaces


def _write_ids(path: Path, ids: np.ndarray, width: int, marks: np.ndarray | None = None) -> None:
    """`ids` as the shard's file holds them (`id_bytes`), a chunk at a time; with `marks`
    (which words are identifiers), their rename-insensitive view (`renamed_ids`)."""

    def part(i: int) -> np.ndarray:
        ids_here = ids[i : i + _CHUNK]
        return ids_here if marks is None else renamed_ids(ids_here, marks[i : i + _CHUNK])

    write_arrays(path, (id_bytes(part(i), width) for i in range(0, len(ids), _CHUNK)))


def _read_renamed(rids: Path) -> np.ndarray:
    """The rename-insensitive view's ids from their file (each at most RARE_ID: two bytes
    hold it whole)."""
    return np.fromfile(rids, dtype=">u2").astype(np.uint16)


def _write_top(path: Path, ids_file: Path, sampled: np.ndarray, width: int) -> None:
    """The top table of a suffix array from its every `top_step`-th place (`sampled`) and
    its shard's ids file."""
    tok = np.fromfile(ids_file, dtype=np.uint8)
    write_array(path, top_keys(tok, sampled, width, 1, TOP_BYTES))
