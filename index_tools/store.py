"""The on-disk index: LMDB environments in a generation directory, published atomically.

    INDEX/
      CURRENT                 name of the live generation (replaced atomically)
      gen-<id>/
        HEADER.json           format version, parameters, counts, file sizes (written last)
        docs.mdb              named databases: meta, blocks, origins, content
        text.zst              the unique documents' texts, zstd frames back to back
        postings-000.mdb ...  key prefix (4 bytes, big-endian) -> a group: the keys with that
                              prefix, their (doc, pos) postings, true counts when capped
        renamed-000.mdb ...   the same for the rename-insensitive fingerprints (optional)
        capped.u64            sorted ids of the capped fingerprints (more postings than the
        renamed-capped.u64    cap): the query winnows past them as the builder did

Fingerprints are grouped by the top `prefix_bits` bits of their key, and a group is one LMDB
entry, which halves the per-fingerprint overhead of one entry each; a lookup is one `get` and
a binary search in the group. A key is the fingerprint times an odd constant (mod 2**64), a
bijection: winnowing keeps minima, so the top bits of kept fingerprints are mostly zero while
their low bits stay uniform, and the product carries the low bits' spread into the top bits
that choose the bucket, the shard and the group.

A reader resolves CURRENT once and maps that generation read-only; a build writes a new
generation and then replaces CURRENT, so readers never see a half-written index.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import struct
import sys
import time
import uuid
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path

import lmdb
import numpy as np
import xxhash

from .fingerprint import HASH_NAME, KGRAM_NAME
from .lock import LOCK_NAME
from .words import TOKENIZER_VERSION

FORMAT_VERSION = 4
_LITTLE = sys.byteorder == "little"
PREFIX_BITS = 8  # keys sharing their top PREFIX_BITS bits are stored together (one LMDB entry)
HEADER_NAME = "HEADER.json"
CURRENT_NAME = "CURRENT"
STAGE_PREFIX = ".spark-stage-"  # the Spark builder's staging folders
DOCS_NAME = "docs.mdb"
DOC_DBS = (b"meta", b"blocks", b"origins", b"content")
TEXT_NAME = "text.zst"
MAP_SIZE = 1 << 40  # address space only; files grow with their contents

_DOC_KEY = struct.Struct(">I")
_PREFIX = struct.Struct(">I")

BUCKET_BITS = 8
BUCKETS = 1 << BUCKET_BITS


class IndexOpenError(Exception):
    """The index is missing, damaged, or of another format version (message says which)."""


def doc_key(doc_id: int) -> bytes:
    return _DOC_KEY.pack(doc_id)


_SPREAD = np.uint64(0xD6E8FEB86659FD93)


def keys_of(fps: np.ndarray) -> np.ndarray:
    """Index keys (uint64) of fingerprints: a bijection with uniform top bits."""
    with np.errstate(over="ignore"):
        return fps * _SPREAD


def bucket_of(keys: np.ndarray) -> np.ndarray:
    return (keys >> np.uint64(64 - BUCKET_BITS)).astype(np.int64)


def shard_of_bucket(bucket: int, shards: int) -> int:
    return bucket * shards // BUCKETS


def shard_name(i: int, renamed: bool = False) -> str:
    """Shard i of the exact postings, or of the rename-insensitive ones."""
    return f"renamed-{i:03d}.mdb" if renamed else f"postings-{i:03d}.mdb"


def capped_name(renamed: bool = False) -> str:
    """The sorted ids of the capped fingerprints of one postings family."""
    return "renamed-capped.u64" if renamed else "capped.u64"


def key_ids(keys: np.ndarray, prefix_bits: int) -> np.ndarray:
    """What identifies a key in the shards: its top prefix_bits + 32 bits (prefix, suffix)."""
    return keys >> np.uint64(32 - prefix_bits)


def prefix_key(prefix: int) -> bytes:
    return _PREFIX.pack(prefix)


def split_keys(keys: np.ndarray, prefix_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(prefix, 32-bit suffix) of each key: the top bits and the 32 bits after them."""
    prefix = keys >> np.uint64(64 - prefix_bits)
    suffix = (keys >> np.uint64(32 - prefix_bits)) & np.uint64(0xFFFFFFFF)
    return prefix, suffix.astype(np.uint32)


