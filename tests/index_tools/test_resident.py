"""Top tables read into the process's memory (`store.resident`): the same bytes, in 2 MiB
pages where the system gives them (both searches reading them: tests/native/test_top_tables)."""

from __future__ import annotations

import mmap
import sys

import numpy as np
import pytest

from index_tools.store.resident import HUGE_PAGE, resident


@pytest.mark.parametrize("size", [0, 1, 4096, HUGE_PAGE - 1, HUGE_PAGE, 3 * HUGE_PAGE + 17])
def test_the_same_bytes_in_memory_of_its_own(size):
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    out = resident(memoryview(data))
    assert out.dtype == np.uint8 and out.tobytes() == data
    if size:  # (memory of its own: the source is untouched)
        before = data[0]
        out[0] = before ^ 1
        assert data[0] == before


@pytest.mark.skipif(not hasattr(mmap, "MADV_HUGEPAGE"), reason="no transparent huge pages")
def test_a_table_of_a_huge_page_or_more_starts_on_one():
    out = resident(bytes(HUGE_PAGE + 5))
    assert out.ctypes.data % HUGE_PAGE == 0
    if sys.platform.startswith("linux"):  # private anonymous memory: no file's, no shmem
        start = out.ctypes.data
        with open("/proc/self/maps") as maps:
            for line in maps:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if lo <= start < hi:
                    fields = line.split()
                    assert fields[1] == "rw-p" and len(fields) == 5, line
                    break
            else:
                pytest.fail("the table's memory is in no mapping")
