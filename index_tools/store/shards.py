"""A generation's suffix-array shards, its vocabulary and per-document counts, as files.

    shard-000.ids      the word ids of the shard's unique documents back to back, big-endian
                       (byte order is id order) in the shard's id width: 3 bytes when every
                       id of the shard is below NARROW_LIMIT, else 4 (the header's
                       `shard_id_bytes`); the separator 0 before, between and after the
                       documents
    shard-000.sa       the suffix array of shard-000.ids: little-endian uint32 positions,
                       sorted by the ids that follow them (separators' own suffixes left out)
    shard-000.docs     the position of each document's first word (little-endian uint32)
    shard-000.rids     the rename-insensitive view: the same ids with every identifier as
                       IDENT_ID and every other word past RARE_ID as RARE_ID, big-endian in
                       2 bytes (`renamed_ids`; the lookup compares rare words itself),
    shard-000.rsa      and its suffix array sampled: only the positions that are a
                       multiple of the header's `renamed_stride` (RENAMED_STRIDE when built),
                       `shard_renamed_places` of them (when the index has that view)
    vocab.words        every word once, in id order, each followed by a line break (words
                       never hold whitespace)
    vocab.offsets      little-endian uint64: where each word starts in vocab.words, and the end
    vocab.lookup       (xxh3-64 of the word, id) sorted by hash: how a query finds its ids;
                       the word itself is compared, so a hash never stands for a word
    occurrences.u32    per document: how many indexed files are that document
    shard-000.top      the suffix array's top levels, read into memory when opened: the first
    shard-000.rtop     TOP_BYTES bytes of the ids at every `top_step`-th entry's position
                       (zeros past the end), of the exact view and of the rename-insensitive
                       one, so that a search's first probes read no mapped page (when the
                       header's `top_step` is not 0; an index built before has none)
    shares.u32         per entry of the header's `sources`, in that order (its number of files
                       in the header's `source_files`): the document of each of its files, in
                       the order they were indexed (little-endian uint32). A document's files
                       are its occurrences, so the entries' shares add up to occurrences.u32;
                       `add` of a source's new version takes its old share out. An index built
                       before shares were recorded has no such file.

A shard holds fewer than 2**31 words. Ids: 0 the separator, 1 the placeholder of the
rename-insensitive view, words from 2 in order of first appearance (documents in id order).
"""

from __future__ import annotations

import contextlib
import itertools
import mmap
import os
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import xxhash

SEPARATOR = 0
IDENT_ID = 1
FIRST_WORD_ID = 2
UNKNOWN = 0xFFFFFFFF  # a query word the vocabulary lacks: equal to no stored id
NARROW_LIMIT = 0xFFFFFF  # a shard whose ids are all below this stores them in 3 bytes; in
# such a shard a query word with a larger id (or none) is NARROW_LIMIT, equal to no stored id
ID_WIDTHS = (3, 4)
RENAMED_STRIDE = 4  # one suffix in this many of the rename-insensitive view is sorted
MAX_RENAMED_STRIDE = 64
RENAMED_WIDTH = 2  # bytes per id of the rename-insensitive view
RARE_ID = 0xFFFF  # that view's id of every word (not an identifier) of id RARE_ID or more
MAX_SHARD_WORDS = (1 << 31) - 1
WORDS_NAME = "vocab.words"
OFFSETS_NAME = "vocab.offsets"
LOOKUP_NAME = "vocab.lookup"
OCCURRENCES_NAME = "occurrences.u32"
SHARES_NAME = "shares.u32"
LOOKUP_DTYPE = np.dtype([("hash", "<u8"), ("id", "<u4")])
SHARD_PARTS = ("ids", "sa", "docs")
RENAMED_PARTS = ("rids", "rsa")
TOP_PARTS = ("top", "rtop")  # (the renamed one when the index has that view)
TOP_STEP = 512  # one suffix-array entry in this many has its first bytes in the top table
TOP_BYTES = 16


def shard_file(i: int, part: str) -> str:
    return f"shard-{i:03d}.{part}"


def shard_files(shards: int, renamed: bool, top: bool = False) -> list[str]:
    parts = SHARD_PARTS + (RENAMED_PARTS if renamed else ())
    if top:
        parts += TOP_PARTS if renamed else TOP_PARTS[:1]
    return [shard_file(i, p) for i in range(shards) for p in parts]


