"""Lookup latency, in process, and where the time goes.

For each index given: 300-word suggestions with 200 words of context, cut from files the
index holds (quoted) and from the same files with their lines shuffled (novel: real code,
runs mostly unindexed), looked up with the language given (as the language server does,
which adds the rename-insensitive lookup) and without. Reported: p50/p90/p99/max in ms, how
many lookups found a match, and the time of each phase at the slowest 1% (fingerprint
lookup, verification of exact runs, renamed copies, building the matches: sources, lines).

    .venv/bin/python bench/bench_latency.py --index stdlib=DIR --texts python:stdlib \
        --index pypi=DIR2 --texts .cache/bench/pypi --queries 1000 --out bench/results/latency.md

Each `--texts` (a source spec as `recitation-index build` takes) gives the files the
queries of the `--index` before it are cut from (python files only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import pct, windows  # noqa: E402

from index_tools import open_index  # noqa: E402
from index_tools.build.sources import open_source  # noqa: E402
from index_tools.match import matcher  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PHASES = {
    "lookup": "_lookup",  # fingerprints -> postings -> hits (both views)
    "verify": "_verify",  # hits compared word by word (both views)
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


def workload(spec: str, count: int, seed: int) -> dict[str, list[tuple[str, str]]]:
    texts = [d.text for d in open_source(spec).documents() if d.language == "python"]
    rng = random.Random(seed)
    quoted = windows(texts, count, rng)
    novel = []
    for ctx, sug in windows(texts, count, rng):
        lines = sug.split("\n")
        rng.shuffle(lines)
        novel.append((ctx, "\n".join(lines)))
    return {"quoted": quoted, "novel": novel}


def measure(idx, pairs, language: str | None) -> dict:
    phases = Phases()
    rows = []
    with phases.installed():
        for ctx, sug in pairs[:20]:  # warm-up: imports, first page faults
            idx.match(sug, ctx, language=language)
        for ctx, sug in pairs:
            phases.current = {}
            t = time.perf_counter()
            found = idx.match(sug, ctx, language=language)
            ms = (time.perf_counter() - t) * 1000
            rows.append((ms, bool(found), {k: v * 1000 for k, v in phases.current.items()}))
    times = [r[0] for r in rows]
    slow = sorted(rows, key=lambda r: -r[0])[: max(1, len(rows) // 100)]
    return {
        "n": len(rows),
        "found": sum(r[1] for r in rows),
        "p50": pct(times, 50),
        "p90": pct(times, 90),
        "p99": pct(times, 99),
        "max": max(times),
        "slowest_1pct_ms": {
            "total": sum(r[0] for r in slow) / len(slow),
            **{p: sum(r[2].get(p, 0.0) for r in slow) / len(slow) for p in PHASES},
        },
    }


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "?"


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
        "300-word suggestions with 200 words of context; quoted: cut from an indexed file; "
        "novel: the same kind of window with its lines shuffled. `language` given = what the "
        "language server does (adds the rename-insensitive lookup).",
        "",
        "| index | words | workload | language | n | found | p50 ms | p90 ms | p99 ms | max ms |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        for key, m in r["runs"].items():
            workload_name, lang = key.split("/")
            out.append(
                f"| {r['name']} | {r['words']:,} | {workload_name} | {lang} | {m['n']} | "
                f"{m['found']} | {m['p50']:.2f} | {m['p90']:.2f} | {m['p99']:.2f} | "
                f"{m['max']:.2f} |"
            )
    out += [
        "",
        "Where the time goes in the slowest 1% of lookups (mean ms per lookup; the renamed "
        "view includes its own lookup and verification):",
        "",
        "| index | workload | language | total | lookup | verify | renamed | matches |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        for key, m in r["runs"].items():
            workload_name, lang = key.split("/")
            s = m["slowest_1pct_ms"]
            out.append(
                f"| {r['name']} | {workload_name} | {lang} | {s['total']:.1f} | "
                f"{s['lookup']:.1f} | {s['verify']:.1f} | {s['renamed']:.1f} | "
                f"{s['matches']:.1f} |"
            )
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--index", action="append", required=True, help="NAME=DIR of a built index")
    ap.add_argument("--texts", action="append", required=True, help="source spec per --index")
    ap.add_argument("--queries", type=int, default=1000, help="lookups per workload")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", help="write markdown here (and JSON beside it)")
    args = ap.parse_args()
    if len(args.texts) != len(args.index):
        ap.error("give one --texts per --index")
    results = []
    for named, spec in zip(args.index, args.texts):
        name, _, path = named.partition("=")
        idx = open_index(path)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        work = workload(spec, args.queries, args.seed)
        runs = {}
        for workload_name, pairs in work.items():
            for language in ("python", None):
                key = f"{workload_name}/{language or 'none'}"
                runs[key] = measure(idx, pairs, language)
                m = runs[key]
                print(
                    f"{name} {key}: p50 {m['p50']:.2f} p90 {m['p90']:.2f} "
                    f"p99 {m['p99']:.2f} max {m['max']:.2f} ms",
                    flush=True,
                )
        results.append({"name": name, "words": idx.header.words, "load": load, "runs": runs})
        idx.close()
    text = markdown(results, sys.argv[1:])
    print(text)
    if args.out:
        Path(args.out).write_text(text)
        Path(args.out).with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
