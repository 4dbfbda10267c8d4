"""Code written outside the editor, measured end to end: a process writes files into a
workspace (a git repository) while the language server runs, nothing opened, through a
real LSP client over stdio; with the client's file watching (the bench reports each write
as an editor's watcher would) and without (the server polls).

    python bench/bench_file_watch.py --out bench/results/file-watch.md

For each way of watching, it measures:
- the server's CPU while idle, watching the workspace's files (`--existing` code files);
- an agent-like process writing `--writes` files at `--rate` files a second: new files and
  functions appended to files written before, one write in ten holding a function quoted
  from the index (the rest the writer's own code): the time from each quoted write on disk
  to its warning (publishDiagnostics for the file, not open), and the server's CPU meanwhile;
- a `git checkout` of a branch that changes `--branch-files` files holding quoted code: the
  warnings it gives (none expected) and the server's CPU in the seconds after it.

The index holds the Python files of this interpreter's standard library from `--index-files`
of them (built once into the cache folder); the quoted functions are cut from them. CPU is
the server process's own and that of the processes it waited for (git), from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
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

from commit import commit  # noqa: E402

from index_tools import build_index, open_index, word_texts  # noqa: E402

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
DEF = re.compile(r"^def [A-Za-z_]\w*\(.*?(?=^\S)", re.M | re.S)


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, env={**os.environ, **GIT_ENV}
    )


def stdlib_files(count: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if p.stat().st_size < 200_000)
    return files[:count]


def quoted_functions(files: list[Path], count: int, rng: random.Random) -> list[str]:
    """Top-level functions of 80 to 400 words from the indexed files."""
    found = []
    for f in files:
        for m in DEF.finditer(f.read_text(encoding="utf-8", errors="replace") + "\nx"):
            n = len(word_texts(m.group(0)))
            if 80 <= n <= 400:
                found.append(m.group(0).rstrip() + "\n")
    rng.shuffle(found)
    if len(found) < count:
        raise SystemExit(f"only {len(found)} functions to quote; index more files")
    return found[:count]


def own_function(rng: random.Random, name: str) -> str:
    """Code of the writer's own: made-up names, no run of 60 words anyone indexed."""
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7)) for _ in range(8)]
    lines = [f"def {name}({words[0]}, {words[1]}):"]
    for i in range(rng.randint(4, 12)):
        a, b, c = rng.sample(words, 3)
        lines.append(f"    {a}_{i} = {b} * {rng.randint(2, 999)} + len(str({c}))")
    lines.append(f"    return {words[2]}_0 if {words[3]} else {words[4]}")
    return "\n".join(lines) + "\n"


