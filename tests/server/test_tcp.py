"""`--tcp HOST:PORT`: the same server over a socket."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from server_helpers import REPO, block, corpus_text, server_env

HULL = block(corpus_text("geo.py"), "def convex_hull", "\n\ndef rotate_about")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def connect(client: LanguageClient, port: int, proc: subprocess.Popen) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while True:
        try:
            await client.start_tcp("127.0.0.1", port)
            return
        except OSError:
            if proc.poll() is not None or loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_tcp_transport(fixture_index):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "--tcp", f"127.0.0.1:{port}"],
        cwd=REPO,
        env=server_env(),
    )
    client = LanguageClient("tcp-test", "1")
    try:
        await connect(client, port, proc)
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                initialization_options={"indexPath": str(fixture_index)},
            )
        )
        client.initialized(types.InitializedParams())
        result = await client.protocol.send_request_async("recitation/check", {"text": HULL})
        assert result.suggestion_words == 219
        assert result.matches[0].length == 219
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=10)
