"""A generation's files mapped ahead: the page tables of their pages that are in memory
filled at once, so that a new process's first lookups do not take a page fault for each
page they touch.

A lookup in a large index reads a few hundred random pages of the suffix arrays and ids.
Each page a process touches for the first time costs a fault even when the page is in the
page cache (a minor fault, about 2 µs here); a long-running language server maps every page
it ever touched, so only its first few thousand lookups pay this. Mapping ahead pays it
once, on a background thread, when the index opens: on Linux 5.14 and later, madvise
MADV_POPULATE_READ over the runs of pages that mincore says are in memory (the documents'
database too, which LMDB maps itself: its records are read for each source). Pages not in
memory are left alone, so an index larger than memory is never read from disk for this;
elsewhere (macOS, Windows, older Linux) nothing is done, and `MappedAhead.why_not` says so.

What it costs: the page tables (8 bytes a page: 2 MiB a GiB mapped) and about 0.1 s of
one core a GiB; the pages themselves were in memory already, and a process that ran long
enough would have mapped them too (its resident memory counts them either way).

The other way (`drop_pages`): a writer that reads a growing file through its map (LMDB's
docs.mdb, read page by page as the builder stores documents) drops the pages from its
memory now and then; the page cache keeps them, and a page touched again is mapped again.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import mmap
import os
import sys
import threading
import time
from dataclasses import dataclass, field

import numpy as np

MADV_POPULATE_READ = 22  # Linux 5.14+ (include/uapi/asm-generic/mman-common.h)
MADV_DONTNEED = 4  # (the same header)
CHUNK_BYTES = 64 << 20  # mincore'd and populated at a time (a stop is seen between chunks)


@dataclass
class MappedAhead:
    bytes: int = 0  # bytes whose page tables were filled
    seconds: float = 0.0
    why_not: str = ""  # set when nothing was done: why
    failed: bool = False  # it raised (`why_not` says what): a warning, not a fact
    stopped: bool = False  # asked to stop before the end
    rehearsed: list[float] = field(default_factory=list)  # ms of each lookup thread's rehearsal
    rehearsal_failed: str = ""  # why a rehearsal failed (the lookups will say it too)

    @property
    def level(self) -> int:
        """The log level of `describe()`: a failure is a warning."""
        return logging.WARNING if self.failed or self.rehearsal_failed else logging.INFO

    def summary(self) -> str:
        """What was mapped and in how long, or why nothing was, and the lookup threads'
        rehearsals: one short phrase."""
        return self._mapped() + self._rehearsals()

    def _mapped(self) -> str:
        if self.why_not:
            return f"not mapped ahead ({self.why_not})"
        left = " (stopped early)" if self.stopped else ""
        size = (
            f"{self.bytes / 2**30:.2f} GiB"
            if self.bytes >= 2**30
            else f"{self.bytes / 2**20:.1f} MiB"
        )
        return f"{size} in memory mapped ahead in {self.seconds:.2f} s{left}"

    def _rehearsals(self) -> str:
        if self.rehearsal_failed:
            return f"; a lookup's rehearsal failed ({self.rehearsal_failed})"
        if not self.rehearsed:
            return ""
        threads = len(self.rehearsed)
        each = "" if threads == 1 else f" on each of {threads} lookup threads"
        return f"; a lookup rehearsed{each} in {max(self.rehearsed):.1f} ms"

    def describe(self) -> str:
        """`summary`, and what the pages mapped are (the log's line)."""
        if self.why_not:
            return self.summary()
        return (
            self._mapped()
            + (
                " (the page cache's pages, shared and reclaimable: counted in the process's"
                " resident memory)"
            )
            + self._rehearsals()
        )


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mincore, madvise = libc.mincore, libc.madvise
    except (OSError, AttributeError):
        return None
    mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    mincore.restype = madvise.restype = ctypes.c_int
    return mincore, madvise


def mapping_of(path: str | os.PathLike) -> int | None:
    """Where this process maps the file at `path` shared (the first such mapping of its
    device and inode: the only kind `drop_pages` may drop), or None: none, or a system
    without /proc/self/maps (Linux only)."""
    found = mapped_range(path)
    return None if found is None else found[0]


def mapped_range(path: str | os.PathLike) -> tuple[int, int] | None:
    """`mapping_of`'s mapping as (address, length), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        st = os.stat(path)
        device = (os.major(st.st_dev), os.minor(st.st_dev))
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                fields = line.split(maxsplit=5)
                if len(fields) < 5 or fields[4] != str(st.st_ino) or "s" not in fields[1]:
                    continue
                major, _, minor = fields[3].partition(":")
                if (int(major, 16), int(minor, 16)) == device:
                    start, _, end = fields[0].partition("-")
                    return int(start, 16), int(end, 16) - int(start, 16)
    except (OSError, ValueError):
        return None
    return None


def drop_pages(address: int, length: int) -> bool:
    """The pages of a shared mapping of a file, [address, address + length), dropped from
    this process (the page cache keeps them: read back when next touched); False where the
    system cannot (Linux only)."""
    calls = _libc()
    if calls is None or length <= 0:
        return False
    return calls[1](address, length, MADV_DONTNEED) == 0


def map_ahead(
    maps: list, stop: threading.Event | None = None, ranges: tuple[tuple[int, int], ...] = ()
) -> MappedAhead:
    """Fill the page tables of the pages of `maps` (mmap objects; others are skipped) and
    of `ranges` ((address, length) of this process's shared file mappings that are not
    mmap objects: LMDB's map of its database, `mapping_of`) that are in memory. Safe to
    run beside lookups; `stop` ends it between chunks."""
    calls = _libc()
    if calls is None:
        return MappedAhead(why_not="the system has no MADV_POPULATE_READ: Linux 5.14+ only")
    out = MappedAhead()
    t0 = time.perf_counter()
    resident = np.zeros(CHUNK_BYTES // mmap.PAGESIZE, dtype=np.uint8)
    for m in maps:
        if not isinstance(m, mmap.mmap) or m.closed or not len(m):
            continue
        try:
            view = np.frombuffer(m, dtype=np.uint8)  # (holds the map open while in use)
        except (ValueError, BufferError):
            continue
        try:
            if not _populate(calls, view.ctypes.data, len(view), resident, out, stop):
                return out
        finally:
            del view
        if out.stopped:
            break
    for address, length in ranges:
        if out.stopped or not _populate(calls, address, length, resident, out, stop):
            break
    out.seconds = time.perf_counter() - t0
    return out


def _populate(calls, base: int, size: int, resident, out: MappedAhead, stop) -> bool:
    """The page tables of the resident pages of [base, base + size) filled, counted in
    `out`; False when the kernel has no such advice (`out.why_not` says so)."""
    mincore, madvise = calls
    page = mmap.PAGESIZE
    for off in range(0, size, CHUNK_BYTES):
        if stop is not None and stop.is_set():
            out.stopped = True
            break
        length = min(CHUNK_BYTES, size - off)
        pages = -(-length // page)
        if mincore(base + off, length, resident.ctypes.data) != 0:
            break  # (the map is not what it was: nothing more to do with it)
        edges = np.flatnonzero(np.diff(resident[:pages] & 1, prepend=0, append=0))
        for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
            if madvise(base + off + a * page, (b - a) * page, MADV_POPULATE_READ):
                if ctypes.get_errno() == errno.EINVAL:  # an older kernel: no such advice
                    out.why_not = "the kernel has no MADV_POPULATE_READ: Linux 5.14+ only"
                    out.bytes = 0
                    return False
                continue  # (a page gone meanwhile: the rest still helps)
            out.bytes += min((b - a) * page, length - a * page)
    return True
