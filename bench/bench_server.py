"""Latency of the language server, end to end: from sending `didChange` with an accepted
300-word suggestion quoted from the index, to receiving `publishDiagnostics` that flags it,
through a real LSP client over stdio. Also the server's memory with the index open.

    python bench/bench_server.py                     # default index, 300 insertions
    python bench/bench_server.py --index DIR --insertions 500 --out bench/results/server.md
    python bench/bench_server.py --index DIR --texts pypi:bench/registry_packages/latency-sample.txt
    python bench/bench_server.py --index DIR --search native --engines REV,.   # two engines

Suggestions are cut from the files the index was built from (for the default index: this
interpreter's standard library; `--texts`: the Python files of a source the index holds),
each inserted into a fresh document after the text that
precedes it in its file (so the context is realistic). The first `--warmup` insertions are
not counted. `--engines`: the servers of two commits (each in a checkout of it) take turns
with the same suggestions, so that a change is measured on the same machine in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_commits import checkout, remove_checkout  # noqa: E402
from bench_latency import drop_cache, read_through  # noqa: E402
from commit import commit  # noqa: E402

from index_tools import (  # noqa: E402
    IndexOpenError,
    build_index,
    default_index_path,
    open_index,
    tokenize,
)
from index_tools.build.sources import open_source  # noqa: E402
from index_tools.match import kernel  # noqa: E402

CONTEXT_CHARS = 1500


def stdlib_files() -> list[Path]:
    """This interpreter's standard library: what the default index holds."""
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(
        p
        for p in root.rglob("*.py")
        if "site-packages" not in p.parts and "test" not in p.parts and "tests" not in p.parts
    )


def source_texts(spec: str) -> list[str]:
    """The Python files of a source (`--texts`), as text."""
    return [d.text for d in open_source(spec).documents() if d.language == "python"]


def context_of(before: str) -> str:
    """The context a lookup is given: the last 200 words of the text before a suggestion."""
    words = tokenize(before)[-200:]
    return before[words[0].start :] if words else ""


def make_suggestions(
    files: list[Path] | list[str], n: int, words: int, seed: int
) -> list[tuple[str, str]]:
    """(preceding text, suggestion of `words` words) pairs cut from `files` (paths or
    texts)."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    candidates = files[:]
    rng.shuffle(candidates)
    while len(out) < n and candidates:
        path = candidates.pop()
        try:
            text = path if isinstance(path, str) else path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        toks = tokenize(text)
        if len(toks) < words + 50:
            continue
        for _ in range(3):
            i = rng.randrange(0, len(toks) - words)
            # start the suggestion at the beginning of a line, as an accepted completion would
            start = text.rfind("\n", 0, toks[i].start) + 1
            first = next(k for k in range(i, len(toks)) if toks[k].start >= start)
            if first + words > len(toks):
                continue
            end = toks[first + words - 1].end
            out.append((text[max(0, start - CONTEXT_CHARS) : start], text[start:end]))
            if len(out) >= n:
                break
        candidates.insert(0, path) if rng.random() < 0.05 else None
    return out


def rss_kib(pid: int) -> dict[str, int]:
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                fields[key] = int(value.split()[0])
    return fields


class Bench:
    def __init__(
        self,
        index: Path,
        timeout: float,
        server_log: str | None = None,
        search: str = "auto",
        repo: Path = REPO,
    ):
        self.index = index
        self.repo = repo  # the checkout whose server runs
        self.search = search  # the server's search path (RECITATION_SEARCH)
        self.server_log = server_log
        self.timeout = timeout
        self.client = LanguageClient("recitation-bench", "1")
        self.waiting: dict[str, asyncio.Future] = {}
        self.body_read_at = 0.0  # when the body being handled came off the pipe
        self.ready = asyncio.get_running_loop().create_future()
        self.mapped_ahead = ""  # what the server said of mapping its index ahead

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams):
            fut = self.waiting.get(params.uri)
            if fut is not None and params.diagnostics and not fut.done():
                fut.set_result((self.body_read_at, time.perf_counter()))

        @self.client.feature("recitation/match")
        def on_match(params):
            pass

        @self.client.feature("recitation/status")
        def on_status(params):
            if not self.ready.done():
                self.ready.set_result(params)

    async def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(self.repo), RECITATION_SEARCH=self.search)
        extra = ["--log-file", self.server_log, "--log-level", "DEBUG"] if self.server_log else []
        await self.client.start_io(
            sys.executable, "-m", "server", *extra, env=env, cwd=str(self.repo)
        )
        # each body's arrival noted, apart from the client's reading it (JSON, then types)
        pipe = self.client._server.stdout
        read_exactly = pipe.readexactly

        async def noted(n: int) -> bytes:
            body = await read_exactly(n)
            self.body_read_at = time.perf_counter()
            return body

        pipe.readexactly = noted
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                process_id=os.getpid(),
                initialization_options={"recitation": {"indexPath": str(self.index)}},
                workspace_folders=[types.WorkspaceFolder(uri="file:///bench", name="bench")],
            )
        )
        self.client.initialized(types.InitializedParams())
        status = await asyncio.wait_for(self.ready, 120)
        state = getattr(status, "state", None) or status.get("state")
        if state != "ready":
            raise SystemExit(f"index not ready: {status}")
        self.mapped_ahead = await self.map_ahead_said()

    async def map_ahead_said(self, timeout: float = 120.0) -> str:
        """The server's log line on mapping its index ahead, once it is there: the first
        suggestion comes when the server has been up for a while, as in an editor (the
        mapping runs beside lookups; measured apart by bench_map_ahead.py)."""
        if not self.server_log:
            return ""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                text = Path(self.server_log).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            for line in text.splitlines():
                if "mapped ahead" in line:
                    return line.split(": ", 1)[-1]
            await asyncio.sleep(0.1)
        return "no word on mapping ahead"

    @property
    def pid(self) -> int:
        return self.client._server.pid

    async def insertion(self, i: int, before: str, suggestion: str) -> tuple[float, float] | None:
        """ms from sending the didChange to the diagnostics' body read off the pipe, and to
        the client's handler called with them; None when not flagged in time."""
        uri = f"file:///bench/doc{i}.py"
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=before
                )
            )
        )
        lines = before.split("\n")
        end = types.Position(len(lines) - 1, len(lines[-1].encode("utf-16-le")) // 2)
        fut = self.waiting[uri] = asyncio.get_running_loop().create_future()
        t0 = time.perf_counter()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(end, end), text=suggestion
                    )
                ],
            )
        )
        try:
            arrived, t1 = await asyncio.wait_for(fut, self.timeout)
        except asyncio.TimeoutError:
            arrived = t1 = None
        self.waiting.pop(uri, None)
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        if t1 is None:
            return None
        return (t1 - t0) * 1000.0, (arrived - t0) * 1000.0

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(q / 100 * (len(s) - 1))))
    return s[k]


