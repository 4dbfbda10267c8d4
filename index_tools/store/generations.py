"""The on-disk index: a generation directory of memory-mapped files, published atomically.

    INDEX/
      CURRENT                 name of the live generation (replaced atomically)
      gen-<id>/
        HEADER.json           format version, counts, file sizes and digests (written last)
        docs.mdb              named databases: meta, blocks, origins, content
        text.zst              the unique documents' texts, zstd frames back to back: one a
                              document, or a long one's text in frames of whole blocks
                              (its `meta` record's `f`: each frame's first block, size
                              and the newlines before it; format 7)
        shard-000.ids ...     per shard: word ids, suffix array, document starts, and the
                              rename-insensitive view's ids and suffix array (`shards.py`)
        vocab.*               the vocabulary: words in id order and a lookup by hash
        occurrences.u32       per document: how many indexed files are that document
        shares.u32            per source: the document of each of its files (`shards.py`)

A reader resolves CURRENT once and maps that generation read-only; a build writes a new
generation and then replaces CURRENT, so readers never see a half-written index.

Publishing (writers: `build`, `add`, the Spark builder), in order:
  1. take the index's writer lock (`lock.WriterLock`, an OS lock the system releases however
     the process ends); a second writer fails at once with a one-line message;
  2. `clean`: remove what interrupted writers left (unpublished generations, temporary
     CURRENT files, staging folders) — never the generation CURRENT names, and nothing at
     all while CURRENT exists but cannot be read;
  3. write a new generation `gen-<time>-<random>`, its HEADER.json last (sizes, mtimes and
     digests of every file);
  4. replace CURRENT atomically (a temporary file, fsync, `os.replace`), then `clean` again.
A published generation is never written again (immutable): readers may have it mapped.
Removing an old one can fail on Windows while a reader maps it; it is then left for a later
cleanup. Once CURRENT is replaced, an interrupted writer never removes the new generation.

Readers (the language server follows CURRENT):
  - `current_generation(root)` -> the name CURRENT holds, or None: one small read, cheap
    enough to poll every second; compare it with `Index.generation` (the name an open
    `Index` mapped) and open a new `Index` when they differ, then close the old one;
  - `read_header(root)` validates the header (types, ranges, file names confined to the
    generation folder, regular files of the recorded sizes) and raises `IndexOpenError`;
  - `open_problems(gen, header)` is what `Index` checks when it opens (see its docstring);
    `verify(root)` reads every byte.
"""

from __future__ import annotations

import contextlib
import errno
import json
import mmap
import os
import shutil
import stat
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import lmdb
import xxhash
import zstandard

from ..text.words import TOKENIZER_VERSION
from .lock import LOCK_NAME
from .shards import (
    ID_WIDTHS,
    LOOKUP_DTYPE,
    LOOKUP_NAME,
    MAX_RENAMED_STRIDE,
    MAX_SHARD_WORDS,
    OCCURRENCES_NAME,
    OFFSETS_NAME,
    SHARES_NAME,
    WORDS_NAME,
    expected_sizes,
    shard_files,
)
from .small_files import replace_file

# 8: each document's line table (line_table.py); 7: a long document's text in frames (6, its
# text in one); both still read
FORMAT_VERSION = 8
READ_VERSIONS = (6, 7, FORMAT_VERSION)
HEADER_NAME = "HEADER.json"
CURRENT_NAME = "CURRENT"
STAGE_PREFIX = ".spark-stage-"  # the Spark builder's staging folders
DOCS_NAME = "docs.mdb"
DOC_DBS = (b"meta", b"blocks", b"origins", b"content", b"lines")  # (`doc_dbs`)
TEXT_NAME = "text.zst"
MAP_SIZE = 1 << 40  # address space only; files grow with their contents
# Where the address space is smaller (arm64 kernels with 39-bit addresses, emulators), a
# writer maps less, down to this: it only caps how large that one file can grow.
MIN_MAP_SIZE = 1 << 32
MAX_HEADER_BYTES = 64 << 20  # a larger HEADER.json is damage, never read whole
_SMALL_READ_TRIES = 20  # Windows: a file being replaced can refuse a reader for a moment
_IN_USE_RETRIES = os.name == "nt"  # only Windows refuses to replace a file that is open

_DOC_KEY = struct.Struct(">I")


