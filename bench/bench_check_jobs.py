"""`recitation-index check` on one core and on several: the same tree, the same index,
taking turns; the best wall time of each, files/s and words/s, and whether every report was
the same byte for byte.

Each run is `python -m index_tools.cli check . --index IDX --jobs N --format json` in the
tree, a child process timed from its start to its exit (start-up included).

    .venv/bin/python bench/bench_check_jobs.py --tree numpy-2.5.5 --index IDX-STDLIB \
        --jobs 1,2 --runs 2 --out bench/results/check-jobs.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from index_tools.cli.check_work import cores  # noqa: E402
from index_tools.cli.code_files import read_windows  # noqa: E402
from index_tools.cli.scan import collect_files  # noqa: E402
from index_tools.text.words import count_words  # noqa: E402


def words_read(tree: Path, not_checked: set[str]) -> tuple[int, int]:
    """(files, words) of the files check reads and checks in `tree`, read as it reads them
    (their windows without the margins)."""
    here = Path.cwd()
    os.chdir(tree)
    try:
        files = [f for f in collect_files(["."]).files if f.as_posix() not in not_checked]
        words = 0
        for f in files:
            for w in read_windows(f):
                words += count_words(w.text[: w.end])
        return len(files), words
    finally:
        os.chdir(here)


def run(tree: Path, index: str, jobs: int) -> tuple[float, str]:
    # -P: the tree's own packages (numpy's sources) are not imported from its folder
    command = [sys.executable, "-P", "-m", "index_tools.cli", "check", ".", "--index", index]
    command += ["--jobs", str(jobs), "--format", "json", "--allow-skipped"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    p = subprocess.run(command, cwd=tree, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if p.returncode not in (0, 1) or not p.stdout.startswith("{"):
        raise SystemExit(f"check failed ({p.returncode}): {p.stderr}")
    return wall, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    jobs = [int(j) for j in args.jobs.split(",")]
    walls: dict[int, list[float]] = {j: [] for j in jobs}
    reports: set[str] = set()
    for _ in range(args.runs):
        for j in jobs:  # taking turns
            wall, out = run(tree, args.index, j)
            walls[j].append(wall)
            reports.add(out)
            print(f"--jobs {j}: {wall:.2f} s", file=sys.stderr, flush=True)
    report = json.loads(next(iter(reports)))
    skipped = {n["file"] for n in report["not_checked"]}
    files, words = words_read(tree, skipped)
    assert files == report["files_checked"], (files, report["files_checked"])
    best = {j: min(w) for j, w in walls.items()}
    lines = [
        "# `check` on every core",
        "",
        f"`recitation-index check` of {tree.name} ({files:,} files checked, {words:,} words; "
        f"{len(report['results']):,} results) against the index `{args.index}`, taking "
        f"turns, {args.runs} runs each, the best wall time of each (a whole process, "
        f"start-up included). Every report the same byte for byte: "
        f"{'yes' if len(reports) == 1 else '**no**'}.",
        "",
        f"{platform.machine()}, {cores()} cores, Python {platform.python_version()}.",
        "",
        "Reproduce:",
        "",
        "```",
        f"python bench/bench_check_jobs.py --tree {args.tree} --index {args.index} "
        f"--jobs {args.jobs} --runs {args.runs} --out {args.out}",
        "```",
        "",
        "| --jobs | wall s (runs) | files/s | words/s | speed-up |",
        "| ---: | --- | ---: | ---: | ---: |",
    ]
    for j in jobs:
        runs = " / ".join(f"{w:.2f}" for w in walls[j])
        lines.append(
            f"| {j} | **{best[j]:.2f}** ({runs}) | {files / best[j]:,.0f} "
            f"| {words / best[j]:,.0f} | {best[jobs[0]] / best[j]:.2f}× |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
