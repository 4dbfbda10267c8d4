"""An index kept current by `add`s: its shards, each add's time, and its lookups, with each
add's shards joined with the smaller ones before them (`settled`, what `add` does) beside
the same adds leaving every add's shards apart (what `add` did before).

A package list (pinned, as `bench/registry_packages/*.txt`) is split: the first part built
into both indexes, the rest added in `--adds` batches, each batch to one index and then
the other (taking turns, so both see the same machine). Then the same lookups on both
(bench_latency's windows: quoted and novel, with the language and without), two rounds in
alternating order, every lookup's answer compared between the indexes.

    RECITATION_PACKAGE_CACHE=.cache/bench/registry .venv/bin/python bench/bench_adds.py \\
        --packages bench/registry_packages/pypi-24th.txt --adds 16 --work DIR \\
        --out bench/results/adds.md
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_index import pct  # noqa: E402
from bench_latency import outputs, workload  # noqa: E402
from commit import run_header, shown_argv  # noqa: E402

from index_tools import BuildOptions, add_to_index, build_index, open_index  # noqa: E402
from index_tools.build import local  # noqa: E402
from index_tools.build.sources.packages import RegistryOptions  # noqa: E402
from index_tools.store import generations as store  # noqa: E402

WAYS = ("apart", "settled")


def batches(lines: list[str], first: int, adds: int) -> list[list[str]]:
    rest = lines[first:]
    size = -(-len(rest) // adds)
    return [lines[:first]] + [rest[k : k + size] for k in range(0, len(rest), size)]


def spec_file(work: Path, k: int, names: list[str]) -> str:
    path = work / f"batch-{k:03d}.txt"
    path.write_text("\n".join(names) + "\n", encoding="utf-8")
    return f"pypi:{path}"


def grow(work: Path, parts: list[list[str]], opts: BuildOptions) -> list[dict]:
    """Both indexes built from the first part and grown by the rest, one add each in turn."""
    rows = []
    for k, names in enumerate(parts):
        spec = spec_file(work, k, names)
        row = {"add": k, "packages": len(names)}
        for way in WAYS if k % 2 == 0 else WAYS[::-1]:
            t = time.perf_counter()
            ratio = local.JOIN_RATIO
            local.JOIN_RATIO = 0 if way == "apart" else ratio  # 0: no shard is ever joined
            try:
                if k == 0:
                    build_index([spec], work / way, opts)
                else:
                    add_to_index(work / way, [spec], opts)
            finally:
                local.JOIN_RATIO = ratio
            row[f"{way}_s"] = time.perf_counter() - t
            row[f"{way}_shards"] = store.read_header(work / way)[1].shards
        row["words"] = store.read_header(work / "settled")[1].words
        rows.append(row)
        print(row, flush=True)
    return rows


def side_by_side(indexes: dict, pairs: dict, rounds: int, answer=outputs) -> dict:
    """Each workload (with the language and without) on every index of `indexes` (name ->
    open index) in turn, `rounds` times, the order alternating: each index's times, and
    how many lookups' answers (`answer` of the matches) differed between them."""
    names = list(indexes)
    out: dict = {}
    for kind, items in pairs.items():
        for language in ("python", None):
            times: dict[str, list[float]] = {n: [] for n in names}
            differ = 0
            for name in names:  # warm-up: imports, first page faults
                for ctx, sug in items[:20]:
                    indexes[name].match(sug, ctx, language=language)
            for r in range(rounds):
                for i, (ctx, sug) in enumerate(items):
                    got = []
                    for name in names if (i + r) % 2 == 0 else names[::-1]:
                        t = time.perf_counter()
                        found = indexes[name].match(sug, ctx, language=language)
                        times[name].append((time.perf_counter() - t) * 1000)
                        got.append(answer(found))
                    differ += any(g != got[0] for g in got[1:])
            key = f"{kind} / {language or 'none'}"
            out[key] = {"times": times, "differ": differ, "n": len(items) * rounds}
            print(key, {n: round(pct(times[n], 99), 2) for n in names}, flush=True)
    return out


def latency_table(found: dict) -> list[str]:
    """`side_by_side`'s times as a markdown table, p50 / p90 / p99 / max of each index."""
    names = list(next(iter(found.values()))["times"])
    heads = " | ".join(f"{n} p50 / p90 / p99 / max ms" for n in names)
    lines = [
        f"| workload / language | n | differ | {heads} |",
        "| --- | ---: | ---: |" + " --- |" * len(names),
    ]
    for key, r in found.items():
        cells = " | ".join(
            " / ".join(f"{pct(r['times'][n], q):.2f}" for q in (50, 90, 99))
            + f" / {max(r['times'][n]):.2f}"
            for n in names
        )
        lines.append(f"| {key} | {r['n']} | {r['differ']} | {cells} |")
    return lines


def markdown(rows: list[dict], found: dict, argv: str, load: float) -> str:
    last = rows[-1]
    lines = run_header(
        "An index kept current by adds: each add's shards joined with the smaller ones before",
        "RECITATION_PACKAGE_CACHE=.cache/bench/registry python bench/bench_adds.py " + argv,
        load,
    ) + [
        f"Built from {rows[0]['packages']} packages, then {len(rows) - 1} adds of "
        f"{rows[1]['packages']} packages each ({last['words']:,} words in the end). `apart`: "
        "every add's shards left as written (what `add` did before); `settled`: each add's "
        "shards joined with the smaller ones before them (`JOIN_RATIO` 2, within the add's "
        "shard limit: what `add` does now). Each add ran on one index and then the other, "
        "the order alternating.",
        "",
        f"Shards in the end: apart **{last['apart_shards']}**, settled "
        f"**{last['settled_shards']}** (at most {max(r['settled_shards'] for r in rows)} "
        "after any add). The adds' time in all: apart "
        f"{sum(r['apart_s'] for r in rows[1:]):.1f} s, settled "
        f"{sum(r['settled_s'] for r in rows[1:]):.1f} s.",
        "",
        "| add | packages | words after | apart s | apart shards | settled s | settled shards |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {'build' if r['add'] == 0 else r['add']} | {r['packages']} | {r['words']:,} | "
            f"{r['apart_s']:.1f} | {r['apart_shards']} | {r['settled_s']:.1f} | "
            f"{r['settled_shards']} |"
        )
    lines += [
        "",
        "Lookups on the two indexes in the end (300-word suggestions with 200 words of "
        "context; compiled search; each lookup on both indexes in turn, the order "
        "alternating; `differ`: lookups whose answers, the matches' JSON, differed):",
        "",
    ]
    lines += latency_table(found)
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", required=True, help="a pinned PyPI list, one per line")
    ap.add_argument("--first", type=float, default=0.33, help="share of the list built first")
    ap.add_argument("--adds", type=int, default=16)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", required=True, help="a folder for the two indexes (emptied)")
    ap.add_argument("--out")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    names = [
        ln.strip()
        for ln in Path(args.packages).read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    parts = batches(names, max(1, int(len(names) * args.first)), args.adds)
    registry = RegistryOptions(keep_going=True, max_download_bytes=200 << 20)
    opts = BuildOptions(progress=False, registry=registry)
    rows = grow(work, parts, opts)
    pairs = workload(f"pypi:{Path(args.packages).resolve()}", args.queries, args.seed)
    with open_index(work / "apart") as a, open_index(work / "settled") as b:
        found = side_by_side({"apart": a, "settled": b}, pairs, args.rounds)
    text = markdown(rows, found, shown_argv(sys.argv[1:], {"--work": "DIR"}), load)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
