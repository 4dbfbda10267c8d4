"""The compiled search kernel (kernel.c), loaded through ctypes, and which search runs.

The library is built for the platform at install time (`pip install .`: setup.py with
Zig's C compiler) and for each of the six VS Code targets by the packaging
(`scripts/build_kernel.py`); it lies beside this file as `libkernel-<target>.<ext>`.
Where none loads, the Python search in suffix.py runs instead and `status()` says why: the
CLI's `stats` prints it and the language server logs it once. The Python search is the
reference: `RECITATION_SEARCH=python` (or `use("python")`) chooses it, and the tests run
every reference comparison on both. `RECITATION_KERNEL` names another library file (a
sanitizer build, say).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from ctypes import POINTER, c_int, c_int32, c_uint64, c_void_p
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import numpy as np

from ..store.generations import IndexOpenError
from ..text import kinds, words

VERSION = 14  # kernel.c's RC_VERSION: a library of another version is not used
RC_OK, RC_DAMAGED, RC_ARGS, RC_FULL = 0, 1, 2, 3
UNKNOWN_INTERVAL = 2**64 - 1  # a span's interval the kernel did not search (RC_UNKNOWN_INTERVAL)
HERE = Path(__file__).resolve().parent
SUFFIXES = {"linux": ".so", "darwin": ".dylib", "win32": ".dll"}


def host_target() -> str | None:
    """This machine's target name (the VS Code platform's), None when it is not one."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if system is None or arch is None:
        return None
    return f"{system}-{arch}"


def library_name(target: str) -> str:
    return f"libkernel-{target}{SUFFIXES[target.split('-')[0]]}"


class Shard(ctypes.Structure):
    """kernel.c's rc_shard."""

    _fields_ = [
        ("tok", c_void_p),
        ("tok_len", c_uint64),
        ("sa", c_void_p),
        ("sa_len", c_uint64),
        ("width", c_uint64),
        ("top_keys", c_void_p),
        ("top_len", c_uint64),
        ("top_step", c_uint64),
        ("top_bytes", c_uint64),
    ]


class Vocabulary(ctypes.Structure):
    """kernel.c's rc_vocabulary."""

    _fields_ = [
        ("hashes", c_void_p),
        ("records", c_void_p),
        ("n", c_uint64),
        ("buckets", c_void_p),
        ("offsets", c_void_p),
        ("words", c_void_p),
        ("words_len", c_uint64),
    ]


def _address(buf) -> tuple[np.ndarray, int]:
    """A uint8 view of a buffer (bytes, mmap, memoryview; read-only is fine) and its
    address; the view keeps the buffer alive and exported while it is held."""
    arr = np.frombuffer(buf, dtype=np.uint8) if len(buf) else np.zeros(1, np.uint8)
    return arr, arr.ctypes.data


