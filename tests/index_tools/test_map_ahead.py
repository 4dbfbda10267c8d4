"""Mapping an index ahead: after it, touching the pages of the index's files that are in
memory takes no page fault; pages not in memory are not read; it stops when asked, and
says why where the system cannot do it. Real index files, real page tables (Linux)."""

from __future__ import annotations

import ctypes
import mmap
import os
import random
import re
import resource
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from index_tools import build_index, open_index
from index_tools.store import map_ahead as ahead

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux page tables")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """An index of a few MB of code, so that its files span many pages."""
    tmp = tmp_path_factory.mktemp("ahead")
    src = tmp / "src"
    src.mkdir()
    rng = random.Random(7)
    names = [f"name_{i}" for i in range(5000)]
    for f in range(200):
        lines = [
            f"def {rng.choice(names)}({rng.choice(names)}, {rng.choice(names)}):\n"
            f"    return {rng.choice(names)} + {rng.randrange(10**6)} * {rng.choice(names)}\n"
            for _ in range(150)
        ]
        (src / f"mod_{f}.py").write_text("".join(lines))
    build_index([str(src)], tmp / "idx")
    return tmp / "idx"


def read_through(root) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            path.read_bytes()


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def touch_every_page(maps) -> int:
    """Read one byte of every page of these maps; the page faults it took."""
    before = minor_faults()
    for m in maps:
        view = np.frombuffer(m, dtype=np.uint8)
        int(view[:: mmap.PAGESIZE].sum())
        del view
    return minor_faults() - before


def big_maps(idx):
    return [m for m in idx._maps if isinstance(m, mmap.mmap) and len(m) >= 16 * mmap.PAGESIZE]


def resident_pages(m) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    view = np.frombuffer(m, dtype=np.uint8)
    vec = np.zeros(-(-len(m) // mmap.PAGESIZE), dtype=np.uint8)
    assert libc.mincore(view.ctypes.data, len(m), vec.ctypes.data) == 0
    del view
    return int((vec & 1).sum())


def mapped_kib(folder) -> int:
    """This process's resident (mapped) memory of the files under `folder`, from smaps."""
    total, inside = 0, False
    smaps = Path("/proc/self/smaps").read_text(encoding="utf-8", errors="replace")
    for line in smaps.splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
            inside = len(head) >= 6 and head[5].startswith(str(folder))
        elif inside and line.startswith("Rss:"):
            total += int(head[1])
    return total


@linux
def test_after_mapping_ahead_the_pages_in_memory_take_no_fault(index):
    read_through(index)
    with open_index(index) as idx:
        docs = (idx.gen / "docs.mdb").stat().st_size  # (LMDB maps it itself: mapped too)
        total = sum(len(m) for m in idx._maps if isinstance(m, mmap.mmap)) + docs
        assert total > 1000 * mmap.PAGESIZE
        before = mapped_kib(idx.gen)  # (what opening read: headers, top tables)
        done = idx.map_ahead()
        assert not done.why_not and not done.stopped
        assert 0.9 * total <= done.bytes <= total  # everything was read just before
        after = mapped_kib(idx.gen)
        docs_after = mapped_kib(idx.gen / "docs.mdb")
        alone = ahead.map_ahead([], None, idx._docs_mapped())  # (the documents' database)
        faults = touch_every_page(big_maps(idx))
    assert docs_after >= 0.9 * docs / 1024 and 0.9 * docs <= alone.bytes <= docs
    # the page tables filled: the process maps the files' pages before touching them, and
    # touching every page then takes no fault to speak of (a few from the interpreter)
    assert before < 0.5 * total / 1024 and after >= 0.9 * total / 1024, (before, after, total)
    assert faults <= 10, faults
    assert re.match(
        r"[\d.]+ MiB in memory mapped ahead in [\d.]+ s \(the page cache", done.describe()
    )


@linux
def test_pages_not_in_memory_are_left_alone(index):
    read_through(index)
    sa = next(index.rglob("shard-000.sa"))
    with open_index(index) as idx:  # (opening checks the files: dropped after)
        fd = os.open(sa, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # out of the page cache
        finally:
            os.close(fd)
        m = next(m for m in idx._maps if isinstance(m, mmap.mmap) and len(m) == sa.stat().st_size)
        if resident_pages(m) > 0:
            pytest.skip("the system kept the file's pages in memory")
        done = idx.map_ahead()
        assert done.bytes > 0  # the other files
        assert resident_pages(m) == 0  # this one was not read from disk


def test_mapping_ahead_makes_each_shards_block_table(index, monkeypatch):
    """What the first lookup that counts a shard's documents would make (5-30 ms a shard
    of 800M words) is made ahead too, where the system maps nothing ahead as well."""
    for platform in ("linux", "darwin"):
        monkeypatch.setattr(ahead.sys, "platform", platform)
        with open_index(index) as idx:
            shards = idx.shards + idx.renamed_shards
            assert shards and all(sh._blocks is None for sh in shards)
            idx.map_ahead()
            assert all(sh._blocks is not None for sh in shards)


@linux
def test_a_stop_asked_before_ends_it_at_once(index):
    stop = threading.Event()
    stop.set()
    with open_index(index) as idx:
        done = idx.map_ahead(stop)
        assert all(sh._blocks is None for sh in idx.shards)  # (nor the block tables)
    assert done.stopped and done.bytes == 0
    assert "s (stopped early) (the page cache" in done.describe()


def test_elsewhere_it_says_why_and_does_nothing(index, monkeypatch):
    monkeypatch.setattr(ahead.sys, "platform", "darwin")
    with open_index(index) as idx:
        done = idx.map_ahead()
    assert done.bytes == 0
    assert done.describe() == (
        "not mapped ahead (the system has no MADV_POPULATE_READ: Linux 5.14+ only)"
    )


def _mapped_kb(path: Path) -> int:
    """This process's resident kilobytes of its mappings of `path` (smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", head[0]):
            inside = len(head) == 6 and head[5] == str(path)
        elif inside and line.startswith("Rss:"):
            total += int(head[1])
    return total


@linux
def test_dropped_pages_leave_the_process_and_read_back_the_same(tmp_path):
    """What the builder does to its map of docs.mdb as the file grows: the pages of a
    shared read-only mapping dropped from the process's memory, the file's bytes the same
    when read through it again."""
    path = tmp_path / "data"
    data = np.random.default_rng(1).integers(0, 256, 8 << 20, dtype=np.uint8).tobytes()
    path.write_bytes(data)
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        assert m[:] == data  # every page touched
        assert _mapped_kb(path) >= 8 << 10
        address = ahead.mapping_of(path)
        view = np.frombuffer(m, dtype=np.uint8)
        assert address == view.ctypes.data
        assert ahead.drop_pages(address, len(m))
        assert _mapped_kb(path) < 256
        assert m[:] == data
        del view
    finally:
        m.close()
    assert ahead.mapping_of(path) is None