def encode_group(
    suffixes: np.ndarray, counts: np.ndarray, kept: np.ndarray, pairs: np.ndarray
) -> bytes:
    """One group: n sorted suffixes, their cumulative kept-posting ends, the true counts of
    the capped ones, then the (doc, pos) pairs. All little-endian uint32:
    n, c, suffix[n], end[n], (index, true count)[c], (doc, pos)[end[n-1]]."""
    n = len(suffixes)
    capped = np.flatnonzero(counts > kept)
    out = np.empty(2 + 2 * n + 2 * len(capped) + 2 * len(pairs), dtype="<u4")
    out[0], out[1] = n, len(capped)
    out[2 : 2 + n] = suffixes
    out[2 + n : 2 + 2 * n] = np.cumsum(kept)
    o = 2 + 2 * n
    out[o : o + 2 * len(capped) : 2] = capped
    out[o + 1 : o + 2 * len(capped) : 2] = counts[capped]
    out[o + 2 * len(capped) :] = np.asarray(pairs, dtype="<u4").reshape(-1)
    return out.tobytes()


def decode_group(value) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(suffixes, true counts, ends, pairs) of a group."""
    a = np.frombuffer(value, dtype="<u4")
    n, c = int(a[0]), int(a[1])
    suffixes = a[2 : 2 + n]
    ends = a[2 + n : 2 + 2 * n].astype(np.int64)
    counts = np.diff(ends, prepend=0)
    o = 2 + 2 * n
    if c:
        counts[a[o : o + 2 * c : 2]] = a[o + 1 : o + 2 * c : 2]
    pairs = a[o + 2 * c :].reshape(-1, 2)
    return suffixes, counts, ends, pairs


def group_lookup(value, suffix: int) -> tuple[int, np.ndarray] | None:
    """(true count, (doc, pos) pairs) of the key(s) with this suffix in a group, if any.

    Two keys of a group can share their 32-bit suffix (rarely, in very large indexes): both
    are returned, and verification against the stored text sorts them out. A miss costs a
    binary search on the buffer itself, no array is made."""
    if not _LITTLE:
        return _group_lookup_numpy(value, suffix)
    a = memoryview(value).cast("I")
    n, c = a[0], a[1]
    suffixes = a[2 : 2 + n]
    i = bisect_left(suffixes, suffix)
    if i >= n or suffixes[i] != suffix:
        return None
    j = i + 1
    while j < n and suffixes[j] == suffix:
        j += 1
    ends = a[2 + n : 2 + 2 * n]
    start = ends[i - 1] if i else 0
    end = ends[j - 1]
    count = end - start
    o = 2 + 2 * n
    for t in range(c):  # capped keys (few): their true counts instead of the kept ones
        k = a[o + 2 * t]
        if i <= k < j:
            count += a[o + 1 + 2 * t] - (ends[k] - (ends[k - 1] if k else 0))
    base = o + 2 * c
    pairs = np.frombuffer(
        value, dtype="<u4", count=2 * (end - start), offset=4 * (base + 2 * start)
    )
    return count, pairs.reshape(-1, 2)


def _group_lookup_numpy(value, suffix: int) -> tuple[int, np.ndarray] | None:
    suffixes, counts, ends, pairs = decode_group(value)
    i = int(np.searchsorted(suffixes, suffix, side="left"))
    j = int(np.searchsorted(suffixes, suffix, side="right"))
    if i == j:
        return None
    start = int(ends[i - 1]) if i else 0
    return int(counts[i:j].sum()), pairs[start : int(ends[j - 1])]


def open_env(path: Path, *, readonly: bool, max_dbs: int = 0) -> lmdb.Environment:
    if readonly:
        return lmdb.open(
            str(path),
            subdir=False,
            readonly=True,
            lock=False,
            max_dbs=max_dbs,
            map_size=max(path.stat().st_size, 1 << 20),
            readahead=False,
        )
    return lmdb.open(
        str(path),
        subdir=False,
        map_size=MAP_SIZE,
        max_dbs=max_dbs,
        sync=False,
        metasync=False,
        writemap=False,
        readahead=False,
        lock=False,
    )


@dataclass
class Header:
    format_version: int
    k: int
    window: int
    shards: int
    posting_cap: int
    hash: str
    kgram: str
    tokenizer_version: int
    prefix_bits: int = PREFIX_BITS
    name: str = ""
    documents: int = 0  # unique documents stored
    files: int = 0  # files indexed, identical ones counted each time
    words: int = 0  # words in the unique documents
    fingerprints: int = 0  # distinct fingerprints stored
    postings: int = 0  # postings stored (after capping)
    capped: int = 0  # fingerprints whose postings were capped
    # rename-insensitive fingerprints (identifiers normalized), for these languages
    renamed_languages: list[str] = field(default_factory=list)
    normalizer_version: int = 0
    renamed_fingerprints: int = 0
    renamed_postings: int = 0
    renamed_capped: int = 0
    sources: list[dict] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    created: str = ""
    file_sizes: dict[str, int] = field(default_factory=dict)
    file_hashes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Header:
        data = json.loads(text)
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


def _gen_dir(root: Path) -> Path:
    current = root / CURRENT_NAME
    try:
        name = current.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        if not root.exists():
            raise IndexOpenError(
                f"no index at {root}; build one with `recitation-index build`"
            ) from None
        raise IndexOpenError(
            f"{root} is not a Recitation index (no {CURRENT_NAME} file); "
            "an interrupted first build leaves none: build it again"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise IndexOpenError(f"cannot read {current}: {e}") from None
    if not _plain_name(name) or not name.startswith("gen-"):
        raise IndexOpenError(f"index at {root} is damaged ({CURRENT_NAME} is invalid); rebuild it")
    return root / name


def _plain_name(name: str) -> bool:
    """A file name inside one folder: no separators, no parent, nothing hidden."""
    return (
        bool(name)
        and len(name) < 256
        and name not in (".", "..")
        and not name.startswith(".")
        and not any(c in name for c in "/\\:\0")
        and name.isprintable()
    )


def read_header(root: Path) -> tuple[Path, Header]:
    """The live generation directory and its header, validated; raises IndexOpenError."""
    root = Path(root)
    gen = _gen_dir(root)
    try:
        raw = (gen / HEADER_NAME).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IndexOpenError(
            f"index at {root} is incomplete or damaged (no header); rebuild it"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise IndexOpenError(f"index at {root} is damaged: {e}") from None
    try:
        data = json.loads(raw)
        version = data["format_version"]
    except (ValueError, KeyError, TypeError):
        raise IndexOpenError(
            f"index at {root} is damaged (unreadable header); rebuild it"
        ) from None
    if version != FORMAT_VERSION:
        raise IndexOpenError(
            f"index at {root} has format version {version}; this Recitation reads version "
            f"{FORMAT_VERSION}: rebuild it with `recitation-index build`"
        )
    try:
        header = Header.from_json(raw)
        problem = header_problem(header)
    except (TypeError, ValueError, AttributeError) as e:
        problem = str(e) or type(e).__name__
    if problem:
        raise IndexOpenError(f"index at {root} is damaged (header: {problem}); rebuild it")
    for fname, size in header.file_sizes.items():
        p = gen / fname
        try:
            st = p.lstat()
        except OSError:
            raise IndexOpenError(
                f"index at {root} is damaged ({fname} is missing); rebuild it"
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise IndexOpenError(
                f"index at {root} is damaged ({fname} is not a regular file); rebuild it"
            )
        if st.st_size != size:
            raise IndexOpenError(
                f"index at {root} is damaged ({fname} has {st.st_size} bytes, "
                f"the header says {size}); rebuild it"
            )
    return gen, header


_COUNTS = ("documents", "files", "words", "fingerprints", "postings", "capped",
           "renamed_fingerprints", "renamed_postings", "renamed_capped")  # fmt: skip


def header_problem(h: Header) -> str | None:
    """What is wrong with a header's fields (types, ranges, file names), or None."""

    def is_int(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    limits = {"k": (1, 4096), "window": (1, 1 << 16), "shards": (1, BUCKETS),
              "posting_cap": (1, 1 << 40), "prefix_bits": (1, 32),
              "normalizer_version": (0, 1 << 20)}  # fmt: skip
    for name, (lo, hi) in limits.items():
        v = getattr(h, name)
        if not is_int(v) or not lo <= v <= hi:
            return f"{name} is {v!r}"
    for name in _COUNTS:
        v = getattr(h, name)
        if not is_int(v) or v < 0:
            return f"{name} is {v!r}"
    if h.hash != HASH_NAME or h.kgram != KGRAM_NAME:
        return f"fingerprints made with {h.hash!r}/{h.kgram!r}, this version reads {HASH_NAME}"
    if h.tokenizer_version != TOKENIZER_VERSION:
        return f"tokenizer version {h.tokenizer_version!r}, this version has {TOKENIZER_VERSION}"
    for name in ("name", "created"):
        if not isinstance(getattr(h, name), str):
            return f"{name} is not text"
    if not isinstance(h.renamed_languages, list) or not all(
        isinstance(x, str) for x in h.renamed_languages
    ):
        return "renamed_languages is not a list of names"
    if not isinstance(h.sources, list) or not all(isinstance(x, dict) for x in h.sources):
        return "sources is not a list of objects"
    if not isinstance(h.skipped, dict) or not all(is_int(v) for v in h.skipped.values()):
        return "skipped is not a table of counts"
    sizes, hashes = h.file_sizes, h.file_hashes
    if not isinstance(sizes, dict) or not all(is_int(v) and v >= 0 for v in sizes.values()):
        return "file_sizes is not a table of sizes"
    if not isinstance(hashes, dict) or not all(isinstance(v, str) for v in hashes.values()):
        return "file_hashes is not a table of digests"
    required = {DOCS_NAME, TEXT_NAME, *(shard_name(i) for i in range(h.shards))}
    if h.renamed_languages:
        required |= {shard_name(i, renamed=True) for i in range(h.shards)}
    allowed = required | {capped_name(False), capped_name(True)}
    if not required <= set(sizes) <= allowed:
        odd = sorted((set(sizes) - allowed) | (required - set(sizes)))
        return f"unexpected or missing files: {', '.join(map(repr, odd[:3]))}"
    if set(hashes) != set(sizes):
        return "file_hashes and file_sizes name different files"
    return None


def digest_problems(gen: Path, header: Header) -> list[str]:
    """Files whose contents differ from the header's digests (reads every byte)."""
    problems = []
    for fname, digest in sorted(header.file_hashes.items()):
        try:
            if file_digest(gen / fname) != digest:
                problems.append(f"{fname}: contents differ from the header's digest")
        except OSError as e:
            problems.append(f"{fname}: {e.strerror or e}")
    return problems


def file_digest(path: Path) -> str:
    h = xxhash.xxh3_128()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def new_generation(root: Path) -> Path:
    """A fresh, empty generation directory under `root` (created with its parents)."""
    root.mkdir(parents=True, exist_ok=True)
    gen = root / f"gen-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
    gen.mkdir()
    return gen


def finalize_generation(gen: Path, header: Header) -> None:
    """Record file sizes and digests, then write the header (last, fsynced)."""
    header.file_sizes = {}
    header.file_hashes = {}
    for p in sorted(gen.iterdir()):
        if p.suffix in (".mdb", ".zst", ".u64"):
            header.file_sizes[p.name] = p.stat().st_size
            header.file_hashes[p.name] = file_digest(p)
    header.created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    tmp = gen / (HEADER_NAME + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(header.to_json())
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, gen / HEADER_NAME)


def current_name(root: Path) -> str | None:
    """The name of the live generation, or None when there is none (cheap: one small
    read; a server polls it to notice a new generation)."""
    try:
        name = (Path(root) / CURRENT_NAME).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if _plain_name(name) else None


def publish(root: Path, gen: Path) -> None:
    """Make `gen` the live generation atomically, then remove the others. The caller
    holds the index's writer lock (`lock.WriterLock`)."""
    tmp = root / f".{CURRENT_NAME}.{uuid.uuid4().hex[:8]}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(gen.name + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, root / CURRENT_NAME)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    with contextlib.suppress(OSError):
        dfd = os.open(root, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    clean(root, staging=False)


def is_ours(name: str) -> bool:
    """A name a writer of this index creates (generations, CURRENT and its temporary
    files, the lock, Spark's staging): a folder of only these is an index, maybe one whose
    first build was interrupted."""
    return name in (CURRENT_NAME, LOCK_NAME) or name.startswith(
        ("gen-", f".{CURRENT_NAME}.", STAGE_PREFIX)
    )


def clean(root: Path, staging: bool = True) -> None:
    """Remove what interrupted or superseded writers left: every generation but the live
    one, temporary CURRENT files, staging folders. Only under the writer lock. A
    generation still mapped by a reader on Windows cannot be removed yet: it is left for
    the next cleanup."""
    live = current_name(root)
    for p in Path(root).iterdir():
        if p.name == live or not is_ours(p.name) or p.name in (CURRENT_NAME, LOCK_NAME):
            continue
        if not staging and p.name.startswith(STAGE_PREFIX):
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()


def discard(gen: Path) -> bool:
    """Remove an unpublished generation; never the live one. True when removed."""
    if current_name(gen.parent) == gen.name:
        return False
    shutil.rmtree(gen, ignore_errors=True)
    return True


def verify(root: Path) -> list[str]:
    """Full check: the header (as every open does) and every file's digest; returns the
    problems found (empty when sound)."""
    gen, header = read_header(root)
    return digest_problems(gen, header)
