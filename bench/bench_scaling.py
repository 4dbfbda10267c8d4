"""Scaling benchmark: indexes of about 1M, 10M and 100M words of real code.

Corpora (JSON lines datasets, as The Stack is read; generated once and cached):
- the running Python's standard library and installed packages (`.py` files), in a fixed
  order, cut at the target size;
- past what is installed, generated repositories made from the same real files with light
  deterministic mutations (about half of the identifier names renamed, top-level definitions
  rotated), so they are near copies, not byte-identical duplicates.

For each size and engine (local builder; Spark in local mode for the sizes given with
--spark-sizes) the build runs as `recitation-index build DATASET --out DIR` in a child
process; reported: wall time, words per second, peak resident memory of the build's process
tree, bytes per word, and the latency p50/p99 of `open_index(path).match(suggestion,
context)` for 300-word suggestions with 200 words of context, quoted (cut from an indexed
file) and novel (an indexed file with its lines shuffled: real code, unindexed runs).

    .venv/bin/python bench/bench_scaling.py --sizes 1M,10M,100M --spark-sizes 1M,10M \
        --out bench/results/scaling.json --plot docs/scaling.png
"""

from __future__ import annotations

import argparse
import builtins
import json
import keyword
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import xxhash

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import pct, windows  # noqa: E402

from index_tools import open_index  # noqa: E402
from index_tools.build.sources import open_source  # noqa: E402
from index_tools.store import generations as store  # noqa: E402
from index_tools.text.words import WORD_RE  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench"
NOVEL_SEED = 100_000
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
TOP_LEVEL = re.compile(r"\n(?=(?:async def|def|class) )")
KEEP = set(keyword.kwlist) | set(dir(builtins)) | {"self", "cls"}


def parse_size(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 1_000, "M": 1_000_000, "G": 1_000_000_000}.get(s[-1], 1)
    return int(float(s.rstrip("KMG")) * mult)


def label(n: int) -> str:
    return f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}K"


def base_files() -> list[dict]:
    """Real Python files: the standard library, then installed packages, in a fixed order."""
    out = []
    for spec in ("python:stdlib", "python:site-packages"):
        for doc in open_source(spec).documents():
            if doc.language != "python":
                continue
            o = doc.origin
            out.append(
                {
                    "content": doc.text,
                    "repo": o.repository,
                    "path": o.path,
                    "commit": o.commit,
                    "license": o.license,
                    "words": len(WORD_RE.findall(doc.text)),
                }
            )
    return out


def mutate(text: str, variant: int, names: dict) -> str:
    """Rename about half of the identifiers and rotate top-level definitions."""

    def rename(m: re.Match) -> str:
        w = m.group(0)
        r = names.get(w)
        if r is None:
            h = xxhash.xxh3_64_intdigest(f"{variant}:{w}".encode())
            r = w if (w in KEEP or h & 1) else f"{w}_{(h >> 8) & 0xFFFF:x}"
            names[w] = r
        return r

    body = IDENT.sub(rename, text)
    parts = TOP_LEVEL.split(body)
    if len(parts) > 2:
        head, rest = parts[0], parts[1:]
        r = variant % len(rest)
        body = "\n".join([head, *rest[r:], *rest[:r]])
    return body


def shuffle_lines(text: str, seed: int) -> str:
    """The file's lines in a random order: real code, but runs of words not indexed."""
    lines = text.splitlines()
    random.Random(seed).shuffle(lines)
    return "\n".join(lines)