class Kernel:
    """The loaded library: its functions, typed."""

    def __init__(self, path: Path):
        lib = ctypes.CDLL(str(path))
        if lib.rc_version() != VERSION:
            raise OSError(f"version {lib.rc_version()}, this engine needs {VERSION}")
        self.path = path
        p_shard, p_u64, p_i64 = POINTER(Shard), POINTER(c_uint64), c_void_p  # (numpy data)
        self.interval = lib.rc_interval
        self.interval.argtypes = [p_shard, ctypes.c_char_p, c_uint64, c_uint64, c_uint64,
                                  c_uint64, p_u64]  # fmt: skip
        self.intervals = lib.rc_intervals
        self.intervals.argtypes = [p_shard, ctypes.c_char_p, c_uint64, c_void_p, c_uint64,
                                   c_uint64, c_void_p]  # fmt: skip
        self.spans = lib.rc_spans
        self.spans.argtypes = [p_shard, ctypes.c_char_p, c_uint64, c_void_p, c_void_p, c_uint64,
                               c_void_p]  # fmt: skip
        self.extend = lib.rc_extend
        self.extend.argtypes = [p_shard, ctypes.c_char_p, c_uint64, p_i64, p_i64, c_uint64,
                                c_int, p_i64]  # fmt: skip
        self.documents = lib.rc_documents
        self.documents.argtypes = [p_shard, c_void_p, c_uint64, c_void_p, c_uint64, c_int,
                                   c_uint64, c_uint64, c_void_p]  # fmt: skip
        self.crowded_spans = lib.rc_crowded_spans
        self.crowded_spans.argtypes = [p_shard, ctypes.c_char_p] + [c_uint64] * 7 + [
            c_void_p, c_void_p, c_void_p, c_void_p, c_void_p, c_uint64, c_void_p, c_uint64,
            p_u64]  # fmt: skip
        self.distinct = lib.rc_distinct
        self.distinct.argtypes = [c_void_p, c_uint64, c_void_p, c_void_p, c_void_p, c_void_p,
                                  c_uint64, c_void_p, c_void_p]  # fmt: skip
        self.first_places = lib.rc_first_places
        self.first_places.argtypes = [c_void_p, c_uint64, c_uint64, c_void_p, c_uint64, c_void_p,
                                      c_void_p]  # fmt: skip
        self.word_ids = lib.rc_word_ids
        self.word_ids.argtypes = [POINTER(Vocabulary), c_void_p, ctypes.c_char_p, c_void_p,
                                  c_uint64, c_void_p]  # fmt: skip
        self.is_table = lib.rc_is_table
        self.is_table.argtypes = [ctypes.c_char_p, c_uint64, c_void_p, c_uint64, c_void_p,
                                  c_uint64, POINTER(c_int32)]  # fmt: skip
        self.runs = lib.rc_runs
        self.runs.argtypes = [p_shard, ctypes.c_char_p, c_uint64, c_void_p, c_void_p, c_uint64,
                              c_void_p, c_uint64, c_void_p, c_uint64, c_int, c_void_p, c_void_p,
                              c_uint64, c_uint64, c_uint64, c_uint64, ctypes.c_int64, c_void_p,
                              c_uint64, c_void_p, c_uint64, POINTER(c_uint64)]  # fmt: skip
        self.span_checks = lib.rc_span_checks
        self.span_checks.argtypes = [ctypes.c_char_p, c_uint64, c_uint64, ctypes.c_char_p, c_uint64,
                                     c_void_p, c_uint64, c_void_p, c_uint64, c_void_p]  # fmt: skip
        self.word_bounds = lib.rc_word_bounds
        self.word_bounds.argtypes = [ctypes.c_char_p, c_uint64, c_void_p, c_void_p, c_uint64,
                                     c_void_p]  # fmt: skip
        for f in (self.interval, self.intervals, self.spans, self.extend, self.documents,
                  self.crowded_spans, self.distinct, self.first_places,
                  self.word_ids, self.is_table, self.span_checks, self.word_bounds,
                  self.runs):  # fmt: skip
            f.restype = c_int32


@dataclass
class Status:
    """Which search runs, and why."""

    search: str  # "native" or "python"
    reason: str  # the library loaded, or why none did, or who chose Python

    def __str__(self) -> str:
        return f"{self.search} ({self.reason})"


def _load() -> tuple[Kernel | None, str]:
    target = host_target()
    if target is None:
        return None, f"no native library is built for {sys.platform}-{platform.machine()}"
    path = Path(os.environ.get("RECITATION_KERNEL") or HERE / library_name(target))
    if not path.is_file():
        return None, f"{path.name} is missing (reinstall to build it)"
    try:
        return Kernel(path), f"{path.name}"
    except (OSError, AttributeError) as e:
        return None, f"{path.name} did not load: {e}"


_kernel, _loaded = _load()
_choice = os.environ.get("RECITATION_SEARCH", "").strip().lower() or "auto"
if _choice not in ("auto", "native", "python"):  # said in the status, never an error
    _loaded += f"; RECITATION_SEARCH={_choice[:20]!r} is none of auto, native, python"
    _choice = "auto"


def use(choice: str) -> None:
    """Choose the search: "native" (an error when no library loaded), "python" or "auto"
    (native where it loaded)."""
    global _choice
    if choice not in ("auto", "native", "python"):
        raise ValueError(f"search must be auto, native or python, not {choice!r}")
    if choice == "native" and _kernel is None:
        raise RuntimeError(f"no native search: {_loaded}")
    _choice = choice


@contextlib.contextmanager
def using(choice: str):
    before = _choice
    use(choice)
    try:
        yield
    finally:
        use(before)