class IndexOpenError(Exception):
    """The index is missing, damaged, or of another format version (message says which)."""


def doc_dbs(format_version: int) -> tuple[bytes, ...]:
    """The databases of docs.mdb in an index of this format (`lines` since 8)."""
    return DOC_DBS if format_version >= 8 else DOC_DBS[:-1]


def doc_key(doc_id: int) -> bytes:
    return _DOC_KEY.pack(doc_id)


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
    size = MAP_SIZE
    while True:
        try:
            return lmdb.open(
                str(path),
                subdir=False,
                map_size=size,
                max_dbs=max_dbs,
                sync=False,
                metasync=False,
                writemap=False,
                readahead=False,
                lock=False,
            )
        except lmdb.MemoryError:
            if size <= MIN_MAP_SIZE:
                raise
            size //= 4


# the file (device, inode) -> [read-only environment, its readers]
_shared_envs: dict[tuple[int, int], list] = {}
_shared_lock = threading.Lock()


def open_shared_env(path: Path, max_dbs: int) -> lmdb.Environment:
    """A read-only environment of `path`, one per file in this process, shared by its
    readers: LMDB refuses to open one file twice in a process (two workspaces naming one
    index, a handle reopened before the old one is closed, a generation whose database is
    linked from the one before it: `compact`'s). The file is known by its device and inode,
    whatever its name. `release_shared_env` when done."""
    st = os.stat(path)
    key = (st.st_dev, st.st_ino)
    with _shared_lock:
        held = _shared_envs.get(key)
        if held is None:
            held = _shared_envs[key] = [open_env(path, readonly=True, max_dbs=max_dbs), 0]
        held[1] += 1
        return held[0]


def release_shared_env(env: lmdb.Environment) -> None:
    """One reader less; the last one closes the environment."""
    with _shared_lock:
        for key, held in _shared_envs.items():
            if held[0] is env:
                held[1] -= 1
                if held[1] == 0:
                    del _shared_envs[key]
                    env.close()
                return


@dataclass
class Header:
    format_version: int
    tokenizer_version: int
    name: str = ""
    documents: int = 0  # unique documents stored
    files: int = 0  # files indexed, identical ones counted each time
    words: int = 0  # words in the unique documents
    vocabulary: int = 0  # distinct words
    shards: int = 0
    shard_words: list[int] = field(default_factory=list)  # words of each shard
    shard_documents: list[int] = field(default_factory=list)  # documents of each shard
    shard_id_bytes: list[int] = field(default_factory=list)  # bytes per word id of each shard
    # the rename-insensitive view's suffix arrays hold positions that are multiples of this
    # (0: no such view), this many in each shard
    renamed_stride: int = 0
    shard_renamed_places: list[int] = field(default_factory=list)
    # the rename-insensitive view (identifiers as one placeholder), for these languages
    renamed_languages: list[str] = field(default_factory=list)
    normalizer_version: int = 0
    sources: list[dict] = field(default_factory=list)
    # files of each entry of `sources`: their documents are in shares.u32 (empty: an index
    # built before shares were recorded, without that file)
    source_files: list[int] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    created: str = ""
    file_sizes: dict[str, int] = field(default_factory=dict)
    file_hashes: dict[str, str] = field(default_factory=dict)
    # st_mtime_ns of every file once written: a file whose size and mtime still match was
    # not written since (its digest is checked at open otherwise)
    file_mtimes: dict[str, int] = field(default_factory=dict)
    # every shard's suffix arrays have a top table (shards.top_keys) of one entry in this
    # many, this many bytes each (0: an index built before them, none)
    top_step: int = 0
    top_bytes: int = 0

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Header:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError("the header is not an object")
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


# --- reading small files and CURRENT safely --------------------------------------------------

_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a named pipe is refused below, never waited on
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_BINARY", 0)
)


def _retrying(action, *args):
    """`action(*args)`, tried again for up to a second on Windows when a file is in use
    (a reader holding CURRENT open makes `os.replace` fail, and the reverse)."""
    for attempt in range(_SMALL_READ_TRIES):
        try:
            return action(*args)
        except PermissionError:
            if not _IN_USE_RETRIES or attempt == _SMALL_READ_TRIES - 1:
                raise
            time.sleep(0.05)
    raise AssertionError("unreachable")


