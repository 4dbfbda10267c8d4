"""The first lookup of a new process against its later ones, two commits side by side.

A user opens the editor (or a CI job starts `serve`), and the first suggestion they accept is
looked up by a process that has looked nothing up before: what that lookup makes for the
first time (modules, keywords, the kernel's tables and threads, scratch arrays, the pages it
touches) it pays. This benchmark starts a fresh process of each commit per round, waits
until it is ready as an editor would find it (its index opened and mapped ahead: the log
line or `/v1/stats` says so), then sends the same suggestions in a rotated order (round r
starts at the r-th), and compares each round's first lookup with the same suggestion's
time when it came later in other rounds.

    python bench/bench_first_lookup.py ab2d428 HEAD --modes server,serve --rounds 12 \\
        --lookups 24 --out bench/results/first-lookup.md

Modes: `server` (the language server over stdio: didChange -> publishDiagnostics) and
`serve` (`recitation-index serve`, one worker: POST /v1/match on loopback, the HTTP round
trip included). Each commit runs from a checkout of it with its kernel built (as
bench_commits.py does); the commits take turns within each round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_commits import checkout, remove_checkout  # noqa: E402
from bench_latency import read_through  # noqa: E402
from bench_server import Bench, make_suggestions, source_texts, stdlib_files  # noqa: E402
from commit import commit, reproduce  # noqa: E402
from lsprotocol import types  # noqa: E402

from index_tools import default_index_path, open_index  # noqa: E402

_WHERE = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 3}}
PUBLISHED = {
    "jsonrpc": "2.0",
    "method": "textDocument/publishDiagnostics",
    "params": {
        "uri": "file:///bench/x.py",
        "version": 1,
        "diagnostics": [
            {"range": _WHERE, "message": "m", "severity": 2, "source": "recitation",
             "code": "recitation", "codeDescription": {"href": "https://example.invalid/"},
             "data": {"id": "x"}}
        ],
    },
}  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def server_round(
    repo: Path, index: Path, pairs, log: Path, pause: float
) -> tuple[list[float], str]:
    """A fresh language server of `repo`: ready and mapped ahead, then each suggestion
    inserted into a new document; (ms of each, what it said of mapping ahead)."""
    bench = Bench(index, 10.0, str(log), repo=repo)
    # the bench's client reads diagnostics with Python's converter, whose first read of
    # one is slow (2-3 ms); an editor's is not: taken out by reading one first
    bench.client.protocol._converter.structure(PUBLISHED, types.PublishDiagnosticsNotification)
    await bench.start()  # (returns once the map-ahead line is in its log)
    times = []
    for i, (before, suggestion) in enumerate(pairs):
        await asyncio.sleep(pause)
        ms = await bench.insertion(i, before, suggestion)
        if ms is None:
            raise SystemExit(f"{repo.name}: suggestion {i} not flagged within 10 s")
        times.append(ms[0])  # (as the client's handler has them)
    await bench.stop()
    return times, bench.mapped_ahead


def serve_round(repo: Path, index: Path, pairs, pause: float) -> tuple[list[float], str]:
    """A fresh `serve` of `repo` (one worker): healthy and mapped ahead, then each
    suggestion posted; (ms of each, what /v1/stats said of mapping ahead)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "index_tools.cli", "serve", str(index), "--port", str(port)],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        said = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url + "/v1/stats", timeout=5) as r:
                    said = json.loads(r.read()).get("mapped_ahead", "")
                if said and said != "under way":
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise SystemExit(f"{repo.name}: serve not ready in 120 s")
        times = []
        for before, suggestion in pairs:
            time.sleep(pause)
            body = json.dumps(
                {"suggestion": suggestion, "context": before, "language": "python"}
            ).encode()
            request = urllib.request.Request(url + "/v1/match", data=body, method="POST")
            request.add_header("Content-Type", "application/json")
            t0 = time.perf_counter()
            with urllib.request.urlopen(request, timeout=30) as r:
                answer = json.loads(r.read())
            times.append((time.perf_counter() - t0) * 1000.0)
            if not answer.get("matches"):
                raise SystemExit(f"{repo.name}: a quoted suggestion found nothing")
        return times, said
    finally:
        os.killpg(process.pid, 15)
        process.wait(30)


