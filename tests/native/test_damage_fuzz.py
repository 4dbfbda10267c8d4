"""Damaged indexes through both searches: random damage to every file a lookup reads (bytes
flipped, entries swapped or reversed, regions filled or shifted, document starts sent far),
with the header resealed so that it vouches for the damage (the open's checks pass, as for
bit rot in an index over 512 MiB, whose shards the open does not hash). For every copy the
compiled search and the Python one give the same answer or both say "damaged", in one line;
none raises anything else, and no process ends by a signal.

A few seconds in the suite; `RECITATION_DAMAGE_FUZZ=N` runs N damaged copies (the copies
and their outcomes are printed with -s)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from index_tools import BuildOptions, build_index
from index_tools.match import kernel
from index_tools.store import generations as store
from index_tools.store import shards as files

COPIES = int(os.environ.get("RECITATION_DAMAGE_FUZZ", "0") or 0) or 24
SEED = int(os.environ.get("RECITATION_DAMAGE_SEED", "55"))

LOOKUPS = """
import json, sys
from index_tools import IndexOpenError, open_index
from index_tools.match import kernel
from index_tools.match import index as index_module
index_module.DIGESTS_ON_OPEN_BYTES = 0  # opened as a large index is: digests not read
kernel.use(sys.argv[1])
queries = json.load(open(sys.argv[2]))

def answer(idx, q):
    found = idx.match(q["text"], q["context"], min_tokens=q["min_tokens"], language=q["language"])
    return [[m.query_start, m.query_end, m.length, m.file_count,
             sorted([s.repository, s.path, s.start_line, s.end_line] for s in m.sources),
             [[p.query_start, p.query_end, p.file_count] for p in m.parts]] for m in found]

for path in sys.argv[3:]:
    print("index", path, flush=True)
    try:
        with open_index(path) as idx:
            out = [answer(idx, q) for q in queries]
    except IndexOpenError as e:
        text = str(e)
        out = "damaged" if "\\n" not in text and "damaged" in text else "error: " + text
    except Exception as e:  # what the user would see as "unexpected error"
        out = f"unexpected: {type(e).__name__}: {e}"
    print("outcome", json.dumps(out), flush=True)
