"""Periodic pastes: one line repeated N times, looked up in an index of a file that repeats
it 20,000 times. Every start of a line begins its own maximal span (each counted exactly),
so the work grows with the paste; this shows how (the time per line should stay flat).

    python bench/bench_periodic.py --lines 1000,2000,4000,8000 --out bench/results/periodic.md
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from commit import commit  # noqa: E402

from index_tools import BuildOptions, build_index, open_index  # noqa: E402

LINE = "x = f ( 1 )\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", default="1000,2000,4000,8000", help="paste sizes, in lines")
    ap.add_argument("--runs", type=int, default=3, help="lookups per size (the median kept)")
    ap.add_argument("--out", help="write markdown here")
    args = ap.parse_args()
    sizes = [int(v) for v in args.lines.split(",")]
    with tempfile.TemporaryDirectory(prefix="recitation-periodic-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        (src / "table.py").write_text(LINE * 20_000)
        build_index([str(src)], Path(tmp) / "idx", BuildOptions(jobs=1, progress=False))
        rows = []
        with open_index(Path(tmp) / "idx") as idx:
            for n in sizes:
                times, found = [], None
                for _ in range(args.runs):
                    t = time.perf_counter()
                    found = idx.match(LINE * n, "", language="python")
                    times.append(time.perf_counter() - t)
                m = found[0]
                rows.append((n, sorted(times)[len(times) // 2], m.query_end - m.query_start,
                             m.file_count, len(found)))  # fmt: skip
    lines = [
        "# Periodic pastes",
        "",
        f"Commit `{commit()}`, {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), load average {os.getloadavg()[0]:.1f}.",
        "",
        "```",
        "python bench/bench_periodic.py " + " ".join(sys.argv[1:]),
        "```",
        "",
        f"`{LINE.strip()}` pasted N times, looked up (language given) in an index of one file "
        "that repeats it 20,000 times; median of "
        f"{args.runs} lookups.",
        "",
        "| lines | words | seconds | ms per line | matches | matched words | files |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n, s, length, files, count in rows:
        lines.append(
            f"| {n:,} | {6 * n:,} | {s:.2f} | {s * 1000 / n:.2f} | {count} | {length:,} | {files} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
