"""A generation's large files brought into memory in 2 MiB pages.

A lookup's binary searches read a few hundred random entries of the suffix arrays and ids,
and each read of a page the processor has not translated lately first walks the page
tables (in a virtual machine, two sets of them). In 4 KiB pages a 1.5B-word index spans
4.4 million pages; in 2 MiB pages, 8,600. On Linux the page cache can hold a file in 2 MiB
folios (transparent huge pages for files: XFS, and ext4 since Linux 6.16), and every
process that maps the file then maps it 2 MiB at a time, but only if the file came into
memory that way: written by the builder, or read with the usual readahead, it sits in
small folios for as long as it stays in memory.

`load_in_huge_pages(paths)` brings files into the page cache that way: each file's cached
pages are dropped (only those no process maps: a running server's stay as they are), then
the file is read through a mapping advised MADV_HUGEPAGE, whose faults read a 2 MiB folio
each. The builder does it to a new generation's files before publishing it
(`generations.finalize_generation`), so that the servers that switch to it map it in 2 MiB
pages. Measured on the 1.5B-word index (bench/results/huge-pages-1.5b.md): random reads
twice as fast; lookups with the caches emptied p50 2.1 -> 1.8 ms, p99 4.8 -> 4.0.

Done only where it helps and cannot hurt: Linux with transparent huge pages not "never",
files of at least 2 MiB (smaller ones are left as they are), all of them together within
half the memory available (an index larger than that would push out other pages for
nothing); elsewhere nothing is done and `why_not` says why. The files' bytes are never
written; an error reading one is said in `why_not` and the others are still loaded.
"""

from __future__ import annotations

import logging
import mmap
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

HUGE_PAGE = 2 << 20  # a 2 MiB folio: one fault reads one
MEMORY_SHARE = 0.5  # of the memory available, at most this much loaded
THP_SETTING = Path("/sys/kernel/mm/transparent_hugepage/enabled")
MEMINFO = Path("/proc/meminfo")


@dataclass
class HugePages:
    files: int = 0  # files loaded
    bytes: int = 0  # their bytes
    seconds: float = 0.0
    why_not: str = ""  # set when something was not loaded: why

    def summary(self) -> str:
        loaded = f"{self.files} file(s), {self.bytes / (1 << 30):.2f} GiB, read in 2 MiB pages"
        if not self.files:
            return f"not read in 2 MiB pages: {self.why_not}"
        return f"{loaded} in {self.seconds:.1f} s" + (f" ({self.why_not})" if self.why_not else "")


def unavailable() -> str:
    """Why files cannot be read in 2 MiB pages here, or "" when they can."""
    if not sys.platform.startswith("linux"):
        return "2 MiB pages of files are a Linux feature"
    if not hasattr(mmap, "MADV_HUGEPAGE") or not hasattr(os, "posix_fadvise"):
        return "this Python cannot advise huge pages"
    try:
        setting = THP_SETTING.read_text()
    except OSError:
        return "the kernel has no transparent huge pages"
    if "[never]" in setting:
        return "transparent huge pages are off (never)"
    return ""


def memory_available() -> int | None:
    """MemAvailable in bytes, or None when unknown."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def load_in_huge_pages(paths: list[Path], share: float = MEMORY_SHARE) -> HugePages:
    """Read these files into the page cache in 2 MiB folios (see the module's docstring)."""
    out = HugePages()
    why = unavailable()
    if why:
        out.why_not = why
        return out
    sized = []
    for p in paths:
        try:
            size = os.stat(p).st_size
        except OSError as e:
            out.why_not = f"{p.name}: {e.strerror or e}"
            continue
        if size >= HUGE_PAGE:
            sized.append((p, size))
    if not sized:
        out.why_not = out.why_not or "no file of 2 MiB or more"
        return out
    total, available = sum(s for _, s in sized), memory_available()
    if available is None or total > available * share:
        out.why_not = (
            f"{total / (1 << 30):.2f} GiB is more than {share:.0%} of the memory available"
            if available is not None
            else "the memory available is unknown"
        )
        return out
    start = time.perf_counter()
    for p, size in sized:
        try:
            _load(p, size)
        except OSError as e:  # (the others still loaded: a lookup reads this one as it is)
            out.why_not = f"{p.name}: {e.strerror or e}"
            log.warning("%s not read in 2 MiB pages: %s", p, e)
            continue
        out.files += 1
        out.bytes += size
    out.seconds = time.perf_counter() - start
    return out


def _load(path: Path, size: int) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        if os.fstat(fd).st_size != size:
            raise OSError(f"{path.name} changed size")
        os.fsync(fd)  # (written pages first reach the disk: dirty ones cannot be dropped)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
            m.madvise(mmap.MADV_HUGEPAGE)
            view = memoryview(m)
            try:
                for at in range(0, size, HUGE_PAGE):  # one fault reads a 2 MiB folio
                    view[at]
            finally:
                view.release()
    finally:
        os.close(fd)