def make_corpus(base: list[dict], target: int, path: Path, rng: random.Random) -> dict:
    """Write a dataset of about `target` words; returns its stats and a sample of texts."""
    sample: list[str] = []
    words = files = variants = eligible = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        variant = 0
        while words < target:
            names: dict = {}
            for row in base:
                text = row["content"] if variant == 0 else mutate(row["content"], variant, names)
                rec = {k: row[k] for k in ("repo", "path", "commit", "license")}
                if variant:
                    rec["repo"] = f"generated/variant-{variant}"
                    rec["commit"] = ""
                rec["content"] = text
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                words += row["words"]
                files += 1
                if row["words"] > 600:  # reservoir sample of the files a query can cut
                    eligible += 1
                    if len(sample) < 400:
                        sample.append(text)
                    elif (j := rng.randrange(eligible)) < 400:
                        sample[j] = text
                if words >= target:
                    break
            variants = variant + 1
            variant += 1
    os.replace(tmp, path)
    return {"files": files, "words_approx": words, "variants": variants, "sample": sample}


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants (MB)."""
    parents: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(d))
        rss[int(d)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(parents.get(p, []))
    return total / 1e6


def run_build(dataset: Path, out: Path, engine: str, master: str | None) -> dict:
    """Build in a child process; wall time and the peak memory of its process tree."""
    cmd = [sys.executable, "-m", "index_tools.cli", "build", str(dataset), "--out", str(out)]
    cmd += ["--json", "-q", "--engine", engine]
    if master:
        cmd += ["--master", master]
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, text=True)
        peak = 0.0
        while proc.poll() is None:
            peak = max(peak, tree_rss_mb(proc.pid))
            time.sleep(0.5)
        wall = time.perf_counter() - t
        so.seek(0), se.seek(0)
        stdout, stderr = so.read(), se.read()
    if proc.returncode:
        raise RuntimeError(f"build failed ({' '.join(cmd)}):\n{stderr[-3000:]}")
    summary = json.loads(stdout[stdout.index("{") :])
    return {"wall_s": round(wall, 2), "summary": summary, "peak_mb": round(peak)}


def query_stats(index: Path, quoted, novel) -> dict:
    out = {}
    with open_index(index) as idx:
        for ctx, sug in quoted[:5]:  # warm the page cache and memoized hashes
            idx.match(sug, ctx)
        for name, pairs in (("quoted", quoted), ("novel", novel)):
            times, found = [], 0
            for ctx, sug in pairs:
                t = time.perf_counter()
                ms = idx.match(sug, ctx)
                times.append((time.perf_counter() - t) * 1000)
                found += bool(ms)
            out[name] = {
                "n": len(pairs),
                "p50_ms": round(pct(times, 50), 2),
                "p99_ms": round(pct(times, 99), 2),
                "with_match": found,
            }
    return out


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for engine, marker in (("local", "o"), ("spark", "s")):
        rows = [r for r in results if r["engine"] == engine]
        if not rows:
            continue
        x = [r["words"] for r in rows]
        axes[0].plot(x, [r["words_per_s"] for r in rows], marker=marker, label=engine)
        axes[1].plot(x, [r["bytes_per_word"] for r in rows], marker=marker, label=engine)
        if engine == "local":
            for kind, style in (("quoted", "-"), ("novel", "--")):
                for p in ("p50", "p99"):
                    axes[2].plot(
                        x,
                        [r["query"][kind][f"{p}_ms"] for r in rows],
                        style,
                        marker=marker,
                        label=f"{kind} {p}",
                    )
    titles = ("build throughput (words/s)", "index size (bytes per word)", "query latency (ms)")
    for ax, title in zip(axes, titles):
        ax.set_xscale("log")
        ax.set_xlabel("indexed words")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right" if ax is not axes[2] else "best")
    axes[0].set_ylim(bottom=0)
    axes[1].set_ylim(bottom=0)
    axes[2].set_yscale("log")
    lo, hi = axes[2].get_ylim()
    axes[2].set_yticks([t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500) if lo <= t <= hi])
    axes[2].yaxis.set_major_formatter(ScalarFormatter())
    axes[2].yaxis.set_minor_formatter(NullFormatter())
    fig.suptitle("Recitation index scaling (2 cores; 300-word suggestion + 200 words of context)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def render_md(report: dict) -> str:
    """The scaling table in Markdown."""
    out = [
        "| size | engine | files (unique) | words | build s | words/s | peak MB | bytes/word "
        "| quoted p50 / p99 ms | novel p50 / p99 ms | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        q = r.get("query")
        quoted = f"{q['quoted']['p50_ms']} / {q['quoted']['p99_ms']}" if q else "(same index)"
        novel = f"{q['novel']['p50_ms']} / {q['novel']['p99_ms']}" if q else ""
        out.append(
            f"| {r['size']} | {r['engine']} | {r['files']:,} ({r['documents']:,}) "
            f"| {r['words']:,} | {r['build_s']:,} | {r['words_per_s']:,} "
            f"| {r['peak_tree_rss_mb']:,} | {r['bytes_per_word']} | {quoted} | {novel} "
            f"| {r.get('load_before', '')} |"
        )
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1M,10M,100M")
    ap.add_argument("--spark-sizes", default="1M,10M")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--queries", type=int, default=200, help="per kind (quoted, novel)")
    ap.add_argument("--out", default="bench/results/scaling.json")
    ap.add_argument("--plot", default="docs/scaling.png")
    ap.add_argument("--work", default=None, help="where indexes are built (default: a temp dir)")
    ap.add_argument("--render-only", action="store_true", help="redo the table and plot from --out")
    args = ap.parse_args()
    if args.render_only:
        report = json.loads(Path(args.out).read_text())
        Path(args.out).with_suffix(".md").write_text(render_md(report))
        plot(report["results"], Path(args.plot))
        return 0

    sizes = [parse_size(s) for s in args.sizes.split(",") if s]
    spark_sizes = {parse_size(s) for s in args.spark_sizes.split(",") if s}
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(args.work or tempfile.mkdtemp(prefix="recitation-scaling-"))
    started = time.perf_counter()
    print("reading the base files ...", file=sys.stderr)
    base = base_files()
    results = []
    for size in sizes:
        rng = random.Random(size)
        dataset = CACHE / f"corpus-{label(size)}.jsonl"
        t = time.perf_counter()
        corpus = make_corpus(base, size, dataset, rng)
        gen_s = time.perf_counter() - t
        print(
            f"{label(size)}: {corpus['files']:,} files, {corpus['variants']} variant(s), "
            f"{dataset.stat().st_size / 1e6:.0f} MB, written in {gen_s:.0f} s",
            file=sys.stderr,
        )
        quoted = windows(corpus["sample"], args.queries, rng)
        novel_src = [shuffle_lines(t, NOVEL_SEED + i) for i, t in enumerate(corpus["sample"])]
        novel = windows(novel_src, args.queries, rng)
        for engine in ("local", "spark"):
            if engine == "spark" and size not in spark_sizes:
                continue
            out = work / f"{engine}-{label(size)}"
            shutil.rmtree(out, ignore_errors=True)
            load = round(os.getloadavg()[0], 1)
            b = run_build(dataset, out, engine, args.master if engine == "spark" else None)
            s = b["summary"]
            row = {
                "size": label(size),
                "engine": engine,
                "files": s["files"],
                "documents": s["documents"],
                "words": s["words"],
                "vocabulary": s["vocabulary"],
                "shards": s["shards"],
                "bytes": s["bytes"],
                "bytes_per_word": s["bytes_per_word"],
                "build_s": b["wall_s"],
                "words_per_s": round(s["words"] / b["wall_s"]),
                "peak_tree_rss_mb": b["peak_mb"],
                "load_before": load,
                "dataset_mb": round(dataset.stat().st_size / 1e6),
                "variants": corpus["variants"],
                "command": "recitation-index build "
                + " ".join(
                    [f".cache/bench/{dataset.name}", "--out", "IDX"]
                    + (["--engine", "spark", "--master", args.master] if engine == "spark" else [])
                ),
            }
            print(
                f"  {engine}: {row['build_s']} s, {row['words_per_s']:,} words/s, "
                f"{row['bytes_per_word']} B/word",
                file=sys.stderr,
            )
            if engine == "local":
                row["query"] = query_stats(out, quoted, novel)
                q = row["query"]
                print(
                    f"  query quoted p50/p99 {q['quoted']['p50_ms']}/{q['quoted']['p99_ms']} ms,"
                    f" novel {q['novel']['p50_ms']}/{q['novel']['p99_ms']} ms",
                    file=sys.stderr,
                )
            results.append(row)
        for engine in ("local", "spark"):
            shutil.rmtree(work / f"{engine}-{label(size)}", ignore_errors=True)
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "total_s": round(time.perf_counter() - started),
        "index_format": store.FORMAT_VERSION,
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip(),
        "results": results,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    Path(args.out).with_suffix(".md").write_text(render_md(report))
    if args.plot:
        plot(results, Path(args.plot))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
