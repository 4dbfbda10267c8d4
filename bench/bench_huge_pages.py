"""Lookups on an index held in memory in 4 KiB pages, then in 2 MiB pages, taking turns.

    python bench/bench_huge_pages.py --index IDX --texts pypi:LIST --queries 600 \\
        --evict 64 --rounds 4 --passes 2 --out bench/results/huge-pages-1.5b.md

On Linux the page cache can hold a file in 2 MiB folios (transparent huge pages for
files), which every process mapping it then maps 2 MiB at a time: a lookup's random reads
of the suffix arrays and ids would walk the page tables far less. Whether an index should
be read into memory that way is measured here on one index, the page cache's state being
the only difference: before each round the index's files are dropped from memory and read
again, either one 4 KiB page at a time (as a reader faulting pages, or a writer, leaves
them) or through a map advised MADV_HUGEPAGE (a fault reads a 2 MiB folio), the two ways
taking turns (the machine's speed drifts). Then the system is left to settle
(memory compaction moves pages after a load: until no page has moved for 10 s, at most
`--settle` seconds; a page moved under a map costs the next read a fault), then `--idle`
seconds more (as an editor's index sits between bursts of work). In each round the index
is opened
afresh (mapped ahead, as the language server maps it), 20 lookups warm it uncounted, then
each lookup runs once a pass (`--passes`: the first finds what the idle time took back,
the next what stays), after `--evict` MB written (the caches emptied by other work) or
`--pause` ms idle. The lookups are the language-server benchmark's suggestions
(bench_server.py's, `--seed`), asked as the server asks them (parts left for later); the
answers are compared with the first round's on every lookup. Also timed in each state:
2,000,000 random 4-byte reads of the largest file. Linux only; nothing else may map the
index meanwhile (a mapped page is not dropped).
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_engines import answer, percentiles, server_suggestions  # noqa: E402
from bench_latency import major_faults, read_bytes  # noqa: E402
from commit import run_header, shown_argv  # noqa: E402

from index_tools import open_index  # noqa: E402
from index_tools.store import generations as store  # noqa: E402

WARM = 20
STATES = ("4 KiB pages", "2 MiB pages")


def in_small_pages(paths: list[Path]) -> None:
    """Each file dropped from memory, then read without readahead: a 4 KiB folio a page."""
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)


def in_huge_pages(paths: list[Path]) -> None:
    """Each file dropped from memory, then read through a map advised MADV_HUGEPAGE: one
    touch a 2 MiB stretch, whose fault reads a 2 MiB folio."""
    for p in paths:
        size = p.stat().st_size
        if size < 2 << 20:
            continue
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
                m.madvise(mmap.MADV_HUGEPAGE)
                view = memoryview(m)
                for at in range(0, size, 2 << 20):
                    view[at]
                view.release()
        finally:
            os.close(fd)


def file_huge_kib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("FileHugePages:"):
            return int(line.split()[1])
    return 0


def pages_moved() -> int:
    """Pages migrated so far (memory compaction among others), from /proc/vmstat."""
    for line in Path("/proc/vmstat").read_text().splitlines():
        if line.startswith("pgmigrate_success "):
            return int(line.split()[1])
    return 0


def settle(most: float, quiet: float = 10.0) -> tuple[float, int]:
    """Wait until no page has moved for `quiet` seconds, at most `most`: (seconds, pages)."""
    began = last_change = time.perf_counter()
    first = last = pages_moved()
    while time.perf_counter() - began < most:
        time.sleep(1.0)
        now = pages_moved()
        if now != last:
            last, last_change = now, time.perf_counter()
        elif time.perf_counter() - last_change >= quiet:
            break
    return time.perf_counter() - began, last - first


def random_reads(path: Path, count: int = 2_000_000) -> float:
    """ms of `count` random 4-byte reads of the file (mapped afresh)."""
    data = np.memmap(path, dtype=np.uint32, mode="r")
    at = np.random.default_rng(1).integers(0, len(data), count)
    int(data[at[:1000]].sum())
    t0 = time.perf_counter()
    int(data[at].sum())
    ms = (time.perf_counter() - t0) * 1000
    del data
    return ms


def lookups(index: Path, pairs, evict: int, pause: float, passes: int) -> list[tuple]:
    """Each pass's (times, answers, page faults read from disk), the index opened once."""
    idx = open_index(index)
    try:
        getattr(idx, "map_ahead", lambda: None)()
        for ctx, sug in pairs[:WARM]:
            answer(idx.match(sug, ctx, language="python", defer_parts=True))
        other_work = bytearray(evict << 20)
        lines = bytes(len(range(0, len(other_work), 64)))
        out = []
        for _ in range(passes):
            times, said = [], []
            faults, read = major_faults(), read_bytes()
            for ctx, sug in pairs:
                if pause:
                    time.sleep(pause)
                if evict:
                    other_work[::64] = lines
                t0 = time.perf_counter()
                found = idx.match(sug, ctx, language="python", defer_parts=True)
                times.append((time.perf_counter() - t0) * 1000)
                said.append(answer(found))
            faults, read = major_faults() - faults, read_bytes() - read
            out.append((times, said, f"{faults:,} ({read / (1 << 20):,.0f} MiB)"))
        return out
    finally:
        idx.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="the index folder")
    ap.add_argument("--texts", required=True, help="where the suggestions come from")
    ap.add_argument("--queries", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=4, help="rounds, the two ways taking turns")
    ap.add_argument("--passes", type=int, default=2, help="passes over the lookups a round")
    ap.add_argument("--evict", type=int, default=0, metavar="MB")
    ap.add_argument("--pause", type=float, default=0.0, metavar="MS")
    ap.add_argument(
        "--settle", type=float, default=120.0, metavar="S",
        help="after each load, wait until no page has moved for 10 s, at most this long",
    )  # fmt: skip
    ap.add_argument("--idle", type=float, default=60.0, metavar="S", help="then idle this long")
    ap.add_argument("--out", help="write markdown here")
    args = ap.parse_args()
    if not sys.platform.startswith("linux") or not hasattr(mmap, "MADV_HUGEPAGE"):
        sys.exit("bench_huge_pages: 2 MiB pages of files are a Linux feature")
    index = Path(args.index).resolve()
    gen = index / store.current_generation(index)
    files = [p for p in sorted(gen.iterdir()) if p.is_file()]
    largest = max(files, key=lambda p: p.stat().st_size)
    load = os.getloadavg()[0]
    pairs = server_suggestions(args.texts, args.queries, args.seed)
    rows, first, differing, compared = [], None, 0, 0
    for r in range(args.rounds):
        state = STATES[r % 2]
        t0 = time.perf_counter()
        (in_huge_pages if r % 2 else in_small_pages)(files)
        loaded_s = time.perf_counter() - t0
        settled_s, moved = settle(args.settle)
        time.sleep(args.idle)
        huge = file_huge_kib()
        reads = random_reads(largest)
        for k, (times, said, faults) in enumerate(
            lookups(index, pairs, args.evict, args.pause / 1000, args.passes), 1
        ):
            if first is None:
                first = said
            else:
                differing += sum(a != b for a, b in zip(first, said))
                compared += len(said)
            rows.append((state, k, loaded_s, settled_s, moved, huge, reads, faults, times))
            print(f"{state}, pass {k}: {percentiles(times)} ms; random reads {reads:.0f} ms; "
                  f"page faults read from disk {faults}", flush=True)  # fmt: skip
    command = "python bench/bench_huge_pages.py " + shown_argv(
        sys.argv[1:], {"--index": "IDX", "--out": "OUT"}
    )
    how = (f"each after {args.evict} MB written (caches emptied)" if args.evict else "") + (
        f"each after {args.pause:g} ms idle" if args.pause else ""
    )
    out = [
        *run_header("An index in 4 KiB pages, then in 2 MiB pages, taking turns", command, load),
        f"{len(pairs)} lookups a pass (the language-server benchmark's suggestions, seed "
        f"{args.seed}, parts left for later), {how or 'back to back'}; the index's files "
        f"read into memory before each round one way or the other, then {args.idle:g} s "
        f"idle; answers differing from the first pass's: {differing} of {compared}. ms: p50 "
        "/ p90 / p99 / max.",
        "",
        "| round | pages | pass | loaded in | then settled (pages moved) | file pages in "
        f"2 MiB folios | 2M random reads of {largest.name} | the pass's page faults read "
        "from disk | lookups |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for k, row in enumerate(rows):
        state, p, loaded, settled, moved, huge, reads, faults, times = row
        out.append(
            f"| {k // args.passes + 1} | {state} | {p} | {loaded:.1f} s | {settled:.0f} s "
            f"({moved:,}) | {huge / (1 << 20):.2f} GiB | {reads:.0f} ms | {faults} "
            f"| {percentiles(times)} |"
        )
    for state in STATES:
        for p in range(1, args.passes + 1):
            mine = [row for row in rows if row[0] == state and row[1] == p]
            if mine:
                q = [percentiles(row[-1]).split(" / ") for row in mine]
                med = " / ".join(
                    f"{statistics.median(float(x[i]) for x in q):.2f}" for i in range(4)
                )
                out.append(f"| median | {state} | {p} | | | | | | {med} |")
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
