"""Tables read into memory once and searched at random for the index's life (the suffix
arrays' top tables: the first probes of every search), in 2 MiB pages where the system
gives them.

A top table of a large index is tens of MiB (16 MiB a shard of 500M words), and every
search probes about twenty places of it at random. In 4 KiB pages each probe after an
idle pause also misses the processor's table of pages (its TLB) and walks the page
tables; in 2 MiB pages the whole table is a few entries of it. On Linux an anonymous
mapping asks for them (madvise MADV_HUGEPAGE: transparent huge pages, which most systems
give to mappings that ask); the memory is the process's own, never reclaimed as a file's
pages are. Elsewhere, or for a table under one such page, a plain copy.
"""

from __future__ import annotations

import contextlib
import mmap

import numpy as np

HUGE_PAGE = 2 << 20


def resident(data) -> np.ndarray:
    """`data`'s bytes (a buffer) copied into this process's memory, as uint8: in 2 MiB
    pages where the system gives them."""
    source = np.frombuffer(data, dtype=np.uint8)
    advise = getattr(mmap, "MADV_HUGEPAGE", None)
    if advise is None or not hasattr(mmap, "MAP_ANONYMOUS") or len(source) < HUGE_PAGE:
        return source.copy()
    # private (a shared one is shmem, whose huge pages a system gives apart); a huge page
    # lies on a 2 MiB boundary: the mapping one page longer, the table aligned
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    memory = mmap.mmap(-1, len(source) + HUGE_PAGE, flags=flags)
    with contextlib.suppress(OSError):  # (a kernel without them: 4 KiB pages, as a copy)
        memory.madvise(advise)
    out = np.frombuffer(memory, dtype=np.uint8)
    skip = -out.ctypes.data % HUGE_PAGE
    out = out[skip : skip + len(source)]
    out[:] = source
    return out
