"""Shared pieces of the proxy tests: commands, the fixture index's texts, and a raw
JSON-RPC client that keeps every message exactly as received (to compare results byte for
byte between a server and the same server behind the proxy)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
WIDGETS = HERE / "fixtures" / "widgets"
SHAPES = (WIDGETS / "shapes.py").read_text(encoding="utf-8")
SNIPPET_SERVER = [sys.executable, str(HERE / "snippet_server.py")]
DEAF_SERVER = [sys.executable, str(HERE / "deaf_server.py")]
PROXY = [sys.executable, "-m", "server", "--wrap"]
DEADLINE = 60.0


def part(first: str, stop: str | None = None) -> str:
    """The fixture text from the line starting with `first` up to `stop` (or the end)."""
    start = SHAPES.index(first)
    end = SHAPES.index(stop, start) if stop else len(SHAPES)
    return SHAPES[start:end].rstrip() + "\n"


AREA = part("def polygon_area_and_centroid", "\n\ndef clamp")
CLAMP = part("def clamp_rectangle_to_viewport")
ORIGINAL = (
    "def tally_votes(ballots):\n"
    "    counts = {}\n"
    "    for ballot in ballots:\n"
    "        for rank, name in enumerate(ballot):\n"
    "            counts[name] = counts.get(name, 0) + len(ballot) - rank\n"
    "    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))\n"
)


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), out.get("PYTHONPATH")]))
    out.pop("RECITATION_INDEX", None)
    return out


def proxy(*upstream: str, timeout: float | None = None, options: tuple[str, ...] = ()) -> list[str]:
    extra = ["--upstream-timeout", str(timeout)] if timeout is not None else []
    return [*PROXY, *extra, *options, "--", *upstream]


def peak_memory(pid: int) -> int:
    """A process's peak resident memory (Linux), bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


class RawClient:
    """An LSP client over a child's stdio that records raw messages. Server requests are
    answered with `null` (workspace/configuration: one `null` per item)."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.next_id = 0
        self.responses: dict[int, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []  # every message, in order
        self.changed = asyncio.Condition()
        self.reader: asyncio.Task[None] | None = None

    async def start(self, command: list[str], cwd: Path | None = None) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env(),
            cwd=str(cwd) if cwd else None,
            limit=1 << 22,
        )
        self.reader = asyncio.ensure_future(self._read())

    def send(self, data: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        body = json.dumps(data).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            msg = json.loads(await out.readexactly(length))
            self.received.append(msg)
            if "method" in msg and "id" in msg:
                self.server_requests.append(msg)
                params = msg.get("params") or {}
                result: Any = None
                if msg["method"] == "workspace/configuration":
                    result = [None] * len(params.get("items", []))
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "method" in msg:
                self.notifications.append(msg)
            else:
                self.responses[msg["id"]] = msg
            async with self.changed:
                self.changed.notify_all()

    async def wait(self, predicate: Any, what: str, timeout: float = DEADLINE) -> Any:
        async def until() -> Any:
            async with self.changed:
                while not (found := predicate()):
                    await self.changed.wait()
                return found

        try:
            return await asyncio.wait_for(until(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"timed out waiting for {what}") from None

    async def request(self, method: str, params: Any, timeout: float = DEADLINE) -> dict:
        """The whole response message."""
        self.next_id += 1
        msg_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await self.wait(lambda: self.responses.get(msg_id), f"{method}", timeout)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def notes(self, method: str) -> list[dict[str, Any]]:
        return [m["params"] for m in self.notifications if m["method"] == method]

    async def initialize(self, root: Path, options: Any = None, caps: Any = None) -> dict:
        resp = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": caps or {},
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        return resp

    def open(self, uri: str, text: str, language: str = "python") -> None:
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
        )

    async def stop(self) -> int | None:
        if self.proc is None:
            return None
        with contextlib.suppress(AssertionError):
            if self.proc.returncode is None:
                await self.request("shutdown", None, timeout=15)
                self.notify("exit", None)
        try:
            code = await asyncio.wait_for(self.proc.wait(), 15)
        except asyncio.TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        if self.reader is not None:
            self.reader.cancel()
        return code