def document_words(starts: np.ndarray, size: int) -> np.ndarray:
    """Each document's words in a shard of `size` ids whose documents start at `starts`
    (a separator before each document and one at the end)."""
    return np.diff(np.append(starts, size)) - 1


def top_entries(places: int, step: int) -> int:
    """Entries of the top table of a suffix array of `places` entries."""
    return -(-places // step)


def top_keys(tok: np.ndarray, sa: np.ndarray, width: int, step: int, nbytes: int) -> np.ndarray:
    """The top table of a suffix array: for every `step`-th entry, the first `nbytes` bytes
    of the ids (`tok`, big-endian bytes) from its position, zeros past the end (uint8)."""
    at = sa[::step].astype(np.int64) * width
    idx = at[:, None] + np.arange(nbytes)
    keys = tok[np.minimum(idx, len(tok) - 1)] if len(tok) else np.zeros(idx.shape, np.uint8)
    keys[idx >= len(tok)] = 0
    return np.ascontiguousarray(keys, dtype=np.uint8).reshape(-1)


def word_hash(word: str) -> int:
    return xxhash.xxh3_64_intdigest(word.encode("utf-8", "surrogatepass"))


def id_width(max_id: int) -> int:
    """Bytes per id of a shard whose largest id is `max_id`."""
    return 3 if max_id < NARROW_LIMIT else 4


def id_bytes(ids: np.ndarray, width: int) -> np.ndarray:
    """`ids` big-endian in `width` bytes each, as one uint8 array (ids past the width's
    range are its largest value: NARROW_LIMIT for 3, a query's words no such shard holds;
    RARE_ID for 2)."""
    ids = np.asarray(ids, dtype=np.uint32)
    if width < 4:
        ids = np.minimum(ids, (1 << (8 * width)) - 1)
    be = ids.astype(">u4").view(np.uint8).reshape(-1, 4)
    return np.ascontiguousarray(be[:, 4 - width :]).reshape(-1)


def ranges(firsts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The positions of the ranges [firsts[k], firsts[k] + sizes[k]), one range after the
    other (int64): many slices of one array read as one."""
    sizes = np.asarray(sizes, dtype=np.int64)
    before = np.cumsum(sizes) - sizes  # (each range's first place in the answer)
    shift = np.asarray(firsts, dtype=np.int64) - before
    return np.arange(int(sizes.sum()), dtype=np.int64) + np.repeat(shift, sizes)


def ids_of_bytes(raw: np.ndarray, width: int) -> np.ndarray:
    """`id_bytes` read back: big-endian ids of `width` bytes each (uint8) as uint32."""
    rows = raw.reshape(-1, width)
    out = np.zeros(len(rows), dtype=np.uint32)
    for j in range(width):
        out <<= np.uint32(8)
        out |= rows[:, j]
    return out


def renamed_ids(ids: np.ndarray, identifiers: np.ndarray) -> np.ndarray:
    """The rename-insensitive view of `ids` (uint32): IDENT_ID where `identifiers`,
    RARE_ID for every other id from RARE_ID on (2 bytes an id, whatever the vocabulary;
    words that equal there may differ, which the lookup checks in the documents)."""
    out = np.minimum(ids, RARE_ID).astype(np.uint32, copy=False)
    out[identifiers] = IDENT_ID  # (in place: a shard's ids and this view held, no more)
    return out


def expected_sizes(
    shard_words: list[int],
    shard_docs: list[int],
    widths: list[int],
    renamed: list[int] | None,
    top: tuple[int, int] = (0, 0),
) -> dict:
    """The size of every shard file, from the header's counts, id widths, (with the
    rename-insensitive view) sampled places of that view and the top tables' step and
    bytes ((0, 0): none)."""
    out = {}
    step, nbytes = top
    for i, (w, d, width) in enumerate(zip(shard_words, shard_docs, widths)):
        ids = width * (w + d + 1)
        out[shard_file(i, "ids")] = ids
        out[shard_file(i, "sa")] = 4 * w
        out[shard_file(i, "docs")] = 4 * d
        if renamed is not None:
            out[shard_file(i, "rids")] = RENAMED_WIDTH * (w + d + 1)
            out[shard_file(i, "rsa")] = 4 * renamed[i]
        if step:
            out[shard_file(i, "top")] = nbytes * top_entries(w, step)
            if renamed is not None:
                out[shard_file(i, "rtop")] = nbytes * top_entries(renamed[i], step)
    return out


def write_array(path: Path, array: np.ndarray) -> None:
    write_arrays(path, [array])


def write_arrays(path: Path, arrays: Iterable[np.ndarray]) -> None:
    """The arrays back to back in one file, each written as it comes (a large one made a
    chunk at a time is never held whole), then synced."""
    with open(path, "wb") as f:
        for array in arrays:
            array.tofile(f)
        f.flush()
        os.fsync(f.fileno())


# --- vocabulary --------------------------------------------------------------------------


def packed_words(words: list[str]) -> tuple[bytes, np.ndarray]:
    """`words` as the words file holds them (UTF-8, each followed by a line break, which no
    word holds) and each one's lookup hash (xxh3-64 of its bytes)."""
    encoded = [w.encode("utf-8", "surrogatepass") for w in words]
    hashes = np.fromiter(map(xxhash.xxh3_64_intdigest, encoded), np.uint64, len(encoded))
    return b"".join(b + b"\n" for b in encoded), hashes


def write_vocabulary(gen: Path, words: list[str]) -> None:
    """The three vocabulary files of `words` (id FIRST_WORD_ID + index)."""
    packed, hashes = packed_words(words)
    ends = np.flatnonzero(np.frombuffer(packed, dtype=np.uint8) == 0x0A) + 1
    offsets = np.zeros(len(words) + 1, dtype="<u8")
    offsets[1:] = ends
    write_packed_vocabulary(gen, packed, offsets, hashes)


def write_vocabulary_of(gen: Path, words: Iterable[str], chunk: int = 1 << 16) -> int:
    """The three vocabulary files of `words` as they come (a chunk at a time: the words
    are never held together); returns their number."""
    offsets, hashes = array("Q", [0]), array("Q")
    with open(gen / WORDS_NAME, "wb") as f:
        for part in _chunks(iter(words), chunk):
            packed, h = packed_words(part)
            ends = np.flatnonzero(np.frombuffer(packed, dtype=np.uint8) == 0x0A) + 1
            offsets.frombytes((ends + offsets[-1]).astype(np.uint64).tobytes())
            hashes.frombytes(h.tobytes())
            f.write(packed)
        f.flush()
        os.fsync(f.fileno())
    _write_offsets_and_lookup(
        gen, np.frombuffer(offsets, dtype=np.uint64), np.frombuffer(hashes, dtype=np.uint64)
    )
    return len(hashes)


def _chunks(items: Iterator, size: int) -> Iterator[list]:
    while part := list(itertools.islice(items, size)):
        yield part


def write_packed_vocabulary(gen: Path, packed, offsets: np.ndarray, hashes: np.ndarray) -> None:
    """The three vocabulary files of words already packed (`packed_words`: the words file),
    their offsets in it (each word's start, then the end) and their lookup hashes."""
    with open(gen / WORDS_NAME, "wb") as f:
        f.write(packed)
        f.flush()
        os.fsync(f.fileno())
    _write_offsets_and_lookup(gen, offsets, hashes)


def _write_offsets_and_lookup(gen: Path, offsets: np.ndarray, hashes: np.ndarray) -> None:
    write_array(gen / OFFSETS_NAME, np.asarray(offsets, dtype="<u8"))
    lookup = np.empty(len(hashes), dtype=LOOKUP_DTYPE)
    lookup["hash"] = hashes
    lookup["id"] = np.arange(FIRST_WORD_ID, FIRST_WORD_ID + len(hashes), dtype=np.uint32)
    write_array(gen / LOOKUP_NAME, np.sort(lookup, order=("hash", "id")))


def read_vocabulary(gen: Path) -> list[str]:
    """The words in id order (for `add`, which extends the vocabulary)."""
    data = (gen / WORDS_NAME).read_bytes()
    if not data:
        return []
    if not data.endswith(b"\n"):
        raise ValueError("vocabulary cut short")
    return data[:-1].decode("utf-8", "surrogatepass").split("\n")


class Vocabulary:
    """Word -> id for queries, from the mapped vocabulary files."""

    def __init__(self, words, offsets, lookup, size: int):
        """From the three files' maps (`generations.map_file`)."""
        self.words, self._offsets_map, self._lookup_map = words, offsets, lookup
        self.offsets = np.frombuffer(self._offsets_map, dtype="<u8")
        lookup = np.frombuffer(self._lookup_map, dtype=LOOKUP_DTYPE)
        if len(self.offsets) != size + 1 or len(lookup) != size:
            raise ValueError("vocabulary size differs from the header")
        self.hashes = np.ascontiguousarray(lookup["hash"])  # searched on every lookup
        if size > 1 and np.any(self.hashes[1:] < self.hashes[:-1]):  # (read whole just now)
            raise ValueError("vocabulary lookup out of order")  # (its searches would miss)
        self.lookup_ids = lookup["id"]
        self.records = self._lookup_map  # (hash, id) records, as the compiled lookup reads them
        self.size = size

    def word(self, word_id: int) -> bytes:
        """The stored bytes of a word; an id or offsets out of range a ValueError (damaged)."""
        i = word_id - FIRST_WORD_ID
        if not 0 <= i < self.size:
            raise ValueError(f"vocabulary entry of id {word_id}")
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        if not a < b <= len(self.words):
            raise ValueError(f"vocabulary offsets of id {word_id}")
        return self.words[a : b - 1]

    def ids(self, words: list[str]) -> dict[str, int]:
        """The id of each of `words` the vocabulary has (the reference of the compiled
        lookup, kernel.c `rc_word_ids`). An entry of a word's hash whose id or word lies
        outside the files: ValueError (damaged), never a word taken as unknown."""
        if not words or not self.size:
            return {}
        encoded = [w.encode("utf-8", "surrogatepass") for w in words]
        hashes = np.fromiter(map(xxhash.xxh3_64_intdigest, encoded), np.uint64, len(words))
        n = len(self.hashes)
        # searched in the hashes' order: each search starts where the one before ended,
        # in pages and cache lines it just read (2.5x faster on a vocabulary of 10.7M)
        order = np.argsort(hashes)
        at = np.empty(len(hashes), dtype=np.int64)
        at[order] = np.minimum(np.searchsorted(self.hashes, hashes[order]), n - 1)
        # each word's first entry of its hash, the word there read to confirm it
        same = (self.hashes[at] == hashes).tolist()
        first = self.lookup_ids[at].tolist()
        out = {}
        for k, (word, b) in enumerate(zip(words, encoded)):
            if not same[k]:
                continue
            if self.word(first[k]) == b:
                out[word] = first[k]
                continue
            i, h = int(at[k]) + 1, int(hashes[k])
            while i < n and int(self.hashes[i]) == h:  # equal hashes: the word decides
                word_id = int(self.lookup_ids[i])
                if self.word(word_id) == b:
                    out[word] = word_id
                    break
                i += 1
        return out

    @staticmethod
    def encoded(words: list[str]) -> tuple[np.ndarray, bytes, np.ndarray] | None:
        """Query words as the compiled lookup takes them: their hashes, their UTF-8 bytes
        joined with a terminator after each, and where each starts (one more: the end).
        Query words hold no whitespace (the note's words); None when one holds the
        terminator (no stored word does)."""
        if not words:
            return np.empty(0, np.uint64), b"", np.zeros(1, np.uint64)
        joined = "\n".join(words).encode("utf-8", "surrogatepass") + b"\n"
        encoded = joined.split(b"\n")[:-1]
        if len(encoded) != len(words):
            return None
        hashes = np.fromiter(map(xxhash.xxh3_64_intdigest, encoded), np.uint64, len(words))
        offsets = np.zeros(len(words) + 1, dtype=np.uint64)
        np.cumsum(np.fromiter(map(len, encoded), np.uint64, len(words)) + 1, out=offsets[1:])
        return hashes, joined, offsets

    def close(self) -> None:
        maps = (self.words, self._offsets_map, self._lookup_map)
        self.offsets = self.lookup_ids = self.words = self.records = None
        for m in maps:
            if isinstance(m, mmap.mmap):
                with contextlib.suppress(BufferError):  # a view still held elsewhere
                    m.close()
