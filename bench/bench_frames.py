"""Long documents stored in frames against the same corpus stored one frame a document:
the same lookups on both indexes, taking turns, their answers compared.

Two indexes of one corpus (the second built as format 6 stored texts, one zstd frame a
document: `recitation-index build` with `FRAME_CHARS` past any file, see `--help` below)
are opened anew for each round; each lookup runs on both, in alternating order, and their
outputs must be equal. Reported per index: p50/p90/p99/max in ms, of the lookups and of the
time each spent reading documents (decompressing and checking their texts), cold lookups
(every file of the index dropped from the page cache before each; Linux): time, bytes read
from storage. The workload: 200 words of context and 300 of suggestion cut from the
corpus's files (any language), or only from files of at least `--min-chars` characters.

    .venv/bin/python bench/bench_frames.py --index frames=DIR --index one-frame=DIR2 \
        --texts pypi:bench/registry_packages/pypi-96th.txt --queries 400 --min-chars 65536 \
        --rounds 2 --cold 40 --out bench/results/frames.md
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import located_windows, pct  # noqa: E402
from bench_latency import drop_cache, read_bytes, read_through  # noqa: E402
from commit import commit  # noqa: E402

from index_tools import open_index  # noqa: E402
from index_tools.build.sources import open_source  # noqa: E402
from index_tools.match import index as index_module  # noqa: E402


class DocumentTime:
    """Wall time spent reading documents (a load, and a frame read later) per lookup."""

    def __init__(self):
        self.ms = 0.0
        self._load = index_module.Index._load_document
        self._frame = index_module.Frames.text

    def __enter__(self):
        timer = self

        def load(index, doc_id):
            t = time.perf_counter()
            try:
                return timer._load(index, doc_id)
            finally:
                timer.ms += (time.perf_counter() - t) * 1000

        def frame(frames, f):
            if f in frames._texts:
                return frames._texts[f]
            t = time.perf_counter()
            try:
                return timer._frame(frames, f)
            finally:
                timer.ms += (time.perf_counter() - t) * 1000

        index_module.Index._load_document = load
        index_module.Frames.text = frame
        return self

    def __exit__(self, *exc):
        index_module.Index._load_document = self._load
        index_module.Frames.text = self._frame


def workload(spec: str, count: int, seed: int, min_chars: int):
    """(context, suggestion, the language of the file it is cut from)."""
    docs = open_source(spec).documents()
    languages = {d.text: d.language for d in docs if len(d.text) >= min_chars}  # (copies once)
    texts = list(languages)
    pairs = located_windows(texts, count, random.Random(seed))
    return [(ctx, sug, languages[texts[k]]) for k, ctx, sug in pairs]


def lookup(idx, timer: DocumentTime, ctx: str, sug: str, language: str):
    timer.ms = 0.0
    t = time.perf_counter()
    found = idx.match(sug, ctx, language=language)
    return (time.perf_counter() - t) * 1000, timer.ms, [m.to_dict() for m in found]


def warm(names, dirs, pairs, rounds: int) -> tuple[dict, int]:
    """Each round: both indexes opened anew, every lookup on both in alternating order."""
    rows: dict[str, list] = {n: [] for n in names}
    differ = 0
    with DocumentTime() as timer:
        for r in range(rounds):
            opened = {n: open_index(d) for n, d in zip(names, dirs)}
            for i, (ctx, sug, language) in enumerate(pairs):
                answers = []
                # (each index first on every other lookup, and on the round's first lookup
                # every other round: a newly opened index's first lookup costs the most)
                for n in names if (i + r) % 2 == 0 else names[::-1]:
                    ms, docs_ms, out = lookup(opened[n], timer, ctx, sug, language)
                    rows[n].append((ms, docs_ms))
                    answers.append(out)
                differ += answers[0] != answers[1]
            for idx in opened.values():
                idx.close()
    return rows, differ


def cold(names, dirs, pairs) -> dict:
    """Lookups on a freshly opened index whose files were dropped from the page cache."""
    rows: dict[str, list] = {n: [] for n in names}
    with DocumentTime() as timer:
        for i, (ctx, sug, language) in enumerate(pairs):
            for n, d in zip(names, dirs) if i % 2 == 0 else list(zip(names, dirs))[::-1]:
                idx = open_index(d)
                drop_cache(idx)
                before = read_bytes()
                ms, docs_ms, _ = lookup(idx, timer, ctx, sug, language)
                rows[n].append((ms, docs_ms, read_bytes() - before))
                idx.close()
    return rows


def summary(values: list[float]) -> str:
    return " / ".join(f"{pct(values, p):.2f}" for p in (50, 90, 99, 100))


def text_bytes(path: str) -> int:
    with open_index(path) as idx:
        return (idx.gen / "text.zst").stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--index", action="append", required=True, help="NAME=DIR, twice")
    ap.add_argument("--texts", required=True, help="the source spec the queries are cut from")
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--min-chars", type=int, default=0, help="cut queries from files this long")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=2, help="warm rounds, indexes opened anew")
    ap.add_argument("--cold", type=int, default=0, help="cold lookups on each index (Linux)")
    ap.add_argument("--out", help="append the markdown here")
    args = ap.parse_args()
    if len(args.index) != 2:
        ap.error("give two --index")
    names = [n.partition("=")[0] for n in args.index]
    dirs = [n.partition("=")[2] for n in args.index]
    pairs = workload(args.texts, args.queries, args.seed, args.min_chars)
    for d in dirs:
        with open_index(d) as idx:
            read_through(idx)
    rows, differ = warm(names, dirs, pairs, args.rounds)
    cold_rows = cold(names, dirs, pairs[: args.cold]) if args.cold else {}
    where = f"files of at least {args.min_chars:,} characters" if args.min_chars else "any file"
    out = [
        f"### {len(pairs)} lookups cut from {where}, {args.rounds} rounds (`{commit()}`)",
        "",
        "```",
        "python bench/bench_frames.py " + " ".join(sys.argv[1:]),
        "```",
        "",
        f"Outputs differing between the two indexes: **{differ}** of {len(pairs) * args.rounds}."
        f" Load average {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| index | text.zst bytes | warm ms p50 / p90 / p99 / max | of which reading documents "
        "p50 / p90 / p99 / max | cold ms p50 / p90 / p99 / max | cold MB read p50 / p99 |",
        "| --- | ---: | --- | --- | --- | --- |",
    ]
    for n, d in zip(names, dirs):
        warm_ms = [r[0] for r in rows[n]]
        c = cold_rows.get(n, [])
        cold_ms = summary([r[0] for r in c]) if c else "-"
        mb = [r[2] / 1e6 for r in c]
        cold_mb = f"{pct(mb, 50):.1f} / {pct(mb, 99):.1f}" if c else "-"
        out.append(
            f"| {n} | {text_bytes(d):,} | {summary(warm_ms)} | "
            f"{summary([r[1] for r in rows[n]])} | {cold_ms} | {cold_mb} |"
        )
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
