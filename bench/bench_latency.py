"""Lookup latency, in process, and where the time goes; cold lookups; bytes per word.

For each index given (any path: the same command measures a larger index later): 300-word
suggestions with 200 words of context, cut from files the index holds (quoted) and from
the same files with their lines shuffled (novel: real code, runs mostly unindexed), looked
up with the language given (as the language server does, which adds the rename-insensitive
view) and without. Reported: p50/p90/p99/max in ms, how many lookups found a match, whether
every count was exact, and the time of each phase at the slowest 1% (exact runs from the
suffix arrays, renamed copies, building the matches: sources, lines). With `--cold N`: N
lookups each after the index's pages are dropped from the page cache (posix_fadvise
DONTNEED on every file; Linux). Also: where the index's bytes go, and the private memory of
the process once the lookups ran.

    .venv/bin/python bench/bench_latency.py --index stdlib=DIR --texts python:stdlib \
        --index pypi=DIR2 --texts .cache/bench/pypi --queries 1000 --cold 50 \
        --out bench/results/latency.md

Each `--texts` (a source spec as `recitation-index build` takes) gives the files the
queries of the `--index` before it are cut from (python files only).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import random
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import pct, windows  # noqa: E402
from commit import commit  # noqa: E402

from index_tools import open_index  # noqa: E402
from index_tools.build.sources import open_source  # noqa: E402
from index_tools.match import kernel, matcher  # noqa: E402

try:
    import resource
except ImportError:  # Windows: no page fault counts
    resource = None

ROOT = Path(__file__).resolve().parent.parent
PHASES = {
    "exact": "_exact_spans",  # anchors, suffix-array intervals, runs, spans from counts
    "renamed": "_renamed_spans",  # the rename-insensitive view, all of it
    "matches": "_matches",  # regions, sources, lines, kinds
}


class Phases:
    """Wall time spent in a few matcher functions during one lookup."""

    def __init__(self):
        self.current: dict[str, float] = {}
        self._originals = {}

    @contextmanager
    def installed(self):
        for phase, name in PHASES.items():
            original = getattr(matcher, name)
            self._originals[name] = original
            setattr(matcher, name, self._timed(phase, original))
        try:
            yield self
        finally:
            for name, original in self._originals.items():
                setattr(matcher, name, original)

    def _timed(self, phase, fn):
        def run(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.current[phase] = self.current.get(phase, 0.0) + time.perf_counter() - t

        return run


def workload(
    spec: str, count: int, seed: int, min_chars: int = 0
) -> dict[str, list[tuple[str, str]]]:
    """Windows cut from the source's Python files (of at least `min_chars` characters)."""
    texts = [
        d.text
        for d in open_source(spec).documents()
        if d.language == "python" and len(d.text) >= min_chars
    ]
    rng = random.Random(seed)
    quoted = windows(texts, count, rng)
    novel = []
    for ctx, sug in windows(texts, count, rng):
        lines = sug.split("\n")
        rng.shuffle(lines)
        novel.append((ctx, "\n".join(lines)))
    return {"quoted": quoted, "novel": novel}


def all_exact(matches) -> bool:
    return all(m.file_count_exact and all(p.file_count_exact for p in m.parts) for m in matches)


def outputs(found) -> list[dict]:
    return [m.to_dict() for m in found]


def measure(
    idx,
    pairs,
    language: str | None,
    paths: list[str],
    repeat: int = 1,
    pace_ms: float = 0.0,
    digests: list[str] | None = None,
) -> dict:
    """Each lookup on every search path in turn (the order alternating from one lookup to
    the next, so that both see the same machine), their outputs compared. `repeat`: each
    lookup run that many times in a row, its fastest kept (its pages and documents then in
    the process: what it costs a server that has looked up the same code before).
    `pace_ms`: an idle pause before each lookup, as an editor's lookups come between the
    user's edits (the core's caches no longer hold what the lookup before it read).
    `digests`: each lookup's answer (the matches' JSON) appended, hashed, to compare runs."""
    phases = Phases()
    rows: dict[str, list] = {p: [] for p in paths}
    exact = dict.fromkeys(paths, True)
    differ = 0
    with phases.installed():
        for path in paths:
            with kernel.using(path):
                for ctx, sug in pairs[:20]:  # warm-up: imports, first page faults
                    idx.match(sug, ctx, language=language)
        for i, (ctx, sug) in enumerate(pairs):
            answers = []
            for path in paths if i % 2 == 0 else paths[::-1]:
                phases.current = {}
                with kernel.using(path):
                    if pace_ms:
                        time.sleep(pace_ms / 1000)
                    faults = major_faults()
                    t = time.perf_counter()
                    found = idx.match(sug, ctx, language=language)
                    ms = (time.perf_counter() - t) * 1000
                    faults = major_faults() - faults
                    for _ in range(repeat - 1):
                        t = time.perf_counter()
                        idx.match(sug, ctx, language=language)
                        ms = min(ms, (time.perf_counter() - t) * 1000)
                exact[path] = exact[path] and all_exact(found)
                rows[path].append(
                    (ms, bool(found), {k: v * 1000 for k, v in phases.current.items()}, faults)
                )
                answers.append(outputs(found))
            differ += any(a != answers[0] for a in answers[1:])
            if digests is not None:
                text = json.dumps(answers[0], sort_keys=True).encode()
                digests.append(hashlib.sha256(text).hexdigest()[:20])
    return {path: summarize(rows[path], exact[path], differ) for path in paths}