def compare(rounds: list[list[float]], lookups: int) -> dict:
    """Each round's first lookup against the same suggestion's later times (other rounds)."""
    later: dict[int, list[float]] = {}
    firsts = []
    for r, times in enumerate(rounds):
        for k, ms in enumerate(times):
            s = (r + k) % lookups
            if k == 0:
                firsts.append((s, ms))
            else:
                later.setdefault(s, []).append(ms)
    ratios = [ms / statistics.median(later[s]) for s, ms in firsts]
    every_later = [ms for times in rounds for ms in times[1:]]
    return {
        "first_p50": statistics.median(ms for _, ms in firsts),
        "first_max": max(ms for _, ms in firsts),
        "later_p50": statistics.median(every_later),
        "ratio_p50": statistics.median(ratios),
        "ratio_max": max(ratios),
        "within_2x": sum(x <= 2.0 for x in ratios),
        "rounds": len(firsts),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commits", nargs=2, help="two commits (e.g. the one before and HEAD)")
    parser.add_argument("--index", help="index directory (default: the default index)")
    parser.add_argument("--texts", help="cut the suggestions from this source's Python files")
    parser.add_argument("--modes", default="server,serve", help="server, serve or both")
    parser.add_argument("--rounds", type=int, default=12, help="fresh processes per commit")
    parser.add_argument("--lookups", type=int, default=24, help="suggestions per process")
    parser.add_argument(
        "--pause",
        type=float,
        default=0.5,
        help="seconds between suggestions, before the first too (default 0.5: a process "
        "idle between suggestions, as in an editor, takes longer than one asked back to back)",
    )
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--read-through", action="store_true", help="read the index first")
    parser.add_argument("--out", help="write the results as markdown to this file")
    args = parser.parse_args()
    index = Path(args.index or default_index_path()).resolve()
    with open_index(index) as idx:
        words, files = idx.header.words, idx.summary().get("files")
        if args.read_through:
            read_through(idx)
    texts = source_texts(args.texts) if args.texts else stdlib_files()
    pairs = make_suggestions(texts, args.lookups, args.words, args.seed)
    if len(pairs) < args.lookups:
        raise SystemExit(f"only {len(pairs)} suggestions could be cut")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    where = Path(tempfile.mkdtemp(prefix="recitation-first-"))
    load = os.getloadavg()[0]
    results: dict[tuple[str, str], list[list[float]]] = {}
    said: dict[tuple[str, str], str] = {}
    paths: dict[str, Path] = {}
    try:
        for rev in args.commits:
            paths[rev] = checkout(rev, where)
        for r in range(args.rounds):
            order = args.commits if r % 2 == 0 else args.commits[::-1]
            rotated = pairs[r % len(pairs) :] + pairs[: r % len(pairs)]
            for rev in order:
                for mode in modes:
                    if mode == "server":
                        log = where / f"server-{r}-{rev.replace('/', '_')}.log"
                        times, what = asyncio.run(
                            server_round(paths[rev], index, rotated, log, args.pause)
                        )
                    else:
                        times, what = serve_round(paths[rev], index, rotated, args.pause)
                    results.setdefault((rev, mode), []).append(times)
                    said[(rev, mode)] = what
                    print(
                        f"round {r + 1} {rev} {mode}: first {times[0]:.2f} ms, "
                        f"later median {statistics.median(times[1:]):.2f}",
                        flush=True,
                    )
    finally:
        for path in paths.values():
            remove_checkout(path)
        shutil.rmtree(where, ignore_errors=True)
    table = {key: compare(rounds, len(pairs)) for key, rounds in results.items()}
    command = "python bench/bench_first_lookup.py " + " ".join(sys.argv[1:])
    lines = [
        "# The first lookup of a new process: two commits side by side",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit "
        f"`{commit()}` on {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), load average before {load:.1f}.",
        "",
        *reproduce(command),
        f"Index: {index.name}, {words:,} words, {files:,} files. {len(pairs)} suggestions of "
        f"{args.words} words quoted from indexed files, each with up to 1,500 characters of "
        f"the text before it, one every {args.pause} s (the first too: a process idle "
        "between suggestions, as in an editor, takes longer than one asked back to back); "
        f"{args.rounds} fresh processes of each commit per mode, the "
        "commits taking turns, each ready as an editor finds it (its index opened and mapped "
        "ahead) before the first suggestion. Round r sends the suggestions from the r-th on; "
        "`first / later` compares a round's first lookup with the median time of the same "
        "suggestion where it came later in other rounds.",
        "",
        "| commit | mode | first p50 ms | first max ms | later p50 ms | first / later "
        "p50 | max | rounds within 2x |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for (rev, mode), t in table.items():
        lines.append(
            f"| `{rev}` | {mode} | {t['first_p50']:.2f} | {t['first_max']:.2f} | "
            f"{t['later_p50']:.2f} | {t['ratio_p50']:.2f} | {t['ratio_max']:.2f} | "
            f"{t['within_2x']} of {t['rounds']} |"
        )
    lines += ["", "What each process said of mapping its index ahead (its last round):", ""]
    lines += [f"- `{rev}` {mode}: {what}" for (rev, mode), what in said.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