async def measure(
    index: Path, pairs, warmup: int, timeout: float, server_log: str | None = None,
    search: str = "auto", repo: Path = REPO, gap: float = 0.0,
) -> dict:  # fmt: skip
    bench = Bench(index, timeout, server_log, search, repo)
    await bench.start()
    rss_ready = rss_kib(bench.pid)
    mapped_ahead = bench.mapped_ahead
    latencies: list[float] = []
    misses = 0
    by_uri: dict[str, tuple[float, float]] = {}  # (handled, arrived) ms
    for i, (before, suggestion) in enumerate(pairs):
        if gap:  # (an editor's accepted suggestions come apart: the server idle between)
            await asyncio.sleep(gap)
        ms = await bench.insertion(i, before, suggestion)
        if os.environ.get("BENCH_VERBOSE"):
            print(i, ms, flush=True)
        if i < warmup:
            continue
        if ms is None:
            misses += 1
        else:
            latencies.append(ms[0])
            by_uri[f"file:///bench/doc{i}.py"] = ms
    rss_end = rss_kib(bench.pid)
    await bench.stop()
    return {
        "latencies": latencies,
        "by_uri": by_uri,
        "misses": misses,
        "rss_ready": rss_ready,
        "mapped_ahead": mapped_ahead,
        "rss_end": rss_end,
    }


CHECKED = re.compile(  # (a server of an older commit says less: what it says is read)
    r"checked (\S+): .*?(?:queued ([\d.]+) ms, )?lookup ([\d.]+) ms(?:, published ([\d.]+) ms)?"
)


def server_times(log_path: Path) -> dict[str, tuple[float, float | None]]:
    """What the server itself logged for each document's check (DEBUG log): its lookup's
    time, and its own work around it (the check queued, then the diagnostics made and
    written; None from a server that does not say when they were written)."""
    out: dict[str, tuple[float, float | None]] = {}
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = CHECKED.search(line)
        if m:
            queued, lookup, published = m.group(2), m.group(3), m.group(4)
            known = queued is not None and published is not None
            own = float(queued) + float(published) if known else None
            out.setdefault(m.group(1), (float(lookup), own))
    return out