def summarize(rows: list, exact: bool, differ: int) -> dict:
    times = [r[0] for r in rows]
    slow = sorted(rows, key=lambda r: -r[0])[: max(1, len(rows) // 100)]
    return {
        "n": len(rows),
        "found": sum(r[1] for r in rows),
        "all_exact": exact,
        "differ": differ,  # lookups whose outputs differ between the search paths
        "p50": pct(times, 50),
        "p90": pct(times, 90),
        "p99": pct(times, 99),
        "max": max(times),
        "faults_p50": pct([r[3] for r in rows], 50),
        "faults_p99": pct([r[3] for r in rows], 99),
        "slowest_1pct_ms": {
            "total": sum(r[0] for r in slow) / len(slow),
            **{p: sum(r[2].get(p, 0.0) for r in slow) / len(slow) for p in PHASES},
        },
    }


def drop_cache(idx) -> bool:
    """Drop the index's files from the page cache (Linux); False where that is not possible."""
    if not hasattr(os, "posix_fadvise"):
        return False
    for name in idx.header.file_sizes:
        fd = os.open(idx.gen / name, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return True


def read_through(idx) -> float:
    """Read every file of the index once (the page cache then holds what fits): warm
    lookups measured on a resident index, whatever ran before. Returns the seconds."""
    t0 = time.perf_counter()
    for name in idx.header.file_sizes:
        with open(idx.gen / name, "rb", buffering=0) as f:
            while f.read(1 << 24):
                pass
    return time.perf_counter() - t0


def major_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_majflt if resource else 0


def read_bytes() -> int:
    """Bytes this process had read from storage (Linux; 0 elsewhere): page faults and the
    readahead around them."""
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cold(path: str, pairs, language: str | None, paths: list[str]) -> dict:
    """Lookups each on a freshly opened index whose pages were dropped from the page cache
    after the open (whose checks may read the files) and before the lookup, on each search
    path in turn: the open and the lookup timed apart, the lookup's major page faults
    (pages read from disk) counted."""
    out = {}
    rows: dict[str, list] = {p: [] for p in paths}
    for i, (ctx, sug) in enumerate(pairs):
        for p in paths if i % 2 == 0 else paths[::-1]:
            with kernel.using(p):
                t = time.perf_counter()
                idx = open_index(path)
                opened = time.perf_counter()
                drop_cache(idx)
                faults, bytes_before = major_faults(), read_bytes()
                opened_and_dropped = time.perf_counter()
                idx.match(sug, ctx, language=language)
                done = time.perf_counter()
                faults = major_faults() - faults
                disk = read_bytes() - bytes_before
            idx.close()
            rows[p].append(((opened - t) * 1000, (done - opened_and_dropped) * 1000, faults, disk))
    for p, r in rows.items():
        times, faults = [x[1] for x in r], [x[2] for x in r]
        out[p] = {
            "n": len(times),
            "open_p50": pct([x[0] for x in r], 50),
            "p50": pct(times, 50),
            "p90": pct(times, 90),
            "p99": pct(times, 99),
            "max": max(times),
            "faults_p50": pct(faults, 50),
            "faults_max": max(faults),
            "read_mb_p50": pct([x[3] / 1e6 for x in r], 50),
        }
    return out


def where_bytes(idx) -> dict[str, int]:
    """The index's bytes by what they hold."""
    kinds = {
        "word ids": ".ids",
        "suffix arrays": ".sa",
        "renamed word ids": ".rids",
        "renamed suffix arrays": ".rsa",
        "document starts": ".docs",
    }
    out = dict.fromkeys(kinds, 0) | {"texts (zstd)": 0, "documents (LMDB)": 0, "vocabulary": 0}
    for name, size in idx.header.file_sizes.items():
        kind = next((k for k, ext in kinds.items() if name.endswith(ext)), None)
        if kind is None:
            kind = (
                "texts (zstd)"
                if name.endswith(".zst")
                else "documents (LMDB)"
                if name.endswith(".mdb") or name.endswith(".u32")
                else "vocabulary"
            )
        out[kind] += size
    return out


MEMORY_CGROUP = Path("/sys/fs/cgroup/memory")  # cgroup v1's memory controller (Linux, root)


@contextmanager
def memory_limited(limit: int):
    """This process in a memory cgroup of `limit` bytes (its page cache charged there), or
    an OSError where there is none to make."""
    group = MEMORY_CGROUP / f"recitation-bench-{os.getpid()}"
    group.mkdir()
    try:
        (group / "memory.limit_in_bytes").write_text(str(limit))
        (group / "cgroup.procs").write_text(str(os.getpid()))
        try:
            yield
        finally:
            (MEMORY_CGROUP / "cgroup.procs").write_text(str(os.getpid()))
    finally:
        group.rmdir()


def rss_anon_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    return 0


def limited(path: str, pairs, language: str | None, paths: list[str], share: float) -> dict:
    """Warm lookups with the page cache limited to `share` of the index: this process moved
    into a memory cgroup holding its own heap (and 256 MB to spare) and that share of the
    index's bytes, the index's pages dropped first, then every lookup on each path."""
    idx = open_index(path)
    size = sum(idx.header.file_sizes.values())
    limit = rss_anon_bytes() + (256 << 20) + int(share * size)
    try:
        with memory_limited(limit):
            drop_cache(idx)
            out = measure(idx, pairs, language, paths)
    except OSError as e:
        idx.close()
        return {"skipped": f"no memory cgroup here ({e.strerror or e})"}
    idx.close()
    return {"share": share, "limit_mb": limit / 1e6, "index_mb": size / 1e6, "runs": out}


def private_rss_mb() -> float | None:
    try:
        text = Path("/proc/self/smaps_rollup").read_text()
    except OSError:
        return None
    kb = sum(int(line.split()[1]) for line in text.splitlines() if line.startswith("Private_"))
    return kb / 1024


def markdown(results: list[dict], argv: list[str]) -> str:
    out = [
        "# Lookup latency (in process)",
        "",
        f"Commit `{commit()}`, {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), load average before {results[0]['load']:.1f}.",
        "",
        "Reproduce:",
        "",
        "```",
        "python bench/bench_latency.py " + " ".join(argv),
        "```",
        "",
        "300-word suggestions with 200 words of context; quoted: cut from an indexed file"
        + (
            f" of at least {results[0]['min_chars']:,} characters"
            if results[0].get("min_chars")
            else ""
        )
        + "; "
        "novel: the same kind of window with its lines shuffled. `language` given = what the "
        "language server does (adds the rename-insensitive lookup). Each workload runs on "
        "the index opened anew (no document loaded, no word's id known, as in a server that "
        "just opened it: the same lookups with and without the language start alike), with "
        "what was loaded before them frozen out of the garbage collector's passes "
        "(`gc.freeze()`), as in the language server and the service."
        + (
            f" An idle pause of {results[0]['pace_ms']:g} ms before each lookup, as an "
            "editor's lookups come between edits."
            if results[0].get("pace_ms")
            else ""
        ),
        "",
        "Every lookup ran on each search path in turn (compiled: `native`, the reference: "
        "`python`), the order alternating; `same` = lookups whose outputs (the matches' JSON) "
        "were identical on both paths.",
        "",
    ]
    mapped = [(r["name"], m) for r in results for m in r.get("mapped_ahead", [])]
    if mapped:
        out += [
            "Each index was mapped ahead before each workload, as the language server and the "
            "service map theirs when they open it (store/map_ahead.py): "
            + "; ".join(f"{name}: {m}" for name, m in mapped)
            + ".",
            "",
        ]
    out += [
        "| index | words | workload | language | search | n | found | all exact | same "
        "| p50 ms | p90 ms | p99 ms | max ms |",
        "| --- | ---: | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        for key, by_path in r["runs"].items():
            workload_name, lang = key.split("/")
            for path, m in by_path.items():
                out.append(
                    f"| {r['name']} | {r['words']:,} | {workload_name} | {lang} | {path} | "
                    f"{m['n']} | {m['found']} | {'yes' if m['all_exact'] else 'NO'} | "
                    f"{m['n'] - m['differ']} | {m['p50']:.2f} | {m['p90']:.2f} | "
                    f"{m['p99']:.2f} | {m['max']:.2f} |"
                )
    out += [
        "",
        "Where the time goes in the slowest 1% of lookups (mean ms per lookup):",
        "",
        "| index | workload | language | search | total | exact runs | renamed | matches |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        for key, by_path in r["runs"].items():
            workload_name, lang = key.split("/")
            for path, m in by_path.items():
                s = m["slowest_1pct_ms"]
                out.append(
                    f"| {r['name']} | {workload_name} | {lang} | {path} | {s['total']:.1f} | "
                    f"{s['exact']:.1f} | {s['renamed']:.1f} | {s['matches']:.1f} |"
                )
    if any(r.get("cold") for r in results):
        out += [
            "",
            "Cold: each lookup (quoted, language given) on a newly opened index whose files were "
            "then dropped from the page cache (`posix_fadvise` DONTNEED): what a lookup costs "
            "once memory pressure evicted the index; the open timed apart; "
            "faults: the lookup's major page faults; read MB: what it read from disk (faults and "
            "the readahead around them).",
            "",
            "| index | search | n | open p50 ms | lookup p50 ms | p90 ms | p99 ms | max ms "
            "| faults p50 | faults max | read MB p50 |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in results:
            for path, c in (r.get("cold") or {}).items():
                out.append(
                    f"| {r['name']} | {path} | {c['n']} | {c['open_p50']:.1f} | {c['p50']:.2f} | "
                    f"{c['p90']:.2f} | {c['p99']:.2f} | {c['max']:.2f} | {c['faults_p50']:.0f} | "
                    f"{c['faults_max']} | {c.get('read_mb_p50', 0):.1f} |"
                )
    if any(r.get("limited", {}).get("runs") for r in results):
        out += [
            "",
            "Page cache limited: the same lookups (quoted and novel, language given), this "
            "process in a memory cgroup holding its heap, 256 MB to spare and a share of the "
            "index's bytes, the index's pages dropped first; faults: major page faults per "
            "lookup.",
            "",
            "| index | index MB | limit MB | search | n | p50 ms | p90 ms | p99 ms | max ms "
            "| faults p50 | faults p99 | same |",
            "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in results:
            lim = r.get("limited") or {}
            for path, m in (lim.get("runs") or {}).items():
                out.append(
                    f"| {r['name']} | {lim['index_mb']:,.0f} | {lim['limit_mb']:,.0f} | {path} | "
                    f"{m['n']} | {m['p50']:.2f} | {m['p90']:.2f} | {m['p99']:.2f} | "
                    f"{m['max']:.2f} | {m['faults_p50']:.0f} | {m['faults_p99']:.0f} | "
                    f"{m['n'] - m['differ']} |"
                )
    out += [
        "",
        "Where the bytes go (bytes per word):",
        "",
        "| index | words | total | " + " | ".join(results[0]["bytes"]) + " |",
        "| --- | ---: | ---: | " + " | ".join("---:" for _ in results[0]["bytes"]) + " |",
    ]
    for r in results:
        b, w = r["bytes"], r["words"]
        out.append(
            f"| {r['name']} | {w:,} | {sum(b.values()) / w:.2f} | "
            + " | ".join(f"{v / w:.2f}" for v in b.values())
            + " |"
        )
    out += [
        "",
        "Private memory (RSS) of this process after the lookups, all indexes open in turn: "
        + (f"{results[-1]['private_rss_mb']:.0f} MB." if results[-1]["private_rss_mb"] else "-"),
    ]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--index", action="append", required=True, help="NAME=DIR of a built index")
    ap.add_argument("--texts", action="append", required=True, help="source spec per --index")
    ap.add_argument("--queries", type=int, default=1000, help="lookups per workload")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cold", type=int, default=0, help="cold lookups per index (Linux)")
    ap.add_argument("--out", help="write markdown here (and JSON beside it)")
    ap.add_argument(
        "--cache-share", type=float, default=0.0,
        help="also: warm lookups with the page cache limited to this share of the index "
        "(a memory cgroup; Linux, root)",
    )  # fmt: skip
    ap.add_argument(
        "--search", default="native,python",
        help="search paths measured side by side, comma-separated (native, python)",
    )  # fmt: skip
    ap.add_argument(
        "--repeat", type=int, default=1,
        help="run each lookup this many times in a row and keep the fastest (warm: its pages "
        "and documents in the process)",
    )  # fmt: skip
    ap.add_argument(
        "--min-chars", type=int, default=0, metavar="N",
        help="cut the lookups from files of at least N characters (long files: a document "
        "stored in frames past 64K)",
    )  # fmt: skip
    ap.add_argument(
        "--answers", metavar="FILE",
        help="write each lookup's answer (its matches' JSON, hashed) here, by index and "
        "workload, to compare the answers of two runs (bench_commits.py does)",
    )  # fmt: skip
    ap.add_argument(
        "--pace", type=float, default=0.0, metavar="MS",
        help="an idle pause of MS milliseconds before each lookup, as an editor's lookups come "
        "between edits (the caches of the core no longer warm from the lookup before)",
    )  # fmt: skip
    ap.add_argument(
        "--read-through", action="store_true",
        help="read each index's files before each workload's lookups (warm: resident pages), "
        "the other indexes given dropped from the page cache first (Linux)",
    )  # fmt: skip
    ap.add_argument(
        "--map-ahead", action="store_true",
        help="map each index ahead before each workload's lookups, as the language server and "
        "the service do when they open it (the page tables of its pages in memory filled: "
        "no page fault a page in the lookups; Linux)",
    )  # fmt: skip
    args = ap.parse_args()
    if len(args.texts) != len(args.index):
        ap.error("give one --texts per --index")
    paths = [p.strip() for p in args.search.split(",") if p.strip()]
    for p in paths:
        kernel.use(p)  # an error now when the native search did not load
    kernel.use("auto")
    results = []
    answers: dict[str, list[str]] = {}  # "<index> <workload>" -> each lookup's, hashed
    index_dirs = [named.partition("=")[2] for named in args.index]
    for named, spec in zip(args.index, args.texts):
        name, _, path = named.partition("=")
        if args.read_through:  # the other indexes' pages out first (the page cache keeps
            for other in index_dirs:  # pages in use over new ones): this one's then fit
                if other != path:
                    with open_index(other) as them:
                        drop_cache(them)
        idx = open_index(path)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        work = workload(spec, args.queries, args.seed, args.min_chars)
        runs = {}
        said: list[str] = []
        for workload_name, pairs in work.items():
            for language in ("python", None):
                key = f"{workload_name}/{language or 'none'}"
                # each workload from the same start, the index opened anew (no document
                # loaded, no word's id known: a server that just opened it), so that the
                # second run of the same lookups does not find the first's documents
                idx.close()
                idx = open_index(path)
                # as the language server and the service do once started: what is loaded by
                # now stays out of the collector's full passes (20-40 ms pauses otherwise)
                gc.collect()
                gc.freeze()
                if args.read_through:  # before each workload: a machine may reclaim pages
                    # untouched for a while (proactive reclaim), however much memory is free
                    took = read_through(idx)
                    print(f"{name} {key}: files read through in {took:.1f} s", flush=True)
                if args.map_ahead:
                    mapped = idx.map_ahead()
                    said.append(mapped.summary())
                    print(f"{name} {key}: {mapped.describe()}", flush=True)
                digests = answers.setdefault(f"{name} {key}", []) if args.answers else None
                runs[key] = measure(idx, pairs, language, paths, args.repeat, args.pace, digests)
                for way, m in runs[key].items():
                    print(
                        f"{name} {key} {way}: p50 {m['p50']:.2f} p90 {m['p90']:.2f} "
                        f"p99 {m['p99']:.2f} max {m['max']:.2f} ms, outputs differ: "
                        f"{m['differ']}",
                        flush=True,
                    )
        row = {"name": name, "words": idx.header.words, "load": load, "runs": runs,
               "pace_ms": args.pace, "min_chars": args.min_chars}  # fmt: skip
        row["mapped_ahead"] = said
        row["bytes"] = where_bytes(idx)
        idx.close()
        gc.unfreeze()
        if args.cold:
            row["cold"] = cold(path, work["quoted"][: args.cold], "python", paths)
            print(f"{name} cold: {row['cold']}", flush=True)
        if args.cache_share:
            pairs = work["quoted"] + work["novel"]
            row["limited"] = limited(path, pairs, "python", paths, args.cache_share)
            print(f"{name} page cache limited: {row['limited']}", flush=True)
        row["private_rss_mb"] = private_rss_mb()
        results.append(row)
    text = markdown(results, sys.argv[1:])
    print(text)
    if args.out:
        Path(args.out).write_text(text)
        Path(args.out).with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
    if args.answers:
        Path(args.answers).write_text(json.dumps(answers) + "\n")


if __name__ == "__main__":
    main()
