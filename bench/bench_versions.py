"""An index kept current through new versions of its sources: an add given all of its
index's sources builds it anew once half its words are in documents no file holds any more
(what `add` does now) beside adds that keep those documents (what it did before).

The corpus: the Python files of PyPI wheels from the package cache (`.cache/bench/registry`,
pure-Python wheels of 0.2–3 MB, in a seeded order, until `--mb` of code), one folder. Each
new version rewrites `--share` of its files (a line appended: a new document each, the old
one dead), then both indexes take the folder (`add`, one after the other, the order
alternating). At the end: each index's words, documents, bytes and shards beside a fresh
build of the last version, and the same lookups on both (bench_latency's windows, two rounds
in alternating order), their answers compared without the sources listed (which of many
files are named first follows the documents' order, which a build anew changes).

    .venv/bin/python bench/bench_versions.py --versions 8 --work DIR --out bench/results/versions.md
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_adds import latency_table, side_by_side  # noqa: E402
from bench_latency import outputs, workload  # noqa: E402
from commit import run_header, shown_argv  # noqa: E402

from index_tools import BuildOptions, add_to_index, build_index, open_index  # noqa: E402
from index_tools.build import local  # noqa: E402
from index_tools.store import generations as store  # noqa: E402

WAYS = ("before", "now")
CACHE = ROOT / ".cache" / "bench" / "registry" / "pypi"


def corpus(folder: Path, mb: float, seed: int) -> int:
    wheels = sorted(CACHE.rglob("*-py3-none-any.whl"))
    random.Random(seed).shuffle(wheels)
    total = 0
    for wheel in wheels:
        if not (200_000 < wheel.stat().st_size < 3_000_000):
            continue
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.endswith(".py"):
                    data = z.read(name)
                    path = folder / wheel.name.split("-")[0] / name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
                    total += len(data)
        if total > mb * 1e6:
            break
    return total


def facts(root: Path) -> dict:
    gen, h = store.read_header(root)
    return {
        "words": h.words,
        "documents": h.documents,
        "dead words": local.dead_words(gen, h),
        "shards": h.shards,
        "bytes": sum(h.file_sizes.values()),
    }


def counted(found) -> list:
    """An answer without the sources it lists (their order follows the documents')."""
    return _without_sources(outputs(found))


def _without_sources(value):
    if isinstance(value, dict):
        return {k: _without_sources(v) for k, v in value.items() if k not in ("sources", "renamed")}
    if isinstance(value, list):
        return [_without_sources(v) for v in value]
    return value


def grow(work: Path, src: Path, versions: int, share: float, seed: int) -> list[dict]:
    rng = random.Random(seed)
    paths = sorted(src.rglob("*.py"))
    rows = []
    for k in range(versions + 1):
        if k:
            for path in rng.sample(paths, int(len(paths) * share)):
                with open(path, "a", encoding="utf-8") as f:
                    f.write(f"\n# version {k} {rng.getrandbits(32):x}\n")
        row: dict = {"version": k}
        for way in WAYS if k % 2 == 0 else WAYS[::-1]:
            opts = BuildOptions(progress=False)
            t = time.perf_counter()
            if k == 0:
                build_index([str(src)], work / way, opts)
                rebuilt = None
            else:
                share_now = local.REBUILD_DEAD_SHARE
                local.REBUILD_DEAD_SHARE = float("inf") if way == "before" else share_now
                try:
                    rebuilt = add_to_index(work / way, [str(src)], opts).rebuilt
                finally:
                    local.REBUILD_DEAD_SHARE = share_now
            row[way] = {"s": time.perf_counter() - t, "rebuilt": rebuilt, **facts(work / way)}
        rows.append(row)
        print(row, flush=True)
    return rows


def markdown(
    rows: list[dict], fresh: dict, found: dict, argv: str, code_mb: float, load: float
) -> str:
    last = rows[-1]
    lines = run_header(
        "An index kept current through new versions: built anew once half its words are dead",
        "python bench/bench_versions.py " + argv,
        load,
    ) + [
        f"One folder of {code_mb:.1f} MB of Python code (pure-Python PyPI wheels), built, then "
        f"{len(rows) - 1} new versions each rewriting a share of its files, each added to "
        "both indexes in turn. `before`: every add keeps the documents no file holds any "
        "more (what `add` did before); `now`: an add given all of its index's sources "
        f"builds it anew once {local.REBUILD_DEAD_SHARE:.0%} of its words are in such "
        "documents.",
        "",
        "| version | before s | before words | dead | shards | MB | now s | now words | dead "
        "| shards | MB |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        cells = []
        for w in WAYS:
            f = r[w]
            note = " (built anew)" if f["rebuilt"] is not None else ""
            cells.append(
                f"{f['s']:.1f}{note} | {f['words']:,} | {f['dead words']:,} | {f['shards']} | "
                f"{f['bytes'] / 1e6:.0f}"
            )
        lines.append(f"| {r['version'] or 'build'} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        f"A fresh build of the last version: {fresh['words']:,} words, {fresh['shards']} "
        f"shard(s), {fresh['bytes'] / 1e6:.0f} MB. The adds' time in all: before "
        f"{sum(r['before']['s'] for r in rows[1:]):.1f} s, now "
        f"{sum(r['now']['s'] for r in rows[1:]):.1f} s; the index in the end "
        f"{last['before']['bytes'] / 1e6:.0f} → {last['now']['bytes'] / 1e6:.0f} MB.",
        "",
        "Lookups in the end (300-word suggestions with 200 words of context from the last "
        "version's files; compiled search; each lookup on both indexes in turn, the order "
        "alternating; `differ`: lookups whose answers differed, the sources they list left "
        "aside):",
        "",
    ]
    lines += latency_table(found)
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=60.0, help="megabytes of code in the folder")
    ap.add_argument("--versions", type=int, default=8)
    ap.add_argument("--share", type=float, default=0.2, help="files each version rewrites")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", required=True, help="a folder for the corpus and indexes (emptied)")
    ap.add_argument("--out")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    src = work / "code"
    code_mb = corpus(src, args.mb, args.seed) / 1e6
    rows = grow(work, src, args.versions, args.share, args.seed)
    build_index([str(src)], work / "fresh", BuildOptions(progress=False))
    pairs = workload(str(src), args.queries, args.seed)
    with open_index(work / "before") as a, open_index(work / "now") as b:
        found = side_by_side({"before": a, "now": b}, pairs, args.rounds, answer=counted)
    argv = shown_argv(sys.argv[1:], {"--work": "DIR"})
    text = markdown(rows, facts(work / "fresh"), found, argv, code_mb, load)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
