"""The compiled search's work on crowded anchors, replayed: two engines' kernels side by side.

A crowded anchor is a window of the query with more places than are read one by one (a
separator line, a license header, code vendored everywhere): its spans are found from counts,
shard by shard (kernel.c `rc_crowded_spans`), and at 1.5B words in 12 shards that work is the
largest part of the slowest suggestions. This captures the crowded-anchor calls of the slowest
of `bench_server.py`'s suggestions (found with this checkout's engine), then has each
engine's kernel answer the same calls in a process of its own, in turns (A B, B A, ...),
each call `--repeat` times; reported: microseconds per call (one shard, one anchor), median
of the rounds, and whether every answer was the same.

    python bench/bench_crowded.py --index DIR --texts pypi:bench/registry_packages/pypi-96th.txt \\
        --engines REV,. --slowest 5 --repeat 600 --out bench/results/crowded.md
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_commits import checkout, remove_checkout  # noqa: E402
from bench_latency import read_through  # noqa: E402
from bench_server import context_of, make_suggestions, source_texts  # noqa: E402
from commit import commit  # noqa: E402

from index_tools import open_index  # noqa: E402
from index_tools.match import kernel  # noqa: E402

WARMUP = 10

# run by each engine (PYTHONPATH: its checkout): the calls answered `repeat` times each
_REPLAY = """
import hashlib, json, pickle, sys, time
from index_tools import open_index
from index_tools.match import kernel
idx = open_index(sys.argv[1])
calls, repeat = pickle.load(open(sys.argv[2], "rb")), int(sys.argv[3])
shards = [(sh.compiled(), sh.native) for sh in idx.shards]
digest = hashlib.sha256()
for shard, args in calls:  # (once: the answers, and the pages in memory)
    digest.update(kernel.crowded_spans(*shards[shard], *args).tobytes())
t = time.perf_counter()
for _ in range(repeat):
    for shard, args in calls:
        kernel.crowded_spans(*shards[shard], *args)
us = (time.perf_counter() - t) / repeat / max(1, len(calls)) * 1e6
print(json.dumps({"us": us, "answers": digest.hexdigest()[:12]}))
"""


def capture(idx, pairs, slowest: int) -> tuple[list, list[tuple[int, float, int]]]:
    """The crowded-anchor calls of the `slowest` lookups (by this engine's time): (shard,
    arguments) each, and (suggestion, ms, calls) of those lookups."""
    shard_of = {id(sh.native): i for i, sh in enumerate(idx.shards)}
    looked = []
    lookups = [(context_of(before), suggestion) for before, suggestion in pairs]
    for context, suggestion in lookups[:WARMUP]:  # (a process's first lookups: not the slowest)
        idx.match(suggestion, context, 60, language="python")
    for i, (context, suggestion) in enumerate(lookups):
        t = time.perf_counter()
        idx.match(suggestion, context, 60, language="python")
        looked.append(((time.perf_counter() - t) * 1000, i, context))
    calls, chosen = [], []
    original = kernel.crowded_spans

    def recorded(k, native, *args):
        calls.append((shard_of[id(native)], args))
        return original(k, native, *args)

    kernel.crowded_spans = recorded
    try:
        for ms, i, context in sorted(looked, reverse=True)[:slowest]:
            before = len(calls)
            idx.match(pairs[i][1], context, 60, language="python")
            chosen.append((i, ms, len(calls) - before))
    finally:
        kernel.crowded_spans = original
    return calls, chosen


def replay(repo: Path, index: Path, calls_file: str, repeat: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _REPLAY, str(index), calls_file, str(repeat)],
        env={**os.environ, "PYTHONPATH": str(repo), "RECITATION_SEARCH_THREADS": "0"},
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="an index directory")
    ap.add_argument("--texts", required=True, help="source spec the suggestions are cut from")
    ap.add_argument("--suggestions", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--slowest", type=int, default=5, help="lookups whose calls are replayed")
    ap.add_argument("--repeat", type=int, default=600, help="times each call is answered")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each engine, taking turns")
    ap.add_argument(
        "--engines", default=".",
        help="git revisions (each in a checkout of it, its kernel built) or `.`, comma-separated",
    )  # fmt: skip
    ap.add_argument("--out", help="write markdown here")
    args = ap.parse_args()
    index = Path(args.index)
    pairs = make_suggestions(source_texts(args.texts), args.suggestions, 300, args.seed)
    idx = open_index(index)
    read_through(idx)
    calls, chosen = capture(idx, pairs, args.slowest)
    tmp = tempfile.TemporaryDirectory(prefix="recitation-crowded-")
    revs = [r.strip() for r in args.engines.split(",") if r.strip()]
    engines = {r: REPO if r == "." else checkout(r, Path(tmp.name)) for r in revs}
    results: dict[str, list[dict]] = {r: [] for r in revs}
    try:
        calls_file = str(Path(tmp.name) / "calls.pickle")
        Path(calls_file).write_bytes(pickle.dumps(calls))
        for r in range(args.rounds):
            for rev in revs if r % 2 == 0 else revs[::-1]:
                results[rev].append(replay(engines[rev], index, calls_file, args.repeat))
                print(rev, results[rev][-1], flush=True)
    finally:
        for path in engines.values():
            if path != REPO:
                remove_checkout(path)
        tmp.cleanup()
    name = {r: f"`{commit()}`" if r == "." else f"`{r}`" for r in revs}
    answers = {res["answers"] for way in results.values() for res in way}
    lines = [
        "# The compiled search's work on crowded anchors, replayed",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit `{commit()}`"
        f" on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}.",
        "",
        "Reproduce:",
        "",
        "```",
        f"python bench/bench_crowded.py --index INDEX --texts {args.texts} --suggestions "
        f"{args.suggestions} --seed {args.seed} --slowest {args.slowest} --repeat {args.repeat}"
        f" --rounds {args.rounds} --engines {args.engines}"
        + (f" --out {args.out}" if args.out else ""),
        "```",
        "",
        f"Index: {idx.summary().get('words'):,} words in "
        f"{len(idx.shards)} shards. The {args.slowest} slowest of "
        f"{len(pairs)} suggestions (`bench_server.py`'s, seed {args.seed}): "
        + ", ".join(f"#{i} ({ms:.1f} ms, {n} calls)" for i, ms, n in chosen)
        + f"; {len(calls)} calls (a shard and an anchor each), each answered {args.repeat} "
        f"times per run, one thread. Answers the same in every run: "
        f"{'yes' if len(answers) == 1 else 'NO'} (`{'`, `'.join(sorted(answers))}`).",
        "",
        "| engine | µs per call, each run | median |",
        "| --- | --- | ---: |",
    ]
    for rev in revs:
        us = [res["us"] for res in results[rev]]
        lines.append(
            f"| {name[rev]} | {' / '.join(f'{u:.0f}' for u in us)} | "
            f"**{statistics.median(us):.0f}** |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0 if len(answers) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