_LOOKUP_ONLY = """
import gc, json, sys, time
from index_tools import open_index, tokenize
from index_tools.match import kernel
index, pairs, warmup, search = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3]), sys.argv[4]
pause = float(sys.argv[5])
idx = open_index(index)
# as the server asks: the parts' kinds and sources left for after the answer (where the
# engine can), what was loaded before the lookups frozen out of the collector's passes
options = {"defer_parts": True}
try:
    idx.match("x = 1", "", 60, **options)
except TypeError:  # (an engine from before)
    options = {}
with kernel.using(search):
    for way in ("map_ahead", "warm"):  # as the server does at start (where the engine can)
        getattr(idx, way, lambda: None)()
    gc.collect()
    gc.freeze()
    times = {"back to back": [], "paused": []}
    for turn in (0, 1):  # each lookup once of each way, the ways taking turns
        for i, (before, suggestion) in enumerate(pairs):
            context_words = tokenize(before)[-200:]
            context = before[context_words[0].start :] if context_words else ""
            paused = (i + turn) % 2 == 1
            if paused:
                time.sleep(pause)
            t0 = time.perf_counter()
            idx.match(suggestion, context, 60, language="python", **options)
            if i >= warmup:
                times["paused" if paused else "back to back"].append(
                    (time.perf_counter() - t0) * 1000.0
                )
print(json.dumps(times))
"""  # (in a process of its own, each engine's alike; the context as context_of makes it)

PAUSE_MS = 5.0  # idle before a lookup alone "as the server's come" (each after a wait)


