"""A language server that stops reading its stdin: it answers `initialize` and `shutdown`,
and from the first `textDocument/didOpen` on reads nothing more (it stays alive, its stdin
open), as a hung or blocked server would."""

from __future__ import annotations

import json
import sys
import time


def read(stdin) -> dict | None:
    length = None
    while True:
        line = stdin.readline()
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stdin.read(length))


def write(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main() -> None:
    stdin = sys.stdin.buffer
    while (msg := read(stdin)) is not None:
        method = msg.get("method")
        if method == "initialize":
            write({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {}}})
        elif method == "shutdown":
            write({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif method == "exit":
            return
        elif method == "textDocument/didOpen":
            while True:  # deaf from now on
                time.sleep(3600)
        elif "id" in msg and method is not None:
            write({"jsonrpc": "2.0", "id": msg["id"], "result": None})


if __name__ == "__main__":
    main()