def open_regular(path: Path) -> int:
    """A read-only descriptor of a regular file. A link, a folder, a named pipe or a
    device is refused (OSError) without blocking or reading from it."""
    st = os.lstat(path)
    if stat.S_ISREG(st.st_mode):
        fd = os.open(path, _READ_FLAGS)
        try:
            st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        if stat.S_ISREG(st.st_mode):
            return fd
        os.close(fd)
    kind = (
        "a link"
        if stat.S_ISLNK(st.st_mode)
        else "a folder"
        if stat.S_ISDIR(st.st_mode)
        else "a special file"
    )
    raise OSError(errno.EINVAL, f"{kind}, not a regular file")


def _read_small_once(path: Path, limit: int) -> bytes:
    fd = open_regular(path)
    try:
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise OSError(errno.EFBIG, f"larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_small(path: Path, limit: int) -> bytes:
    """The bytes of a small regular file (at most `limit`); OSError otherwise, never a
    hang on a pipe or an endless read of a device."""
    return _retrying(_read_small_once, path, limit)


def _read_current(root: Path) -> str | None:
    """The generation CURRENT names; None when there is no CURRENT; OSError or ValueError
    when it exists but cannot be read or names no generation."""
    try:
        raw = read_small(Path(root) / CURRENT_NAME, 4096)
    except FileNotFoundError:
        return None
    name = raw.decode("utf-8").strip()
    if not _plain_name(name) or not name.startswith("gen-"):
        raise ValueError(f"{CURRENT_NAME} names no generation")
    return name


def current_generation(root: str | os.PathLike) -> str | None:
    """The name of the live generation (what CURRENT holds), or None when there is none or
    CURRENT cannot be read.

    Cheap (one small read, no index opened): a reader such as the language server polls it
    and compares it with `Index.generation`, the generation an open `Index` mapped; when
    they differ a new generation was published: open a new `Index` (it validates the new
    generation), switch to it, then close the old one. The old generation's files may
    already be removed; an open `Index` keeps working from its mapped files (on Windows the
    writer leaves them until nobody maps them)."""
    try:
        return _read_current(Path(root))
    except (OSError, ValueError):
        return None


current_name = current_generation  # the earlier name


def _gen_dir(root: Path) -> Path:
    current = root / CURRENT_NAME
    try:
        name = _read_current(root)
    except ValueError:
        raise IndexOpenError(
            f"index at {root} is damaged ({CURRENT_NAME} is invalid); rebuild it"
        ) from None
    except OSError as e:
        raise IndexOpenError(f"cannot read {current}: {e.strerror or e}") from None
    if name is None:
        if not root.exists():
            raise IndexOpenError(
                f"no index at {root}; build one with `recitation-index build`"
            ) from None
        raise IndexOpenError(
            f"{root} is not a Recitation index (no {CURRENT_NAME} file); "
            "an interrupted first build leaves none: build it again"
        ) from None
    gen = root / name
    try:
        st = gen.lstat()
    except FileNotFoundError:
        raise IndexOpenError(
            f"index at {root} is damaged (its generation {name} is missing); rebuild it"
        ) from None
    except OSError as e:
        raise IndexOpenError(f"cannot read {gen}: {e.strerror or e}") from None
    if not stat.S_ISDIR(st.st_mode):  # a link to a folder elsewhere is refused too
        raise IndexOpenError(f"index at {root} is damaged ({name} is not a folder); rebuild it")
    return gen


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
    """The live generation directory and its header, validated (types, ranges, file names
    confined to the generation folder, each file regular and of the recorded size); raises
    IndexOpenError."""
    root = Path(root)
    gen = _gen_dir(root)
    try:
        raw = read_small(gen / HEADER_NAME, MAX_HEADER_BYTES)
    except FileNotFoundError:
        raise IndexOpenError(
            f"index at {root} is incomplete or damaged (no header); rebuild it"
        ) from None
    except OSError as e:
        raise IndexOpenError(
            f"index at {root} is damaged ({HEADER_NAME}: {e.strerror or e}); rebuild it"
        ) from None
    try:
        data = json.loads(raw)
        version = data["format_version"]
    except (ValueError, KeyError, TypeError, IndexError, RecursionError):
        raise IndexOpenError(
            f"index at {root} is damaged (unreadable header); rebuild it"
        ) from None
    if not _is_int(version) or version not in READ_VERSIONS:
        raise IndexOpenError(
            f"index at {root} has format version {str(version)[:20]}; this Recitation reads "
            f"versions {READ_VERSIONS[0]} to {READ_VERSIONS[-1]}: rebuild it with "
            "`recitation-index build`"
        )
    try:
        header = Header(**{k: data[k] for k in Header.__dataclass_fields__ if k in data})
        problem = header_problem(header)
    except (TypeError, ValueError, AttributeError, RecursionError) as e:
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


_COUNTS = ("documents", "files", "words", "vocabulary")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _sampled_places_fit(places, words, documents, stride) -> bool:
    """Whether a shard of `words` words in `documents` documents (a separator before,
    between and after them) can hold `places` positions that are multiples of `stride`
    and not separators."""
    multiples = -(-(words + documents + 1) // stride)
    return max(0, multiples - documents - 1) <= places <= min(multiples, words)


def header_problem(h: Header) -> str | None:
    """What is wrong with a header's fields (types, ranges, file names), or None."""
    limits = {"format_version": (READ_VERSIONS[0], READ_VERSIONS[-1]), "shards": (0, 1 << 16),
              "normalizer_version": (0, 1 << 20)}  # fmt: skip
    for name, (lo, hi) in limits.items():
        v = getattr(h, name)
        if not _is_int(v) or not lo <= v <= hi:
            return f"{name} is {str(v)[:40]!r}"
    for name in _COUNTS:
        v = getattr(h, name)
        if not _is_int(v) or v < 0:
            return f"{name} is {str(v)[:40]!r}"
    for name, most in (("shard_words", MAX_SHARD_WORDS), ("shard_documents", 1 << 31)):
        v = getattr(h, name)
        if not isinstance(v, list) or len(v) != h.shards:
            return f"{name} is not a list of {h.shards} counts"
        if not all(_is_int(x) and 0 <= x <= most for x in v):
            return f"{name} holds {str(v)[:40]!r}"
    v = h.shard_id_bytes
    if not isinstance(v, list) or len(v) != h.shards or not all(x in ID_WIDTHS for x in v):
        return f"shard_id_bytes is not a list of {h.shards} widths (3 or 4)"
    renamed = bool(h.renamed_languages)
    stride = h.renamed_stride
    if not _is_int(stride) or not (1 <= stride <= MAX_RENAMED_STRIDE if renamed else stride == 0):
        return f"renamed_stride is {str(stride)[:40]!r}"
    v = h.shard_renamed_places
    if not isinstance(v, list) or len(v) != (h.shards if renamed else 0):
        return "shard_renamed_places is not a list of a count per shard"
    if not all(_is_int(x) for x in v) or any(
        not _sampled_places_fit(x, w, d, stride)
        for x, w, d in zip(v, h.shard_words, h.shard_documents)
    ):
        return f"shard_renamed_places holds {str(v)[:40]!r}"
    if sum(h.shard_words) != h.words or sum(h.shard_documents) != h.documents:
        return "the shards' counts differ from the totals"
    if h.tokenizer_version != TOKENIZER_VERSION:
        return (
            f"tokenizer version {str(h.tokenizer_version)[:20]!r}, "
            f"this version has {TOKENIZER_VERSION}"
        )
    for name in ("name", "created"):
        if not isinstance(getattr(h, name), str):
            return f"{name} is not text"
    if not isinstance(h.renamed_languages, list) or not all(
        isinstance(x, str) for x in h.renamed_languages
    ):
        return "renamed_languages is not a list of names"
    if not isinstance(h.sources, list) or not all(isinstance(x, dict) for x in h.sources):
        return "sources is not a list of objects"
    if not isinstance(h.skipped, dict) or not all(_is_int(v) for v in h.skipped.values()):
        return "skipped is not a table of counts"
    sizes, hashes, mtimes = h.file_sizes, h.file_hashes, h.file_mtimes
    if not isinstance(sizes, dict) or not all(_is_int(v) and v >= 0 for v in sizes.values()):
        return "file_sizes is not a table of sizes"
    if not isinstance(hashes, dict) or not all(isinstance(v, str) for v in hashes.values()):
        return "file_hashes is not a table of digests"
    if not isinstance(mtimes, dict) or not all(_is_int(v) for v in mtimes.values()):
        return "file_mtimes is not a table of times"
    required = {DOCS_NAME, TEXT_NAME, WORDS_NAME, OFFSETS_NAME, LOOKUP_NAME, OCCURRENCES_NAME}
    if not (_is_int(h.top_step) and _is_int(h.top_bytes)) or not (
        (h.top_step, h.top_bytes) == (0, 0)
        or (2 <= h.top_step <= 1 << 20 and 1 <= h.top_bytes <= 64)
    ):
        return "top_step and top_bytes are not a top table's"
    required |= set(shard_files(h.shards, bool(h.renamed_languages), bool(h.top_step)))
    shares = SHARES_NAME in sizes
    if shares:
        required.add(SHARES_NAME)
        counts = h.source_files
        if not isinstance(counts, list) or len(counts) != len(h.sources):
            return f"source_files is not a list of {len(h.sources)} counts"
        if not all(_is_int(x) and x >= 0 for x in counts) or sum(counts) != h.files:
            return "source_files do not add up to the files"
    elif h.source_files != []:
        return "source_files without shares"
    if required != set(sizes):
        odd = sorted(set(sizes) ^ required)
        return f"unexpected or missing files: {', '.join(repr(x[:60]) for x in odd[:3])}"
    sized = expected_sizes(
        h.shard_words,
        h.shard_documents,
        h.shard_id_bytes,
        h.shard_renamed_places if h.renamed_languages else None,
        (h.top_step, h.top_bytes),
    )
    sized[OFFSETS_NAME] = 8 * (h.vocabulary + 1)
    sized[LOOKUP_NAME] = LOOKUP_DTYPE.itemsize * h.vocabulary
    sized[OCCURRENCES_NAME] = 4 * h.documents
    if shares:
        sized[SHARES_NAME] = 4 * h.files
    for fname, size in sized.items():
        if sizes[fname] != size:
            return f"{fname} should hold {size} bytes, the header says {sizes[fname]}"
    if set(hashes) != set(sizes):
        return "file_hashes and file_sizes name different files"
    if mtimes and set(mtimes) != set(sizes):
        return "file_mtimes and file_sizes name different files"
    return None


# --- checks of the files -------------------------------------------------------------------

# LMDB 0.9's meta page (lmdb.h / mdb.c), native byte order and word size: a page header of
# 16 bytes, then magic, data version, address, map size, two MDB_db records (pad u32, flags
# u16, depth u16, branch/leaf/overflow pages, entries, root), the last page and the txn id.
_MDB_MAGIC = 0xBEEFC0DE
_MDB_DATA_VERSION = 1
_PTR = struct.calcsize("P")
_WORD = "=Q" if _PTR == 8 else "=I"
_DB_SIZE = 8 + 5 * _PTR
_DBS_AT = 16 + 8 + 2 * _PTR  # from the start of a meta page
_LAST_PG_AT = _DBS_AT + 2 * _DB_SIZE
_P_INVALID = (1 << (8 * _PTR)) - 1


def lmdb_problem(path: Path) -> str | None:
    """What LMDB trusts before it reads a page, checked: both meta pages (magic, version,
    page size, the last page and each root inside the file, tree depth). Two pages read, so
    cheap for any size; damage inside the trees is found by the digests (see `Index`)."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        head = b""
        while len(head) < min(size, 2 * 65536):
            chunk = os.read(fd, min(size, 2 * 65536) - len(head))
            if not chunk:
                break
            head += chunk
    finally:
        os.close(fd)
    if len(head) < _LAST_PG_AT + 2 * _PTR:
        return "not an LMDB file (too short)"
    (psize,) = struct.unpack_from("=I", head, _DBS_AT)  # md_pad of the free DB: page size
    if psize < 512 or psize > 65536 or psize & (psize - 1) or size % psize or size < 2 * psize:
        return "not an LMDB file (page size)"
    pages = size // psize
    for m in (0, 1):
        at = m * psize
        magic, version = struct.unpack_from("=II", head, at + 16)
        if magic != _MDB_MAGIC or version != _MDB_DATA_VERSION:
            return f"not an LMDB file (meta page {m})"
        (last,) = struct.unpack_from(_WORD, head, at + _LAST_PG_AT)
        if last >= pages:
            return f"meta page {m} says {last + 1} pages, the file has {pages}"
        for d in (0, 1):
            db = at + _DBS_AT + d * _DB_SIZE
            (depth,) = struct.unpack_from("=H", head, db + 6)
            (root,) = struct.unpack_from(_WORD, head, db + 8 + 4 * _PTR)
            if root != _P_INVALID and not (2 <= root <= last) or depth > 64:
                return f"meta page {m} points outside the file"
    return None


def structure_problems(gen: Path, header: Header) -> list[str]:
    """Cheap checks of every file (see `lmdb_problem`; the others' sizes are in the header
    check)."""
    problems = []
    for fname in sorted(header.file_sizes):
        try:
            problem = lmdb_problem(gen / fname) if fname.endswith(".mdb") else None
        except OSError as e:
            problem = e.strerror or str(e)
        if problem:
            problems.append(f"{fname}: {problem}")
    return problems


def changed_files(gen: Path, header: Header) -> list[str]:
    """Files whose size or mtime differ from what the header recorded when they were
    written (none for an index without the record)."""
    changed = []
    for fname, mtime in sorted(header.file_mtimes.items()):
        try:
            st = (gen / fname).lstat()
        except OSError:
            changed.append(fname)
            continue
        if st.st_mtime_ns != mtime or st.st_size != header.file_sizes[fname]:
            changed.append(fname)
    return changed


def open_problems(gen: Path, header: Header, digest_limit: int) -> list[str]:
    """What opening an index checks, cheapest first: `structure_problems`; then the digests
    of every file when they total at most `digest_limit` bytes, else of the files written
    since the build (`changed_files`). Damage that keeps a large file's size and mtime is
    left to `verify`."""
    problems = structure_problems(gen, header)
    if problems:
        return problems
    if sum(header.file_sizes.values()) <= digest_limit:
        return digest_problems(gen, header)
    return digest_problems(gen, header, changed_files(gen, header))


DIFFERS = "contents differ from the header's digest"  # a file's problem, after its name


def digest_problems(gen: Path, header: Header, names: list[str] | None = None) -> list[str]:
    """Files whose contents differ from the header's digests (reads every byte of them, at
    most their recorded size: never endless, never a pipe)."""
    problems = []
    for fname in sorted(header.file_hashes) if names is None else names:
        try:
            if file_digest(gen / fname, header.file_sizes.get(fname)) != header.file_hashes[fname]:
                problems.append(f"{fname}: {DIFFERS}")
        except OSError as e:
            problems.append(f"{fname}: {e.strerror or e}")
    return problems


def data_digest(data) -> str:
    """`file_digest` of a file's bytes already read (any buffer)."""
    return xxhash.xxh3_128(data).hexdigest()


def file_digest(path: Path, size: int | None = None) -> str:
    """xxh3-128 of a regular file; with `size`, OSError when it holds more."""
    h = xxhash.xxh3_128()
    with os.fdopen(open_regular(path), "rb") as f:
        left = size
        while chunk := f.read(1 << 20 if left is None else min(1 << 20, left + 1)):
            h.update(chunk)
            if left is not None:
                left -= len(chunk)
                if left < 0:
                    raise OSError(errno.EFBIG, "larger than the header says")
    return h.hexdigest()


def map_file(path: Path, random: bool = False):
    """A read-only map of a file (b"" when empty). `random`: read at random places, so a
    page fault reads that page alone, not the readahead window around it (megabytes on
    some disks: a binary search that faults 30 pages would read hundreds of MB)."""
    with os.fdopen(open_regular(path), "rb") as f:
        if not os.fstat(f.fileno()).st_size:
            return b""
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if random and hasattr(m, "madvise") and hasattr(mmap, "MADV_RANDOM"):
            m.madvise(mmap.MADV_RANDOM)  # (Linux, macOS; elsewhere the system's default)
        return m


def will_need(m, start: int, length: int) -> None:
    """Ask for the pages of [start, start + length) of a map made `random` at once (one read
    instead of a fault per page), where the system offers it (an empty file's b"" has none)
    and they are more than two (one or two faults cost what the call does)."""
    first = start - start % mmap.PAGESIZE
    many = start + length - first > 2 * mmap.PAGESIZE
    if many and hasattr(m, "madvise") and hasattr(mmap, "MADV_WILLNEED"):
        m.madvise(mmap.MADV_WILLNEED, first, start + length - first)


# --- writing -------------------------------------------------------------------------------


def new_generation(root: Path) -> Path:
    """A fresh, empty generation directory under `root` (created with its parents)."""
    root.mkdir(parents=True, exist_ok=True)
    gen = root / f"gen-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
    gen.mkdir()
    return gen


def finalize_generation(gen: Path, header: Header) -> None:
    """Record file sizes, mtimes and digests, then write the header (last, fsynced)."""
    header.file_sizes = {}
    header.file_hashes = {}
    header.file_mtimes = {}
    for p in sorted(gen.iterdir()):
        if p.is_file() and p.name != HEADER_NAME and not p.name.endswith(".tmp"):
            st = p.stat()
            header.file_sizes[p.name] = st.st_size
            header.file_mtimes[p.name] = st.st_mtime_ns
            header.file_hashes[p.name] = file_digest(p)
    header.created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    replace_file(gen / HEADER_NAME, header.to_json().encode("utf-8"), follow_links=False)


def publish(root: Path, gen: Path) -> None:
    """Make `gen` the live generation atomically, then remove the others. The caller
    holds the index's writer lock (`lock.WriterLock`)."""
    # CURRENT is never written through a link or in place of a special file (a named pipe
    # there is refused, not replaced)
    replace_file(
        root / CURRENT_NAME,
        (gen.name + "\n").encode("utf-8"),
        follow_links=False,
        replace=lambda tmp, target: _retrying(os.replace, tmp, target),
    )
    with contextlib.suppress(OSError, AttributeError):
        dfd = os.open(root, os.O_RDONLY)  # Windows cannot open a folder: nothing to sync
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


def _remove(p: Path) -> bool:
    """Remove a file or a folder tree as far as possible; True when it is gone. A file
    still mapped by a reader on Windows cannot be removed: the rest goes, it stays."""
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            p.unlink()
    return not os.path.lexists(p)


def is_live(gen: Path) -> bool | None:
    """Whether CURRENT names `gen`; None when CURRENT exists but cannot be read."""
    try:
        return _read_current(gen.parent) == gen.name
    except (OSError, ValueError):
        return None


def clean(root: Path, staging: bool = True) -> list[str]:
    """Remove what interrupted or superseded writers left: every generation but the live
    one, temporary CURRENT files, staging folders (not with `staging=False`: the caller's
    own). Only under the writer lock, so no other writer is building any of them. When
    CURRENT exists but cannot be read no generation is removed. Returns what could not be
    removed yet (a generation a reader maps on Windows): the next cleanup tries again."""
    root = Path(root)
    try:
        live, known = _read_current(root), True
    except (OSError, ValueError):
        live, known = None, False
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    left = []
    for p in entries:
        name = p.name
        if not is_ours(name) or name in (CURRENT_NAME, LOCK_NAME) or name == live:
            continue
        if (name.startswith("gen-") and not known) or (
            name.startswith(STAGE_PREFIX) and not staging
        ):
            continue
        if not _remove(p):
            left.append(name)
    return left


def discard(gen: Path) -> bool:
    """Remove an unpublished generation; never the live one, nothing when CURRENT cannot be
    read. True when removed."""
    if is_live(gen) is not False:
        return False
    return _remove(gen)


def verify(root: Path) -> list[str]:
    """Full check: the header (as every open does), the structure of every file and every
    file's digest; returns the problems found (empty when sound)."""
    gen, header = read_header(root)
    return structure_problems(gen, header) + digest_problems(gen, header)


# a ZstdDecompressor is not safe to use from two threads at once: an Index is (several
# lookups of the index service, two indexes in the language server), so one per thread
_decompressors = threading.local()


def decompress_bytes(data: bytes) -> bytes:
    """One zstd frame decompressed (its checksum checked: ZstdError when it differs)."""
    decompressor = getattr(_decompressors, "zstd", None)
    if decompressor is None:
        decompressor = _decompressors.zstd = zstandard.ZstdDecompressor()
    return decompressor.decompress(data)


def decompress(ztext: bytes) -> str:
    return decompress_bytes(ztext).decode("utf-8", "surrogatepass")
