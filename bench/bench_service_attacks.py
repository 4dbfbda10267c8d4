"""The index service under the attacks of issue 26, before its token is even checked,
measured on this checkout and (with `--before REF`) on another commit, side by side:

1. one request whose header line is `--header-mb` MB long: the answer, how long it took,
   how much the server read, how much the worker grew;
2. an idle connection, one that sent half a request head, and one that sends a head byte
   every 2.5 s: how long each stays open (watched for `--watch` seconds);
3. 300 idle connections held against a worker that may open 256 descriptors: whether new
   clients are answered, and how fast;
4. a burst of slow lookups (`--burst` at once, each past `--lookup-timeout 1`), then a
   trivial lookup every 0.1 s: how the burst was answered, and how long until a trivial one
   is answered 200.

Every service runs with its defaults but `--workers 1` (and `--lookup-timeout 1` for 4), on
an index of two small files and one file of one line repeated 20,000 times (a query of that
line is the slowest lookup a small index offers). Client and service share the machine.

    .venv/bin/python bench/bench_service_attacks.py --before 9ec8d30 \\
        --out bench/results/service.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Attacks before the token"
REPEATED = "x = f(1)\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def snippet(name: str) -> str:
    digits = str(int(hashlib.sha256(name.encode()).hexdigest(), 16))
    body = "".join(
        f"    total_{name}_{i} = compute(values[{digits[i]}], {digits[i : i + 6]}, '{name}')\n"
        for i in range(10)
    )
    return f"def function_{name}(values, factor):\n{body}    return total_{name}_0\n"


def build(folder: Path) -> Path:
    src = folder / "src"
    src.mkdir(parents=True)
    for name in ("alpha", "beta"):
        (src / f"{name}.py").write_text(snippet(name))
    (src / "repeated.py").write_text(REPEATED * 20_000)
    out = folder / "idx"
    subprocess.run(
        [sys.executable, "-m", "index_tools.cli", "build", str(src), "--out", str(out), "-q"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    return out


class Service:
    def __init__(self, repo: Path, index: Path, *args: str, nofile: int | None = None):
        self.repo, self.index, self.args, self.nofile = repo, index, args, nofile
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Service:
        def limit() -> None:
            if self.nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, self.nofile))

        command = [sys.executable, "-m", "index_tools.cli", "serve", str(self.index)]
        command += ["--port", str(self.port), "--workers", "1", *self.args]
        self.process = subprocess.Popen(
            command,
            cwd=self.repo,
            env={**os.environ, "PYTHONPATH": str(self.repo)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=limit,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if get(self.port, "/v1/health", 2)[0] == 200:
                return self
            time.sleep(0.1)
        raise RuntimeError("the service did not start")

    def __exit__(self, *exc) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def peak_mb(self) -> float:
        assert self.process is not None
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024


def get(port: int, path: str, timeout: float, body: bytes | None = None) -> tuple[int, str]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, ""
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read()).get("reason", "")
        except ValueError:
            return e.code, ""
    except (OSError, ValueError) as e:
        return 0, type(e).__name__


# --- 1. a header line of many megabytes -------------------------------------------------


def huge_header(service: Service, mb: int) -> dict:
    before = service.peak_mb()
    s = socket.create_connection(("127.0.0.1", service.port), timeout=600)
    sent = 0
    t = time.monotonic()

    def send() -> None:
        nonlocal sent
        try:
            s.sendall(b"GET /v1/health HTTP/1.1\r\nhost: x\r\nx-pad: ")
            piece = b"a" * (1 << 20)
            for _ in range(mb):
                s.sendall(piece)
                sent += len(piece)
            s.sendall(b"\r\n\r\n")
        except OSError:
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    answer = b""
    try:
        while b"\r\n" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    except OSError as e:
        answer = answer or type(e).__name__.encode()
    took = time.monotonic() - t
    sender.join(600)
    s.close()
    line = answer.split(b"\r\n", 1)[0].decode("latin-1", "replace").split(" ")
    return {
        "answer": line[1] if len(line) > 1 and line[0].startswith("HTTP/") else "closed",
        "seconds": took,
        "sent_mb": sent / (1 << 20),
        "grew_mb": service.peak_mb() - before,
    }


# --- 2. connections that never send a whole head ------------------------------------------


def slow_connections(service: Service, watch: float) -> dict:
    heads = {
        "idle": None,
        "partial head": b"GET /v1/health HTTP/1.1\r\nho",
        "a byte every 2.5 s": b"GET /v1/health HTTP/1.1\r\nhost: x\r\nx-slow: " + b"a" * 100,
    }
    results: dict[str, float | None] = {}

    def watch_one(name: str, head: bytes | None) -> None:
        s = socket.create_connection(("127.0.0.1", service.port), timeout=watch)
        t = time.monotonic()
        if name == "partial head":
            s.sendall(head)
        i = 0
        s.settimeout(0.5)
        closed = None
        next_byte = t
        while time.monotonic() - t < watch:
            if name == "a byte every 2.5 s" and time.monotonic() >= next_byte and i < len(head):
                try:
                    s.send(head[i : i + 1])
                except OSError:
                    closed = time.monotonic() - t
                    break
                i += 1
                next_byte += 2.5
            try:
                if not s.recv(4096):
                    closed = time.monotonic() - t
                    break
            except TimeoutError:
                continue
            except OSError:
                closed = time.monotonic() - t
                break
        s.close()
        results[name] = closed

    threads = [threading.Thread(target=watch_one, args=item) for item in heads.items()]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return results


# --- 3. held connections against a descriptor limit ---------------------------------------


def held_connections(repo: Path, index: Path, held: int, clients: int) -> dict:
    with Service(repo, index, nofile=256) as service:
        conns = []
        for _ in range(held):
            try:
                conns.append(socket.create_connection(("127.0.0.1", service.port), timeout=5))
            except OSError:
                break
        answered, times = 0, []
        for _ in range(clients):
            t = time.monotonic()
            status, _ = get(service.port, "/v1/health", 5)
            if status == 200:
                answered += 1
                times.append(time.monotonic() - t)
        for c in conns:
            c.close()
    return {
        "held": len(conns),
        "answered": answered,
        "clients": clients,
        "median_ms": sorted(times)[len(times) // 2] * 1000 if times else None,
    }


# --- 4. a burst of slow lookups --------------------------------------------------------


def slow_burst(repo: Path, index: Path, burst: int, lines: int) -> dict:
    body = json.dumps({"suggestion": REPEATED * lines, "language": "python"}).encode()
    trivial = json.dumps({"suggestion": "x = 1\n"}).encode()
    with Service(repo, index, "--lookup-timeout", "1") as service:
        t = time.monotonic()
        with ThreadPoolExecutor(burst) as pool:
            answers = list(
                pool.map(lambda _: get(service.port, "/v1/match", 120, body), range(burst))
            )
        burst_s = time.monotonic() - t
        t = time.monotonic()
        failed = 0
        while time.monotonic() - t < 300:
            if get(service.port, "/v1/match", 30, trivial)[0] == 200:
                break
            failed += 1
            time.sleep(0.1)
        until = time.monotonic() - t
    outcomes: dict[str, int] = {}
    for status, reason in answers:
        key = f"{status} {reason}".strip()
        outcomes[key] = outcomes.get(key, 0) + 1
    return {"burst_s": burst_s, "outcomes": outcomes, "until_ok_s": until, "failed": failed}


# --- report ------------------------------------------------------------------------------


def commit_of(repo: Path, ref: str = "HEAD") -> str:
    try:
        return (
            subprocess.run(
                ["git", "rev-parse", "--short", ref], cwd=repo, capture_output=True, text=True
            ).stdout.strip()
            or ref
        )
    except OSError:
        return ref


def run_all(repo: Path, index: Path, args) -> dict:
    out: dict = {"commit": commit_of(repo)}
    print(f"{repo}: header", file=sys.stderr)
    with Service(repo, index) as service:
        out["header"] = huge_header(service, args.header_mb)
        print(f"{repo}: slow connections", file=sys.stderr)
        out["slow"] = slow_connections(service, args.watch)
        out["after"] = get(service.port, "/v1/health", 10)[0]
    print(f"{repo}: held connections", file=sys.stderr)
    out["held"] = held_connections(repo, index, 300, args.clients)
    print(f"{repo}: burst", file=sys.stderr)
    out["burst"] = slow_burst(repo, index, args.burst, args.slow_lines)
    return out


def closed(value: float | None, watch: float) -> str:
    return f"closed after {value:.1f} s" if value is not None else f"open after {watch:.0f} s"


def markdown(runs: list[tuple[str, dict]], args, argv: list[str]) -> str:
    names = " | ".join(f"{label} (`{r['commit']}`)" for label, r in runs)
    rule = " | ".join("---" for _ in runs)
    load = os.getloadavg()[0]
    lines = [
        SECTION,
        "",
        f"{os.cpu_count()} cores ({platform.machine()}, Python {platform.python_version()}), "
        f"load average before {load:.1f}; `serve --workers 1` with its defaults, on an index "
        "of two small files and one of a line repeated 20,000 times. Reproduce:",
        "",
        "```",
        "python bench/bench_service_attacks.py " + " ".join(argv),
        "```",
        "",
        f"| attack | {names} |",
        f"| --- | {rule} |",
    ]

    def row(name: str, cell) -> None:
        lines.append(f"| {name} | " + " | ".join(cell(r) for _, r in runs) + " |")

    row(
        f"a header line of {args.header_mb} MB",
        lambda r: (
            f"{r['header']['answer']} after {r['header']['seconds']:.1f} s (the client sent "
            f"{r['header']['sent_mb']:.0f} MB); worker +{r['header']['grew_mb']:.0f} MB"
        ),
    )
    for name in ("idle", "partial head", "a byte every 2.5 s"):
        row(f"{name} connection", lambda r, n=name: closed(r["slow"][n], args.watch))
    row(
        f"300 idle connections, 256 descriptors: {args.clients} new clients",
        lambda r: (
            f"{r['held']['held']} opened; {r['held']['answered']}/{r['held']['clients']} answered"
            + (
                f", median {r['held']['median_ms']:.0f} ms"
                if r["held"]["median_ms"] is not None
                else ""
            )
        ),
    )
    row(
        f"{args.burst} slow lookups ({args.slow_lines} repeated lines) at once "
        "(`--lookup-timeout 1`)",
        lambda r: (
            f"answered in {r['burst']['burst_s']:.1f} s: "
            + ", ".join(f"{k} ×{v}" for k, v in sorted(r["burst"]["outcomes"].items()))
        ),
    )
    row(
        "then a trivial lookup answered 200",
        lambda r: (
            f"after {r['burst']['until_ok_s']:.1f} s ({r['burst']['failed']} refused before)"
            if r["burst"]["until_ok_s"] < 300
            else f"not in 300 s ({r['burst']['failed']} refused)"
        ),
    )
    row("`/v1/health` after 1 and 2", lambda r: str(r["after"]))
    lines += ["", NOTES]
    return "\n".join(lines) + "\n"


NOTES = (
    "A refused request is answered at once and its connection closed 2 s later; what the "
    "client sends meanwhile is read and dropped (so it reads the answer, not a reset): the "
    "client's megabytes above, never kept. The 300 connections are all accepted: at the "
    "worker's limit (its descriptors less 64 and what it holds) each new one closes the one "
    "idle longest. The slow lookups stop at their deadline (the one running at the "
    "matcher's next step, the queued ones before they start), so nothing is left to run."
)


def write_section(path: Path, text: str) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if SECTION in old:
        head, _, rest = old.partition(SECTION)
        after = rest.find("\n## ")
        old = head + (rest[after + 1 :] if after >= 0 else "")
    path.write_text(old.rstrip("\n") + "\n\n" + text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REF", help="a commit to measure beside this one")
    parser.add_argument("--header-mb", type=int, default=300)
    parser.add_argument("--watch", type=float, default=75.0)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--burst", type=int, default=16)
    parser.add_argument("--slow-lines", type=int, default=2_000, help="lines of a slow lookup")
    parser.add_argument("--out", type=Path, help="replace this section of the file")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="recitation-attacks-"))
    try:
        index = build(folder)
        runs = []
        if args.before:
            old = folder / "before"
            old.mkdir()
            archive = subprocess.run(
                ["git", "archive", args.before], cwd=ROOT, capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            result = run_all(old, index, args)
            result["commit"] = commit_of(ROOT, args.before)
            runs.append(("before", result))
        runs.append(("after" if args.before else "this checkout", run_all(ROOT, index, args)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    text = markdown(runs, args, argv)
    print(text)
    if args.out:
        write_section(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
