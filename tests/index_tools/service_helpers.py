"""A real `recitation-index serve` process on a free loopback port, for the service tests
(the engine's and the language server's)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def snippet(name: str) -> str:
    """A function of 100+ words of its own (its literals differ per name)."""
    digits = str(int(hashlib.sha256(name.encode()).hexdigest(), 16))
    body = "".join(
        f"    total_{name}_{i} = compute(values[{digits[i]}], {digits[i : i + 6]}, '{name}')\n"
        for i in range(10)
    )
    return f"def function_{name}(values, factor):\n{body}    return total_{name}_0\n"


def corpus(root: Path, *names: str) -> str:
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / f"{name}.py").write_text(snippet(name))
    return str(root)


def cli(*args: str, input: str | None = None, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "index_tools.cli", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )


class Service:
    """`recitation-index serve INDEX` until stopped (by its process id)."""

    def __init__(
        self,
        index: Path,
        *args: str,
        port: int | None = None,
        workers: int = 1,
        nofile: int | None = None,
    ):
        self.index, self.args, self.workers = index, args, workers
        self.nofile = nofile  # the descriptor limit of the service's processes
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.output = ""  # what it wrote on stderr, once stopped

    def start(self, timeout: float = 30.0) -> Service:
        command = [sys.executable, "-m", "index_tools.cli", "serve", str(self.index)]
        command += ["--port", str(self.port), "--workers", str(self.workers), *self.args]
        self.process = subprocess.Popen(
            command,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=self._limit if self.nofile else None,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited: {self.process.stderr.read().decode()}")
            try:
                if self.get("/v1/health")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise TimeoutError("the service did not answer /v1/health")

    def _limit(self) -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, self.nofile))

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)  # its own session: the supervisor and workers
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(15)
        self.output = self.process.stderr.read().decode("utf-8", "replace")
        self.process.stdout.close()
        self.process.stderr.close()
        self.process = None

    def __enter__(self) -> Service:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, bytes, dict]:
        req = urllib.request.Request(
            self.url + path, data=body, method=method, headers=headers or {}
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)

    def get(self, path: str, headers: dict | None = None) -> tuple[int, bytes, dict]:
        return self.request("GET", path, headers=headers)

    def match(self, suggestion: str, headers: dict | None = None, **fields) -> tuple[int, dict]:
        body = json.dumps({"suggestion": suggestion, **fields}).encode()
        status, raw, _ = self.request(
            "POST", "/v1/match", body, {"content-type": "application/json", **(headers or {})}
        )
        return status, json.loads(raw)
