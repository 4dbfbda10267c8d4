"""The index service under load, on loopback, beside the same lookups in process.

For each index given: the same queries (300-word suggestions with 200 words of context, cut
from files the index holds, and the same windows with their lines shuffled; language
python, as the language server asks) are looked up

1. one at a time, in process and over HTTP, interleaved: what the service adds per lookup
   (the client collects its garbage, untimed, before each HTTP request: the in-process
   lookups run in the same process);
2. by 64 concurrent clients for a bounded time (closed loop: each sends its next query when
   answered), over HTTP (`serve --workers N`) and, beside it, by 64 threads in process:
   throughput, p50/p99, and the time each HTTP answer spent outside the lookup itself
   (client latency minus the lookup's `Server-Timing`: queueing included); then the same
   clients paced, with exponential pauses, at half the throughput measured (as editors
   send lookups between edits), over HTTP and in process;

then two fault runs on the first index (a copy, for `add` to publish into):

3. the service killed (SIGKILL, every worker) under load and restarted 2 s later: clients
   retry with backoff; errors seen, time to recover, requests lost (none may be);
4. a generation published by `recitation-index add` under load: failed requests (none may
   be) and the generations that answered.

    .venv/bin/python bench/bench_service.py --index stdlib=.cache/bench/stdlib-idx \
        --texts python:stdlib --index pypi=.cache/bench/pypi-idx --texts .cache/bench/pypi \
        --queries 300 --clients 64 --seconds 20 --workers 2 --out bench/results/service.md

Client and service share the machine's cores: on a small machine the load generator takes
CPU from the workers, which the figures include.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import pct  # noqa: E402
from bench_latency import commit, workload  # noqa: E402

from index_tools import open_index  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = "python"
REQUEST_TIMEOUT = 30.0


# --- the service process ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    HTTP = "auto"  # the serve --http choice, set from the command line

    def __init__(self, index: Path, port: int, workers: int):
        self.index, self.port, self.workers = index, port, workers
        self.process: subprocess.Popen | None = None

    def start(self) -> float:
        """Start and wait until it answers; returns the seconds that took."""
        t = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "index_tools.cli", "serve", str(self.index)]
            + ["--port", str(self.port), "--workers", str(self.workers)]
            + ["--max-pending", "1000", "--http", self.HTTP],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        while time.perf_counter() - t < 60:
            if self.process.poll() is not None:
                raise RuntimeError("serve exited")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"GET /v1/health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                    if s.recv(64).startswith(b"HTTP/1.1 200"):
                        return time.perf_counter() - t
            except OSError:
                time.sleep(0.05)
        raise TimeoutError("serve did not start")

    def kill(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.process = None


# --- a minimal keep-alive HTTP/1.1 client (the load generator must stay cheap) --------------


class Connection:
    def __init__(self, port: int):
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = (
            f"POST /v1/match HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode()
        try:
            self.writer.write(head + body)
            await self.writer.drain()
            status_line = await self.reader.readline()
            if not status_line:
                raise ConnectionResetError("closed")
            headers = {}
            while True:
                line = await self.reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            data = await self.reader.readexactly(int(headers.get("content-length", 0)))
            return int(status_line.split()[1]), headers, data
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def lookup_ms(headers: dict[str, str]) -> float:
    timing = headers.get("server-timing", "")
    return float(timing.split("dur=")[1]) if "dur=" in timing else 0.0


def body_of(ctx: str, sug: str) -> bytes:
    query = {"suggestion": sug, "context": ctx, "language": LANGUAGE, "min_tokens": 60}
    return json.dumps(query).encode()


# --- 1. one at a time --------------------------------------------------------------------


async def sequential(idx, port: int, pairs) -> dict:
    conn = Connection(port)
    local, remote, added, differ = [], [], [], 0
    for ctx, sug in pairs[:20]:  # warm-up, both sides
        idx.match(sug, ctx, language=LANGUAGE)
        await conn.post(body_of(ctx, sug))
    for ctx, sug in pairs:
        t = time.perf_counter()
        found = idx.match(sug, ctx, language=LANGUAGE)
        local.append((time.perf_counter() - t) * 1000)
        gc.collect()  # not timed: garbage of the in-process lookup is this process's own
        t = time.perf_counter()
        status, headers, data = await conn.post(body_of(ctx, sug))
        remote.append((time.perf_counter() - t) * 1000)
        assert status == 200, status
        differ += len(json.loads(data)["matches"]) != len(found)
        added.append(remote[-1] - lookup_ms(headers))
    conn.close()
    return {
        "in_process": summary(local),
        "http": summary(remote),
        "outside_lookup": added,
        "differ": differ,
    }


def summary(times: list[float]) -> dict:
    return {"n": len(times), "p50": pct(times, 50), "p99": pct(times, 99), "max": max(times)}


# --- 2. concurrent clients ---------------------------------------------------------------


async def http_load(
    port: int, pairs, clients: int, seconds: float, retry: bool = False, rate: float = 0.0
):
    """Closed-loop clients until `seconds` pass; with `rate` (lookups per second, all
    clients together), each waits an exponential pause before each request, as editors
    do between edits. With `retry`, a failed request is sent again (backoff 50 ms
    doubling to 1 s) until answered: a logical request is lost only when it is still
    unanswered at the end plus REQUEST_TIMEOUT."""
    stats = {"latency": [], "outside": [], "errors": 0, "statuses": {}, "generations": {}}
    stats["answered_at"] = []
    deadline = time.perf_counter() + seconds
    lost = 0

    async def client(n: int) -> None:
        nonlocal lost
        conn, rng = Connection(port), random.Random(n)
        while time.perf_counter() < deadline:
            if rate:
                await asyncio.sleep(rng.expovariate(rate / clients))
            ctx, sug = rng.choice(pairs)
            body, t, backoff = body_of(ctx, sug), time.perf_counter(), 0.05
            while True:
                try:
                    status, headers, _ = await asyncio.wait_for(conn.post(body), REQUEST_TIMEOUT)
                except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError):
                    status, headers = 0, {}
                stats["statuses"][status] = stats["statuses"].get(status, 0) + 1
                if status == 200:
                    break
                stats["errors"] += 1
                if not retry or time.perf_counter() > deadline + REQUEST_TIMEOUT:
                    lost += 1
                    break
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
            if status == 200:
                ms = (time.perf_counter() - t) * 1000
                stats["latency"].append(ms)
                stats["outside"].append(ms - lookup_ms(headers))
                stats["answered_at"].append(time.perf_counter())
                gen = headers.get("x-recitation-generation", "?")
                stats["generations"][gen] = stats["generations"].get(gen, 0) + 1
        conn.close()

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    stats["seconds"] = time.perf_counter() - started
    stats["lost"] = lost
    return stats


def thread_load(idx, pairs, clients: int, seconds: float, rate: float = 0.0) -> dict:
    latency: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client(n: int) -> None:
        rng = random.Random(n)
        while time.perf_counter() < deadline:
            if rate:
                time.sleep(rng.expovariate(rate / clients))
            ctx, sug = rng.choice(pairs)
            t = time.perf_counter()
            try:
                idx.match(sug, ctx, language=LANGUAGE)
            except Exception:
                errors[0] += 1
                continue
            with lock:
                latency.append((time.perf_counter() - t) * 1000)

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"latency": latency, "seconds": time.perf_counter() - started, "errors": errors[0]}


def load_row(kind: str, lat: list[float], seconds: float, extra: str = "") -> str:
    return (
        f"| {kind} | {len(lat):,} | {len(lat) / seconds:.1f} | {pct(lat, 50):.1f} | "
        f"{pct(lat, 99):.1f} | {extra} |"
    )


# --- 3, 4. faults ------------------------------------------------------------------------


async def killed_and_restarted(service: Service, pairs, clients: int, seconds: float) -> dict:
    times: dict[str, float] = {}

    async def fault() -> None:
        await asyncio.sleep(seconds / 3)
        times["killed"] = time.perf_counter()
        service.kill(signal.SIGKILL)
        await asyncio.sleep(2.0)
        times["restart"] = time.perf_counter()
        times["startup"] = await asyncio.to_thread(service.start)

    load = asyncio.ensure_future(http_load(service.port, pairs, clients, seconds, retry=True))
    await fault()
    stats = await load
    after = [t for t in stats["answered_at"] if t > times["restart"]]
    stats["recovered_s"] = (min(after) - times["restart"]) if after else None
    stats["max_ms"] = max(stats["latency"])
    stats.update(times)
    return stats


async def generation_swapped(service: Service, pairs, clients: int, seconds: float, add_src):
    async def publish() -> float:
        await asyncio.sleep(1.0)
        t = time.perf_counter()
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "index_tools.cli", "add", str(service.index), add_src]
            + ["-q", "-j", "1"],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
        )
        if done.returncode:
            raise RuntimeError(done.stderr.decode())
        return time.perf_counter() - t

    load = asyncio.ensure_future(http_load(service.port, pairs, clients, seconds))
    add_seconds = await publish()
    stats = await load
    stats["add_s"] = add_seconds
    return stats


# --- the run -----------------------------------------------------------------------------


async def run(args) -> str:
    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    out = [
        "# The index service under load (loopback)",
        "",
        f"Commit `{commit()}`, {os.cpu_count()} cores ({platform.machine()}, Python "
        f"{platform.python_version()}), load average before {load_avg:.1f}; "
        f"`serve --workers {args.workers} --http {args.http}`, {args.clients} clients, {args.seconds:.0f} s "
        "per load run. The load generator (one asyncio process) runs on the same cores.",
        "",
        "Reproduce:",
        "",
        "```",
        "python bench/bench_service.py " + " ".join(sys.argv[1:]),
        "```",
        "",
    ]
    first = None
    for (name, path), spec in zip(args.index, args.texts, strict=True):
        work = workload(spec, args.queries, args.seed)
        pairs = work["quoted"] + work["novel"]
        random.Random(args.seed).shuffle(pairs)
        first = first or (name, Path(path), pairs)
        port = free_port()
        service = Service(Path(path), port, args.workers)
        service.start()
        words = 0
        try:
            with open_index(path) as idx:
                words = idx.header.words
                seq = await sequential(idx, port, pairs)
            # the in-process index's caches leave this process before the HTTP clients run
            # in it: a collection of that heap would be counted as HTTP latency
            gc.collect()
            over = await http_load(port, pairs, args.clients, args.seconds)
            # paced: the same clients, at a share of what the service answered flat out
            rate = args.paced_load * len(over["latency"]) / over["seconds"]
            over_paced = await http_load(port, pairs, args.clients, args.seconds, rate=rate)
        finally:
            service.kill()
        with open_index(path) as idx:
            local = await asyncio.to_thread(thread_load, idx, pairs, args.clients, args.seconds)
            local_paced = await asyncio.to_thread(
                thread_load, idx, pairs, args.clients, args.seconds, rate
            )
        a, b = seq["in_process"], seq["http"]
        outside = seq["outside_lookup"]
        out += [
            f"## {name} ({words:,} words), {len(pairs)} queries (half quoted, half novel)",
            "",
            "One lookup at a time, the same queries interleaved (ms):",
            "",
            "| path | n | p50 | p99 | max |",
            "| --- | ---: | ---: | ---: | ---: |",
            f"| in process | {a['n']} | {a['p50']:.2f} | {a['p99']:.2f} | {a['max']:.2f} |",
            f"| HTTP | {b['n']} | {b['p50']:.2f} | {b['p99']:.2f} | {b['max']:.2f} |",
            f"| HTTP minus its lookup (added) | {len(outside)} | {pct(outside, 50):.2f} | "
            f"{pct(outside, 99):.2f} | {max(outside):.2f} |",
            "",
            f"Answers with another number of matches than in process: {seq['differ']}.",
            "",
            f"{args.clients} concurrent clients, closed loop, {args.seconds:.0f} s:",
            "",
            "| path | answered | per s | p50 ms | p99 ms | notes |",
            "| --- | ---: | ---: | ---: | ---: | --- |",
            load_row(
                f"HTTP, {args.workers} workers",
                over["latency"],
                over["seconds"],
                f"errors {over['errors']}, lost {over['lost']}; outside the lookup: p50 "
                f"{pct(over['outside'], 50):.1f} ms, p99 {pct(over['outside'], 99):.1f} ms",
            ),
            load_row(
                f"in process, {args.clients} threads",
                local["latency"],
                local["seconds"],
                f"errors {local['errors']}; one process, one GIL",
            ),
            "",
            f"The same {args.clients} clients paced (exponential pauses, {rate:.1f} lookups/s "
            f"in all: {args.paced_load:.0%} of the HTTP throughput above), {args.seconds:.0f} s:",
            "",
            "| path | answered | per s | p50 ms | p99 ms | notes |",
            "| --- | ---: | ---: | ---: | ---: | --- |",
            load_row(
                f"HTTP, {args.workers} workers",
                over_paced["latency"],
                over_paced["seconds"],
                f"errors {over_paced['errors']}, lost {over_paced['lost']}; outside the lookup: "
                f"p50 {pct(over_paced['outside'], 50):.1f} ms, "
                f"p99 {pct(over_paced['outside'], 99):.1f} ms",
            ),
            load_row(
                f"in process, {args.clients} threads",
                local_paced["latency"],
                local_paced["seconds"],
                f"errors {local_paced['errors']}",
            ),
            "",
        ]
    assert first is not None
    name, path, pairs = first
    with tempfile.TemporaryDirectory(prefix="bench-service-") as tmp:
        copy = Path(tmp) / "idx"
        shutil.copytree(path, copy)
        service = Service(copy, free_port(), args.workers)
        service.start()
        try:
            killed = await killed_and_restarted(service, pairs, args.clients, args.seconds)
            extra = Path(tmp) / "extra"
            extra.mkdir()
            for i in range(50):  # new files for `add` to publish
                (extra / f"added_{i}.py").write_text(
                    "\n".join(f"def added_{i}_{j}(x):\n    return x * {i} + {j}" for j in range(40))
                )
            swapped = await generation_swapped(
                service, pairs, args.clients, args.seconds, str(extra)
            )
        finally:
            service.kill()
    k, s = killed, swapped
    statuses = ", ".join(f"{code or 'no answer'}: {n}" for code, n in sorted(k["statuses"].items()))
    out += [
        f"## Faults ({name}, {args.clients} clients, {args.seconds:.0f} s each)",
        "",
        f"**Killed and restarted.** At {args.seconds / 3:.0f} s every process of the service "
        "was killed (SIGKILL); it was started again 2 s later (ready in "
        f"{k['startup']:.1f} s). Clients retried each failed request (backoff 50 ms to 1 s). "
        f"Attempts by outcome: {statuses}. Answered: {len(k['latency']):,}; lost: "
        f"{k['lost']}; first answer {k['recovered_s']:.1f} s after the restart began; the "
        f"slowest request (retries included) took {k['max_ms'] / 1000:.1f} s.",
        "",
        f"**Generation swapped.** `recitation-index add` published a new generation (50 "
        f"files, {s['add_s']:.1f} s) while the clients ran: answered {len(s['latency']):,}, "
        f"failed {s['errors']}, lost {s['lost']}; p50 {pct(s['latency'], 50):.1f} ms, p99 "
        f"{pct(s['latency'], 99):.1f} ms. Answers by generation: "
        + ", ".join(f"`{g}` {n:,}" for g, n in s["generations"].items())
        + ".",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", action="append", required=True, metavar="NAME=DIR")
    ap.add_argument("--texts", action="append", required=True, metavar="SPEC")
    ap.add_argument("--queries", type=int, default=300, help="quoted and novel, each")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--http", choices=("auto", "httptools", "h11"), default="auto", help="serve --http"
    )
    ap.add_argument(
        "--paced-load", type=float, default=0.5, help="paced run: share of the HTTP throughput"
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    args.index = [tuple(i.split("=", 1)) for i in args.index]
    Service.HTTP = args.http
    report = asyncio.run(run(args))
    print(report)
    if args.out:
        args.out.write_text(report + "\n")


if __name__ == "__main__":
    main()