def lookup_only(repo: Path, index: Path, pairs, warmup: int, search: str) -> dict[str, list]:
    """The engine's own lookup time for the same suggestions (no LSP), for comparison: the
    engine of the checkout `repo`, in a process of its own, its index mapped ahead and a
    lookup rehearsed as the server does, the lookups asked as the server asks them (the
    parts' kinds and sources left for later); each suggestion looked up twice, right after the
    one before (`back to back`) and after PAUSE_MS idle (`paused`: as an editor's lookups
    come, the caches the one before warmed cooled), the two ways taking turns."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as f:
        json.dump(pairs, f)
        f.flush()
        out = subprocess.run(
            [sys.executable, "-c", _LOOKUP_ONLY, str(index), f.name, str(warmup), search,
             str(PAUSE_MS / 1000)],
            env={**os.environ, "PYTHONPATH": str(repo)}, cwd=repo, capture_output=True,
            text=True, check=True,
        )  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", help="index directory (default: the default index)")
    parser.add_argument("--insertions", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per insertion")
    parser.add_argument("--out", help="write the results as markdown to this file")
    parser.add_argument("--server-log", help="have the server log (DEBUG) to this file")
    parser.add_argument(
        "--texts", help="cut the suggestions from this source's Python files (a source spec)"
    )
    parser.add_argument(
        "--read-through", action="store_true",
        help="read the index's files once before the run (warm: resident pages)",
    )  # fmt: skip
    parser.add_argument(
        "--search", default="native,python",
        help="the servers' search paths, side by side (comma-separated: native, python)",
    )  # fmt: skip
    parser.add_argument(
        "--rounds", type=int, default=2,
        help="each path's server runs this many times, the paths alternating",
    )  # fmt: skip
    parser.add_argument(
        "--other-index",
        help="a second index of the same corpus (another format or layout): the servers on "
        "each take turns, the suggestions the same",
    )
    parser.add_argument(
        "--engines", default=".",
        help="servers of these commits side by side, taking turns: git revisions (each in a "
        "checkout of it, its kernel built) or `.` (this checkout), comma-separated",
    )  # fmt: skip
    parser.add_argument(
        "--gap", type=float, default=0.0, metavar="MS",
        help="idle this long before each insertion, as an editor's accepted suggestions come "
        "apart (0: each right after the one before was flagged)",
    )  # fmt: skip
    args = parser.parse_args()
    paths = [p.strip() for p in args.search.split(",") if p.strip()]
    revs = [r.strip() for r in args.engines.split(",") if r.strip()]
    for p in paths:
        kernel.use(p)  # an error now when the native search did not load
    kernel.use("auto")

    tmp = tempfile.TemporaryDirectory(prefix="recitation-bench-")
    engines = {r: REPO if r == "." else checkout(r, Path(tmp.name)) for r in revs}
    try:
        return run(args, paths, engines, tmp)
    finally:
        for path in engines.values():
            if path != REPO:
                remove_checkout(path)
        tmp.cleanup()


def engine_name(rev: str) -> str:
    return f"`{commit()}`" if rev == "." else f"`{rev}`"


def run(args, paths: list[str], engines: dict[str, Path], tmp) -> int:
    files = source_texts(args.texts) if args.texts else stdlib_files()
    if args.index:
        index, origin = Path(args.index), "given with --index"
    else:
        index, origin = default_index_path(), "the default index"
        try:
            open_index(index).summary()
        except IndexOpenError as exc:
            # missing or from another format version: build the same corpus for this run
            print(f"{exc}; building python:stdlib for this run", file=sys.stderr)
            index, origin = Path(tmp.name) / "index", "python:stdlib, built for this run"
            build_index(["python:stdlib"], index)
    opened = open_index(index)
    summary = opened.summary()
    indexes = {index.name: index}  # the servers' indexes, by name
    opened_by_name = {index.name: opened}  # each index, opened (to read it through)
    if args.other_index:
        other = Path(args.other_index)
        indexes[other.name] = other
        if len(indexes) < 2:
            raise SystemExit("--other-index needs a folder of another name than --index")
        opened_by_name[other.name] = open_index(other)

    def read_all_through(ix: str) -> None:
        """Index `ix` resident: the other one's pages dropped first (two large indexes
        need not fit in memory together), then its files read."""
        for name, each in opened_by_name.items():
            if name != ix:
                drop_cache(each)
        print(f"{ix} read through in {read_through(opened_by_name[ix]):.0f} s", flush=True)

    warm = ""
    if args.read_through:
        warm = (
            " Its files read through before each server's run (a machine may reclaim pages"
            " untouched for a while, however much memory is free)"
            + (
                ", the other index's pages dropped from the page cache first."
                if args.other_index
                else "."
            )
        )

    # a tiny index, to show that the server's memory does not grow with the index
    tiny_src = Path(tmp.name) / "tiny"
    tiny_src.mkdir()
    (tiny_src / "one.py").write_text("def one():\n    return 1\n" * 40)
    tiny = Path(tmp.name) / "tiny-index"
    build_index([str(tiny_src)], tiny)

    pairs = make_suggestions(files, args.insertions + args.warmup, args.words, args.seed)
    load_before = os.getloadavg()[0]
    server_log = Path(args.server_log or Path(tmp.name) / "server.log")
    rows, misses, result = [], 0, None
    # (engine, search path, index)
    ways = [(e, p, i) for e in engines for p in paths for i in indexes]
    runs: dict[tuple[str, str, str], list[dict]] = {w: [] for w in ways}
    for r in range(args.rounds):  # A B, B A, ...: every way sees the same machine
        for engine, path, ix in ways if r % 2 == 0 else ways[::-1]:
            if args.read_through:
                read_all_through(ix)
            name = f"{server_log.stem}-{engine.replace('/', '_')}-{path}-{ix}-{r}"
            log = server_log.with_name(name + server_log.suffix)
            res = asyncio.run(
                measure(indexes[ix], pairs, args.warmup, args.timeout, str(log), search=path,
                        repo=engines[engine], gap=args.gap / 1000)
            )  # fmt: skip
            res["in_server"] = server_times(log)
            runs[(engine, path, ix)].append(res)
            result = result or res
    for engine, path, ix in ways:
        way = f"{path} search" if len(engines) == 1 else f"{engine_name(engine)}, {path}"
        if len(indexes) > 1:
            way += f", index {ix}"
        lat, lookups, overhead, own, between, reading = [], [], [], [], [], []
        for res in runs[(engine, path, ix)]:
            lat += res["latencies"]
            misses += res["misses"]
            inside = res["in_server"]
            for uri, (ms, arrived) in res["by_uri"].items():
                reading.append(ms - arrived)
                if uri not in inside:
                    continue
                lookup, work = inside[uri]
                lookups.append(lookup)
                overhead.append(ms - lookup)
                if work is not None:
                    own.append(work)
                    between.append(arrived - lookup - work)
        if args.read_through:  # (the same state of the page cache as the servers had)
            read_all_through(ix)
        alone = lookup_only(engines[engine], indexes[ix], pairs, args.warmup, path)
        rows += [
            (f"didChange → publishDiagnostics ({way})", lat),
            ("· of which the engine lookup (timed in the server)", lookups),
            ("· the rest: transport, detection, mapping, publishing", overhead),
            ("·· of which the server's own work: the check queued, the diagnostics made and "
             "written (timed in the server)", own),
            ("·· the messages' way: written, woken, read (both processes; the server's "
             "reading and detecting the edit)", between),
            ("·· the client's reading of the diagnostics (JSON, then types: pygls)", reading),
            ("engine lookup alone, same suggestions, asked as the server asks (no LSP, one "
             f"process, {way}), back to back", alone["back to back"]),
            (f"engine lookup alone, each after {PAUSE_MS:g} ms idle (as the server's come)",
             alone["paused"]),
        ]  # fmt: skip
    tiny_result = asyncio.run(measure(tiny, pairs[:10], 0, 0.2))  # nothing to find there
    load_after = os.getloadavg()[0]
    lines = [
        "# Language server latency",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit "
        f"`{commit()}` on {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), a machine shared with other work "
        f"(load average {load_before:.1f} before, {load_after:.1f} after).",
        "",
        "Reproduce:",
        "",
        "```",
        "python bench/bench_server.py"
        + (f" --index {args.index}" if args.index else "")
        + (f" --other-index {args.other_index}" if args.other_index else "")
        + (f" --texts {args.texts}" if args.texts else "")
        + f" --insertions {args.insertions} --words {args.words} --seed {args.seed}"
        + (" --read-through" if args.read_through else "")
        + f" --search {args.search} --rounds {args.rounds}"
        + (f" --engines {args.engines}" if len(engines) > 1 else "")
        + (f" --gap {args.gap:g}" if args.gap else "")
        + f" --out {args.out or 'bench/results/server.md'}",
        "```",
        "",
        f"Index ({origin}): {summary.get('name')}: {summary.get('files'):,} files, "
        f"{summary.get('words'):,} words, {summary.get('bytes'):,} bytes on disk "
        f"(format {summary.get('format_version')}, {summary.get('shards')} shard(s)).{warm}"
        + "".join(
            f" The other index, {name}: {o.summary().get('bytes'):,} bytes (format "
            f"{o.summary().get('format_version')}, {o.summary().get('shards')} shard(s))."
            for name, o in opened_by_name.items()
            if o is not opened
        ),
        "",
        f"{len(pairs) - args.warmup} insertions of {args.words}-word suggestions quoted from "
        f"indexed files ({args.warmup} warm-up insertions not counted), each into a fresh "
        f"document after up to {CONTEXT_CHARS} characters of the text preceding it in its "
        f"file, sent to a server of each search path ({', '.join(paths)}) {args.rounds} times, "
        f"the paths alternating; not flagged within {args.timeout:g} s: {misses}."
        + (
            f" Each insertion after {args.gap:g} ms idle (an editor's accepted suggestions "
            "come apart)."
            if args.gap
            else " Each insertion right after the one before was flagged."
        )
        + (
            f" The servers of {' and '.join(engine_name(e) for e in engines)} took turns"
            " (each commit's server and engine in a checkout of it, its kernel built here)."
            if len(engines) > 1
            else ""
        ),
        "",
        "| ms | p50 | p90 | p99 | max | mean |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, values in rows:
        if values:
            lines.append(
                f"| {name} | {percentile(values, 50):.1f} | {percentile(values, 90):.1f} | "
                f"{percentile(values, 99):.1f} | {max(values):.1f} | "
                f"{statistics.fmean(values):.1f} |"
            )
    said = sorted({res["mapped_ahead"] for way in runs.values() for res in way})
    if any(said):
        lines += [
            "",
            "Each server had mapped its index ahead before the first insertion (as a server"
            " up for a few seconds has; the mapping runs beside lookups): " + "; ".join(said) + ".",
        ]
    r, t = result, tiny_result
    lines += [
        "",
        "Server memory (KiB, from /proc/PID/status; RssFile is the memory-mapped index "
        "pages plus code, RssAnon the heap):",
        "",
        "| index | when | VmRSS | RssAnon | RssFile | VmHWM |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for label, res in ((summary.get("name"), r), ("tiny (1 file)", t)):
        for when in ("ready", "end"):
            m = res[f"rss_{when}"]
            lines.append(
                f"| {label} | {'index open' if when == 'ready' else 'after the run'} | "
                f"{m.get('VmRSS', 0):,} | {m.get('RssAnon', 0):,} | {m.get('RssFile', 0):,} | "
                f"{m.get('VmHWM', 0):,} |"
            )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0 if misses == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