def active() -> Kernel | None:
    """The kernel the search calls now, None for the Python search."""
    return None if _choice == "python" else _kernel


def available() -> bool:
    return _kernel is not None


def status() -> Status:
    if _choice == "python":
        return Status("python", "chosen by RECITATION_SEARCH=python")
    if _kernel is None:
        if _choice == "native":
            return Status("python", f"RECITATION_SEARCH=native, but {_loaded}")
        return Status("python", _loaded)
    if HELPERS:
        threads = f"{HELPERS} helper thread{'s' if HELPERS > 1 else ''}"
        return Status("native", f"{_loaded}; a lookup's shards at once, {threads}")
    return Status("native", f"{_loaded}; shards one after another")


def _helpers() -> int:
    """Threads that search shards beside the caller's: RECITATION_SEARCH_THREADS, else one
    less than the machine's cores (at most 3); 0 searches every shard in the caller's."""
    given = os.environ.get("RECITATION_SEARCH_THREADS", "").strip()
    if given.isdigit():
        return min(int(given), 16)
    return max(0, min(3, (os.cpu_count() or 1) - 1))


HELPERS = _helpers()
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forgotten() -> None:
    """In a forked child: the parent's helper threads are not there, so a new pool."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forgotten)

T = TypeVar("T")
R = TypeVar("R")
AT_ONCE_US = 300  # work worth handing to helpers (waking one takes ~70 µs on 2 cores)


def _helper_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(HELPERS, thread_name_prefix="recitation-search")
    return _pool


def across(
    fn: Callable[[T], R], items: Iterable[T], cost_us: float | None = None,
    sizes: Iterable[float] | None = None,
) -> list[R]:  # fmt: skip
    """`[fn(x) for x in items]`, the items (one per shard, or per anchor and shard, each a
    compiled call, which releases the interpreter's lock) shared between this thread and up
    to HELPERS others: a large index's shards are searched at once, one core each. Each
    thread takes the next item when it is done with one (shards and anchors differ in
    work); `sizes`: each item's estimated work, the largest taken first (the last items
    taken, the smallest, even out the threads' ends). `cost_us`: the whole work's estimate,
    in this thread alone when under AT_ONCE_US. The results in the items' order; once
    every item begun has ended, the error of the first item that failed (the threads take
    no more items once one has failed)."""
    items = list(items)
    ways = min(HELPERS + 1, len(items))
    if ways < 2 or (cost_us is not None and cost_us < AT_ONCE_US):
        return [fn(x) for x in items]
    order = range(len(items))
    if sizes is not None:
        weight = list(sizes)
        order = sorted(order, key=lambda k: -weight[k])
    turns, taking = iter(order), threading.Lock()
    out: list[R] = [None] * len(items)  # type: ignore[list-item]
    failed: list[tuple[int, BaseException]] = []

    def share() -> None:
        while not failed:
            with taking:
                k = next(turns, None)
            if k is None:
                return
            try:
                out[k] = fn(items[k])
            except BaseException as e:  # (raised in the caller's thread, below)
                failed.append((k, e))

    futures = [_helper_pool().submit(share) for _ in range(ways - 1)]
    try:
        share()
    finally:  # every helper begun ended before this returns or raises: the caller may
        # close the maps they read once it does (a closed map under a call is a crash); one
        # not begun yet (its thread asleep, or busy elsewhere) has nothing left to take
        wait([f for f in futures if not f.cancel()])
    if failed:
        raise min(failed, key=lambda f: f[0])[1]
    return out


def damaged(what: str) -> IndexOpenError:
    return IndexOpenError(
        f"index is damaged ({what}: an entry points outside its file or out of order); rebuild it"
    )


class NativeShard:
    """One shard's arrays as the kernel reads them (pointers into the maps, no copy)."""

    def __init__(self, tok, sa, width: int, top: tuple[np.ndarray, int, int] | None = None):
        self._tok, tok_at = _address(tok)
        self._sa, sa_at = _address(sa)
        sa_len = memoryview(sa).nbytes // 4
        keys, step, nbytes = top if top is not None else (None, 0, 0)
        entries = len(keys) // nbytes if nbytes else 0
        if entries and entries != -(-sa_len // step):
            raise damaged("top table")  # (its size is checked when the index is opened)
        self._keys = keys  # held while the kernel reads it
        self.struct = Shard(tok_at, len(tok), sa_at, sa_len, width,
                            keys.ctypes.data if entries else None, entries, step, nbytes)  # fmt: skip
        self.ref = ctypes.byref(self.struct)

    def release(self) -> None:
        self._tok = self._sa = self._keys = None
        self.struct = self.ref = None


BUCKET_BITS = 16  # a vocabulary's hashes found by their top bits first (rc_vocabulary)


class NativeVocabulary:
    """A vocabulary's arrays as the kernel reads them (`hashes` in memory, the rest pointers
    into the maps), with the table of where each bucket of hashes starts."""

    def __init__(self, hashes: np.ndarray, records, offsets: np.ndarray, words):
        self._hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
        self._records, records_at = _address(records)
        self._offsets = np.ascontiguousarray(offsets, dtype=np.uint64)
        self._words, words_at = _address(words)
        n = len(self._hashes)
        if len(self._records) < 12 * n or len(self._offsets) != n + 1:
            raise damaged("vocabulary")  # (its sizes are checked when the index is opened)
        self._buckets = np.empty((1 << BUCKET_BITS) + 1, dtype=np.uint32)
        tops = np.arange(1 << BUCKET_BITS, dtype=np.uint64) << np.uint64(64 - BUCKET_BITS)
        self._buckets[:-1] = np.searchsorted(self._hashes, tops)
        self._buckets[-1] = n
        self.struct = Vocabulary(self._hashes.ctypes.data, records_at, n,
                                 self._buckets.ctypes.data, self._offsets.ctypes.data, words_at,
                                 len(words))  # fmt: skip
        self.ref = ctypes.byref(self.struct)

    def release(self) -> None:
        self._hashes = self._records = self._offsets = self._words = self._buckets = None
        self.struct = self.ref = None


def word_ids(kernel: Kernel, vocabulary: NativeVocabulary, hashes: np.ndarray, joined: bytes,
             offsets: np.ndarray) -> np.ndarray:  # fmt: skip
    """Each query word's id (`UNKNOWN` where the vocabulary lacks it): its hash, and its
    bytes joined[offsets[i] : offsets[i + 1] - 1] (a terminator after each)."""
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    offsets = np.ascontiguousarray(offsets, dtype=np.uint64)
    if len(offsets) != len(hashes) + 1 or (len(hashes) and int(offsets[-1]) > len(joined)):
        raise ValueError("search kernel: query words and their offsets differ")
    out = np.empty(len(hashes), dtype=np.uint32)
    rc = kernel.word_ids(vocabulary.ref, hashes.ctypes.data, joined, offsets.ctypes.data,
                         len(hashes), out.ctypes.data)  # fmt: skip
    if rc:
        _raise(rc, "vocabulary")
    return out


def is_table(kernel: Kernel, text: bytes) -> bool:
    """text/kinds.py `is_table` of ASCII text (the caller checks that it is)."""
    n = len(text)
    buf = np.empty(n + 1, dtype=np.uint8)
    work = np.empty(7 * n + 16, dtype=np.uint64)
    out = c_int32()
    rc = kernel.is_table(text, n, buf.ctypes.data, n + 1, work.ctypes.data, len(work),
                         ctypes.byref(out))  # fmt: skip
    if rc:
        _raise(rc, "table")
    return bool(out.value)


def span_checks(kernel: Kernel, words: bytes, n: int, keys: bytes) -> tuple[bool, bool]:
    """Whether the n ASCII words (a line break between two) joined by spaces and lowered
    hold one of the keys (each ended by a line break), and text/kinds.py `is_repetitive`."""
    size = 6 * n + 16  # the working memory, then the answers (two int32), then `low`
    work = np.empty(size + 2 + len(words) // 8, dtype=np.uint64)
    at = work.ctypes.data
    rc = kernel.span_checks(words, len(words), n, keys, len(keys), at + 8 * size + 8,
                            len(words), at, size, at + 8 * size)  # fmt: skip
    if rc:
        _raise(rc, "span checks")
    key, rep = work[size : size + 1].view(np.int32).tolist()
    return bool(key), bool(rep)


def word_bounds(kernel: Kernel, text: bytes) -> tuple[np.ndarray, np.ndarray]:
    """text/words.py `word_bounds` of ASCII text (the caller checks that it is)."""
    n = len(text)
    out = np.empty(2 * n + 1, dtype=np.int64)  # the starts, the ends, their count
    at = out.ctypes.data
    rc = kernel.word_bounds(text, n, at, at + 8 * n, n, at + 16 * n)
    if rc:
        _raise(rc, "words")
    count = int(out[2 * n])
    return out[:count], out[n : n + count]


def text_is_table(text: str) -> bool:
    """`kinds.is_table(text)`: compiled where the search is, for ASCII text (its classes are
    Python's only there)."""
    k = active()
    if k is None or not text.isascii():
        return kinds.is_table(text)
    return is_table(k, text.encode("ascii"))


_KEYS = "".join(k + "\n" for k in kinds.LEGAL_KEYS).encode("ascii")


def _never(_words: list[str]) -> bool:
    return False


def word_checks(
    words: list[str],
) -> tuple[Callable[[list[str]], bool], Callable[[list[str]], bool]]:
    """`kinds.is_license` and `kinds.is_repetitive` for these words (a span's), answered by
    one compiled call where the search is and the kernel reads them as Python does (see
    `_as_bytes`); else kinds' own."""
    k = active()
    if k is not None and words:
        joined = _as_bytes("\n".join(words))
        if joined is not None:
            key, rep = span_checks(k, joined, len(words), _KEYS)
            return (kinds.is_license if key else _never), (lambda _words: rep)
    return kinds.is_license, kinds.is_repetitive


_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


def _as_bytes(text: str) -> bytes | None:
    """The words' text as the span checks read it (UTF-8), or None where their answers
    could differ from Python's: the kernel lowers ASCII letters only and takes a word
    starting with an ASCII digit for a number, so a character beyond ASCII that is a digit
    to `str.isdigit` (Arabic-Indic, superscripts) or lowers to ASCII (the Kelvin sign, a
    dotted capital I) is Python's to check; text not encodable (a lone surrogate) too.
    UTF-8 keeps words apart as Python compares them, and its bytes beyond ASCII match no
    key's."""
    if text.isascii():
        return text.encode("ascii")
    if not all(map(_reads_alike, set(_NON_ASCII_RE.findall(text)))):
        return None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


@lru_cache(maxsize=4096)
def _reads_alike(c: str) -> bool:
    return not c.isdigit() and not any(x.isascii() for x in c.lower())


def text_word_bounds(text: str, pos: int = 0, endpos: int | None = None):
    """`words.word_bounds(text, pos, endpos)`: compiled where the search is, for ASCII text
    (its classes are Python's only there)."""
    k = active()
    end = len(text) if endpos is None else min(endpos, len(text))
    piece = text[pos:end]
    if k is None or not piece.isascii():
        return words.word_bounds(text, pos, endpos)
    starts, ends = word_bounds(k, piece.encode("ascii"))
    if pos:
        starts += pos
        ends += pos
    return starts, ends


def interval(kernel: Kernel, shard: NativeShard, pattern: bytes, known_bytes: int, lo: int,
             hi: int) -> tuple[int, int]:  # fmt: skip
    out = (c_uint64 * 2)()
    rc = kernel.interval(shard.ref, pattern, len(pattern), known_bytes, lo, hi, out)
    if rc:
        _raise(rc, "suffix array")
    return out[0], out[1]


def intervals(kernel: Kernel, shard: NativeShard, q: bytes, offsets: np.ndarray,
              m: int) -> np.ndarray:  # fmt: skip
    """`interval` over the whole array of the patterns q[o : o + m] for each offset o (in
    bytes), searched together: one row (start, end) each."""
    offs = np.ascontiguousarray(offsets, dtype=np.uint64)
    out = np.empty((len(offs), 2), dtype=np.uint64)
    rc = kernel.intervals(shard.ref, q, len(q), offs.ctypes.data, len(offs), m, out.ctypes.data)
    if rc:
        _raise(rc, "suffix array")
    return out


def spans(kernel: Kernel, shard: NativeShard, q: bytes, qn: int, starts: np.ndarray,
          ends: np.ndarray) -> np.ndarray:  # fmt: skip
    """The interval of the query's words [starts[i], ends[i]) for each i, over the whole
    array (a run of one start with ascending ends searched each within the one before): one
    row (start, end) each."""
    ss = np.ascontiguousarray(starts, dtype=np.uint64)
    es = np.ascontiguousarray(ends, dtype=np.uint64)
    out = np.empty((len(ss), 2), dtype=np.uint64)
    rc = kernel.spans(shard.ref, q, qn, ss.ctypes.data, es.ctypes.data, len(ss), out.ctypes.data)
    if rc:
        _raise(rc, "suffix array")
    return out


def extend(kernel: Kernel, shard: NativeShard, q: bytes, qn: int, at_q: np.ndarray,
           at_c: np.ndarray, way: int) -> np.ndarray:  # fmt: skip
    qs = np.ascontiguousarray(at_q, dtype=np.int64)
    cs = np.ascontiguousarray(at_c, dtype=np.int64)
    out = np.empty(len(qs), dtype=np.int64)
    rc = kernel.extend(shard.ref, q, qn, qs.ctypes.data, cs.ctypes.data, len(qs), way,
                       out.ctypes.data)  # fmt: skip
    if rc:
        _raise(rc, "suffix array")
    return out


def runs(kernel: Kernel, shard: NativeShard, q: bytes, qn: int, found: list[tuple[int, int, int]],
         starts: np.ndarray, blocks: np.ndarray, bits: int, alive: np.ndarray | None,
         enumerated: np.ndarray, w: int, reach: int, t: int, tail: int) -> np.ndarray:  # fmt: skip
    """suffix.py `_runs` of one shard: `found` its windows (query start, interval of the
    suffix array), `starts` its documents' first words (int64) and `blocks` their block
    table (as `documents` reads them), `alive` which of them are live (bool; None: all),
    `enumerated` the anchors (int64, ascending). Rows (start, end, document in the shard,
    its position of start), ascending."""
    wins = np.fromiter((b for b, _, _ in found), dtype=np.int64, count=len(found))
    ivs = np.fromiter((x for _, lo, hi in found for x in (lo, hi)), np.uint64, 2 * len(found))
    places = sum(hi - lo for _, lo, hi in found)
    work = np.empty(3 * places + 1, dtype=np.int64)
    out = np.empty((places + 1, 4), dtype=np.int64)
    live = None if alive is None else alive.view(np.uint8).ctypes.data
    count = c_uint64()
    rc = kernel.runs(shard.ref, q, qn, wins.ctypes.data, ivs.ctypes.data, len(wins),
                     starts.ctypes.data, len(starts), blocks.ctypes.data, len(blocks), bits,
                     live, enumerated.ctypes.data,
                     len(enumerated), w, reach, t, tail, work.ctypes.data, len(work),
                     out.ctypes.data, places + 1, ctypes.byref(count))  # fmt: skip
    if rc:
        _raise(rc, "suffix array or document starts")
    return out[: count.value]


def documents(kernel: Kernel, shard: NativeShard, starts: np.ndarray, blocks: np.ndarray,
              bits: int, lo: int, hi: int) -> np.ndarray:  # fmt: skip
    out = np.empty(hi - lo, dtype=np.int32)
    rc = kernel.documents(shard.ref, starts.ctypes.data, len(starts), blocks.ctypes.data,
                          len(blocks), bits, lo, hi, out.ctypes.data)  # fmt: skip
    if rc:
        _raise(rc, "suffix array or document starts")
    return out


def crowded_spans(kernel: Kernel, shard: NativeShard, q: bytes, qn: int, lowest: int, a: int,
                  e0: int, t: int, least_end: int, few: int,
                  share: bool = True) -> np.ndarray:  # fmt: skip
    """The spans of a crowded anchor in one shard (see kernel.c): rows (start, end, maximal
    places, and the span's interval in the shard's suffix array: lo, hi, both UNKNOWN where
    not searched), ascending. `share`: the starts' searches share what they found (the
    same answer; without, each searches all its own)."""
    cap, work = 4 * (qn + 1) + few + 1, 6 * (qn + 1)
    while True:  # (the five columns and the work in one array: one allocation, one address)
        out = np.empty(5 * cap + work, dtype=np.uint64)
        at, count = out.ctypes.data, c_uint64(0)
        rc = kernel.crowded_spans(shard.ref, q, qn, lowest, a, e0, t, least_end, few,
                                  *(at + 8 * k * cap for k in range(5)), cap,
                                  at + 40 * cap if share else None, work,
                                  ctypes.byref(count))  # fmt: skip
        if rc != RC_FULL:
            break
        cap *= 4  # (a periodic query: many starts with many ends)
    if rc:
        _raise(rc, "suffix array")
    return out[: 5 * cap].reshape(5, cap)[:, : count.value].T


def distinct(kernel: Kernel, docs: np.ndarray, ndocs: int, alive: np.ndarray | None,
             levels: list[tuple[int, int]],
             weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:  # fmt: skip
    """The distinct live documents of nested intervals of the suffix array (the widest
    first), `docs` the documents of the widest one's entries (see kernel.c); with
    `weights` (each document's files, uint32), the files of each level's live documents
    too (else None)."""
    docs = np.ascontiguousarray(docs, dtype=np.int32)
    bounds = np.ascontiguousarray(levels, dtype=np.uint64).reshape(-1)
    # (a bool array's bytes are 0 or 1: read as they are, no copy)
    live = np.ascontiguousarray(alive, dtype=np.bool_).view(np.uint8) if alive is not None else None
    if weights is not None:
        weights = np.ascontiguousarray(weights, dtype=np.uint32)
        if len(weights) < ndocs:
            raise ValueError("a weight for each document")
    mark = _zeros("mark", ndocs, np.uint8)
    out = np.empty(len(levels), dtype=np.uint64)
    files = np.empty(len(levels), dtype=np.uint64) if weights is not None else None
    rc = kernel.distinct(docs.ctypes.data, ndocs, live.ctypes.data if live is not None else None,
                         weights.ctypes.data if weights is not None else None,
                         mark.ctypes.data, bounds.ctypes.data, len(levels), out.ctypes.data,
                         files.ctypes.data if files is not None else None)  # fmt: skip
    if rc:
        _scratch.mark = None
        _raise(rc, "document starts")
    return out.astype(np.int64), files.astype(np.int64) if files is not None else None


def first_places(kernel: Kernel, docs: np.ndarray, ndocs: int, want: np.ndarray) -> np.ndarray:
    """For each document of `want` (distinct), the index of its first entry in `docs`, -1
    when it has none."""
    docs = np.ascontiguousarray(docs, dtype=np.int32)
    want = np.ascontiguousarray(want, dtype=np.int32)
    slot = _zeros("slot", ndocs, np.int32)
    out = np.empty(len(want), dtype=np.int64)
    rc = kernel.first_places(docs.ctypes.data, len(docs), ndocs, want.ctypes.data, len(want),
                             slot.ctypes.data, out.ctypes.data)  # fmt: skip
    if rc:
        _scratch.slot = None
        _raise(rc, "document starts")
    return out


_scratch = threading.local()  # each thread's zeroed arrays (lookups may run in threads)


def warm_thread(ndocs: int) -> None:
    """This thread's scratch arrays made for shards of up to `ndocs` documents, and the
    helper threads started: what a thread's first lookup would otherwise pay (the pages of
    3 MB at 700K documents faulted in, a thread started per helper)."""
    _zeros("mark", ndocs, np.uint8)
    _zeros("slot", ndocs, np.int32)
    if HELPERS:  # (a thread is started by each submit that finds none idle)
        pool = _helper_pool()
        wait([pool.submit(time.sleep, 0.001) for _ in range(HELPERS)])


def _zeros(name: str, size: int, dtype) -> np.ndarray:
    """`size` zeros, this thread's, reused from call to call: the calls that take one
    (rc_distinct's mark, rc_first_places' slot) leave it zero, and one that fails drops it
    (a table of a shard's documents: 1.4 MB of 350K documents, and the pages of a new one
    faulted in by the call)."""
    have = getattr(_scratch, name, None)
    if have is None or len(have) < size:
        have = np.zeros(size, dtype=dtype)
        setattr(_scratch, name, have)
    return have


def _raise(rc: int, what: str):
    if rc == RC_DAMAGED:
        raise damaged(what)
    raise ValueError(f"search kernel: arguments out of range (code {rc})")
