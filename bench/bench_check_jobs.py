"""`recitation-index check` on one core and on several: the same tree, the same index,
taking turns; the best wall time of each, files/s and words/s, and whether every report was
the same byte for byte.

Each run is `python -m index_tools.cli check . --index IDX --jobs N --format json` in the
tree, a child process timed from its start to its exit (start-up included).

    .venv/bin/python bench/bench_check_jobs.py --tree numpy-2.5.5 --index IDX-STDLIB \
        --jobs 1,2 --runs 2 --engines REV,. --out bench/results/check-jobs.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
LOAD = os.getloadavg()[0]

from bench_commits import checkout, remove_checkout  # noqa: E402
from commit import commit  # noqa: E402

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


def descendants(pid: int) -> list[int]:
    """The processes under `pid` (its workers), from /proc (Linux)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        out += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return out


def anon_kib(pid: int) -> int:
    """A process's resident memory of its own (RssAnon: not the index's mapped pages)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(tree: Path, index: str, jobs: int, repo: Path = REPO) -> tuple[float, str, int]:
    """(wall s, the report, the largest worker's resident memory of its own in MB, sampled
    every 50 ms; the check process itself where it has no workers)."""
    # -P: the tree's own packages (numpy's sources) are not imported from its folder
    command = [sys.executable, "-P", "-m", "index_tools.cli", "check", ".", "--index", index]
    command += ["--jobs", str(jobs), "--format", "json", "--allow-skipped"]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    started = time.perf_counter()
    p = subprocess.Popen(
        command, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    peak = 0
    with ThreadPoolExecutor(1) as reader:
        got = reader.submit(p.communicate)
        while not got.done():
            workers = descendants(p.pid) or [p.pid]
            peak = max([peak] + [anon_kib(w) for w in workers])
            time.sleep(0.05)
        stdout, stderr = got.result()
    wall = time.perf_counter() - started
    if p.returncode not in (0, 1) or not stdout.startswith("{"):
        raise SystemExit(f"check failed ({p.returncode}): {stderr}")
    return wall, stdout, peak // 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument(
        "--engines",
        default=".",
        help="engines side by side, taking turns: git revisions (each in a checkout of it) "
        "or . for this work tree (default: .)",
    )
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    jobs = [int(j) for j in args.jobs.split(",")]
    where = Path(tempfile.mkdtemp(prefix="recitation-check-jobs-"))
    engines: dict[str, Path] = {}
    for rev in args.engines.split(","):
        engines[rev] = REPO if rev == "." else checkout(rev, where)
    keys = [(e, j) for e in engines for j in jobs]
    walls: dict[tuple[str, int], list[float]] = {k: [] for k in keys}
    peaks: dict[tuple[str, int], list[int]] = {k: [] for k in keys}
    reports: set[str] = set()
    try:
        for _ in range(args.runs):
            for engine, j in keys:  # taking turns
                wall, out, peak = run(tree, args.index, j, engines[engine])
                walls[(engine, j)].append(wall)
                peaks[(engine, j)].append(peak)
                reports.add(out)
                print(f"{engine} --jobs {j}: {wall:.2f} s, {peak} MB", file=sys.stderr, flush=True)
    finally:
        for path in engines.values():
            if path != REPO:
                remove_checkout(path)
    report = json.loads(next(iter(reports)))
    skipped = {n["file"] for n in report["not_checked"]}
    files, words = words_read(tree, skipped)
    assert files == report["files_checked"], (files, report["files_checked"])
    best = {k: min(w) for k, w in walls.items()}
    named = ", ".join(f"`{e}`" for e in engines)
    lines = [
        "# `check` on every core",
        "",
        f"`recitation-index check` of {tree.name} ({files:,} files checked, {words:,} words; "
        f"{len(report['results']):,} results) against the index `{args.index}` with the "
        f"engine of {named}, taking turns, {args.runs} runs each, the best wall time of each "
        "(a whole process, start-up included), and the largest worker's resident memory of "
        "its own (RssAnon, sampled every 50 ms: not the index's mapped pages; the check "
        f"process itself with one job). Every report the same byte for byte: "
        f"{'yes' if len(reports) == 1 else '**no**'}.",
        "",
        f"{platform.machine()}, {cores()} cores, Python {platform.python_version()}, commit "
        f"`{commit()}`, load average before {LOAD:.1f}.",
        "",
        "Reproduce:",
        "",
        "```",
        f"python bench/bench_check_jobs.py --tree {args.tree} --index {args.index} "
        f"--jobs {args.jobs} --runs {args.runs} --engines {args.engines} --out {args.out}",
        "```",
        "",
        "| engine | --jobs | wall s (runs) | files/s | words/s | speed-up | worker MB (runs) |",
        "| --- | ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for engine, j in keys:
        runs = " / ".join(f"{w:.2f}" for w in walls[(engine, j)])
        mem = " / ".join(str(m) for m in peaks[(engine, j)])
        first = best[(engine, jobs[0])]
        lines.append(
            f"| `{engine}` | {j} | **{best[(engine, j)]:.2f}** ({runs}) | "
            f"{files / best[(engine, j)]:,.0f} | {words / best[(engine, j)]:,.0f} | "
            f"{first / best[(engine, j)]:.2f}× | {mem} |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
