"""Two commits' lookup latency side by side on one machine: this checkout's
`bench_latency.py` run with each commit's engine in turn (A B, B A, ...), the same index,
queries and search path, so that a change is measured apart from how fast the machine is
that day.

    python bench/bench_commits.py b066c68 HEAD --index registry=IDX --texts pypi:LIST \\
        --rounds 3 --out bench/results/commits.md

Each commit is checked out (git worktree) in a temporary folder and its search kernel built
for this machine (scripts/build_kernel.py host); bench_latency.py runs with that checkout
first on the module path (checked: the engine imported is the checkout's, whatever this
interpreter has installed), `--search native` (or `--search` given), `--repeat` passed
on. Before each run the index's files are read once (resident pages, as
`--read-through`). Reported: each workload's p50 / p90 / p99 / max per run and the median
over the runs of each commit, and how many lookups' answers (their matches' JSON, hashed by
`bench_latency.py --answers`) differ between the runs: a speed-up that changes an answer
shows there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LATENCY = REPO / "bench" / "bench_latency.py"  # this checkout's harness, for every engine
sys.path.insert(0, str(REPO / "bench"))

from bench_latency import read_through  # noqa: E402
from commit import commit, reproduce  # noqa: E402

from index_tools import open_index  # noqa: E402

LINE = re.compile(
    r"^(\S+) (\S+) (\w+): p50 ([\d.]+) p90 ([\d.]+) p99 ([\d.]+) max ([\d.]+) ms"
)  # "<index> <workload/language> <path>: p50 .. p90 .. p99 .. max .. ms"


def checkout(rev: str, where: Path) -> Path:
    """A worktree of `rev` with its kernel built for this machine."""
    path = where / rev.replace("/", "_")
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", "-f", str(path), rev],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        [sys.executable, str(path / "scripts" / "build_kernel.py"), "host"],
        check=True, capture_output=True,
    )  # fmt: skip
    engine = subprocess.run(
        [sys.executable, "-c", "import index_tools; print(index_tools.__file__)"],
        env={**os.environ, "PYTHONPATH": str(path)},
        cwd=REPO / "bench",
        capture_output=True,
        text=True,
    ).stdout.strip()  # fmt: skip (run from the harness's folder, as the harness is)
    if not Path(engine).resolve().is_relative_to(path.resolve()):
        sys.exit(f"{rev}: the engine imported is {engine}, not the checkout's")
    return path


def remove_checkout(path: Path) -> None:
    """A checkout made by `checkout`, gone (its worktree entry too)."""
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)],
        capture_output=True,
    )  # fmt: skip


def run(
    path: Path, index: Path, bench_args: list[str], answers: dict
) -> dict[str, tuple[float, ...]]:
    """One bench_latency.py run in a checkout: {"<index> <workload>": (p50, p90, p99, max)};
    each lookup's answer (hashed) put in `answers` by workload."""
    with open_index(index) as idx:
        read_through(idx)
    # the checkout's engine, not the one this interpreter has installed (an editable
    # install points at this checkout whatever the folder a script runs from)
    env = {**os.environ, "PYTHONPATH": str(path)}
    with tempfile.TemporaryDirectory(prefix="recitation-answers-") as tmp:
        said = Path(tmp) / "answers.json"
        done = subprocess.run(
            [sys.executable, str(LATENCY), *bench_args, "--answers", str(said)],
            cwd=path, capture_output=True, text=True, env=env,
        )  # fmt: skip
        if done.returncode:
            sys.exit(f"bench_latency.py failed in {path.name}:\n{done.stderr[-2000:]}")
        answers.update(json.loads(said.read_text()))
    out = done.stdout
    found = {}
    for line in out.splitlines():
        m = LINE.match(line.strip())
        if m:
            found[f"{m[1]} {m[2]}"] = tuple(float(m[i]) for i in range(4, 8))
    return found


def differing(revs: list[str], said: dict[str, list[dict]]) -> dict[str, tuple[int, int]]:
    """Per workload: the lookups whose answer (hashed) differs in any run of either commit
    from the first run of the first commit, and the lookups compared."""
    out = {}
    for w, first in said[revs[0]][0].items():
        others = [run[w] for rev in revs for run in said[rev] if w in run]
        differ = sum(any(o[i] != a for o in others) for i, a in enumerate(first))
        out[w] = (differ, len(first))
    return out


