"""Latency the completion proxy adds: completion requests answered by a stand-in upstream,
once directly and once through `recitation-server --wrap`, over stdio from a raw client.

    python bench/bench_proxy.py                       # default index, both scenarios
    python bench/bench_proxy.py --requests 1000 --out bench/results/proxy.md

The upstream answers every `textDocument/completion` with the same precomputed list of 100
items, so its own time is constant and the difference between the two runs is the proxy:
two more pipe hops, parsing, the completion check (`recitation.completionMode` = "warn")
and writing the answer on. Scenarios:

- `identifiers`: 100 items as a language server returns them while typing (names with a
  kind, detail and documentation); each is shorter than `minInsertWords`, so none is looked
  up — the common case;
- `snippets`: 100 one-line items of about 20 words each (not in the index), each long
  enough to be checked with the document text before the cursor as context; the same
  request repeated, as while a word is typed (the items' start, hence their context, stays);
- `snippets-typing`: the same items, but before each request a line is inserted before the
  cursor, so every request has a context never seen before (the uncached cost).

The added latency is reported per percentile (proxied minus direct); on a busy machine
that difference is mostly scheduling of the extra processes, so the relay's own time per
request (read to written, both directions, from its debug log) is reported too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from commit import commit  # noqa: E402

from index_tools import default_index_path  # noqa: E402

UPSTREAM = r"""
import json, sys
items = json.load(open(sys.argv[1]))
out = sys.stdout.buffer
inp = sys.stdin.buffer
def send(obj):
    body = json.dumps(obj).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()
while True:
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        if not line.strip():
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    msg = json.loads(inp.read(length))
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"capabilities": {
            "textDocumentSync": 2, "completionProvider": {"resolveProvider": True}}}})
    elif method == "textDocument/completion":
        send({"jsonrpc": "2.0", "id": mid, "result": {"isIncomplete": False, "items": items}})
    elif method == "exit":
        sys.exit(0)
    elif mid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": None})
