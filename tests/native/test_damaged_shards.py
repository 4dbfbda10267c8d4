"""Damaged shard files read by the compiled search: truncated, flipped and swapped word ids,
suffix arrays and document starts, and the vocabulary's files, with a header that vouches for them (a writer's bug: the
open's checks pass) — every lookup answers or ends in the one-line "damaged" error; none
crashes the process. Run in a child process, so that a crash is a failed test, not a lost
test run; on both search paths."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from index_tools import BuildOptions, build_index
from index_tools.match import kernel
from index_tools.store import generations as store
from index_tools.store import shards as files

CODE = "".join(
    f"def step_{i}(values, scale={i}):\n    total = sum(v * scale for v in values)\n"
    f"    return total - {i} if total > {i} else values[{i % 3}]\n\n"
    for i in range(40)
)
LOOKUPS = """
import sys
from index_tools import IndexOpenError, open_index
from index_tools.match import kernel
from index_tools.match import index as index_module
index_module.DIGESTS_ON_OPEN_BYTES = 0  # opened as a large index is: digests not read
kernel.use(sys.argv[1])
text = open(sys.argv[2]).read()
for path in sys.argv[3:]:
    print("index", path, flush=True)
    try:
        with open_index(path) as idx:
            for start in range(0, len(text) - 400, 700):
                idx.match(text[start : start + 900], text[:start], min_tokens=20, language="python")
        print("answered", flush=True)
    except IndexOpenError as e:
        assert "\\n" not in str(e) and "damaged" in str(e), str(e)
        print("error", flush=True)
"""


def damaged_copies(pristine: Path, out: Path, seed: int) -> list[Path]:
    """Copies of the index, each with one shard file damaged and the header resealed."""
    rng = random.Random(seed)
    gen0 = pristine / store.current_name(pristine)
    names = [files.shard_file(0, p) for p in files.SHARD_PARTS + files.RENAMED_PARTS]
    names += [files.WORDS_NAME, files.OFFSETS_NAME, files.LOOKUP_NAME]
    copies = []
    for name in names:
        ids = ("ids",) if name == files.LOOKUP_NAME else ()  # (its records' ids alone)
        for how in ("flip", "swap", "truncate", "fill", *ids):
            dest = out / f"{name}-{how}"
            gen = dest / gen0.name
            gen.mkdir(parents=True)
            for f in gen0.iterdir():
                (gen / f.name).write_bytes(f.read_bytes())
            (dest / "CURRENT").write_bytes((pristine / "CURRENT").read_bytes())
            data = bytearray((gen / name).read_bytes())
            if how == "flip":  # high bytes of entries: positions far past the ids
                for _ in range(len(data) // 16 + 1):
                    data[rng.randrange(len(data))] ^= rng.choice([0x80, 0xFF, 0x7F, 0x01])
            elif how == "swap":  # two regions exchanged: an unsorted array
                k = len(data) // 4
                data[:k], data[-k:] = data[-k:], data[:k]
            elif how == "truncate":
                del data[len(data) // 2 :]
            elif how == "fill":  # every byte 0xFF: every entry out of range
                data[:] = b"\xff" * len(data)
            else:  # the vocabulary's ids out of range, its hashes kept (words found by them)
                records = np.frombuffer(bytes(data), dtype=files.LOOKUP_DTYPE).copy()
                records["id"] = 0xFFFFFFF0
                data[:] = records.tobytes()
            (gen / name).write_bytes(bytes(data))
            header = store.Header(**json.loads((gen / store.HEADER_NAME).read_text()))
            store.finalize_generation(gen, header)  # the header vouches for the damage
            copies.append(dest)
    return copies


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("shards")
    src = root / "src"
    src.mkdir()
    for i in range(6):
        (src / f"m{i}.py").write_text(CODE[i * 500 :] + CODE[: i * 500])
    build_index([str(src)], root / "idx", BuildOptions(jobs=1, progress=False))
    (root / "query.py").write_text(CODE)
    return root / "idx"


@pytest.mark.parametrize("path", ["native", "python"])
def test_damaged_shards_answer_or_fail_in_one_line(pristine, tmp_path, path):
    copies = damaged_copies(pristine, tmp_path, seed=3)
    query = pristine.parent / "query.py"
    done = subprocess.run(
        [sys.executable, "-c", LOOKUPS, path, str(query), *map(str, copies)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    last = [line for line in done.stdout.splitlines() if line.startswith("index ")][-1:]
    assert done.returncode == 0, f"{last}: exit {done.returncode}\n{done.stderr[-3000:]}"
    outcomes = [line for line in done.stdout.splitlines() if line in ("answered", "error")]
    assert len(outcomes) == len(copies)
    if path == "native":  # every entry out of range: found, never read past the map
        assert "error" in outcomes
    # every word's id out of range: the query's words are never taken as unknown
    by_copy = dict(zip((c.name for c in copies), outcomes))
    assert by_copy[f"{files.LOOKUP_NAME}-ids"] == "error"


@pytest.fixture(scope="module")
def sharded(tmp_path_factory) -> tuple[Path, Path]:
    """120 files of Python's standard library in four shards, and all of them as a query."""
    import sysconfig

    root = tmp_path_factory.mktemp("sharded")
    src = root / "src"
    src.mkdir()
    names = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:120]
    for p in names:
        (src / p.name).write_bytes(p.read_bytes())
    idx = root / "idx"
    build_index([str(src)], idx, BuildOptions(jobs=1, progress=False, shard_words=200_000))
    query = root / "query.py"
    query.write_bytes(b"".join(p.read_bytes() for p in sorted(src.iterdir())))
    return idx, query


@pytest.mark.skipif(not kernel.available(), reason="no kernel library for this machine")
def test_a_damaged_shard_among_several_searched_at_once_is_an_error(sharded, tmp_path):
    """One shard's suffix array ending in entries out of range (the header resealed), the
    others searched by helper threads at the same time: the CLI's one-line error, exit 2,
    never a crash (the maps closed under a helper still reading them)."""
    idx, query = sharded
    gen0 = idx / store.current_name(idx)
    shards = store.Header(**json.loads((gen0 / store.HEADER_NAME).read_text())).shards
    assert shards >= 3
    for shard in range(shards):
        dest = tmp_path / f"bad-{shard}"
        shutil.copytree(idx, dest)
        gen = dest / gen0.name
        sa = gen / files.shard_file(shard, "sa")
        data = bytearray(sa.read_bytes())
        data[-64:] = b"\xff" * 64
        sa.write_bytes(bytes(data))
        store.finalize_generation(
            gen, store.Header(**json.loads((gen / store.HEADER_NAME).read_text()))
        )
        env = {**os.environ, "RECITATION_SEARCH": "native", "RECITATION_SEARCH_THREADS": "1"}
        with open(query, "rb") as stdin:
            done = subprocess.run(
                [sys.executable, "-m", "index_tools.cli", "query", str(dest)],
                stdin=stdin, capture_output=True, text=True, timeout=120, env=env,
            )  # fmt: skip
        assert done.returncode == 2, (shard, done.returncode, done.stderr[-2000:])
        assert "damaged" in done.stderr and len(done.stderr.strip().splitlines()) == 1
