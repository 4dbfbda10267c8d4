"""A build's peak memory and time, this tree's builder beside an earlier commit's, taking
turns on the same corpora, and whether the two wrote the same bytes.

Each build is `python -m index_tools.cli build SPEC --out DIR --shard-words N --json` in a
child process of its own (the earlier commit's code from `git archive`, on PYTHONPATH); its
peak is the operating system's account of the largest single process of the build (the
main process or a worker: `wait4`'s maximum resident set, as `/usr/bin/time -v` reports
it). Every file of the two generations is hashed (the header key by key, without its
timestamps) and compared; what differs is named.

Corpora: any build source, and `copies:N` — N copies of the running Python's standard
library (`.py` files) as folders, each with a third of its identifiers renamed by a hash of
the word and the copy (distinct files, a vocabulary that grows with the copies), made once
under --cache.

    .venv/bin/python bench/bench_build_memory.py --before 440a5b9 \
        --corpus copies:6 --corpus copies:12 --shard-words 8388608 --runs 2 \
        --out bench/results/build-memory.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import keyword
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIMESTAMPS = ("created", "file_mtimes")
WORD = re.compile(r"[A-Za-z_]\w*")


def stdlib_copies(cache: Path, n: int) -> Path:
    """N renamed copies of the standard library's .py files (made once)."""
    out = cache / f"stdlib-copies-{n}"
    if (out / ".complete").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    src = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in src.rglob("*.py") if "site-packages" not in p.parts)
    for k in range(n):

        def rename(m: re.Match, k: int = k) -> str:
            w = m.group(0)
            if keyword.iskeyword(w) or len(w) < 4:
                return w
            h = hashlib.blake2b(f"{k}:{w}".encode(), digest_size=1).digest()[0]
            return f"{w}_{k}" if h < 86 else w

        for p in files:
            try:
                text = p.read_text()
            except (UnicodeDecodeError, OSError):
                continue
            q = out / f"copy{k:03d}" / p.relative_to(src)
            q.parent.mkdir(parents=True, exist_ok=True)
            q.write_text(f"# copy {k}\n" + WORD.sub(rename, text))
    (out / ".complete").write_text("")
    return out


def source_of(spec: str, cache: Path) -> str:
    if spec.startswith("copies:"):
        return str(stdlib_copies(cache, int(spec.split(":", 1)[1])))
    return spec


def earlier_tree(commit: str, where: Path) -> Path:
    """The engine at `commit` (its compiled search copied from this tree: builds do not
    use it, imports look for it)."""
    tree = where / f"engine-{commit}"
    if not tree.exists():
        tree.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", commit, "index_tools"],
            capture_output=True, check=True,
        ).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        for lib in (REPO / "index_tools" / "match").glob("libkernel-*"):
            shutil.copy(lib, tree / "index_tools" / "match" / lib.name)
    return tree


def engine_at(code: Path, where: Path, env: dict) -> str:
    """Where a build run as `build` runs it imports the builder from."""
    return subprocess.run(
        [sys.executable, "-c", "import index_tools.build.local as m; print(m.__file__)"],
        capture_output=True, text=True, check=True, cwd=where,
        env={**env, "PYTHONPATH": str(code)},
    ).stdout.strip()  # fmt: skip


def build(code: Path, source: str, out: Path, shard_words: int, env: dict) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "index_tools.cli", "build", source, "--out", str(out)]
    command += ["--shard-words", str(shard_words), "-q", "--json"]
    started = time.perf_counter()
    p = subprocess.Popen(  # run from the output's folder: `-m` imports from its folder first
        command, stdout=subprocess.PIPE, env={**env, "PYTHONPATH": str(code)}, text=True,
        cwd=out.parent,
    )  # fmt: skip
    stdout = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stdout.close()
    wall = time.perf_counter() - started
    if p.returncode != 0:
        raise SystemExit(f"build failed ({p.returncode}): {' '.join(command)}")
    summary = json.loads(stdout)
    if not (out / "CURRENT").exists():
        raise SystemExit(f"no index at {out}")
    return {
        "peak_mb": usage.ru_maxrss / 1024,  # kilobytes on Linux
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "words": summary["words"],
        "vocabulary": summary["vocabulary"],
        "shards": summary["shards"],
        "documents": summary["documents"],
    }


