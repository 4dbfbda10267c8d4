"""Index benchmark on the default corpus (the running Python's standard library).

Measures, side by side in one run (alternating, so machine drift hits both alike):
- build throughput against the floor: just reading and tokenizing the same files;
- index size in bytes per word, everything included, by file;
- query latency p50/p99 for a 300-word suggestion with 200 words of context, quoted (cut from
  an indexed file) and novel (cut from installed packages that are not in the index), and
  where the time of a query goes;
- with --sweep, the choice of k and window at a fixed guarantee t = 60 words.

    .venv/bin/python bench/bench_index.py --out bench/results/index.md [--sweep]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from index_tools import BuildOptions, build_index, open_index
from index_tools.build.sources import open_source
from index_tools.text.words import WORD_RE, tokenize

CTX_WORDS, SUG_WORDS = 200, 300


def floor_read_tokenize(spec: str) -> tuple[float, int]:
    t = time.perf_counter()
    n = 0
    for doc in open_source(spec).documents():
        n += len(WORD_RE.findall(doc.text))
    return time.perf_counter() - t, n


def build_stages(spec: str) -> list[tuple[str, float]]:
    """Single-threaded time of each step a build worker does, over the whole corpus."""
    from index_tools.build.process import _compressor, split_blocks
    from index_tools.text.fingerprint import WordHasher, kgram_fingerprints, winnow
    from index_tools.text.normalize import identifier_mask, normalized_hashes

    docs = list(open_source(spec).documents())
    hasher = WordHasher()
    spent = dict.fromkeys(
        ("tokenize (block table)", "hash words", "k-grams + winnow", "renamed: mask + k-grams + winnow", "zstd"),
        0.0,
    )  # fmt: skip
    for doc in docs:
        t0 = time.perf_counter()
        words, _ = split_blocks(doc.text)
        t1 = time.perf_counter()
        h = hasher.hashes(words)
        t2 = time.perf_counter()
        fp = kgram_fingerprints(h, 20)
        winnow(fp, 41)
        t3 = time.perf_counter()
        mask = identifier_mask(words, doc.language or "python")
        if mask is not None:
            winnow(kgram_fingerprints(normalized_hashes(h, mask), 20), 41)
        t4 = time.perf_counter()
        _compressor.compress(doc.text.encode())
        t5 = time.perf_counter()
        for key, a, b in zip(spent, (t0, t1, t2, t3, t4), (t1, t2, t3, t4, t5)):
            spent[key] += b - a
    return [(k, round(v, 2)) for k, v in spent.items()]


def timed_build(spec: str, out: Path, **opts) -> tuple[float, object]:
    t = time.perf_counter()
    summary = build_index([spec], out, BuildOptions(progress=False, **opts))
    return time.perf_counter() - t, summary


def windows(texts: list[str], count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(context, suggestion) pairs: 200 + 300 consecutive words of a random file."""
    out = []
    big = [t for t in texts if len(WORD_RE.findall(t)) >= CTX_WORDS + SUG_WORDS + 10]
    while len(out) < count:
        text = rng.choice(big)
        ws = tokenize(text)
        i = rng.randrange(0, len(ws) - CTX_WORDS - SUG_WORDS)
        a, b, c = ws[i].start, ws[i + CTX_WORDS].start, ws[i + CTX_WORDS + SUG_WORDS - 1].end
        out.append((text[a:b], text[b:c]))
    return out


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def query_latency(idx, pairs) -> dict:
    times, found = [], 0
    for ctx, sug in pairs:
        t = time.perf_counter()
        ms = idx.match(sug, ctx)
        times.append((time.perf_counter() - t) * 1000)
        found += bool(ms)
    return {
        "n": len(pairs),
        "p50_ms": round(pct(times, 50), 3),
        "p99_ms": round(pct(times, 99), 3),
        "max_ms": round(max(times), 3),
        "with_match": found,
    }


