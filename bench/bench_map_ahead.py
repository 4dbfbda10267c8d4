"""A new process's first lookups, with and without the index mapped ahead.

A lookup touches a few hundred random pages of the index's files; a process takes a page
fault the first time it touches each (a minor fault when the page is in the page cache), so
a language server's first lookups are slower than the same lookups later. The server maps
its index ahead when it opens it (`Index.map_ahead`, store/map_ahead.py: the page tables of
the pages in memory filled at once, on a thread of its own). This measures what that is
worth: fresh processes, the two ways taking turns, the index's files read through before
each (resident, whatever ran before), each lookup once after 20 warm-up lookups (imports),
300-word suggestions with 200 words of context quoted from indexed files and novel (their
lines shuffled), language given, as `bench_latency.py` makes them. Reported per way:
p50/p90/p99/max in ms, minor page faults per lookup, and the mapping's time and page tables.

    .venv/bin/python bench/bench_map_ahead.py --index DIR --texts SPEC --queries 400 \
        --rounds 2 --out bench/results/map-ahead.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import pct  # noqa: E402
from bench_latency import read_through, workload  # noqa: E402
from commit import commit  # noqa: E402

from index_tools import open_index  # noqa: E402

WAYS = ("mapped ahead", "not mapped ahead")
WARMUP = 20


def vm_pte_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmPTE:"):
            return int(line.split()[1])
    return 0


def child(index: str, work_file: str, ahead: bool) -> dict:
    """One fresh process: open, map ahead or not, then each lookup once."""
    work = json.loads(Path(work_file).read_text(encoding="utf-8"))
    idx = open_index(index)
    mapped = None
    if ahead:
        done = idx.map_ahead()
        mapped = {
            "bytes": done.bytes,
            "seconds": done.seconds,
            "why_not": done.why_not,
            "vm_pte_kib": vm_pte_kib(),
        }
    for ctx, sug in work["quoted"][:WARMUP]:
        idx.match(sug, ctx, language="python")
    out: dict = {"mapped": mapped}
    for kind in ("quoted", "novel"):
        rows = []
        for ctx, sug in work[kind][WARMUP:]:
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t = time.perf_counter()
            idx.match(sug, ctx, language="python")
            ms = (time.perf_counter() - t) * 1000
            rows.append((ms, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0))
        out[kind] = rows
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="a built index")
    ap.add_argument("--texts", help="source spec the queries are cut from (required)")
    ap.add_argument("--queries", type=int, default=400, help="lookups per workload")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=2, help="processes of each way")
    ap.add_argument("--out", help="write markdown here (and JSON beside it)")
    ap.add_argument("--child", choices=("ahead", "plain"), help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        json.dump(child(args.index, args.work, args.child == "ahead"), sys.stdout)
        return 0
    if not args.texts:
        ap.error("give --texts: the source the queries are cut from")

    idx = open_index(args.index)
    summary = idx.summary()
    work = workload(args.texts, args.queries + WARMUP, args.seed)
    tmp = tempfile.TemporaryDirectory(prefix="recitation-map-ahead-")
    work_file = Path(tmp.name) / "work.json"
    work_file.write_text(json.dumps(work), encoding="utf-8")
    load_before = os.getloadavg()[0]
    runs: dict[str, list[dict]] = {w: [] for w in WAYS}
    for r in range(args.rounds):
        for way in WAYS if r % 2 == 0 else WAYS[::-1]:
            seconds = read_through(idx)
            print(f"round {r + 1}, {way}: index read through in {seconds:.0f} s", flush=True)
            cmd = [sys.executable, __file__, "--child", "ahead" if way == WAYS[0] else "plain"]
            cmd += ["--index", args.index, "--work", str(work_file)]
            env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            if done.returncode:
                sys.stderr.write(done.stderr)
                return 1
            runs[way].append(json.loads(done.stdout))
    load_after = os.getloadavg()[0]

    table = ["| way | lookups | p50 | p90 | p99 | max | faults p50 | faults p99 |"]
    table.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    result: dict = {"index": summary.get("name"), "words": summary.get("words"), "ways": {}}
    for way in WAYS:
        for kind in ("quoted", "novel"):
            rows = [row for run in runs[way] for row in run[kind]]
            ms, faults = [x[0] for x in rows], [x[1] for x in rows]
            stats = {
                "n": len(rows),
                "p50": pct(ms, 50),
                "p90": pct(ms, 90),
                "p99": pct(ms, 99),
                "max": max(ms),
                "faults_p50": pct(faults, 50),
                "faults_p99": pct(faults, 99),
            }
            result["ways"].setdefault(way, {})[kind] = stats
            table.append(
                f"| {way} | {kind} ({stats['n']}) | {stats['p50']:.2f} | {stats['p90']:.2f} | "
                f"{stats['p99']:.2f} | {stats['max']:.2f} | {stats['faults_p50']:.0f} | "
                f"{stats['faults_p99']:.0f} |"
            )
    mapped = [run["mapped"] for run in runs[WAYS[0]]]
    result["mapped"] = mapped
    said = "; ".join(
        m["why_not"]
        or f"{m['bytes'] / 2**30:.2f} GiB in {m['seconds']:.2f} s, page tables "
        f"{m['vm_pte_kib'] / 1024:.0f} MiB"
        for m in mapped
    )
    lines = [
        "# First lookups of a new process, with and without the index mapped ahead",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit "
        f"`{commit()}` on {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}), a machine "
        f"shared with other work (load average {load_before:.1f} before, {load_after:.1f} "
        "after).",
        "",
        "Reproduce:",
        "",
        "```",
        f"python bench/bench_map_ahead.py --index {args.index} --texts {args.texts} "
        f"--queries {args.queries} --seed {args.seed} --rounds {args.rounds}"
        + (f" --out {args.out}" if args.out else ""),
        "```",
        "",
        f"Index: {summary.get('name')}: {summary.get('files'):,} files, "
        f"{summary.get('words'):,} words, {summary.get('bytes'):,} bytes on disk "
        f"({summary.get('shards')} shard(s); search: {summary.get('search')}).",
        "",
        f"{args.rounds} fresh processes of each way, taking turns, the index's files read "
        f"through before each; in each, {WARMUP} warm-up lookups, then each lookup once "
        "(language given). ms; faults: minor page faults of the process during a lookup.",
        "",
        *table,
        "",
        f"Mapping ahead, in each process: {said}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        Path(args.out).with_suffix(".json").write_text(
            json.dumps(result, indent=1) + "\n", encoding="utf-8"
        )
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
