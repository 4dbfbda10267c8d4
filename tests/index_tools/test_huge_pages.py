"""A generation's files read into memory in 2 MiB pages: after the builder writes an index,
a process mapping its large files maps them 2 MiB at a time (Linux with transparent huge
pages for files, as on the machine the suite runs on); their bytes never change; where the
system cannot, or the files would not fit in memory, nothing is done and why is said. Real
files, the real page cache, real maps (/proc/self/smaps)."""

from __future__ import annotations

import hashlib
import mmap
import os
import random
import re
import sys
from pathlib import Path

import pytest

from index_tools import build_index
from index_tools.store import generations as store
from index_tools.store import huge_pages

MIB = 1 << 20
able = pytest.mark.skipif(
    bool(huge_pages.unavailable()), reason=huge_pages.unavailable() or "available"
)


def write_random(path: Path, size: int) -> str:
    data = random.Random(size).randbytes(size)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def in_small_pages(path: Path) -> None:
    """The file's cached pages dropped, then read without readahead: one 4 KiB folio a
    page, as a reader faulting pages one at a time leaves it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        while os.read(fd, MIB):
            pass
    finally:
        os.close(fd)


def mapped_in_huge_pages(path: Path) -> int:
    """KiB of the file a new map of it maps in 2 MiB pages once every page is touched."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m:
        view = memoryview(m)
        try:
            for at in range(0, len(m), mmap.PAGESIZE):
                view[at]
            smaps = Path("/proc/self/smaps").read_text()
        finally:
            view.release()
    kib = 0
    for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", smaps):
        if block.split("\n", 1)[0].endswith(str(path)):
            kib += int(re.search(r"^FilePmdMapped:\s+(\d+)", block, re.M).group(1))
    return kib


@able
def test_a_file_read_in_small_pages_is_mapped_in_2_mib_pages_once_loaded(tmp_path):
    path = tmp_path / "shard-000.sa"
    want = write_random(path, 8 * MIB)
    in_small_pages(path)
    assert mapped_in_huge_pages(path) == 0  # (what the loading changes)
    loaded = huge_pages.load_in_huge_pages([path])
    assert (loaded.files, loaded.bytes, loaded.why_not) == (1, 8 * MIB, "")
    assert "1 file(s), 0.01 GiB, read in 2 MiB pages" in loaded.summary()
    assert mapped_in_huge_pages(path) == 8 * 1024
    assert digest(path) == want


@able
def test_the_builder_leaves_an_index_mapped_in_2_mib_pages(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    rng = random.Random(3)
    names = [f"name_{i}" for i in range(3000)]
    for f in range(150):  # about 700,000 words: a suffix array of 2.8 MB
        lines = [
            " ".join(f"{rng.choice(names)}({rng.randrange(10**5)})," for _ in range(12)) + "\n"
            for _ in range(160)
        ]
        (src / f"data_{f}.py").write_text("".join(lines))
    build_index([str(src)], tmp_path / "idx")
    gen = tmp_path / "idx" / store.current_generation(tmp_path / "idx")
    sa = gen / "shard-000.sa"
    assert sa.stat().st_size >= 2 * MIB
    # every whole 2 MiB of it (the tail past the last is in small pages)
    assert mapped_in_huge_pages(sa) >= sa.stat().st_size // (2 * MIB) * 2048
    assert store.file_digest(sa) == store.read_header(tmp_path / "idx")[1].file_hashes[sa.name]


@able
def test_finishing_a_generation_loads_its_large_files_and_records_them(tmp_path):
    gen = tmp_path / "gen-1"
    gen.mkdir()
    want = write_random(gen / "shard-000.ids", 4 * MIB + 123)
    write_random(gen / "vocab.words", 1000)
    in_small_pages(gen / "shard-000.ids")
    header = store.Header(format_version=store.FORMAT_VERSION, tokenizer_version=1)
    loaded = store.finalize_generation(gen, header)
    assert (loaded.files, loaded.bytes) == (1, 4 * MIB + 123)  # (the small file as it is)
    assert mapped_in_huge_pages(gen / "shard-000.ids") == 4096
    assert header.file_sizes == {"shard-000.ids": 4 * MIB + 123, "vocab.words": 1000}
    assert digest(gen / "shard-000.ids") == want


def test_nothing_is_done_where_transparent_huge_pages_are_off(tmp_path, monkeypatch):
    setting = tmp_path / "enabled"
    setting.write_text("always madvise [never]\n")
    monkeypatch.setattr(huge_pages, "THP_SETTING", setting)
    path = tmp_path / "shard-000.sa"
    want = write_random(path, 3 * MIB)
    loaded = huge_pages.load_in_huge_pages([path])
    if sys.platform.startswith("linux"):
        assert loaded.why_not == "transparent huge pages are off (never)"
    assert loaded.files == 0 and loaded.summary().startswith("not read in 2 MiB pages: ")
    assert digest(path) == want


@able
def test_files_beyond_half_the_memory_available_are_left_as_they_are(tmp_path, monkeypatch):
    monkeypatch.setattr(huge_pages, "memory_available", lambda: 10 * MIB)
    path = tmp_path / "shard-000.sa"
    write_random(path, 6 * MIB)
    in_small_pages(path)
    loaded = huge_pages.load_in_huge_pages([path])
    assert loaded.files == 0
    assert loaded.why_not == "0.01 GiB is more than 50% of the memory available"
    assert mapped_in_huge_pages(path) == 0


@able
def test_a_missing_file_is_said_and_the_others_still_loaded(tmp_path):
    path = tmp_path / "shard-001.sa"
    write_random(path, 2 * MIB)
    in_small_pages(path)
    loaded = huge_pages.load_in_huge_pages([tmp_path / "shard-000.sa", path])
    assert loaded.files == 1 and loaded.why_not.startswith("shard-000.sa: ")
    assert mapped_in_huge_pages(path) == 2048


@able
def test_small_files_are_left_alone(tmp_path):
    path = tmp_path / "vocab.words"
    write_random(path, MIB)
    loaded = huge_pages.load_in_huge_pages([path])
    assert (loaded.files, loaded.why_not) == (0, "no file of 2 MiB or more")
