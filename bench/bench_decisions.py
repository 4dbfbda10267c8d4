"""What a large decisions file costs: 150,000 allowed sources (1.7 MB, under the 2 MiB cap)
parsed, indexed, and asked about a quote's sources as every check asks; and `check` of one
file with and without that file.

    python bench/bench_decisions.py [--sources 150000] [--repeat 5]

Prints the figures (seconds); nothing is written. An index of a few files is built in a
temporary folder for `check`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from index_tools import BuildOptions, Source, build_index  # noqa: E402
from index_tools.judge.decisions import parse_decisions  # noqa: E402


def allow_list(n: int) -> str:
    lines = ["version = 1", "", "[allow]", "sources = ["]
    for i in range(n):
        if i % 50 == 0:
            lines.append(f'"gh.io/o{i:x}/*",')
        elif i % 50 == 1:
            lines.append(f'"o{i:x}/s/**",')
        else:
            lines.append(f'"o{i:x}/r",')
    return "\n".join([*lines, "]", ""])


def snippet(name: str) -> str:
    body = "".join(
        f"    total_{name}_{i} = compute(values[{i}], {i * 7919 % 1000}, '{name}')\n"
        for i in range(10)
    )
    return f"def function_{name}(values, factor):\n{body}    return total_{name}_0\n"


def seconds(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", type=int, default=150_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    text = allow_list(args.sources)
    print(f"decisions file: {args.sources} allowed sources, {len(text.encode()):,} bytes")
    print(f"parse: {seconds(lambda: parse_decisions(text), args.repeat):.3f} s")
    sources = [
        Source(f"acme/widgets{j}", f"src/x{j}.py", "", "MIT", f"https://github.com/acme/w{j}",
               1, 2)
        for j in range(10)
    ]  # fmt: skip
    decisions = parse_decisions(text)
    t = time.perf_counter()
    decisions.allowed_by(sources)
    print(f"first question (the index built): {time.perf_counter() - t:.3f} s")
    print(
        "a quote's 10 sources, none allowed: "
        f"{seconds(lambda: decisions.allowed_by(sources), args.repeat) * 1000:.3f} ms"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "src").mkdir()
        for name in ("alpha", "beta", "gamma"):
            (root / "src" / f"{name}.py").write_text(snippet(name))
        build_index([str(root / "src")], root / "idx", BuildOptions(jobs=1, progress=False))
        work = root / "work"
        work.mkdir()
        (work / "x.py").write_text("\n\n".join(snippet(n) for n in ("alpha", "beta", "gamma")))
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        command = [sys.executable, "-m", "index_tools.cli", "check", str(work / "x.py")]
        command += ["--index", str(root / "idx"), "--format", "json"]

        def check() -> None:
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode not in (0, 1):
                raise SystemExit(f"check failed: {done.stderr}")

        print(f"check, no decisions file: {seconds(check, args.repeat):.3f} s")
        (work / ".recitation.toml").write_text(text)
        print(f"check, with it: {seconds(check, args.repeat):.3f} s")


if __name__ == "__main__":
    main()