"""


def _entry(name: str, header: dict) -> int:
    """The size of one entry of a file, in bytes."""
    part = name.rsplit(".", 1)[-1]
    if part == "ids":
        return header["shard_id_bytes"][int(name[6:9])]
    return {"sa": 4, "rsa": 4, "docs": 4, "rids": 2, "top": header["top_bytes"],
            "rtop": header["top_bytes"], "lookup": 12, "offsets": 8, "u32": 4}.get(part, 1)  # fmt: skip


def damage(data: bytearray, size: int, rng: random.Random) -> str:
    """One random damage of a file of entries of `size` bytes; what was done."""
    n = len(data) // size
    how = rng.choice(["flip", "swap", "reverse", "fill", "shift", "far", "sorted-swap", "nudge"])
    if n < 2 and how != "flip":
        how = "flip"
    if how == "flip":  # a few bytes of entries changed
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= rng.choice([0x01, 0x10, 0x80, 0xFF, 0x7F])
    elif how == "swap":  # two entries exchanged
        i, j = rng.randrange(n), rng.randrange(n)
        a, b = bytes(data[i * size : (i + 1) * size]), bytes(data[j * size : (j + 1) * size])
        data[i * size : (i + 1) * size], data[j * size : (j + 1) * size] = b, a
    elif how == "sorted-swap":  # neighbours exchanged: a little out of order
        i = rng.randrange(n - 1)
        a, b = bytes(data[i * size : (i + 1) * size]), bytes(data[(i + 1) * size : (i + 2) * size])
        data[i * size : (i + 2) * size] = b + a
    elif how == "reverse":  # a run of entries (or all of them) in reverse order
        i = rng.randrange(n)
        j = rng.choice([n, min(n, i + rng.randint(2, 64))])
        rows = [bytes(data[k * size : (k + 1) * size]) for k in range(i, j)]
        data[i * size : j * size] = b"".join(reversed(rows))
    elif how == "fill":  # a region of 0xFF or zeros
        i = rng.randrange(len(data))
        j = min(len(data), i + rng.choice([8, 64, 4096]))
        data[i:j] = bytes([rng.choice([0, 0xFF])]) * (j - i)
    elif how == "shift":  # a region moved by some bytes (the rest of the file kept)
        i = rng.randrange(len(data))
        k = rng.randint(1, 7)
        data[i:] = data[i + k :] + bytes(data[i : i + k])
    elif how == "nudge" and size == 4:  # an entry moved between its neighbours (in order)
        values = [int.from_bytes(data[k * 4 : (k + 1) * 4], "little") for k in range(n)]
        i = rng.randrange(n)
        low = values[i - 1] + 1 if i else 0
        high = values[i + 1] - 1 if i + 1 < n else values[i] + rng.choice([1, 0x10000, 0x20000])
        value = rng.randint(min(low, high), max(low, high)) % (1 << 32)
        data[i * 4 : (i + 1) * 4] = value.to_bytes(4, "little")
    else:  # entries set far past their file
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(n)
            value = rng.choice([0x10000, 0x20000, 0xFFFFFF, 1 << 31]) % (1 << (8 * size))
            data[i * size : (i + 1) * size] = value.to_bytes(size, "little")
    return how


def damaged_copies(pristine: Path, out: Path, count: int, seed: int) -> list[tuple[Path, str]]:
    rng = random.Random(seed)
    gen0 = pristine / store.current_name(pristine)
    header = json.loads((gen0 / store.HEADER_NAME).read_text())
    names = [n for n, size in sorted(header["file_sizes"].items()) if size]
    names = [n for n in names if n not in (store.DOCS_NAME, store.TEXT_NAME, files.SHARES_NAME)]
    only = os.environ.get("RECITATION_DAMAGE_FILES")  # (a part's files alone: "docs")
    names = [n for n in names if not only or n.endswith("." + only)] or names
    copies = []
    for c in range(count):
        name = rng.choice(names)
        dest = out / f"copy-{c}"
        gen = dest / gen0.name
        gen.mkdir(parents=True)
        for f in gen0.iterdir():
            os.link(f, gen / f.name)  # (the files left as they are are shared)
        (dest / store.CURRENT_NAME).write_bytes((pristine / store.CURRENT_NAME).read_bytes())
        data = bytearray((gen0 / name).read_bytes())
        how = damage(data, _entry(name, header), rng)
        (gen / name).unlink()
        (gen / name).write_bytes(bytes(data))
        (gen / store.HEADER_NAME).unlink()
        (gen / store.HEADER_NAME).write_bytes((gen0 / store.HEADER_NAME).read_bytes())
        store.finalize_generation(gen, store.Header(**header))  # it vouches for the damage
        copies.append((dest, f"{name} {how}"))
    return copies


def outcomes(search: str, queries: Path, copies: list[Path]) -> tuple[dict, list[str]]:
    """Each copy's outcome on one search; the copies a process ended on by a signal."""
    done: dict[str, str] = {}
    signals = []
    todo = [str(c) for c in copies]
    while todo:
        r = subprocess.run(
            [sys.executable, "-c", LOOKUPS, search, str(queries), *todo],
            capture_output=True, text=True, timeout=1800,
        )  # fmt: skip
        current = None
        for line in r.stdout.splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "index":
                current = rest
            elif kind == "outcome" and current is not None:
                done[current] = json.loads(rest)
                current = None
        if r.returncode == 0:
            break
        assert current is not None, r.stderr[-3000:]  # (a failure before any copy)
        signals.append(f"{current}: exit {r.returncode}")
        done[current] = f"exit {r.returncode}"
        todo = todo[todo.index(current) + 1 :]
    return done, signals


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, Path]:
    """40 files of Python's standard library in several shards, with their top tables,
    and queries of them."""
    root = tmp_path_factory.mktemp("fuzz")
    src = root / "src"
    src.mkdir()
    paths = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    paths = [p for p in paths if 3_000 < p.stat().st_size < 40_000][:40]
    for p in paths:
        (src / p.name).write_bytes(p.read_bytes())
    idx = root / "idx"
    build_index([str(src)], idx, BuildOptions(jobs=1, progress=False, shard_words=40_000))
    rng = random.Random(1)
    queries = []
    for p in rng.sample(paths, 6):
        text = p.read_text()
        cut = rng.randrange(len(text) // 2)
        queries.append({"text": text[cut : cut + 3000], "context": text[max(0, cut - 500) : cut],
                        "min_tokens": 20, "language": "python"})  # fmt: skip
    renamed = paths[0].read_text()[:3000].replace("self", "this").replace("name", "label")
    queries.append({"text": renamed, "context": "", "min_tokens": 20, "language": "python"})
    (root / "queries.json").write_text(json.dumps(queries))
    header = json.loads((idx / store.current_name(idx) / store.HEADER_NAME).read_text())
    assert header["shards"] >= 3 and header["top_step"]
    return idx, root / "queries.json"


@pytest.mark.skipif(not kernel.available(), reason="no kernel library for this machine")
def test_damaged_copies_answer_alike_on_both_searches_or_say_damaged(pristine, tmp_path):
    idx, queries = pristine
    copies = damaged_copies(idx, tmp_path, COPIES, SEED)
    paths = [c for c, _ in copies]
    native, native_signals = outcomes("native", queries, paths)
    python, python_signals = outcomes("python", queries, paths)
    good, _ = outcomes("python", queries, [idx])
    pristine_answer = good[str(idx)]
    differ, unexpected, wrong, said = [], [], 0, {"damaged": 0, "answered": 0}
    for path, what in copies:
        a, b = native.get(str(path)), python.get(str(path))
        for o in (a, b):
            if isinstance(o, str) and o != "damaged":
                unexpected.append(f"{what}: {o}")
        if a != b:
            differ.append(f"{what}: native {str(a)[:60]} python {str(b)[:60]}")
        said["damaged" if a == "damaged" else "answered"] += 1
        wrong += a not in ("damaged", pristine_answer)
    print(f"\n{len(copies)} damaged copies: {said['damaged']} damaged, {said['answered']} "
          f"answered ({wrong} unlike the undamaged index); signals: "
          f"{len(native_signals) + len(python_signals)}; different answers: {len(differ)}; "
          f"unexpected errors: {len(unexpected)}")  # fmt: skip
    assert not native_signals and not python_signals, native_signals + python_signals
    assert not unexpected, unexpected[:10]
    assert not differ, "\n".join(differ[:20])


def _reversed_rows(size: int):
    def edit(data: bytearray) -> None:
        rows = [bytes(data[k : k + size]) for k in range(0, len(data), size)]
        data[:] = b"".join(reversed(rows))

    return edit


def _far_entry(data: bytearray) -> None:
    data[len(data) // 8 * 4 : len(data) // 8 * 4 + 4] = (0x7FFFFFF0).to_bytes(4, "little")


@pytest.mark.skipif(not kernel.available(), reason="no kernel library for this machine")
@pytest.mark.parametrize(
    "case", ["top reversed", "rtop reversed", "sa entry far", "lookup reversed"]
)
def test_damage_the_digests_vouch_for_is_said_alike_by_both_searches(pristine, tmp_path, case):
    """The cases the two searches once answered apart (a reversed top table: 12 files where
    there are 13 on one, the right answer on the other): both say "damaged"."""
    idx, queries = pristine
    gen0 = idx / store.current_name(idx)
    header = json.loads((gen0 / store.HEADER_NAME).read_text())
    name, edit = {
        "top reversed": (files.shard_file(1, "top"), _reversed_rows(header["top_bytes"])),
        "rtop reversed": (files.shard_file(1, "rtop"), _reversed_rows(header["top_bytes"])),
        "sa entry far": (files.shard_file(1, "sa"), _far_entry),
        "lookup reversed": (files.LOOKUP_NAME, _reversed_rows(12)),
    }[case]
    dest = tmp_path / "copy"
    shutil.copytree(idx, dest)
    gen = dest / gen0.name
    data = bytearray((gen / name).read_bytes())
    edit(data)
    (gen / name).write_bytes(bytes(data))
    store.finalize_generation(gen, store.Header(**header))
    native, _ = outcomes("native", queries, [dest])
    python, _ = outcomes("python", queries, [dest])
    assert native[str(dest)] == python[str(dest)], (native, python)
    if case != "sa entry far":  # (an entry no query probes: the same answers, unhurt)
        assert native[str(dest)] == "damaged"
