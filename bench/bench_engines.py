"""Two commits' engines in one process, each lookup timed on both in turn: a change of a
few percent measured on a machine whose speed drifts by a quarter from one minute to the
next (where `bench_commits.py`, one run of each commit after the other, sees the drift).

    python bench/bench_engines.py a9e2eb0 HEAD --index 3-shards=IDX --texts pypi:LIST \\
        --queries 400 --out bench/results/engines.md

Each commit is checked out (git worktree) and its kernel built for this machine, and its
engine copied as a package of its own (`engine_a`, `engine_b`: its imports of itself
renamed), so that both are imported together. LMDB opens an environment's files once per
process: the second engine reads a mirror of the index beside it, its files hard links
but for the documents' database, copied (removed after the run). The index is read
through before the run and mapped ahead by each engine (as the language server maps it);
each workload's first 20 lookups warm both engines uncounted.
Every lookup is run `--repeat` times on each engine, the engines taking turns (A B, then
B A on the next lookup), each one's best time kept; the answers (matches as JSON) are
compared on every lookup. With `--pause MS`, each run of a lookup comes after that long
idle, as an editor's lookups do (one every few seconds): a lookup right after another finds
the caches the one before warmed; after an idle pause it takes about 30% longer, as a
language server's lookups do (`bench_server.py`'s engine alone, back to back and paused).
With `--evict MB`, each run comes after that many megabytes were written (the CPU caches
emptied by other work, the CPU not idle: a machine's idle CPU wakes slower, which `--pause`
measures too). With `--suggestions server`, the lookups are the language-server
benchmark's suggestions (`bench_server.py`'s, with the same `--seed` and `--queries`:
300-word suggestions after up to 1,500 characters, the context their last 200 words, as
the server sends them), quoted ones only.

Reported per workload: p50 / p90 / p99 / max of each engine, the median of the lookups'
ratios B/A, and their median over the slowest tenth (where the top percentiles come from:
the lookups slowest on both engines together, so that one engine's unlucky lookups do not
choose the tenth).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_commits import (  # noqa: E402
    checkout,
    commits_parser,
    remove_checkout,
    resolved_commits,
)
from bench_latency import outputs, read_through, workload  # noqa: E402
from commit import run_header, shown_argv  # noqa: E402

NAMES = ("engine_a", "engine_b")
WARM = 20  # lookups of each workload run on both engines first, not counted
# the engine's imports of itself: absolute imports and its package data
SELF_IMPORTS = re.compile(r"(\bfrom index_tools\b|\bimport index_tools\b|files\(\"index_tools\"\))")


def as_package(checkout_path: Path, name: str, where: Path) -> None:
    """The checkout's engine (with its built kernel) copied to `where/name`, its imports
    of itself made imports of `name`."""
    dst = where / name
    shutil.copytree(
        checkout_path / "index_tools", dst, ignore=shutil.ignore_patterns("__pycache__")
    )
    for py in dst.rglob("*.py"):
        text = py.read_text(encoding="utf-8")
        renamed = SELF_IMPORTS.sub(lambda m: m.group(0).replace("index_tools", name), text)
        if renamed != text:
            py.write_text(renamed, encoding="utf-8")


def mirror(index: Path) -> Path:
    """A folder beside the index holding the same files: hard links (copies where a link
    is refused), the documents' LMDB database copied (LMDB refuses to open one file twice
    in a process)."""
    dst = Path(tempfile.mkdtemp(prefix=f".{index.name}-mirror-", dir=index.parent))
    for src in index.rglob("*"):
        out = dst / src.relative_to(index)
        if src.is_dir():
            out.mkdir(parents=True, exist_ok=True)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".mdb":
            shutil.copy2(src, out)
            continue
        try:
            os.link(src, out)
        except OSError:
            shutil.copy2(src, out)
    return dst


def server_suggestions(texts: str, count: int, seed: int) -> list[tuple[str, str]]:
    """`bench_server.py`'s suggestions (those it counts: after its 10 warm-up ones), each
    with the context the server sends: the last 200 words before it."""
    from bench_server import context_of, make_suggestions, source_texts

    pairs = make_suggestions(source_texts(texts), count + 10, 300, seed)[10:]
    return [(context_of(before), suggestion) for before, suggestion in pairs]


def answer(matches) -> str:
    return json.dumps(outputs(matches), sort_keys=True)


def side_by_side(
    engines, pairs, language, repeat: int, pause: float = 0.0, options=({}, {}), evict: int = 0
) -> dict:
    """Each lookup on both engines in turn, `repeat` times, each run after `pause` seconds
    idle, with each engine's `options` (B's `defer_parts`: timed to the answer a diagnostic
    shows, its parts made after, when compared): (times A, times B, differing)."""
    for ctx, sug in pairs[:WARM]:
        for idx, extra in zip(engines, options):
            answer(idx.match(sug, ctx, language=language, **extra))
    times: tuple[list[float], list[float]] = ([], [])
    differing = 0
    clock = time.perf_counter
    other_work = bytearray(evict << 20)
    lines = bytes(len(range(0, len(other_work), 64)))  # (a byte for each cache line)
    for i, (ctx, sug) in enumerate(pairs):
        best = [float("inf"), float("inf")]
        said = [None, None]
        turn = (0, 1) if i % 2 == 0 else (1, 0)
        for _ in range(repeat):
            for k in turn:
                if pause:
                    time.sleep(pause)
                if evict:  # (a page at a time: every cache line of the buffer written)
                    other_work[::64] = lines
                t0 = clock()
                found = engines[k].match(sug, ctx, language=language, **options[k])
                best[k] = min(best[k], clock() - t0)
                said[k] = found
        differing += answer(said[0]) != answer(said[1])
        for k in (0, 1):
            times[k].append(best[k] * 1000)
    return {"a": times[0], "b": times[1], "differing": differing}


def percentiles(ms: list[float]) -> str:
    s = sorted(ms)
    n = len(s)
    return " / ".join(f"{v:.2f}" for v in (s[n // 2], s[int(n * 0.9)], s[int(n * 0.99)], s[-1]))


def ratios(a: list[float], b: list[float]) -> tuple[float, float]:
    """The median of the lookups' B/A, and the median of B/A over the slowest tenth (the
    lookups slowest on both engines together: chosen by one engine's times alone, a
    lookup slowed by the machine on that engine would be chosen for it, and B/A read low
    where nothing changed)."""
    median = statistics.median(y / x for x, y in zip(a, b))
    top = sorted(range(len(a)), key=lambda i: a[i] + b[i])[-max(1, len(a) // 10) :]
    return median, statistics.median(b[i] / a[i] for i in top)


def markdown(revs, resolved, results, args, load: float, command: str) -> str:
    lines = [
        *run_header("Two engines side by side, each lookup on both in turn", command, load),
        f"`A` = `{revs[0]}` ({resolved[0][:7]}), `B` = `{revs[1]}` ({resolved[1][:7]}); "
        f"index {args.index.partition('=')[0]}; {args.queries} lookups a workload, each "
        f"run {args.repeat} times on each engine (the engines taking turns), the best of "
        "each kept"
        + (f", each run after {args.pause:g} ms idle" if args.pause else "")
        + (f", each run after {args.evict} MB written (caches emptied)" if args.evict else "")
        + (
            f"; the language-server benchmark's suggestions (bench_server.py's, seed {args.seed})"
            if args.suggestions == "server"
            else ""
        )
        + (
            "; B's lookups leave for after the answer what the language server's leave "
            "(a region's parts, the kinds and sources of the parts inside primary spans: as "
            "much as its engine leaves; B timed to the answer a diagnostic shows; the "
            "answers compared whole)"
            if args.defer_parts == "b"
            else "; both engines' lookups leave for after the answer what the language "
            "server's leave (a region's parts, the kinds and sources of the parts inside "
            "primary spans: as much as each engine leaves; timed to the answer a diagnostic "
            "shows; the answers compared whole)"
            if args.defer_parts == "both"
            else ""
        )
        + ". ms: p50 / p90 / p99 / max.",
        "",
        "| workload | A | B | B/A median | B/A median, the slowest tenth | answers differing |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for name, r in results.items():
        median, top = ratios(r["a"], r["b"])
        lines.append(
            f"| {name} | {percentiles(r['a'])} | {percentiles(r['b'])} | {median:.3f} "
            f"| {top:.3f} | {r['differing']} of {len(r['a'])} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = commits_parser(__doc__)
    ap.add_argument("--queries", type=int, default=400, help="lookups a workload")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each lookup on each engine")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--pause", type=float, default=0.0, metavar="MS",
        help="idle this long before each run of a lookup, as between an editor's lookups",
    )  # fmt: skip
    ap.add_argument(
        "--defer-parts", nargs="?", const="b", choices=("b", "both"),
        help="B's lookups (`both`: both engines') leave the regions' parts (and the kinds "
        "and sources of those inside primary spans) for after the answer, as the language "
        "server's do (the time: "
        "to the answer a diagnostic shows); both answers compared whole",
    )  # fmt: skip
    ap.add_argument(
        "--evict", type=int, default=0, metavar="MB",
        help="write this many megabytes before each run of a lookup (the caches emptied "
        "by other work, the CPU not idle)",
    )  # fmt: skip
    ap.add_argument(
        "--suggestions", choices=("windows", "server"), default="windows",
        help="windows: quoted and novel windows of the texts' Python files; server: the "
        "language-server benchmark's suggestions (quoted)",
    )  # fmt: skip
    ap.add_argument("--out", help="write markdown here")
    args = ap.parse_args()
    index = Path(args.index.partition("=")[2]).resolve()
    revs = [args.a, args.b]
    # (one engine, two ways)
    resolved = resolved_commits(ap, revs, same=args.defer_parts == "b")
    load = os.getloadavg()[0]
    if args.suggestions == "server":
        pairs = {"quoted (server's)": server_suggestions(args.texts, args.queries, args.seed)}
    else:
        pairs = workload(args.texts, args.queries, args.seed)
    results = {}
    with tempfile.TemporaryDirectory(prefix="recitation-engines-") as tmp:
        made = []
        copy = None
        try:
            for rev, name in zip(resolved, NAMES):
                if made and rev == resolved[0]:  # (one commit run two ways: one checkout)
                    path = made[0]
                else:
                    path = checkout(rev, Path(tmp))
                    made.append(path)
                as_package(path, name, Path(tmp))
            sys.path.insert(0, tmp)
            modules = [importlib.import_module(name) for name in NAMES]
            for m in modules:  # (each engine the copy of its commit's, not an installed one)
                if not Path(m.__file__).resolve().is_relative_to(Path(tmp).resolve()):
                    sys.exit(f"the engine imported is {m.__file__}, not the checkout's")
            copy = mirror(index)
            engines = [modules[0].open_index(index), modules[1].open_index(copy)]
            read_through(engines[0])
            for engine in engines:  # (as a language server maps its index at start)
                getattr(engine, "map_ahead", lambda: None)()
            # (the server's lookups: with the language, as it asks them)
            languages = ("python",) if args.suggestions == "server" else ("python", None)
            for kind in pairs:
                for language in languages:
                    name = f"{kind}/{language or 'none'}"
                    results[name] = side_by_side(
                        engines, pairs[kind], language, args.repeat, args.pause / 1000,
                        evict=args.evict, options=(
                            {"defer_parts": True} if args.defer_parts == "both" else {},
                            {"defer_parts": True} if args.defer_parts else {},
                        ),
                    )  # fmt: skip
                    median, top = ratios(results[name]["a"], results[name]["b"])
                    print(f"{name}: B/A median {median:.3f}, slowest tenth {top:.3f}, "
                          f"differing {results[name]['differing']}", flush=True)  # fmt: skip
        finally:
            for path in made:
                remove_checkout(path)
            if copy is not None:
                shutil.rmtree(copy, ignore_errors=True)
    command = "python bench/bench_engines.py " + shown_argv(
        sys.argv[1:], {"--index": f"{args.index.partition('=')[0]}=IDX"}
    )
    text = markdown(revs, resolved, results, args, load, command)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