"""

CONTEXT = '''import os
import sys
from pathlib import Path


def load_settings(path):
    """Read the settings file and return a dictionary of values."""
    values = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def main(argv):
    settings = load_settings(Path(argv[1]))
    total = 0
    for name, value in sorted(settings.items()):
        total += len(name) + len(value)
    result = '''


READING = (
    "Reading: `identifiers` is the common case (what a language server sends while ty"
    "ping) and the one the target is for (p99 added ≤ 5 ms). In the `snippets` cases "
    "every item is long enough to be checked; items shorter than `minTokens` words co"
    "st one index lookup per new context (is the code before the cursor itself quoted"
    "? looked up with the document's language, so renamed copies count) and nothing w"
    "hen that context was seen before; items of `minTokens` words or more are looked "
    "up one by one."
)


def identifier_items() -> list[dict[str, Any]]:
    return [
        {
            "label": f"value_{i}",
            "kind": 6,
            "detail": f"value_{i}: int",
            "documentation": {"kind": "markdown", "value": f"The {i}th value of the table."},
            "sortText": f"a{i:04d}",
            "insertText": f"value_{i}",
            "data": {"doc": "file:///bench/app.py", "n": i},
        }
        for i in range(100)
    ]


def snippet_items() -> list[dict[str, Any]]:
    return [
        {
            "label": f"total_{i}",
            "kind": 15,
            "sortText": f"a{i:04d}",
            "insertText": f"total_{i} = compute_total(values[{i}], weight={i}, scale=factor)"
            f" + offset_{i} * {i}",
            "data": {"n": i},
        }
        for i in range(100)
    ]


class Client:
    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            limit=1 << 22,
        )
        self.task = asyncio.ensure_future(self.read())

    def send(self, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def read(self) -> None:
        out = self.proc.stdout
        while True:
            length = 0
            while (line := await out.readline()).strip():
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line and not length:
                return
            msg = json.loads(await out.readexactly(length))
            if "method" in msg and "id" in msg:
                items = (msg.get("params") or {}).get("items") or []
                result = [None] * len(items) if msg["method"] == "workspace/configuration" else None
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "method" not in msg and msg.get("id") in self.waiting:
                self.waiting.pop(msg["id"]).set_result(msg)

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = fut
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await asyncio.wait_for(fut, 60)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def stop(self) -> None:
        await self.request("shutdown", None)
        self.notify("exit", None)
        await asyncio.wait_for(self.proc.wait(), 15)


async def run(
    command: list[str], index: Path, requests: int, warmup: int, typing: bool
) -> list[float]:
    client = Client(command)
    await client.start()
    root = Path(tempfile.gettempdir()).as_uri()
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": root,
            "capabilities": {"workspace": {"configuration": True}},
            "initializationOptions": {
                "recitation": {"indexPath": str(index), "completionMode": "warn"}
            },
        },
    )
    client.notify("initialized", {})
    uri = "file:///bench/app.py"
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": CONTEXT}},
    )
    lines = CONTEXT.split("\n")
    params = {
        "textDocument": {"uri": uri},
        "position": {"line": len(lines) - 1, "character": len(lines[-1])},
    }
    times = []
    version = 1
    for n in range(warmup + requests):
        if typing:  # a new line before the cursor: a context never seen before
            version += 1
            at = dict(params["position"])
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [
                        {"range": {"start": at, "end": at}, "text": f"step_{n} = {n}\n"}
                    ],
                },
            )
            params = {**params, "position": {"line": at["line"] + 1, "character": 0}}
        t0 = time.perf_counter()
        resp = await client.request("textDocument/completion", params)
        t1 = time.perf_counter()
        assert len(resp["result"]["items"]) == 100, resp
        if n >= warmup:
            times.append((t1 - t0) * 1000)
    await client.stop()
    return times


def relay_times(log: Path, warmup: int) -> list[float]:
    """The relay's own time per completion request, from its debug log: request read to
    forwarded, plus response read to written on."""
    found = re.findall(r"textDocument/completion: relay time ([0-9.]+) ms", log.read_text())
    return [float(t) for t in found[warmup:]] or [float("nan")]


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def row(name: str, values: list[float]) -> str:
    cells = [pct(values, 50), pct(values, 90), pct(values, 99), max(values)]
    cells.append(statistics.fmean(values))
    return f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + " |"


def added_row(direct: list[float], proxied: list[float]) -> str:
    cells = [pct(proxied, p) - pct(direct, p) for p in (50, 90, 99)]
    cells.append(max(proxied) - max(direct))
    cells.append(statistics.fmean(proxied) - statistics.fmean(direct))
    return "| **added by the proxy** | " + " | ".join(f"**{c:.2f}**" for c in cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=None, help="default: the default index")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--scenarios", default="identifiers,snippets,snippets-typing")
    parser.add_argument("--out", type=Path, help="write the results as markdown here")
    args = parser.parse_args()
    index = args.index or Path(default_index_path())
    load_before = os.getloadavg()[0]
    sections = []
    with tempfile.TemporaryDirectory() as tmp:
        upstream_file = Path(tmp) / "upstream.py"
        upstream_file.write_text(UPSTREAM, encoding="utf-8")
        for scenario in args.scenarios.split(","):
            items = identifier_items() if scenario == "identifiers" else snippet_items()
            typing = scenario.endswith("-typing")
            items_file = Path(tmp) / f"{scenario}.json"
            items_file.write_text(json.dumps(items), encoding="utf-8")
            upstream = [sys.executable, str(upstream_file), str(items_file)]
            relay_log = Path(tmp) / f"{scenario}.log"
            proxied_cmd = [
                *[sys.executable, "-m", "server", "--wrap", "--log-level", "DEBUG"],
                *["--log-file", str(relay_log), "--", *upstream],
            ]
            direct = asyncio.run(run(upstream, index, args.requests, args.warmup, typing))
            proxied = asyncio.run(run(proxied_cmd, index, args.requests, args.warmup, typing))
            size = len(json.dumps(items))
            sections.append(
                f"### {scenario}: 100 items ({size:,} bytes of JSON), {args.requests} requests\n\n"
                "| ms per completion request | p50 | p90 | p99 | max | mean |\n"
                "| --- | ---: | ---: | ---: | ---: | ---: |\n"
                + row("upstream directly", direct)
                + "\n"
                + row("through the proxy", proxied)
                + "\n"
                + added_row(direct, proxied)
                + "\n"
                + row("inside the relay (no pipe hops)", relay_times(relay_log, args.warmup))
                + "\n"
            )
            print(sections[-1], flush=True)
    load_after = os.getloadavg()[0]
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    command = "python bench/bench_proxy.py " + " ".join(sys.argv[1:])
    report = (
        "# Completion proxy latency\n\n"
        f"Measured {stamp} at commit `{commit()}` on {os.cpu_count()} cores "
        f"({platform.machine()}, Python {platform.python_version()}), a machine shared with "
        f"other work (load average {load_before:.1f} before, {load_after:.1f} after).\n\n"
        f"Reproduce:\n\n```\n{command.strip()}\n```\n\n"
        f"Index: `{index.name}` (the default index unless `--index`); completion mode `warn`. "
        "A stand-in upstream answers each request with the same 100 items; requests are "
        f"sequential, {args.warmup} warm-up requests not counted. Added latency = proxied "
        "minus direct, per percentile.\n\n" + "\n".join(sections) + "\n" + READING + "\n"
    )
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