def cpu_seconds(pid: int) -> float:
    """A process's CPU time, its own and its waited-for children's (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
    return ticks / os.sysconf("SC_CLK_TCK")


class Session:
    def __init__(self, index: Path, folder: Path, watching: str):
        self.index, self.folder, self.watching = index, folder, watching
        self.client = LanguageClient("recitation-bench", "1")
        self.warned: dict[str, list[tuple[float, int]]] = {}  # uri -> (when, first line)
        self.watch: dict = {}
        self.state = None

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams):
            now = time.perf_counter()
            seen = self.warned.setdefault(params.uri, [])
            for d in params.diagnostics:
                if d.range.start.line not in [line for _, line in seen]:
                    seen.append((now, d.range.start.line))

        @self.client.feature("recitation/match")
        def on_match(params):
            pass

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams):
            return None  # (the bench itself reports what it writes)

        @self.client.feature("recitation/status")
        def on_status(params):
            self.state = getattr(params, "state", None)
            watch = getattr(params, "watchFiles", None)
            if watch is not None:
                self.watch = {k: getattr(watch, k, None) for k in ("state", "lookups", "checked")}
                self.watch["takenAsKnown"] = getattr(watch, "takenAsKnown", 0)

    async def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO))
        await self.client.start_io(sys.executable, "-m", "server", env=env)
        files = types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=self.watching == "client"
        )
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    workspace=types.WorkspaceClientCapabilities(did_change_watched_files=files)
                ),
                process_id=os.getpid(),
                initialization_options={
                    "recitation": {
                        "indexPath": str(self.index),
                        "watchFiles": self.watching != "off",
                    }
                },
                workspace_folders=[
                    types.WorkspaceFolder(uri=self.folder.as_uri(), name=self.folder.name)
                ],
            )
        )
        self.client.initialized(types.InitializedParams())
        deadline = time.monotonic() + 300
        while (self.watch.get("state") if self.watching != "off" else self.state) not in (
            "on",
            "ready",
        ):
            if time.monotonic() > deadline:
                raise SystemExit("the server did not start watching")
            await asyncio.sleep(0.05)

    @property
    def pid(self) -> int:
        return self.client._server.pid

    def reported(self, paths: list[Path], created: bool) -> None:
        if self.watching == "client":
            kind = types.FileChangeType.Created if created else types.FileChangeType.Changed
            self.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(
                    changes=[types.FileEvent(uri=p.as_uri(), type=kind) for p in paths]
                )
            )

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def workspace(root: Path, existing: int, branch_files: int, quoted: list[str], rng) -> Path:
    """A repository with `existing` code files of the user's own, and a branch `topic`
    that adds `branch_files` files each holding a quoted function."""
    folder = root / "ws"
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", "main")
    (folder / ".gitignore").write_text("build/\n", encoding="utf-8")
    for i in range(existing):
        path = folder / "src" / f"pkg{i % 40:02}" / f"mod{i:05}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(own_function(rng, f"f{i}") + own_function(rng, f"g{i}"), encoding="utf-8")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "start")
    git(folder, "checkout", "-q", "-b", "topic")
    for i in range(branch_files):
        path = folder / "vendored" / f"copy{i:04}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(quoted[i % len(quoted)], encoding="utf-8")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "topic")
    git(folder, "checkout", "-q", "main")
    return folder


async def measure(args, index: Path, quoted: list[str], watching: str) -> dict:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="recitation-watch-") as tmp:
        folder = workspace(Path(tmp), args.existing, args.branch_files, quoted, rng)
        s = Session(index, folder, watching)
        t0 = time.perf_counter()
        await s.start()
        started = time.perf_counter() - t0
        start_cpu = cpu_seconds(s.pid)
        await asyncio.sleep(2)  # settled
        cpu0, w0 = cpu_seconds(s.pid), time.perf_counter()
        await asyncio.sleep(args.idle)
        idle = (cpu_seconds(s.pid) - cpu0) / (time.perf_counter() - w0)

        # the agent-like writer
        written: list[Path] = []
        expected: list[tuple[str, int, float]] = []  # (uri, first line of the quote, written)
        plan_quoted = set(rng.sample(range(args.writes), args.writes // 10))
        q = 0
        cpu0, w0 = cpu_seconds(s.pid), time.perf_counter()
        writes_started = w0
        for i in range(args.writes):
            quote = i in plan_quoted
            body = quoted[q % len(quoted)] if quote else own_function(rng, f"w{i}")
            q += quote
            if written and rng.random() < 0.3:  # appended to a file written before
                path = rng.choice(written)
                before = path.read_text(encoding="utf-8")
                text = before + "\n\n" + body
                line = text.count("\n", 0, len(before) + 2)
                created = False
            else:
                path = folder / "app" / f"part{i % 25:02}" / f"gen{i:04}.py"
                path.parent.mkdir(parents=True, exist_ok=True)
                text, line, created = "import os\n\n\n" + body, 3, True
                written.append(path)
            path.write_text(text, encoding="utf-8")
            at = time.perf_counter()
            s.reported([path], created)
            if quote:
                expected.append((path.as_uri(), line, at))
            await asyncio.sleep(max(0.0, w0 + (i + 1) / args.rate - time.perf_counter()))
        writing = time.perf_counter() - w0
        deadline = time.perf_counter() + (60 if watching != "off" else 0)

        def latency(uri: str, line: int, at: float) -> float | None:
            for when, first in s.warned.get(uri, []):
                if first == line:
                    return (when - at) * 1000
            return None

        while time.perf_counter() < deadline:
            if all(latency(*e) is not None for e in expected):
                break
            await asyncio.sleep(0.05)
        done = time.perf_counter()
        # every write checked: the count of checked files stops moving
        while time.perf_counter() < deadline:
            before = s.watch.get("checked")
            await asyncio.sleep(2.5)  # (the status comes at most once a second)
            if s.watch.get("checked") == before:
                break
        cpu_writes = cpu_seconds(s.pid) - cpu0
        all_checked = time.perf_counter() - 2.5 - writes_started
        latencies = [x for e in expected if (x := latency(*e)) is not None]
        for uri, line, _ in expected if watching != "off" else []:
            if latency(uri, line, 0.0) is None:
                print(
                    f"not warned: {uri} line {line + 1}; warnings on lines",
                    sorted(first + 1 for _, first in s.warned.get(uri, [])),
                    file=sys.stderr,
                )

        # the branch switch
        warned_before = sum(len(v) for v in s.warned.values())
        lookups_before = s.watch.get("lookups")
        cpu0, w0 = cpu_seconds(s.pid), time.perf_counter()
        git(folder, "checkout", "-q", "topic")
        s.reported(sorted((folder / "vendored").glob("*.py")), True)
        await asyncio.sleep(args.after_checkout)
        cpu_checkout = cpu_seconds(s.pid) - cpu0
        branch_warnings = sum(len(v) for v in s.warned.values()) - warned_before
        result = {
            "watching": watching,
            "start_s": started,
            "start_cpu": start_cpu,
            "files": args.existing,
            "idle_cpu": idle,
            "writes": args.writes,
            "writing_s": writing,
            "until_last_s": done - writes_started,
            "until_checked_s": all_checked,
            "checked": s.watch.get("checked"),
            "cpu_writes": cpu_writes,
            "expected": len(expected),
            "latencies": latencies,
            "cpu_checkout": cpu_checkout,
            "branch_warnings": branch_warnings,
            "lookups_checkout": (s.watch.get("lookups") or 0) - (lookups_before or 0),
            "taken": s.watch.get("takenAsKnown"),
        }
        await s.stop()
        return result


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def report(args, index_info: str, results: list[dict]) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    out = [
        "# Code written outside the editor",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit `{commit()}` "
        f"on {os.cpu_count()} cores ({platform.machine()}, Python {platform.python_version()}), "
        f"a machine shared with other work (load average {load:.1f} at the end).",
        "",
        "Reproduce:",
        "",
        "```",
        "python bench/bench_file_watch.py "
        + " ".join(
            f"--{k.replace('_', '-')} {v}"
            for k, v in vars(args).items()
            if k not in ("out", "cache") and v is not None
        )
        + " --out bench/results/file-watch.md",
        "```",
        "",
        f"Index: {index_info}. Workspace: a git repository of {args.existing:,} code files of "
        f"the user's own (two made-up functions each), nothing opened. The writer: "
        f"{args.writes:,} writes at {args.rate:g} a second, 30% of them a function appended to "
        "a file written before, one in ten a function quoted from the index (80 to 400 words), "
        "the rest made-up code. With the client's watching, the bench reports each write "
        "(`workspace/didChangeWatchedFiles`) as soon as it is on disk, as an editor's watcher "
        "would (an editor adds its own delay); without, the server polls.",
        "",
        "| | client's watching | polling |",
        "| --- | ---: | ---: |",
    ]
    by = {r["watching"]: r for r in results}
    c, p = by.get("client"), by.get("polling")

    def row(label: str, f) -> None:
        out.append(f"| {label} | {f(c) if c else '–'} | {f(p) if p else '–'} |")

    row("start: files read, watching on (s)", lambda r: f"{r['start_s']:.1f}")
    row("server CPU at start, index opened and files read (s)", lambda r: f"{r['start_cpu']:.2f}")
    row(f"idle, watching {args.existing:,} files: server CPU", lambda r: f"{r['idle_cpu']:.1%}")
    row(
        "write on disk → warning, p50 / p90 / max (ms)",
        lambda r: (
            f"{percentile(r['latencies'], 0.5):.0f} / {percentile(r['latencies'], 0.9):.0f}"
            f" / {max(r['latencies'], default=float('nan')):.0f}"
        ),
    )
    row("quoted writes warned / written", lambda r: f"{len(r['latencies'])} / {r['expected']}")
    row(
        f"{args.writes:,} writes: server CPU until all are checked (s), and its share of"
        " the time they took to write",
        lambda r: (
            f"{r['cpu_writes']:.1f} s, {r['cpu_writes'] / r['writing_s']:.1%} of"
            f" {r['writing_s']:.0f} s"
        ),
    )
    row("server CPU per write (ms)", lambda r: f"{r['cpu_writes'] / r['writes'] * 1000:.1f}")
    row(
        "files checked; all checked within (s after the first write, to 2.5 s)",
        lambda r: f"{r['checked']}, {r['until_checked_s']:.0f}",
    )
    row(
        f"`git checkout` changing {args.branch_files} files of quoted code: warnings, lookups",
        lambda r: f"{r['branch_warnings']}, {r['lookups_checkout']}",
    )
    row(
        f"... server CPU in the {args.after_checkout:g} s after it (s)",
        lambda r: f"{r['cpu_checkout']:.2f}",
    )
    out += [
        "",
        "CPU is the server process's own and that of the git commands it ran (/proc). Write → "
        "warning runs from the moment the bench wrote the file to the arrival of the file's "
        "publishDiagnostics with the quote's warning (for an appended function: a warning "
        "starting on its first line).",
        "",
    ]
    return "\n".join(out)


async def main_async(args) -> int:
    rng = random.Random(args.seed)
    files = stdlib_files(args.index_files)
    cache = Path(args.cache or Path(tempfile.gettempdir()) / "recitation-bench-watch")
    index = cache / f"stdlib-{args.index_files}-{platform.python_version()}"
    if not (index / "CURRENT").exists():
        corpus = cache / f"corpus-{args.index_files}"
        corpus.mkdir(parents=True, exist_ok=True)
        for f in files:
            (corpus / f.name).write_bytes(f.read_bytes())
        build_index([str(corpus)], index)
    summary = open_index(index).summary()
    index_info = (
        f"{args.index_files} Python files of the standard library "
        f"({summary.get('words', 0):,} words)"
    )
    quoted = quoted_functions(files, max(args.writes // 10, args.branch_files // 5), rng)
    results = []
    for watching in args.watching.split(","):
        r = await measure(args, index, quoted, watching)
        results.append(r)
        print(
            watching,
            {k: v for k, v in r.items() if k != "latencies"},
            "p50 ms",
            statistics.median(r["latencies"]) if r["latencies"] else None,
            file=sys.stderr,
        )
    text = report(args, index_info, results)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=20.0, help="writes a second")
    parser.add_argument("--existing", type=int, default=2000, help="code files at start")
    parser.add_argument("--branch-files", type=int, default=500)
    parser.add_argument("--index-files", type=int, default=150)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds measured idle")
    parser.add_argument("--after-checkout", type=float, default=5.0)
    parser.add_argument(
        "--watching", default="client,polling", help="client, polling, off (comma-separated)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", default=None, help="where the index is kept")
    parser.add_argument("--out", default=None)
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
