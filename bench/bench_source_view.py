"""What "Compare with source" costs in the engine: the origin table a generation's first
request builds (`match/source_texts.py`), and the source view itself (`source_view`: the
stored text found, the quote aligned in it, the window cut) for real quotes.

    python bench/bench_source_view.py --index .cache/bench/stdlib-idx --synthetic 100000 \
        --out bench/results/source_view.md

`--index`: an index whose documents are quoted (pieces of 60-400 words of random
documents, asked with the lines the matcher reports); `--synthetic N`: an index of N tiny
documents is built in a temporary folder to time the origin scan alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commit import commit  # noqa: E402

from index_tools import (  # noqa: E402
    BuildOptions,
    SourceRef,
    SourceRequest,
    build_index,
    open_index,
    source_view,
    tokenize,
)
from index_tools.match import source_texts  # noqa: E402


def quotes(idx, n: int, seed: int = 7) -> list[str]:
    """Pieces of 60-400 words of random stored documents, cut at line starts."""
    rng = random.Random(seed)
    out = []
    docs = idx.summary()["documents"]
    while len(out) < n:
        doc = idx.document(rng.randrange(docs))
        lines = doc.text.splitlines(keepends=True)
        if len(lines) < 20:
            continue
        a = rng.randrange(len(lines) - 10)
        piece = ""
        for line in lines[a:]:
            piece += line
            if len(tokenize(piece)) >= rng.randint(60, 400):
                break
        if len(tokenize(piece)) >= 60:
            out.append(piece)
    return out


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def bench_views(path: Path, n: int) -> list[str]:
    idx = open_index(path)
    summary = idx.summary()
    t = time.perf_counter()
    source_texts._table(idx)
    table_ms = (time.perf_counter() - t) * 1000
    times, sizes, aligned, total = [], [], 0, 0
    for piece in quotes(idx, n):
        found = idx.match(piece, min_tokens=60)
        if not found or not found[0].sources:
            continue
        m, s = found[0], found[0].sources[0]
        request = SourceRequest(
            SourceRef(s.repository, s.path, s.commit, s.start_line, s.end_line, idx.generation),
            m.text, None, m.exact,
        )  # fmt: skip
        t = time.perf_counter()
        view = source_view(idx, request)
        times.append((time.perf_counter() - t) * 1000)
        sizes.append(view.line_count)
        aligned += view.aligned_words
        total += view.quote_words
    idx.close()
    return [
        f"## {summary['name'] or path.name}: {summary['documents']:,} documents, "
        f"{summary['words']:,} words",
        "",
        f"Origin table (once per generation): {table_ms:.1f} ms.",
        "",
        f"{len(times)} source views of quotes of 60-400 words (the match's first source, "
        f"files of median {statistics.median(sizes):.0f} lines, max {max(sizes):,}):",
        "",
        "| p50 ms | p90 ms | p99 ms | max ms | words aligned |",
        "| ---: | ---: | ---: | ---: | ---: |",
        f"| {percentile(times, 0.5):.2f} | {percentile(times, 0.9):.2f} | "
        f"{percentile(times, 0.99):.2f} | {max(times):.2f} | {aligned:,} of {total:,} |",
        "",
    ]


def bench_synthetic(n: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "rows.jsonl"
        with rows.open("w") as f:
            for i in range(n):
                row = {
                    "repository": f"org{i % 997}/repo{i % 5003}",
                    "path": f"src/mod_{i}.py",
                    "commit": f"c{i % 13}",
                    "license": "MIT",
                    "content": f"def f_{i}(x):\n    return x * {i} + {i * 7 % 1000}\n",
                }
                f.write(json.dumps(row) + "\n")
        build_index([str(rows)], Path(tmp) / "idx", BuildOptions(progress=False))
        with open_index(Path(tmp) / "idx") as idx:
            t = time.perf_counter()
            table = source_texts._OriginTable(idx)
            seconds = time.perf_counter() - t
            size = table.keys.nbytes + table.docs.nbytes
    per = seconds / n * 1e6
    return [
        f"## Origin scan: {n:,} documents (synthetic, one origin each)",
        "",
        f"{seconds * 1000:.0f} ms ({per:.1f} µs per origin), a table of {size:,} bytes. At "
        f"that rate a generation of 1M documents takes {per:.1f} s and 12 MB at its first "
        f"source view, 10M {per * 10:.0f} s and 120 MB (per process: each `serve` worker).",
        "",
    ]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--index", action="append", default=[], type=Path)
    p.add_argument("--quotes", type=int, default=300)
    p.add_argument("--synthetic", type=int, default=0)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    lines = [
        "# Compare with source: the engine's part",
        "",
        f"Commit `{commit()}`, {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), load average before {os.getloadavg()[0]:.1f} (the "
        "machine is shared: the tail of the times moves with it).",
        "",
        "Reproduce:",
        "",
        "```",
        "python bench/bench_source_view.py "
        + " ".join(f"--index {i}" for i in args.index)
        + (f" --synthetic {args.synthetic}" if args.synthetic else "")
        + f" --quotes {args.quotes} --out bench/results/source_view.md",
        "```",
        "",
    ]
    for path in args.index:
        lines += bench_views(path, args.quotes)
    if args.synthetic:
        lines += bench_synthetic(args.synthetic)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
