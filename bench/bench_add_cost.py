"""What one `add` costs: its time and the bytes it writes, two checkouts side by side.

Each round, for each batch and each checkout in turn: a fresh copy of the base index (a real
copy: no file shared with the base), then one `add` of the batch by that checkout's code in
a child process, timed, the bytes it wrote read from /proc (Linux).

    git worktree add OLD COMMIT   # (copy the compiled kernel into OLD's index_tools/match)
    RECITATION_PACKAGE_CACHE=.cache/bench/registry .venv/bin/python bench/bench_add_cost.py \\
        --index BASE --batch B1.txt --batch B2.txt --code OLD --code . --rounds 2 \\
        --out bench/results/add-cost.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from commit import run_header, shown_argv  # noqa: E402

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, os.getcwd())
from index_tools import BuildOptions, add_to_index
from index_tools.build.sources.packages import RegistryOptions

def written():
    with open("/proc/self/io") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("write_bytes"))

registry = RegistryOptions(keep_going=True, max_download_bytes=200 << 20)
before, t = written(), time.perf_counter()
s = add_to_index(sys.argv[1], ["pypi:" + sys.argv[2]], BuildOptions(progress=False, registry=registry))
print(json.dumps({"s": time.perf_counter() - t, "written": written() - before,
                  "files": s.files, "words": s.words, "shards": s.shards}))
"""


def checkout_commit(code: Path) -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=code, capture_output=True, text=True
    )
    return out.stdout.strip() or "?"


def one(index: Path, work: Path, code: Path, batch: Path) -> dict:
    copy = work / "copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(index, copy)
    os.sync()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(copy), str(batch.resolve())],
        cwd=code, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


HIDDEN = {"--code": "CHECKOUT", "--index": "BASE", "--work": "DIR", "--batch": "BATCH.txt"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, type=Path, help="the base index (copied each time)")
    ap.add_argument("--batch", action="append", required=True, type=Path, help="a pinned list")
    ap.add_argument("--code", action="append", required=True, type=Path, help="a checkout")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path(".cache/bench/add-cost"))
    ap.add_argument("--out")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for r in range(args.rounds):
        for batch in args.batch:
            for k in range(len(args.code)):
                code = args.code[(k + r) % len(args.code)]  # the order alternating
                got = one(args.index, args.work, code, batch)
                rows.append({"round": r + 1, "batch": batch.name, "code": code, **got})
                print(rows[-1], flush=True)
    shutil.rmtree(args.work / "copy", ignore_errors=True)
    names = {c: checkout_commit(c) for c in args.code}
    command = "RECITATION_PACKAGE_CACHE=.cache/bench/registry python bench/bench_add_cost.py "
    lines = run_header(
        "One add's cost: its time and the bytes it writes",
        command + shown_argv(sys.argv[1:], HIDDEN),
        load,
    ) + [
        "Each add to a fresh copy of the base index, by each checkout in turn (the order "
        "alternating); `written`: the bytes the add's process wrote (/proc's write_bytes).",
        "",
        "| round | batch | checkout | files added | words added | shards | s | MB written |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row['round']} | {row['batch']} | `{names[row['code']]}` | {row['files']:,} | "
            f"{row['words']:,} | {row['shards']} | {row['s']:.2f} | {row['written'] / 1e6:,.0f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