def digests(root: Path) -> dict[str, str]:
    """Each file of the live generation by its SHA-256; the header by each of its keys
    (`HEADER.json:KEY`), its timestamps left out."""
    gen = root / (root / "CURRENT").read_text().strip()
    out = {}
    for p in sorted(gen.iterdir()):
        if p.name == "HEADER.json":
            header = json.loads(p.read_text())
            for key in TIMESTAMPS:
                header.pop(key, None)
            for key, value in header.items():
                data = json.dumps(value, sort_keys=True).encode()
                out[f"{p.name}:{key}"] = hashlib.sha256(data).hexdigest()
        else:
            out[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def differing(a: dict[str, str], b: dict[str, str]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the earlier commit")
    ap.add_argument("--corpus", action="append", required=True, help="a build source")
    ap.add_argument("--shard-words", type=int, default=1 << 27)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--cache", default=str(REPO / ".cache" / "bench" / "build-memory"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    rows = []
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        engines = {"before": earlier_tree(args.before, Path(tmp)), "after": REPO}
        for name, code in engines.items():
            imported = engine_at(code, Path(tmp), env)
            if not imported.startswith(str(code)):
                raise SystemExit(f"the {name} build would import {imported}, not {code}")
        for spec in args.corpus:
            source = source_of(spec, cache)
            got: dict[str, list[dict]] = {"before": [], "after": []}
            differ: set[str] = set()
            for _ in range(args.runs):
                for name in ("after", "before"):  # taking turns
                    out = Path(tmp) / f"idx-{name}"
                    got[name].append(build(engines[name], source, out, args.shard_words, env))
                    print(spec, name, got[name][-1], file=sys.stderr, flush=True)
                before, after = digests(Path(tmp) / "idx-before"), digests(Path(tmp) / "idx-after")
                differ.update(differing(before, after))
            rows.append((spec, got, sorted(differ)))
    write_report(args, rows)


def write_report(args, rows) -> None:
    lines = [
        "# Build memory: bounded by the shard",
        "",
        f"This tree's builder beside commit `{args.before}`'s, taking turns, {args.runs} "
        f"runs each, `--shard-words {args.shard_words:,}`; peak = the largest single process "
        "of the build (the operating system's maximum resident set, as `/usr/bin/time -v` "
        "reports it); the lower of the runs. Every file of the two generations hashed (the "
        "header key by key, without its timestamps).",
        "",
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}.",
        "",
        "Reproduce:",
        "",
        "```",
        "python bench/bench_build_memory.py --before "
        + args.before
        + "".join(f" --corpus {c}" for c in args.corpus)
        + f" --shard-words {args.shard_words} --runs {args.runs} --out {args.out}",
        "```",
        "",
        "| corpus | words | distinct words | shards | peak MB before | peak MB after "
        "| wall s before | wall s after | cpu s before | cpu s after | same bytes (what differs) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for spec, got, differ in rows:
        b, a = got["before"], got["after"]
        lines.append(
            f"| {spec} | {a[0]['words']:,} | {a[0]['vocabulary']:,} | {a[0]['shards']} "
            f"| {min(r['peak_mb'] for r in b):,.0f} | {min(r['peak_mb'] for r in a):,.0f} "
            f"| {min(r['wall_s'] for r in b):.1f} | {min(r['wall_s'] for r in a):.1f} "
            f"| {min(r['cpu_s'] for r in b):.1f} | {min(r['cpu_s'] for r in a):.1f} "
            f"| {'yes' if not differ else '**no**: ' + ', '.join(differ)} |"
        )
    if len(rows) >= 2:
        (s1, g1, _), (s2, g2, _) = rows[0], rows[-1]
        dw = g2["after"][0]["words"] - g1["after"][0]["words"]
        if dw:
            lines += ["", f"Growth of the peak from {s1} to {s2}, per word of the corpus:"]
            for name in ("before", "after"):
                p1 = min(r["peak_mb"] for r in g1[name])
                p2 = min(r["peak_mb"] for r in g2[name])
                lines.append(f"- {name}: {(p2 - p1) * (1 << 20) / dw:.2f} bytes a word")
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