def where_time_goes(idx, pairs) -> list[tuple[str, float]]:
    prof = cProfile.Profile()
    prof.enable()
    for ctx, sug in pairs:
        idx.match(sug, ctx)
    prof.disable()
    st = pstats.Stats(prof)
    total = sum(v[2] for v in st.stats.values())  # total internal time
    wanted = {
        "word_texts": "tokenize query (regex)",
        "hashes": "hash words (xxh3, memoized)",
        "kgram_fingerprints": "k-gram fingerprints (numpy)",
        "postings": "LMDB lookups (every k-gram)",
        "_hits": "group hits by document and diagonal",
        "_verify": "verify word by word against stored text",
        "document": "load + decompress candidate documents",
        "_sources": "sources: line ranges and links",
        "classify": "classify (kind)",
    }
    rows = []
    for (_, _, fn), v in st.stats.items():
        if fn in wanted:
            rows.append((wanted[fn], v[3]))
    merged: dict[str, float] = {}
    for name, cum in rows:
        merged[name] = merged.get(name, 0) + cum
    return [
        (k, round(100 * v / total, 1)) for k, v in sorted(merged.items(), key=lambda kv: -kv[1])
    ]


def file_sizes(root: Path) -> dict[str, int]:
    gen = root / (root / "CURRENT").read_text().strip()
    return {p.name: p.stat().st_size for p in sorted(gen.iterdir()) if p.is_file()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, help="write the markdown report here")
    ap.add_argument("--rounds", type=int, default=3, help="alternating floor/build rounds")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--sweep", action="store_true", help="also measure k/window choices")
    args = ap.parse_args()
    spec = "python:stdlib"
    tmp = Path(tempfile.mkdtemp(prefix="recitation-bench-"))
    rng = random.Random(7)

    floors, builds = [], []
    summary = None
    for r in range(args.rounds):
        f, words = floor_read_tokenize(spec)
        b, summary = timed_build(spec, tmp / "idx")
        floors.append(f)
        builds.append(b)
        print(
            f"round {r + 1}: floor {f:.2f} s, build {b:.2f} s, ratio {b / f:.2f}", file=sys.stderr
        )
    ratios = [b / f for b, f in zip(builds, floors)]
    sizes = file_sizes(tmp / "idx")
    stages = build_stages(spec)
    idx = open_index(tmp / "idx")
    info = idx.summary()

    stdlib_texts = [d.text for d in open_source(spec).documents()]
    novel_texts = [d.text for d in open_source("python:site-packages").documents()]
    quoted = windows(stdlib_texts, args.queries, rng)
    novel = windows(novel_texts, args.queries, rng)
    for ctx, sug in quoted[:20] + novel[:20]:  # warm the caches a server would have warm
        idx.match(sug, ctx)
    rng.shuffle(quoted)
    q_quoted = query_latency(idx, quoted)
    q_novel = query_latency(idx, novel)
    # a cold document cache: every quoted query decompresses its documents again
    idx._cache_size = 0
    q_cold = query_latency(idx, quoted[:100])
    idx._cache_size = 64
    profile = where_time_goes(idx, quoted[:150] + novel[:150])
    idx.close()

    sweep = []
    if args.sweep:
        for k in (8, 12, 16, 20, 24, 30, 40):
            window = 61 - k
            out = tmp / f"sweep-{k}"
            secs, s = timed_build(spec, out, k=k, window=window)
            with open_index(out) as sidx:
                lat = query_latency(sidx, quoted[:150])
                nov = query_latency(sidx, novel[:150])
                sinfo = sidx.summary()
            sweep.append({
                "k": k, "window": window, "guarantee": k + window - 1,
                "bytes_per_word": sinfo["bytes_per_word"], "fingerprints": sinfo["fingerprints"],
                "capped": sinfo["capped"], "build_s": round(secs, 2),
                "quoted_p50": lat["p50_ms"], "quoted_p99": lat["p99_ms"],
                "novel_p50": nov["p50_ms"], "novel_p99": nov["p99_ms"],
            })  # fmt: skip
            print(f"sweep k={k}: {sweep[-1]}", file=sys.stderr)

    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "corpus": f"{info['name']}: {info['files']} files, {info['words']:,} words",
        "floor_s": [round(x, 3) for x in floors],
        "build_s": [round(x, 3) for x in builds],
        "build_over_floor": [round(x, 2) for x in ratios],
        "words_per_s": round(summary.words / statistics.median(builds)),
        "bytes": info["bytes"],
        "bytes_per_word": info["bytes_per_word"],
        "files": sizes,
        "query_quoted": q_quoted,
        "query_novel": q_novel,
        "query_quoted_cold": q_cold,
        "profile_percent": profile,
        "build_stages_s": stages,
        "sweep": sweep,
        "params": {"k": info["k"], "window": info["window"], "guarantee": info["guarantee"]},
    }
    report = render(result)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
        args.out.with_suffix(".json").write_text(json.dumps(result, indent=2))
    return 0


