"""The stdio stream under abuse, for the server and for `--wrap`: framing errors (huge header
lines, a Content-Length shorter than its body, malformed or missing lengths, bodies that are
not JSON, deep nesting) are reported and skipped, and every well-formed request after them
is answered; a seeded fuzz run of thousands of messages ends with the process alive, no
request left unanswered, and bounded time.

`RECITATION_FUZZ_MESSAGES` (default 1500) sets the fuzz run's size for a longer run by hand.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from pathlib import Path

import pytest
from server_helpers import frame, server_env

from server.framing import _LENGTH as LENGTH
from server.framing import MAX_BODY

HERE = Path(__file__).resolve().parent
SNIPPET_SERVER = [sys.executable, str(HERE.parent / "proxy" / "snippet_server.py")]
SERVER = [sys.executable, "-m", "server"]
WRAPPED = [
    sys.executable,
    "-m",
    "server",
    "--wrap",
    "--upstream-timeout",
    "1",
    "--",
    *SNIPPET_SERVER,
]
FUZZ_MESSAGES = int(os.environ.get("RECITATION_FUZZ_MESSAGES", "1500"))


def request(msg_id, method: str, params) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


INIT = request(1, "initialize", {"capabilities": {}, "processId": None, "rootUri": None})


class Session:
    """A server process on pipes; responses collected by id, log messages kept."""

    def __init__(self, command: list[str]):
        self.command = command
        self.responses: dict = {}
        self.logs: list[str] = []
        self.proc = None
        self._reader = None

    async def __aenter__(self):
        self.proc = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**server_env(), "RECITATION_INDEX": os.devnull + "-missing"},
        )
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def __aexit__(self, *exc):
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)

    async def _read(self) -> None:
        out = self.proc.stdout
        while True:
            line = await out.readline()
            if not line:
                return
            if not line.lower().startswith(b"content-length:"):
                continue
            length = int(line.split(b":")[1])
            while (await out.readline()).strip():
                pass
            msg = json.loads(await out.readexactly(length))
            if "id" in msg and "method" not in msg:
                self.responses[msg["id"]] = msg
            elif msg.get("method") == "window/logMessage":
                self.logs.append(msg["params"]["message"])
            elif "id" in msg and "method" in msg:  # a request to the client: answer it
                self.send(frame({"jsonrpc": "2.0", "id": msg["id"], "result": None}))

    async def answered(self, ids, timeout: float = 60.0) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not all(i in self.responses for i in ids):
            if self.proc.returncode is not None:
                raise AssertionError(f"the process exited ({self.proc.returncode})")
            if loop.time() > end:
                missing = [i for i in ids if i not in self.responses][:5]
                raise AssertionError(f"unanswered: {missing}")
            await asyncio.sleep(0.05)


FRAMING_ERRORS = {
    "header line over 64 KiB": b"X-Junk: " + b"a" * 70_000 + b"\r\n",
    "short Content-Length before a large body": b"Content-Length: 5\r\n\r\n"
    + json.dumps(request(7, "shutdown", None)).encode()
    + b"x" * 100_000,
    "malformed Content-Length": b"Content-Length: abc\r\n\r\n{}",
    "missing Content-Length": b"Content-Type: x\r\n\r\n{}",
    "body that is not JSON": b"Content-Length: 9\r\n\r\n{not json",
    "deeply nested JSON": frame(None)[:0]
    + b"Content-Length: %d\r\n\r\n" % 400_000
    + b"[" * 200_000
    + b"]" * 200_000,
    "junk output without newlines": os.urandom(3_000_000).replace(b"Content-Length", b"x"),
    # a length over the limit, never sent: refused at once, the next message read, not a
    # terabyte waited for
    "Content-Length over the limit": b"Content-Length: 999999999999\r\n\r\n",
    "Content-Length over the limit, a body after": b"Content-Length: 300000000\r\n\r\n"
    + b"x" * 100_000,
}


@pytest.mark.parametrize("command", [SERVER, WRAPPED], ids=["server", "wrap"])
@pytest.mark.parametrize("damage", sorted(FRAMING_ERRORS))
async def test_framing_errors_are_reported_and_skipped(command, damage):
    async with Session(command) as s:
        s.send(frame(INIT))
        await s.answered([1])
        s.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        s.send(FRAMING_ERRORS[damage])
        s.send(frame(request(2, "textDocument/hover", {
            "textDocument": {"uri": "file:///nowhere.py"},
            "position": {"line": 0, "character": 0},
        })))  # fmt: skip
        await s.answered([2], timeout=20)
        if command is SERVER and damage != "junk output without newlines":
            await asyncio.sleep(0.2)
            assert any("Recitation:" in m for m in s.logs), s.logs


METHODS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/codeAction",
    "workspace/executeCommand",
    "recitation/check",
    "textDocument/definition",
    "unknown/method",
]


def fuzz_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([0, -1, 2**63, 1.5, float("1e308")])
    if kind == 2:
        return rng.choice(["", "x", "file:///a.py", "\x00\ud7ff\u202e", "a" * 5000])
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return {"line": rng.randrange(-2, 5), "character": rng.randrange(-2, 99)}
    if kind in (5, 6):
        keys = ["textDocument", "position", "range", "text", "uri", "command", "arguments",
                "context", "contentChanges", "minTokens", "language"]  # fmt: skip
        return {rng.choice(keys): fuzz_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    return [fuzz_value(rng, depth + 1) for _ in range(rng.randrange(4))]


# requests the relay answers itself or merges (a silent upstream is waited for at most
# --upstream-timeout); others are the wrapped server's to answer
WRAP_METHODS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/codeAction",
    "recitation/check",
]


@pytest.mark.parametrize("command", [SERVER, WRAPPED], ids=["server", "wrap"])
async def test_fuzzed_messages_leave_no_request_unanswered(command):
    methods = METHODS if command is SERVER else WRAP_METHODS
    rng = random.Random(20261123)
    async with Session(command) as s:
        s.send(frame(INIT))
        await s.answered([1])
        s.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        clean, exposed = [], set()
        swallow = 0  # bytes after damaged ones that a length in them may take as their body
        uri = "file:///fuzz.py"

        def send(data: bytes, msg_id: str | None = None) -> None:
            nonlocal swallow
            if msg_id is not None and swallow > 0:  # its header may be read as that body
                exposed.add(msg_id)
            s.send(data)
            swallow = max(0, swallow - len(data))

        def damaged(data: bytes) -> None:
            """Damaged bytes sent: what follows them, up to the length they declare past
            their own body (and the next message at least), may be swallowed."""
            nonlocal swallow
            send(data)
            found = LENGTH.search(data)
            body = data.find(b"\r\n\r\n")
            declared = int(found.group(1)) if found else 0
            own = len(data) - (body + 4) if body >= 0 else 0
            if declared <= MAX_BODY:
                swallow = max(swallow, declared - own, 1)

        s.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": ""}}}))  # fmt: skip
        for n in range(FUZZ_MESSAGES):
            msg_id = f"f{n}"
            roll = rng.random()
            if roll < 0.55:  # a well-framed request with odd params: must be answered
                send(frame(request(msg_id, rng.choice(methods), fuzz_value(rng))), msg_id)
                clean.append(msg_id)
            elif roll < 0.7:  # a notification with odd params
                method = rng.choice(["textDocument/didChange", "workspace/didChangeConfiguration",
                                     "$/cancelRequest", "textDocument/didSave"])  # fmt: skip
                send(frame({"jsonrpc": "2.0", "method": method, "params": fuzz_value(rng)}))
            elif roll < 0.85:  # a request whose bytes were damaged
                data = bytearray(frame(request(msg_id, rng.choice(METHODS), fuzz_value(rng))))
                for _ in range(rng.randrange(1, 4)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                damaged(bytes(data) + b"\r\n\r\n")
            elif roll < 0.95:  # not JSON-RPC at all
                damaged(rng.choice([b"garbage\r\n\r\n", b"Content-Length: 2\r\n\r\n[]",
                                    b"Content-Length: 4\r\n\r\nnull", os.urandom(64)]))  # fmt: skip
            else:  # a response to a request we never sent
                send(frame({"jsonrpc": "2.0", "id": rng.randrange(10**6), "result": {}}))
            if n % 50 == 0:
                await s.proc.stdin.drain()
        # damaged bytes may have swallowed the header of the request after them: a fresh
        # resynchronising request must come through, and every clean request before it that
        # was not swallowed is answered
        s.send(b"\r\n\r\n" + frame(request("final", "textDocument/hover", {
            "textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})))  # fmt: skip
        await s.answered(["final"], timeout=120)
        await asyncio.sleep(1.5)
        # what is still open is cancelled, as an editor does: a cancelled request is
        # answered too, by the wrapped server or for it
        for i in clean:
            if i not in s.responses:
                s.send(frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}}))
        await asyncio.sleep(2.5)
        unanswered = [i for i in clean if i not in s.responses]
        print(f"\n{FUZZ_MESSAGES} messages: {len(clean)} well-formed requests, "
              f"{len(clean) - len(unanswered)} answered; {len(exposed)} sent within the length "
              f"damaged bytes before them declared, {len(unanswered)} of them unanswered (read "
              "as the damaged message's body)")  # fmt: skip
        # every well-formed request is answered but one whose header the damaged bytes
        # before it swallowed (a length changed to a larger one reads it as their body)
        assert not [i for i in unanswered if i not in exposed], unanswered[:10]
        assert s.proc.returncode is None
        # the editor goes away: the process (and a relay's children) end
        s.proc.stdin.close()
        assert await asyncio.wait_for(s.proc.wait(), 15) is not None


async def test_the_relay_matches_the_editors_answers_to_its_own_requests(monkeypatch):
    from server.proxy.relay import Relay

    relay = Relay([sys.executable, "-c", "pass"], timeout=5)
    sent = []
    monkeypatch.setattr(relay, "to_editor", sent.append)
    first = asyncio.ensure_future(relay.ask_editor("workspace/configuration", {"n": 1}))
    second = asyncio.ensure_future(relay.ask_editor("workspace/configuration", {"n": 2}))
    await asyncio.sleep(0.05)
    ids = {m["params"]["n"]: m["id"] for m in sent}
    from server.proxy.framing import Message

    # the editor answers late and in the other order
    relay.editor_response(Message({"jsonrpc": "2.0", "id": ids[2], "result": ["two"]}, b""))
    await asyncio.sleep(0.3)
    relay.editor_response(Message({"jsonrpc": "2.0", "id": ids[1], "result": ["one"]}, b""))
    assert await first == ["one"] and await second == ["two"]
