"""The local builder: documents -> worker processes -> word ids -> suffix-array shards.

Workers tokenize, compress and number each document's distinct words (packed: the words'
bytes and hashes); the main process deduplicates identical files by content hash, stores
documents, maps words to the vocabulary's ids (in order of first appearance) and streams
the ids of unique documents to a file of the shard being filled. A full shard
(`shard_words`) is read back and has its suffix arrays built in a thread (the sort releases
the interpreter, so it runs beside the workers) while the next one fills on disk.

Memory is bounded by the shard, not the corpus: one shard sorted at a time (about 9 bytes
a word: its code and divsufsort's array, the two views one after the other, each suffix
array written as it is found), the rest on disk; what grows with the corpus
is the vocabulary (about 40 bytes a distinct word, `Vocabulary`) and 4 bytes a document
and a file (`_Writer.occurrences`, `shares`). Everything goes into a new generation
published atomically.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import shutil
import time
from array import array
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import lmdb
import numpy as np
import xxhash

from ..model import Document
from ..safe_text import printable
from ..store import generations as store
from ..store import shards as files
from ..store.lock import IndexBusyError, WriterLock
from ..store.map_ahead import drop_pages, mapping_of
from ..store.small_files import NotRegularFile, writable_target
from ..text.normalize import GRAMMARS, NORMALIZER_VERSION, supported
from ..text.words import TOKENIZER_VERSION
from . import progress
from .held import described, sort_sources
from .process import ProcessedDoc, process
from .sources.base import with_own_license
from .suffix import JoinedShard, write_joined
from .workers import ordered_map

# words per shard: its sort's memory, about 9 bytes a word (2.4 GB; the 1.5B-word corpus in 6
# shards, each searched by a lookup)
DEFAULT_SHARD_WORDS = 1 << 28
# words per shard joined by `compact`: about 10 bytes a word of memory (5.4 GB; measured
# 3.5 GB for 355M words, 21 bytes a word before its sort held the code alone)
DEFAULT_COMPACT_WORDS = 1 << 29
ORIGIN_CAP = 32  # occurrences kept per unique document (all of them are counted)
DOC_BATCH = 512  # documents per LMDB write transaction
# growth of docs.mdb after which the writer drops the pages its map holds: LMDB reads pages
# through its map, and they stayed in the builder's memory (three quarters of the file at
# 131M words; docs.mdb is 0.6 GB at 1.5B)
DROP_BYTES = 4 << 20


class BuildError(Exception):
    """A build could not run (bad source, unusable output directory...)."""


@dataclass
class BuildOptions:
    jobs: int = 0  # 0: all cores
    max_file_bytes: int = 1_000_000
    shard_words: int = DEFAULT_SHARD_WORDS  # a shard holds at most this many words
    progress: bool | str | None = None  # None: when stderr is a terminal; "json": JSON lines
    renamed: bool = True  # also index the rename-insensitive view (supported languages)
    # that view's suffix arrays sort one position in this many: 4 bytes a word over this
    # stride, and as many windows searched per anchor there
    renamed_stride: int = files.RENAMED_STRIDE
    registry: object = None  # sources.RegistryOptions for pypi:/npm: sources (None: defaults)
    # once built, the shards joined into shards of at most this many words (compact.py:
    # `compact_built`; about 10 bytes a word of memory); 0: none; None: DEFAULT_COMPACT_WORDS
    # with the default shard size, none with a smaller one given (it bounds the memory)
    compact_words: int | None = None

    def join_limit(self) -> int:
        """The words a shard joined after the build holds at most (0: none joined)."""
        if self.compact_words is not None:
            return max(0, self.compact_words)
        return DEFAULT_COMPACT_WORDS if self.shard_words >= DEFAULT_SHARD_WORDS else 0


def groups(shard_words: list[int], limit: int) -> list[list[int]]:
    """Neighbouring shards joined while their words stay within `limit` (a shard larger
    than that stays alone), in order."""
    out: list[list[int]] = []
    total = 0
    for i, words in enumerate(shard_words):
        if out and total + words <= limit:
            out[-1].append(i)
            total += words
        else:
            out.append([i])
            total = words
    return out


# an `add` joins its shards with the ones before them while each of those holds at most
# this many times the words joined after it: an index kept current by adds holds about
# log(adds) small shards, each word sorted again a few times (5 shards at most and each
# word sorted ~5 times over 200 adds of one size)
JOIN_RATIO = 2


# an `add` given every source of its index builds it anew once at least this share of the
# index's words is in documents no file holds any more (old versions, taken out): a
# generation's shards are never rewritten, so those stay in their files (8 versions of a
# folder, a fifth of its files each, made an index 2.6 times its fresh size: versions.md)
REBUILD_DEAD_SHARE = 0.5


def dead_words(gen: Path, header: store.Header) -> int:
    """Words of the documents no file holds any more (their occurrences all taken out)."""
    occurrences = np.fromfile(gen / files.OCCURRENCES_NAME, dtype="<u4")
    dead, first = 0, 0
    for i, documents in enumerate(header.shard_documents):
        starts = np.fromfile(gen / files.shard_file(i, "docs"), dtype="<u4").astype(np.int64)
        lengths = files.document_words(starts, header.shard_words[i] + documents + 1)
        gone = occurrences[first : first + documents] == 0
        if len(starts) != documents or len(gone) != documents:
            raise BuildError(f"index at {gen.parent} is damaged (shard {i}); rebuild it")
        dead += int(lengths[gone].sum())
        first += documents
    return dead


class _BuildAnew(Exception):
    """Raised by `_add` (before it writes) when the index is better built anew."""


def settled(shard_words: list[int], limit: int) -> list[list[int]]:
    """The shards an `add` leaves (as `groups` gives them): the last one joined with those
    before it while each holds at most JOIN_RATIO times the words after it and the joined
    shard stays within `limit`, the build's own bound on a shard's memory."""
    if not shard_words:
        return []
    first, total = len(shard_words) - 1, shard_words[-1]
    while first > 0:
        words = shard_words[first - 1]
        if words > JOIN_RATIO * total or total + words > limit:
            break
        first, total = first - 1, total + words
    return [[i] for i in range(first)] + [list(range(first, len(shard_words)))]


def compacted_shards(shard_words: list[int]) -> int:
    """The shards of an index once compacted with the default limit."""
    return len(groups(shard_words, DEFAULT_COMPACT_WORDS))


@dataclass
class BuildSummary:
    path: str
    files: int = 0
    words: int = 0
    documents: int = 0
    duplicates: int = 0
    skipped: Counter = field(default_factory=Counter)
    unsupported: Counter = field(default_factory=Counter)  # what "unsupported" files were
    sources: list[str] = field(default_factory=list)  # what was indexed (packages at versions)
    vocabulary: int = 0
    shards: int = 0
    bytes: int = 0
    seconds: float = 0.0
    # held sources given at another version: (name, version held, version given)
    replaced: list[tuple[str, str, str]] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # sources a workspace no longer names
    removed: int = 0  # files of the replaced versions and the left sources taken out
    compacted: int | None = None  # its shards once compacted (`compacted_shards`)
    joined: int | None = None  # the shards an `add` or a build left before joining them
    joined_by: str = "add"  # what joined them: "add" (`settled`) or "build" (`compact_built`)
    not_joined: str | None = None  # why the shards could not be joined (the index is published)
    # an `add` that built its index anew: the share of its words no file held any more
    rebuilt: float | None = None

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        del d["compacted"], d["joined_by"]  # (said in `lines` only)
        d["skipped"] = dict(self.skipped)
        d["unsupported"] = dict(self.unsupported)
        d["replaced"] = [
            {"source": name, "version_held": held, "version_given": given}
            for name, held, given in self.replaced
        ]
        d["bytes_per_word"] = round(self.bytes / self.words, 3) if self.words else None
        return d

    def lines(self) -> list[str]:
        skipped = ", ".join(self._skipped(r, n) for r, n in sorted(self.skipped.items())) or "none"
        bpw = f"{self.bytes / self.words:.2f}" if self.words else "-"
        rate = self.words / self.seconds if self.seconds else 0
        out = [
            f"index: {self.path}",
            f"files: {self.files:,} ({self.documents:,} unique documents, "
            f"{self.duplicates:,} duplicates)",
            f"words: {self.words:,} in unique documents ({self.vocabulary:,} distinct)",
            f"skipped: {skipped}",
            f"shards: {self.shards}{self._joined()}{self._compact_hint()}",
            f"index size: {self.bytes:,} bytes ({bpw} bytes per word)",
            f"time: {self.seconds:.1f} s ({rate:,.0f} words/s)",
        ]
        if not self.bytes and not self.files and not self.replaced and not self.left:
            out[4:6] = ["nothing written: the index is as it was"]
        if self.left:
            names = ", ".join(printable(n, 200) for n in self.left[:20])
            more = f" and {len(self.left) - 20} more" if len(self.left) > 20 else ""
            out.insert(4, f"taken out (no longer in the workspace): {names}{more}")
        if self.replaced:
            out.insert(4, self.replaced_line())
        if self.rebuilt is not None:
            out.insert(1, self.rebuilt_line())
        if self.sources:
            out.insert(1, self.sources_line())
        return out

    def _joined(self) -> str:
        built = self.joined_by == "build"
        if self.not_joined is not None:
            if built:
                return f" (not compacted, the index as built: {self.not_joined})"
            return f" (not joined with the ones before, the index as added: {self.not_joined})"
        if self.joined is None:
            return ""
        if built:
            return f" (compacted from the build's {self.joined}, each sorted within its memory)"
        return f" (joined from {self.joined}: the add's with the smaller ones before them)"

    def _compact_hint(self) -> str:
        """How to make lookups faster when `compact` would join shards (a lookup searches
        every one; the build's are bounded by its memory)."""
        if self.compacted is None or self.shards <= self.compacted:
            return ""
        return (
            f" (a lookup searches each: `recitation-index compact` joins them into about "
            f"{self.compacted} for faster lookups, with ~10 bytes a word of memory)"
        )

    SOURCES_SHOWN = 12

    def sources_line(self) -> str:
        """`sources: pypi:requests==2.32.3, acme/widgets` (a package at the version fetched)."""
        names = [printable(n, 200) for n in self.sources[: self.SOURCES_SHOWN]]
        more = len(self.sources) - len(names)
        return "sources: " + ", ".join(names) + (f" and {more:,} more" if more > 0 else "")

    def _skipped(self, reason: str, n: int) -> str:
        """`12 binary`; unsupported files with their kinds, the most first: `42 unsupported
        (.md 20, .txt 12, .json 5, no extension 3 and 2 more kinds)`."""
        if reason != "unsupported" or not self.unsupported:
            return f"{n:,} {reason}"
        kinds = sorted(self.unsupported.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{printable(k, 24)} {c:,}" for k, c in kinds[:5])
        more = f" and {len(kinds) - 5} more kinds" if len(kinds) > 5 else ""
        return f"{n:,} unsupported ({shown}{more})"

    def rebuilt_line(self) -> str:
        return (
            f"built anew: {self.rebuilt:.0%} of the index's words were in documents no "
            "file held any more (old versions taken out, still in its files); the sources "
            "given are all of the index, so it was built from them again"
        )

    def replaced_line(self) -> str:
        """`replaced: acme/widgets 1a2b3c4d → 5e6f7a8b (2 files of the old version out)`"""
        versions = ", ".join(
            f"{printable(name, 200)} {short_version(held)} → {short_version(given)}"
            for name, held, given in self.replaced
        )
        old = "version" if len(self.replaced) == 1 else "versions"
        return f"replaced: {versions} ({self.removed:,} files of the old {old} out)"


def short_version(version: str) -> str:
    """A commit or a digest by its first 8 digits, other versions as they are (cut)."""
    if re.fullmatch(r"[0-9a-f]{12,}", version):
        return version[:8]
    return printable(version, 60) or "?"


# --- worker side -------------------------------------------------------------------------

_R = True


def _init_worker(renamed: bool = True) -> None:
    global _R
    _R = renamed


def _work(doc: Document) -> tuple[Document, ProcessedDoc]:
    return with_own_license(doc), process(doc.text, doc.language, _R).pack()


def _run_one(doc: Document, opts: BuildOptions) -> tuple[Document, ProcessedDoc]:
    return with_own_license(doc), process(doc.text, doc.language, opts.renamed).pack()


# --- main side ---------------------------------------------------------------------------


def doc_meta(pd: ProcessedDoc, language: str, offset: int, occurrences: int = 1) -> dict:
    """The `meta` record of a unique document whose text is at `offset` in text.zst (`f`:
    its frames, when it has more than one)."""
    meta = {
        "w": pd.words,
        "l": language,
        "n": occurrences,
        "h": pd.content_hash.hex(),
        "o": offset,
        "z": len(pd.ztext),
    }
    if pd.frames:
        meta["f"] = [list(f) for f in pd.frames]
    return meta


class DocStore:
    """The unique documents of a generation being written: docs.mdb and text.zst."""

    def __init__(self, gen: Path):
        self.env = store.open_env(gen / store.DOCS_NAME, readonly=False, max_dbs=8)
        self.dbs = {name.decode(): self.env.open_db(name) for name in store.DOC_DBS}
        self.txn = self.env.begin(write=True)
        self.pending = 0
        self.mapped_at = mapping_of(gen / store.DOCS_NAME)  # (None: pages kept mapped)
        self.dropped_at = 0  # docs.mdb's size when its pages were last dropped
        self.text = open(gen / store.TEXT_NAME, "ab")  # noqa: SIM115 - closed in close()

    def put(
        self, doc_id: int, pd: ProcessedDoc, language: str, origins: list, occurrences: int = 1
    ) -> None:
        """Store a new document (ids ascending)."""
        key = store.doc_key(doc_id)
        meta = doc_meta(pd, language, self.text.tell(), occurrences)
        self.text.write(pd.ztext)
        txn, dbs = self.txn, self.dbs
        txn.put(key, json.dumps(meta).encode(), db=dbs["meta"], append=True)
        txn.put(key, pd.blocks, db=dbs["blocks"], append=True)
        if "lines" in dbs:  # (a store without line tables: the builder before's, in tests)
            txn.put(key, pd.lines, db=dbs["lines"], append=True)
        txn.put(key, json.dumps(origins).encode(), db=dbs["origins"], append=True)
        txn.put(pd.content_hash, key, db=dbs["content"])

    def tick(self) -> None:
        """Count one stored file; commit every DOC_BATCH, and once the file has grown by
        DROP_BYTES, drop the pages the map holds (the page cache keeps them), so that the
        builder's memory does not grow with the documents."""
        self.pending += 1
        if self.pending >= DOC_BATCH:
            self.txn.commit()
            if self.mapped_at is not None:
                size = (self.env.info()["last_pgno"] + 1) * self.env.stat()["psize"]
                if size - self.dropped_at >= DROP_BYTES:
                    drop_pages(self.mapped_at, size)
                    self.dropped_at = size
            self.txn = self.env.begin(write=True)
            self.pending = 0

    def close(self) -> None:
        self.txn.commit()
        self.env.sync(True)
        self.env.close()
        self.text.flush()
        os.fsync(self.text.fileno())
        self.text.close()


class Vocabulary:
    """Word -> id, ids given in order of first appearance (documents in id order).

    Held as the vocabulary's files hold it, not as a word object each (a dict of str took
    about 150 bytes a word: 1.6 GB for the 10.7M words of 1.5B): the words packed one after
    the other (`shards.packed_words`, the words file), their offsets and lookup hashes, and
    an open-addressing table of ids by hash (at most half full), about 40 bytes a word in
    all. A document's words are found together with array operations, each found word's
    bytes compared with the stored ones (equal hashes never make two words one)."""

    def __init__(self, packed: bytes = b"", hashes: np.ndarray | None = None):
        self.blob = bytearray(packed)  # the words file
        ends = np.flatnonzero(np.frombuffer(self.blob, dtype=np.uint8) == 0x0A) + 1
        self.offsets = array("Q", [0])  # each word's start in `blob`, then the end
        self.offsets.frombytes(ends.astype(np.uint64).tobytes())
        if hashes is None:
            hashes = files.packed_words(packed.decode("utf-8", "surrogatepass").split("\n")[:-1])[1]
        self.hashes = array("Q", np.asarray(hashes, dtype=np.uint64).tobytes())
        if len(self.hashes) != len(self):
            raise ValueError("vocabulary words and hashes differ")
        self._slots = np.zeros(0, dtype=np.uint32)  # word ids by hash (0: empty)
        self._salt = np.uint64(int.from_bytes(os.urandom(8), "little"))
        self._rehash(max(1 << 10, 4 * len(self)))  # at most half full

    @classmethod
    def of_generation(cls, gen: Path) -> Vocabulary:
        """The vocabulary of a published generation (for `add`, which extends it); a
        damaged one is a ValueError."""
        packed = (gen / files.WORDS_NAME).read_bytes()
        if packed and not packed.endswith(b"\n"):
            raise ValueError("vocabulary cut short")
        return cls(packed)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def words(self) -> list[str]:
        return self.blob.decode("utf-8", "surrogatepass").split("\n")[:-1]

    def map(self, pd: ProcessedDoc) -> np.ndarray:
        """The document's word ids (new words get the next ids)."""
        packed, hashes = pd.pack().packed
        q = np.frombuffer(packed, dtype=np.uint8)
        ends = np.flatnonzero(q == 0x0A) + 1
        starts = np.concatenate(([0], ends[:-1])) if len(ends) else ends
        table = self._find(hashes, q, starts, ends - starts)
        new = np.flatnonzero(table == 0)  # in order of appearance: the next ids
        if len(new):
            table[new] = self._add(q, starts[new], ends[new], hashes[new])
        return table[pd.local_ids]

    def write(self, gen: Path) -> None:
        """The vocabulary's three files."""
        files.write_packed_vocabulary(
            gen, self.blob, np.frombuffer(self.offsets, dtype=np.uint64),
            np.frombuffer(self.hashes, dtype=np.uint64),
        )  # fmt: skip

    def _find(
        self, hashes: np.ndarray, q: np.ndarray, starts: np.ndarray, sizes: np.ndarray
    ) -> np.ndarray:
        """The id of each word (`q[starts[j] : starts[j] + sizes[j]]`, its line break
        included), 0 where the vocabulary lacks it: the table probed by hash for all the
        words at once, then each word found compared with the stored one byte for byte."""
        out = np.zeros(len(hashes), dtype=np.uint32)
        if not len(self) or not len(hashes):
            return out
        slots, mask = self._slots, len(self._slots) - 1
        stored = np.frombuffer(self.hashes, dtype=np.uint64)
        at = self._home(hashes)
        todo = np.arange(len(hashes))
        while len(todo):
            held = slots[at[todo]]
            filled = np.flatnonzero(held)
            same = np.zeros(len(todo), dtype=bool)
            same[filled] = stored[held[filled] - files.FIRST_WORD_ID] == hashes[todo[filled]]
            out[todo[same]] = held[same]
            go = same.copy()  # a slot of another word: on to the next
            go[filled] = ~same[filled]
            todo = todo[go]
            at[todo] = (at[todo] + 1) & mask
        found = np.flatnonzero(out)
        k = out[found].astype(np.int64) - files.FIRST_WORD_ID
        # (the found words' offsets alone: a copy of all of them, 8 bytes a word of the
        # vocabulary, made each document's lookup grow with the vocabulary)
        offsets = np.frombuffer(self.offsets, dtype=np.uint64)
        firsts, ends = offsets[k].astype(np.int64), offsets[k + 1].astype(np.int64)
        equal = _same_bytes(
            np.frombuffer(self.blob, dtype=np.uint8), firsts, ends - firsts,
            q, starts[found], sizes[found],
        )  # fmt: skip
        for j in found[~equal].tolist():  # another word of the same hash: probed on
            out[j] = self._probe(bytes(q[starts[j] : starts[j] + sizes[j]]), int(hashes[j]))
        return out

    def _probe(self, word: bytes, h: int) -> int:
        """The id of `word` (its line break included) of hash `h`, or 0: slot by slot."""
        slots, mask = self._slots, len(self._slots) - 1
        at = int(self._home(np.array([h], dtype=np.uint64))[0])
        while word_id := int(slots[at]):
            i = word_id - files.FIRST_WORD_ID
            if self.hashes[i] == h and self.blob[self.offsets[i] : self.offsets[i + 1]] == word:
                return word_id
            at = (at + 1) & mask
        return 0

    def _add(
        self, q: np.ndarray, starts: np.ndarray, ends: np.ndarray, hashes: np.ndarray
    ) -> np.ndarray:
        """Give the words (`q[starts[j] : ends[j]]`, new and distinct) the next ids."""
        first = files.FIRST_WORD_ID + len(self)
        if 2 * (len(self) + len(hashes)) > len(self._slots):
            self._rehash(4 * (len(self) + len(hashes)))
        sizes = ends - starts
        self.blob += q[files.ranges(starts, sizes)].tobytes()
        self.offsets.frombytes((np.cumsum(sizes) + self.offsets[-1]).astype(np.uint64).tobytes())
        self.hashes.frombytes(np.asarray(hashes, dtype=np.uint64).tobytes())
        ids = np.arange(first, first + len(hashes), dtype=np.uint32)
        self._place(ids, hashes)
        return ids

    def _home(self, hashes: np.ndarray) -> np.ndarray:
        """Each hash's first slot: its bits mixed with this table's secret (words crafted
        to share low bits do not share slots) and multiplied, the top bits taken."""
        bits = np.uint64(64 - (len(self._slots).bit_length() - 1))
        mixed = (np.asarray(hashes, dtype=np.uint64) ^ self._salt) * _GOLDEN
        return (mixed >> bits).astype(np.int64) if bits < 64 else np.zeros(len(mixed), np.int64)

    def _rehash(self, size: int) -> None:
        """A table of at least `size` slots (a power of two) of every word, placed
        REHASH_WORDS at a time: placing them all at once took 60-80 bytes a word beside the
        table, while a shard may be sorting (0.35 GB at 4.2M words, 1.0 GB at 16.8M;
        bench/results/vocabulary-memory.md)."""
        self._slots = np.zeros(1 << max(0, (size - 1).bit_length()), dtype=np.uint32)
        hashes, first = np.frombuffer(self.hashes, dtype=np.uint64), files.FIRST_WORD_ID
        for a in range(0, len(self), REHASH_WORDS):
            b = min(a + REHASH_WORDS, len(self))
            self._place(np.arange(first + a, first + b, dtype=np.uint32), hashes[a:b])

    def _place(self, ids: np.ndarray, hashes: np.ndarray) -> None:
        """Each of `ids` at the first free slot from its hash's on (linear probing: the
        slots passed are taken, so a lookup passes them too); rounds in which each free
        slot wanted takes the first of the words that want it."""
        slots, mask = self._slots, len(self._slots) - 1
        at = self._home(hashes)
        todo = np.arange(len(ids))
        while len(todo):
            want = at[todo]
            free = np.flatnonzero(slots[want] == 0)
            _, pick = np.unique(want[free], return_index=True)
            placed = np.zeros(len(todo), dtype=bool)
            placed[free[pick]] = True
            slots[want[placed]] = ids[todo[placed]]
            todo = todo[~placed]
            at[todo] = (at[todo] + 1) & mask


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / the golden ratio, odd
REHASH_WORDS = 1 << 20  # words placed at a time when the vocabulary's table grows


def _same_bytes(
    blob: np.ndarray, b_starts: np.ndarray, b_sizes: np.ndarray,
    q: np.ndarray, q_starts: np.ndarray, q_sizes: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """Whether each stored word (`blob` at `b_starts`) is the query's (`q` at `q_starts`):
    of the same size, byte for byte."""
    equal = b_sizes == q_sizes
    pick = np.flatnonzero(equal)
    if not len(pick):
        return equal
    sizes = q_sizes[pick]
    stored = blob[files.ranges(b_starts[pick], sizes)]
    differ = stored != q[files.ranges(q_starts[pick], sizes)]
    equal[pick[np.add.reduceat(differ, np.cumsum(sizes) - sizes) > 0]] = False
    return equal


class ShardBuffer:
    """The unique documents of the shard being filled, streamed to two files beside the
    generation's (their word ids back to back with a separator before, between and after
    them, and which words are identifiers): in memory only a count of words a document.
    A full shard is read back whole and written (its suffix arrays sorted) in a thread while
    the next one fills, so memory holds one shard at a time, never the corpus."""

    def __init__(
        self, gen: Path, first_shard: int, limit: int, renamed: bool, stride: int, top: int
    ):
        self.gen = gen
        self.top = top  # the top tables' step (0: none)
        self.next_shard = first_shard
        self.limit = max(1, min(limit, files.MAX_SHARD_WORDS))
        self.renamed = renamed
        self.stride = stride  # of the rename-insensitive view's suffix arrays
        self.sizes = array("I")  # words of each document of the shard being filled
        self.words = 0
        self._ids = self._marks = None  # the files it is streamed to
        # (words, documents, id bytes, renamed places) per shard written
        self.written: list[tuple[int, int, int, int]] = []
        self._pool = ThreadPoolExecutor(1)
        self._pending: Future | None = None

    def _filling(self, part: str) -> Path:
        return self.gen / f"{files.shard_file(self.next_shard, part)}.filling.tmp"

    def add(self, ids: np.ndarray, mask: np.ndarray | None) -> None:
        if self.sizes and self.words + len(ids) > self.limit:
            self.flush()
        if self._ids is None:
            self._ids = open(self._filling("ids"), "wb", buffering=1 << 20)  # noqa: SIM115
            self._ids.write(_SEPARATOR)
            if self.renamed:
                self._marks = open(self._filling("marks"), "wb", buffering=1 << 20)  # noqa: SIM115
                self._marks.write(b"\0")
        self._ids.write(np.asarray(ids, dtype=np.uint32).tobytes())
        self._ids.write(_SEPARATOR)
        if self._marks is not None:
            self._marks.write(bytes(len(ids)) if mask is None else mask.astype(np.bool_).tobytes())
            self._marks.write(b"\0")
        self.sizes.append(len(ids))
        self.words += len(ids)

    def flush(self) -> None:
        if not self.sizes:
            return
        self._wait()
        ids, marks = self._filling("ids"), self._filling("marks") if self.renamed else None
        self._close_files()
        self._pending = self._pool.submit(
            _write_filled, self.gen, self.next_shard, ids, marks, self.sizes, self.stride,
            self.top,
        )  # fmt: skip
        self.next_shard += 1
        self.sizes, self.words = array("I"), 0

    def _close_files(self) -> None:
        for f in (self._ids, self._marks):
            if f is not None:
                f.close()
        self._ids = self._marks = None

    def _wait(self) -> None:
        if self._pending is not None:
            self.written.append(self._pending.result())
            self._pending = None

    def close(self) -> list[tuple[int, int, int, int]]:
        try:
            self.flush()
            self._wait()
        finally:
            self._close_files()
            self._pool.shutdown(wait=True)
        return self.written


_SEPARATOR = np.zeros(1, dtype=np.uint32).tobytes()


def _write_filled(
    gen: Path, index: int, ids_file: Path, marks_file: Path | None, sizes: array, stride: int,
    top: int,
) -> tuple[int, int, int, int]:  # fmt: skip
    """Write shard `index` of the documents streamed to `ids_file` (and `marks_file`), as
    `write_shard` writes them of the documents in memory; the files are removed."""
    ids = np.fromfile(ids_file, dtype=np.uint32)
    ids_file.unlink()
    lengths = np.frombuffer(sizes, dtype=np.uint32).astype(np.int64) + 1
    starts = np.cumsum(lengths) - lengths + 1
    marked = None
    if marks_file is not None:
        marked = np.fromfile(marks_file, dtype=np.bool_)
        marks_file.unlink()
    # the views one after the other, each array let go once written (`write_joined`)
    shard = JoinedShard(ids, starts, None, marked)
    del ids, marked
    try:
        return write_joined(gen, index, shard, stride, top)
    finally:
        del shard
        give_back_memory()


def give_back_memory() -> None:
    """Return the memory a shard's sort freed to the system where the C library keeps it
    (glibc holds it for the thread that freed it: the documents' side could not reuse it,
    and the peak grew shard after shard)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    try:
        import ctypes

        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except Exception:  # no C library to name (Windows): nothing to trim
        return None


class _Writer:
    """Stores the documents, vocabulary and shards of one generation, and each source's
    share of the documents' occurrences (`shards.SHARES_NAME`).

    A document's origins are the first of its files in the order of the shares, at most
    ORIGIN_CAP: a file is listed when every earlier one is (taking a source's files out
    leaves the listing a prefix, so the origins of a source's files are found by rank)."""

    def __init__(
        self,
        gen: Path,
        header: store.Header,
        opts: BuildOptions,
        vocabulary: Vocabulary | None = None,
        occurrences: np.ndarray | None = None,
        shares: np.ndarray | None = None,
    ):
        self.gen = gen
        self.header = header
        self.next_doc = header.documents
        self.docs = DocStore(gen)
        self.vocabulary = vocabulary or Vocabulary()
        # the files of each document (4 bytes a document)
        self.occurrences = array("I")
        if occurrences is not None:
            self.occurrences.frombytes(occurrences.astype("=u4").tobytes())
        self.shards = ShardBuffer(
            gen, header.shards, opts.shard_words, opts.renamed, header.renamed_stride,
            header.top_step,
        )  # fmt: skip
        # the document of every file, source by source (None: an index built without them
        # being extended); the files of each source, as the header's `sources`
        self.shares: array | None = array("I")
        self.source_files: list[int] = []
        if occurrences is not None:  # an index being extended
            self.shares = None if shares is None else array("I", shares.astype("=u4").tobytes())
            self.source_files = [] if shares is None else list(header.source_files)

    def add(self, doc: Document, pd: ProcessedDoc, summary: BuildSummary) -> None:
        txn, dbs = self.docs.txn, self.docs.dbs
        summary.files += 1
        existing = txn.get(pd.content_hash, db=dbs["content"])
        if existing is not None:
            summary.duplicates += 1
            doc_id = int.from_bytes(existing, "big")
            meta = json.loads(txn.get(existing, db=dbs["meta"]))
            meta["n"] += 1
            txn.put(existing, json.dumps(meta).encode(), db=dbs["meta"])
            self.occurrences[doc_id] += 1
            if meta["n"] <= ORIGIN_CAP:
                origins = json.loads(txn.get(existing, db=dbs["origins"]))
                if len(origins) == meta["n"] - 1:  # every earlier file is listed
                    origins.append(doc.origin.to_dict())
                    txn.put(existing, json.dumps(origins).encode(), db=dbs["origins"])
        else:
            doc_id = self.next_doc
            self.next_doc += 1
            self.docs.put(doc_id, pd, doc.language, [doc.origin.to_dict()])
            self.occurrences.append(1)
            self.shards.add(self.vocabulary.map(pd), pd.identifiers)
            summary.documents += 1
            summary.words += pd.words
        if self.shares is not None:
            self.shares.append(doc_id)
        self.docs.tick()

    def take_out(self, entries: set[int]) -> int:
        """Take the files of the header's `sources` entries `entries` out: their documents'
        occurrences and the origins listed for them (the entries themselves are the
        caller's). Returns the number of files taken out."""
        counts = np.asarray(self.source_files, dtype=np.int64)
        ends = np.cumsum(counts)
        shares = np.frombuffer(self.shares, dtype=np.uint32)
        out = np.zeros(len(shares), dtype=bool)
        for k in entries:
            out[ends[k] - counts[k] : ends[k]] = True
        # each file's rank among its document's files: the first ones are listed
        order = np.argsort(shares, kind="stable")
        ordered = shares[order]
        rank = np.empty(len(shares), dtype=np.int64)
        rank[order] = np.arange(len(shares)) - np.searchsorted(ordered, ordered, side="left")
        listed = out & (rank < ORIGIN_CAP)
        unlisted: dict[int, set[int]] = {}  # document -> ranks of its origins to drop
        for d, r in zip(shares[listed].tolist(), rank[listed].tolist()):
            unlisted.setdefault(d, set()).add(r)
        docs, gone = np.unique(shares[out], return_counts=True)
        dbs = self.docs.dbs
        for d, n in zip(docs.tolist(), gone.tolist()):
            txn, key = self.docs.txn, store.doc_key(d)
            meta = json.loads(txn.get(key, db=dbs["meta"]))
            if meta["n"] != self.occurrences[d] or meta["n"] < n:
                raise BuildError(
                    f"index at {self.gen.parent} is damaged (occurrences of document {d}); "
                    "rebuild it"
                )
            meta["n"] -= n
            self.occurrences[d] -= n
            txn.put(key, json.dumps(meta).encode(), db=dbs["meta"])
            if d in unlisted:
                origins = json.loads(txn.get(key, db=dbs["origins"]))
                kept = [o for i, o in enumerate(origins) if i not in unlisted[d]]
                txn.put(key, json.dumps(kept).encode(), db=dbs["origins"])
            self.docs.tick()
        self.shares = array("I", shares[~out].tobytes())
        self.source_files = [c for k, c in enumerate(self.source_files) if k not in entries]
        return int(out.sum())

    def finish(self, summary: BuildSummary) -> None:
        """The last shard, the vocabulary, the per-document counts and the shares."""
        self.docs.close()
        h = self.header
        for words, docs, width, renamed_places in self.shards.close():
            h.shard_words.append(words)
            h.shard_documents.append(docs)
            h.shard_id_bytes.append(width)
            if h.renamed_languages:
                h.shard_renamed_places.append(renamed_places)
        h.shards = len(h.shard_words)
        h.vocabulary = len(self.vocabulary)
        self.vocabulary.write(self.gen)
        files.write_array(
            self.gen / files.OCCURRENCES_NAME,
            np.frombuffer(self.occurrences, dtype="=u4").astype("<u4"),
        )
        if self.shares is not None:
            if sum(self.source_files) != len(self.shares):
                raise BuildError("internal error: the sources' files differ from the files")
            h.source_files = list(self.source_files)
            files.write_array(
                self.gen / files.SHARES_NAME, np.frombuffer(self.shares, dtype="=u4").astype("<u4")
            )
        summary.vocabulary, summary.shards = h.vocabulary, h.shards
        summary.compacted = compacted_shards(h.shard_words)


def _documents(
    sources, summary: BuildSummary, files_per_source: list[int] | None = None
) -> Iterator[Document]:
    """The sources' documents in order; `files_per_source` gets each one's number."""
    for src in sources:
        n = 0
        for doc in src.documents(own_licenses=False):  # found in the workers
            n += 1
            yield doc
        summary.skipped.update(src.skipped)
        summary.unsupported.update(src.unsupported)
        summary.sources += src.indexed()
        if files_per_source is not None:
            files_per_source.append(n)


def _run(sources, writer: _Writer, opts: BuildOptions, summary: BuildSummary) -> None:
    jobs = opts.jobs or os.cpu_count() or 1
    bar = progress.bar("indexing", unit=" files", show=opts.progress)
    docs = _documents(sources, summary, writer.source_files)
    try:
        if jobs <= 1:
            results: Iterator = (_run_one(d, opts) for d in docs)
        else:  # in order, a bounded number in flight; ends at once when interrupted
            results = ordered_map(_work, docs, jobs, _init_worker, (opts.renamed,))
        with contextlib.closing(results):  # the workers end here, however this ends
            for doc, pd in results:
                writer.add(doc, pd, summary)
                bar.update(1)
                if bar.n % 64 == 0:
                    bar.set_postfix_str(f"{summary.words / 1e6:.1f}M words", refresh=False)
    finally:
        bar.close()


def _open_sources(specs: list[str], opts: BuildOptions) -> list:
    sources = []
    for spec in specs:
        if not isinstance(spec, str):  # an already opened source
            sources.append(spec)
            continue
        from .sources import SourceError, open_source
        from .sources.popular import is_popular_spec, open_popular
        from .sources.workspace import is_workspace_spec, open_workspace

        try:
            # a source a package (and each standard library), and a record of the whole
            expand = (
                open_workspace if is_workspace_spec(spec)
                else open_popular if is_popular_spec(spec)
                else None
            )  # fmt: skip
            if expand is not None:
                sources += expand(spec, max_file_bytes=opts.max_file_bytes, registry=opts.registry)
                continue
            sources.append(
                open_source(spec, max_file_bytes=opts.max_file_bytes, registry=opts.registry)
            )
        except SourceError as e:
            raise BuildError(str(e)) from None
    return sources


def _check_params(opts: BuildOptions) -> None:
    if not (1 <= opts.shard_words <= files.MAX_SHARD_WORDS):
        raise BuildError(f"shard words must be between 1 and {files.MAX_SHARD_WORDS}")
    if not (1 <= opts.renamed_stride <= files.MAX_RENAMED_STRIDE):
        raise BuildError(f"the renamed stride must be between 1 and {files.MAX_RENAMED_STRIDE}")


def _finish(
    root: Path, gen: Path, writer: _Writer, summary: BuildSummary, merge: bool, started: float
) -> BuildSummary:
    writer.finish(summary)
    h = writer.header
    h.skipped = dict(Counter(h.skipped) + summary.skipped)
    if merge:  # rewrite compactly: in-place updates leave free pages behind
        p = gen / store.DOCS_NAME
        env = store.open_env(p, readonly=False, max_dbs=8)
        tmp = p.with_suffix(".compact")
        env.copy(str(tmp), compact=True)
        env.close()
        os.replace(tmp, writable_target(p, follow_links=False))
    store.finalize_generation(gen, h)
    store.publish(root, gen)
    summary.bytes = sum(h.file_sizes.values())
    summary.seconds = time.perf_counter() - started
    return summary


def prepare_build(specs: list, out: str | os.PathLike, opts: BuildOptions) -> tuple[list, Path]:
    """Checked parameters, opened sources and the output root of a new build."""
    _check_params(opts)
    found = sort_sources([], _open_sources(specs, opts))  # each source once
    if found.twice:
        raise BuildError(f"{found.twice[0]} is given twice, at two versions")
    sources = found.add
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise BuildError(f"{root} exists and is not a directory")
    try:
        foreign = [p.name for p in root.iterdir() if not store.is_ours(p.name)]
    except FileNotFoundError:
        foreign = []
    except OSError as e:
        raise BuildError(f"cannot read {root}: {e.strerror or e}") from None
    foreign = [name for name in foreign if name not in _DESKTOP_FILES]
    if foreign and not (root / store.CURRENT_NAME).exists():
        raise BuildError(f"{root} is not empty and is not an index; choose another --out")
    return sources, root


# what a file manager leaves in any folder it shows: not a reason to refuse an index folder
_DESKTOP_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


class InterruptedAfterPublish(KeyboardInterrupt):
    """Interrupted once the new generation was live: the index is complete and new."""


@contextlib.contextmanager
def writing(root: Path):
    """Hold the index's writer lock while building into `root`, clean what interrupted
    writers left, and turn failures (disk full, permissions, a source that breaks while it
    is read) into one-line errors."""
    from .sources import SourceError

    lock = WriterLock(root)
    try:
        lock.acquire()
    except IndexBusyError as e:
        raise BuildError(str(e)) from None
    except OSError as e:
        raise BuildError(f"cannot write to {root}: {write_failure(e)}") from None
    try:
        # CURRENT is replaced at the end: a special file or a link there fails now
        writable_target(root / store.CURRENT_NAME, follow_links=False)
        store.clean(root)
        yield
    except SourceError as e:
        raise BuildError(str(e)) from None
    except (OSError, lmdb.Error) as e:
        raise BuildError(f"cannot write the index at {root}: {write_failure(e)}") from None
    finally:
        lock.release()


LOW_DISK_BYTES = 64 << 20  # free space below this when a write failed: the disk is full


def write_failure(e: BaseException) -> str:
    """Why a write failed, in words: a full disk said so whatever the error says (LMDB
    reports a short write on a full disk as `Input/output error`)."""
    reason = getattr(e, "strerror", None) or str(e)
    if isinstance(e, NotRegularFile):  # a path where the index keeps a file: say which
        return f"{e.filename}: {reason}"
    errno_ = getattr(e, "errno", None)
    if errno_ == errno.ENOSPC:
        return f"disk full ({reason})"
    if errno_ == getattr(errno, "EDQUOT", None):
        return f"disk quota exceeded ({reason})"
    free = getattr(e, "disk_free", None)
    if free is not None and free < LOW_DISK_BYTES:
        return f"disk full ({reason}; {free >> 20} MiB free when it failed)"
    return reason


def abandon(gen: Path, error: BaseException) -> None:
    """After a failed or interrupted build: remove its generation unless it is live (CURRENT
    is read again: an interruption can come right after the swap). When CURRENT cannot be
    read the generation stays for the next writer's cleanup."""
    if isinstance(error, OSError | lmdb.Error):  # before the space it took is freed
        with contextlib.suppress(Exception):
            error.disk_free = shutil.disk_usage(gen).free
    live = store.is_live(gen)
    if live is False:
        store.discard(gen)
    elif live and isinstance(error, KeyboardInterrupt):
        raise InterruptedAfterPublish() from None


def new_generation(root: Path) -> Path:
    try:
        return store.new_generation(root)
    except OSError as e:
        raise BuildError(f"cannot create {root}: {e}") from None


def new_header(opts: BuildOptions, sources: list) -> store.Header:
    return store.Header(
        format_version=store.FORMAT_VERSION,
        tokenizer_version=TOKENIZER_VERSION,
        name=" + ".join(s.name for s in sources),
        sources=[described(s) for s in sources],
        renamed_languages=sorted(g for g in GRAMMARS if supported(g)) if opts.renamed else [],
        normalizer_version=NORMALIZER_VERSION if opts.renamed else 0,
        renamed_stride=opts.renamed_stride if opts.renamed else 0,
        top_step=files.TOP_STEP,
        top_bytes=files.TOP_BYTES,
    )


def build_index(
    specs: list[str], out: str | os.PathLike, options: BuildOptions | None = None
) -> BuildSummary:
    """Build a new index of `specs` (corpus sources) and publish it at `out`.

    An index already at `out` is replaced only when the new one is complete.
    """
    opts = options or BuildOptions()
    sources, root = prepare_build(specs, out, opts)
    started = time.perf_counter()
    with writing(root):
        gen = new_generation(root)
        header = new_header(opts, sources)
        summary = BuildSummary(path=str(root))
        try:
            writer = _Writer(gen, header, opts)
            _run(sources, writer, opts, summary)
            header.documents, header.words, header.files = (
                summary.documents,
                summary.words,
                summary.files,
            )
            return _finish(root, gen, writer, summary, False, started)
        except BaseException as e:
            abandon(gen, e)
            raise


def add_sources(
    path: str | os.PathLike, specs: list[str], options: BuildOptions | None = None
) -> BuildSummary:
    """Extend the index at `path` with more sources, atomically: their new documents make
    new shards, files identical to indexed ones are counted with them; given every source
    of the index, once half its words are old versions' it is built anew (`rebuilt`).
    `add.add_to_index` joins the new shards with the ones before them after."""
    opts = options or BuildOptions()
    root = Path(path)
    try:  # a clear error before taking the lock when there is no index
        store.read_header(root)
    except store.IndexOpenError:
        # read without the lock, the live generation can be replaced and removed between
        # reading CURRENT and its files: only "no index" is said here, the rest under the lock
        if not (root / store.CURRENT_NAME).exists():
            raise
    try:
        with writing(root):
            return _add(root, specs, opts)
    except _BuildAnew as why:  # the same sources, without the documents they left
        summary = build_index(specs, root, opts)
        summary.rebuilt = why.args[0]
        return summary


def carry_over(src: Path, dst: Path, header: store.Header, root: Path) -> None:
    """A file of the live generation that the new one keeps as it is (a shard an add
    leaves, what compact does not join), its digest checked, then linked (or copied where
    links are refused): never a file the new generation writes, which would write the
    live one's too."""
    problems = store.digest_problems(src.parent, header, [src.name])
    if problems:
        raise BuildError(f"index at {root} is damaged ({problems[0]}); rebuild it")
    try:
        os.link(src, dst)
    except OSError:  # another filesystem, or none that links: a copy
        with os.fdopen(store.open_regular(src), "rb") as f, open(dst, "wb") as out:
            while chunk := f.read(1 << 20):
                out.write(chunk)


def _copy_checked(src: Path, dst: Path, digest: str, root: Path) -> None:
    """Copy a file of the live generation, checking its digest on the way: `add` never
    carries damage into a new generation (whose header would vouch for it)."""
    h = xxhash.xxh3_128()
    with os.fdopen(store.open_regular(src), "rb") as f, open(dst, "wb") as out:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            out.write(chunk)
    if h.hexdigest() != digest:
        raise BuildError(
            f"index at {root} is damaged ({src.name}: contents differ from the header's "
            "digest); rebuild it"
        )


HELD = "source already in the index"  # a reason in BuildSummary.skipped


def _sorted(root: Path, header: store.Header, sources: list):
    """The given sources sorted against the ones the index holds (see held.py); a new
    version of a held source is refused by an index without shares (built before them)."""
    found = sort_sources(header.sources, sources)
    if found.twice:
        raise BuildError(f"{found.twice[0]} is given twice, at two versions")
    if found.left and files.SHARES_NAME not in header.file_sizes:
        raise BuildError(
            f"the index at {root} was built before Recitation recorded each source's files, "
            f"so it cannot take {found.left[0][1]} out: rebuild the index with `build`"
        )
    if found.replaced and files.SHARES_NAME not in header.file_sizes:
        r = found.replaced[0]
        raise BuildError(
            f"the index at {root} holds {r.source.name} at another version ({r.held[:12] or '?'}, not "
            f"{r.given[:12] or '?'}) and was built before Recitation recorded each source's "
            "files, so it cannot take the old version out: rebuild the index with `build`"
        )
    return found


def _replaced(r) -> tuple[str, str, str]:
    """(name, version held, version given) as the summary shows them: a package by its
    registry and name, its versions bare (`npm:ms 2.1.3 → 2.1.2`)."""
    kind, name = getattr(r.source, "kind", ""), r.source.name
    if kind in ("npm", "pypi"):
        held = [item.partition("==") for item in r.held.split(",")]
        given = [item.partition("==") for item in r.given.split(",")]
        names = {n.lower() for n, _, _ in held + given}
        if len(names) == 1 and all(sep for _, sep, _ in held + given):
            versions = lambda items: ", ".join(v for _, _, v in items)  # noqa: E731
            return f"{kind}:{given[0][0]}", versions(held), versions(given)
    return name, r.held, r.given


def _shares(gen: Path, header: store.Header, occurrences: np.ndarray, root: Path):
    """The copied shares file, checked against the occurrences (None: an index without)."""
    if files.SHARES_NAME not in header.file_sizes:
        return None
    shares = np.fromfile(gen / files.SHARES_NAME, dtype="<u4")
    if (
        len(shares) != header.files
        or (len(shares) and int(shares.max()) >= header.documents)
        or not np.array_equal(np.bincount(shares, minlength=header.documents), occurrences)
    ):
        raise BuildError(f"index at {root} is damaged (shares); rebuild it")
    return shares


def _add(root: Path, specs: list[str], opts: BuildOptions) -> BuildSummary:
    old_gen, header = store.read_header(root)
    problems = store.structure_problems(old_gen, header)
    if problems:
        raise BuildError(f"index at {root} is damaged ({problems[0]}); rebuild it")
    opts.renamed = bool(header.renamed_languages)
    found = _sorted(root, header, _open_sources(specs, opts))
    sources, held = found.add, len(found.held)
    started = time.perf_counter()
    if not sources and not found.left:  # all held already: the index stays as it is
        return BuildSummary(path=str(root), skipped=Counter({HELD: held}))
    if found.whole(len(header.sources)) and header.words:
        dead = dead_words(old_gen, header)
        if dead >= REBUILD_DEAD_SHARE * header.words:
            opts.renamed_stride = header.renamed_stride or opts.renamed_stride
            raise _BuildAnew(dead / header.words)
    gen = store.new_generation(root)
    try:
        rewritten = {files.WORDS_NAME, files.OFFSETS_NAME, files.LOOKUP_NAME}
        renamed, top = bool(header.renamed_languages), bool(header.top_step)
        kept = set(files.shard_files(header.shards, renamed, top))  # an add writes new ones
        for name in sorted(header.file_sizes):
            if name in kept:
                carry_over(old_gen / name, gen / name, header, root)
            elif name not in rewritten:  # the vocabulary is written anew, extended
                _copy_checked(old_gen / name, gen / name, header.file_hashes[name], root)
        try:
            vocabulary = Vocabulary.of_generation(old_gen)
            occurrences = np.fromfile(gen / files.OCCURRENCES_NAME, dtype="<u4")
        except (ValueError, UnicodeDecodeError) as e:
            raise BuildError(f"index at {root} is damaged ({e}); rebuild it") from None
        if len(vocabulary) != header.vocabulary or len(occurrences) != header.documents:
            raise BuildError(f"index at {root} is damaged (vocabulary); rebuild it")
        shares = _shares(gen, header, occurrences, root)
        summary = BuildSummary(path=str(root), skipped=Counter({HELD: held} if held else {}))
        writer = _Writer(gen, header, opts, vocabulary, occurrences, shares)
        if found.replaced or found.left:  # the old versions out, their entries with them
            entries = {r.entry for r in found.replaced} | {k for k, _ in found.left}
            summary.removed = writer.take_out(entries)
            summary.replaced = [
                _replaced(r) for r in found.replaced
                if getattr(r.source, "kind", "") != "workspace"  # (its record: no files)
            ]  # fmt: skip
            summary.left = [name for _, name in found.left]
            header.sources = [e for k, e in enumerate(header.sources) if k not in entries]
            header.files -= summary.removed
        again = {id(r.source) for r in found.replaced}  # named in the index already
        new = [s for s in sources if id(s) not in again]
        header.sources = header.sources + [described(s) for s in sources]
        header.name = " + ".join(
            [header.name] + [s.name for s in new] if header.name else [s.name for s in new]
        )
        _run(sources, writer, opts, summary)
        header.documents += summary.documents
        header.words += summary.words
        header.files += summary.files
        return _finish(root, gen, writer, summary, True, started)
    except BaseException as e:
        abandon(gen, e)
        raise