def render(r: dict) -> str:
    med = statistics.median
    lines = [
        "# Index benchmark",
        "",
        "Command: `.venv/bin/python bench/bench_index.py --out bench/results/index.md --sweep`",
        "",
        f"Machine: {r['machine']}. Corpus: {r['corpus']}.",
        f"Parameters: k = {r['params']['k']}, window = {r['params']['window']}, "
        f"guarantee t = {r['params']['guarantee']} words.",
        "",
        "## Build against the floor (read + tokenize the same files), alternating rounds",
        "",
        "| round | floor s | build s | build / floor |",
        "| --- | --- | --- | --- |",
    ]
    for i, (f, b, q) in enumerate(zip(r["floor_s"], r["build_s"], r["build_over_floor"]), 1):
        lines.append(f"| {i} | {f} | {b} | {q} |")
    lines += [
        f"| median | {med(r['floor_s'])} | {med(r['build_s'])} | **{med(r['build_over_floor'])}** |",
        "",
        f"Build throughput: {r['words_per_s']:,} words/s (all cores).",
        "",
        "Where a build's time goes (each worker step over the whole corpus, one core; the",
        "main process meanwhile stores documents and sorts postings):",
        "",
        "| step | s |",
        "| --- | --- |",
        *[f"| {name} | {secs} |" for name, secs in r["build_stages_s"]],
        "",
        "## Size",
        "",
        f"**{r['bytes_per_word']} bytes per word** ({r['bytes']:,} bytes, everything included).",
        "",
        "| file | bytes |",
        "| --- | --- |",
    ]
    lines += [f"| {name} | {size:,} |" for name, size in r["files"].items()]
    lines += [
        "",
        "## Query latency (300-word suggestion, 200 words of context)",
        "",
        "| queries | n | with a match | p50 ms | p99 ms | max ms |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, key in (("quoted (from indexed files)", "query_quoted"),
                      ("novel (installed packages, not indexed)", "query_novel"),
                      ("quoted, document cache off", "query_quoted_cold")):  # fmt: skip
        q = r[key]
        lines.append(
            f"| {name} | {q['n']} | {q['with_match']} | {q['p50_ms']} | {q['p99_ms']} | {q['max_ms']} |"
        )
    lines += [
        "",
        "Where a query's time goes (share of profiled time, cumulative per step):",
        "",
        "| step | % |",
        "| --- | --- |",
    ]
    lines += [f"| {name} | {share} |" for name, share in r["profile_percent"]]
    if r["sweep"]:
        lines += [
            "",
            "## Choosing k and window (t = window + k - 1 = 60 fixed)",
            "",
            "| k | window | bytes/word | fingerprints | capped | build s | quoted p50/p99 ms | novel p50/p99 ms |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for s in r["sweep"]:
            lines.append(
                f"| {s['k']} | {s['window']} | {s['bytes_per_word']} | {s['fingerprints']:,} | "
                f"{s['capped']} | {s['build_s']} | {s['quoted_p50']}/{s['quoted_p99']} | "
                f"{s['novel_p50']}/{s['novel_p99']} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
