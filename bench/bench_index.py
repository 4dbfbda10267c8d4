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

import numpy as np

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
    """Single-threaded time of each step of a build over the whole corpus: the workers'
    (tokenize, number words, mark identifiers, zstd), the main process's (word ids from the
    vocabulary) and the shard's (suffix arrays of both views)."""
    from index_tools.build.local import Vocabulary
    from index_tools.build.process import _compressor, process, split_blocks
    from index_tools.build.suffix import joined, suffix_array
    from index_tools.store.shards import RENAMED_STRIDE, RENAMED_WIDTH, id_width, renamed_ids
    from index_tools.text.normalize import identifier_mask_of_ids

    docs = list(open_source(spec).documents())
    spent = dict.fromkeys(
        ("tokenize (block table)", "number words", "mark identifiers", "zstd",
         "word ids (main process)", "suffix arrays (both views)"),
        0.0,
    )  # fmt: skip
    vocab, ids, masks, seen = Vocabulary(), [], [], set()
    for doc in docs:
        t0 = time.perf_counter()
        words, _ = split_blocks(doc.text)
        t1 = time.perf_counter()
        vocabulary = list(dict.fromkeys(words))
        local = {w: i for i, w in enumerate(vocabulary)}
        numbered = np.fromiter(map(local.__getitem__, words), dtype=np.uint32, count=len(words))
        t2 = time.perf_counter()
        mask = identifier_mask_of_ids(vocabulary, numbered, doc.language or "python")
        t3 = time.perf_counter()
        _compressor.compress(doc.text.encode())
        t4 = time.perf_counter()
        for key, a, b in zip(spent, (t0, t1, t2, t3), (t1, t2, t3, t4)):
            spent[key] += b - a
        if doc.text not in seen:
            seen.add(doc.text)
            pd = process(doc.text)
            t5 = time.perf_counter()
            ids.append(vocab.map(pd))
            spent["word ids (main process)"] += time.perf_counter() - t5
            masks.append(mask if mask is not None else np.zeros(len(words), dtype=bool))
    t6 = time.perf_counter()
    joined_ids, _ = joined(ids)
    marked = joined(masks)[0] != 0  # the documents' masks, laid out as their ids
    suffix_array(joined_ids, id_width(int(joined_ids.max())))
    suffix_array(renamed_ids(joined_ids, marked), RENAMED_WIDTH, RENAMED_STRIDE)
    spent["suffix arrays (both views)"] += time.perf_counter() - t6
    return [(k, round(v, 2)) for k, v in spent.items()]


def timed_build(spec: str, out: Path, **opts) -> tuple[float, object]:
    t = time.perf_counter()
    summary = build_index([spec], out, BuildOptions(progress=False, **opts))
    return time.perf_counter() - t, summary


def windows(texts: list[str], count: int, rng: random.Random) -> list[tuple[str, str]]:
    """(context, suggestion) pairs: 200 + 300 consecutive words of a random file."""
    return [(ctx, sug) for _, ctx, sug in located_windows(texts, count, rng)]


def located_windows(texts: list[str], count: int, rng: random.Random) -> list[tuple[int, str, str]]:
    """`windows`, each with the index in `texts` of the file it is cut from."""
    out = []
    big = [k for k, t in enumerate(texts) if len(WORD_RE.findall(t)) >= CTX_WORDS + SUG_WORDS + 10]
    while len(out) < count:
        k = rng.choice(big)
        text = texts[k]
        ws = tokenize(text)
        i = rng.randrange(0, len(ws) - CTX_WORDS - SUG_WORDS)
        a, b, c = ws[i].start, ws[i + CTX_WORDS].start, ws[i + CTX_WORDS + SUG_WORDS - 1].end
        out.append((k, text[a:b], text[b:c]))
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
        "word_ids": "word ids (vocabulary)",
        "interval": "suffix-array binary searches",
        "_runs": "runs around anchors with few places",
        "_crowded_spans": "spans from counts (crowded anchors)",
        "_listed": "documents of crowded spans",
        "document": "load + decompress source documents",
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
    ap.add_argument("--source", default="python:stdlib", help="what to build (a source spec)")
    args = ap.parse_args()
    spec = args.source
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
    q_cold = query_latency(idx, quoted[:100])  # the same queries again: documents cached
    profile = where_time_goes(idx, quoted[:150] + novel[:150])
    idx.close()

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
        "Command: `.venv/bin/python bench/bench_index.py --out bench/results/index.md`",
        "",
        f"Machine: {r['machine']}. Corpus: {r['corpus']}.",
        "Suffix arrays over word ids; every common run of `min_tokens` (60) words is found.",
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
        "Where a build's time goes (each step over the whole corpus, one core; the workers'",
        "steps run on all cores, the suffix arrays in a thread beside them):",
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
                      ("quoted again, documents cached", "query_quoted_cold")):  # fmt: skip
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
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