def markdown(revs, resolved, rows, command, load, args, differ) -> str:
    repeat, mapped, pace, min_chars = args.repeat, args.map_ahead, args.pace, args.min_chars
    workloads = list(dict.fromkeys(k for runs in rows.values() for r in runs for k in r))
    lines = [
        "# Two commits side by side (lookup latency, in process)",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {commit()}'s "
        f"bench_commits.py, load average before {load:.1f}.",
        "",
        *reproduce(command),
        "Each commit's engine in a checkout of it (its kernel built for this machine), "
        "measured by this commit's `bench/bench_latency.py`, the same index and queries, the "
        "commits taking turns; the index's files read before each run"
        + (f"; each lookup run {repeat} times, its fastest kept" if repeat > 1 else "")
        + (f"; an idle pause of {pace:g} ms before each lookup, as in an editor" if pace else "")
        + (
            f"; the lookups cut from files of at least {min_chars:,} characters"
            if min_chars
            else ""
        )
        + ("; the index mapped ahead before each workload, as a server maps it" if mapped else "")
        + ". Per workload: p50 / p90 / p99 / max ms of each run, then the median of the runs. "
        "Answers (each lookup's matches as JSON, hashed) differing from the first commit's "
        "first run, in any run of either: "
        + ", ".join(f"{w.split(' ', 1)[-1]} {d} of {n}" for w, (d, n) in differ.items())
        + ".",
        "",
        "| workload | " + " | ".join(f"`{r}` ({h[:7]})" for r, h in zip(revs, resolved)) + " |",
        "| --- | " + " | ".join("---" for _ in revs) + " |",
    ]
    for w in workloads:
        cells = []
        for rev in revs:
            runs = [r[w] for r in rows[rev] if w in r]
            each = "; ".join(" / ".join(f"{x:.2f}" for x in r) for r in runs)
            med = " / ".join(f"{statistics.median(r[i] for r in runs):.2f}" for i in range(4))
            cells.append(f"{each} → **{med}**")
        lines.append(f"| {w} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def commits_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments of a script comparing two commits' engines on an index: the commits,
    the index and the texts the queries are cut from."""
    ap = argparse.ArgumentParser(
        description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("a", help="the first commit (a revision git knows)")
    ap.add_argument("b", help="the second commit")
    ap.add_argument("--index", required=True, help="NAME=DIR of a built index")
    ap.add_argument("--texts", required=True, help="the source spec the queries are cut from")
    return ap


def resolved_commits(ap: argparse.ArgumentParser, revs: list[str], same: bool = False) -> list[str]:
    """The commits' hashes (two different commits unless the `same` one may be asked
    twice, run two ways; else the usage error)."""
    out = [
        subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", r], check=True, capture_output=True, text=True
        ).stdout.strip()
        for r in revs
    ]
    if out[0] == out[1] and not same:
        ap.error(f"{revs[0]} and {revs[1]} are the same commit")
    return out


def main() -> int:
    ap = commits_parser(__doc__)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3, help="runs of each commit")
    ap.add_argument("--search", default="native", help="the search path measured")
    ap.add_argument(
        "--repeat", type=int, default=1, help="bench_latency.py's --repeat (warm lookups)"
    )
    ap.add_argument(
        "--min-chars", type=int, default=0, metavar="N",
        help="bench_latency.py's --min-chars: lookups cut from files of at least N characters",
    )  # fmt: skip
    ap.add_argument(
        "--pace", type=float, default=0.0, metavar="MS",
        help="bench_latency.py's --pace: an idle pause before each lookup (as in an editor)",
    )  # fmt: skip
    ap.add_argument(
        "--map-ahead", action="store_true",
        help="bench_latency.py's --map-ahead (the index mapped ahead, as a server maps it)",
    )  # fmt: skip
    ap.add_argument(
        "--read-through", action="store_true",
        help="bench_latency.py's --read-through: the index read again before each workload "
        "(a machine that reclaims pages untouched for a minute, however much memory is free)",
    )  # fmt: skip
    ap.add_argument("--out", help="write markdown here")
    args = ap.parse_args()
    index = Path(args.index.partition("=")[2]).resolve()
    texts = str(Path(args.texts).resolve()) if Path(args.texts).exists() else args.texts
    bench_args = [
        "--index", f"{args.index.partition('=')[0]}={index}", "--texts", texts,
        "--queries", str(args.queries), "--search", args.search, "--repeat", str(args.repeat),
        "--pace", str(args.pace), "--min-chars", str(args.min_chars),
    ] + (["--map-ahead"] if args.map_ahead else []) + (
        ["--read-through"] if args.read_through else [])  # fmt: skip
    revs = [args.a, args.b]
    resolved = resolved_commits(ap, revs)
    load = os.getloadavg()[0]
    rows: dict[str, list[dict]] = {r: [] for r in revs}
    said: dict[str, list[dict]] = {r: [] for r in revs}  # each run's answers, by workload
    with tempfile.TemporaryDirectory(prefix="recitation-commits-") as tmp:
        paths = {r: checkout(h, Path(tmp)) for r, h in zip(revs, resolved)}
        try:
            for k in range(args.rounds):
                for rev in revs if k % 2 == 0 else revs[::-1]:
                    said[rev].append({})
                    rows[rev].append(run(paths[rev], index, bench_args, said[rev][-1]))
                    print(f"round {k + 1} {rev}: {rows[rev][-1]}", flush=True)
        finally:
            for path in paths.values():
                remove_checkout(path)
    command = "python bench/bench_commits.py " + " ".join(sys.argv[1:])
    text = markdown(revs, resolved, rows, command, load, args, differing(revs, said))
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
