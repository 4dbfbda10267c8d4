"""Nothing lost on an index service (issue #37): a document over the service's request limit
is flagged as the local index flags it (the client sends it in windows), and a lookup the
service fails is never "nothing found": the log and the status say the text was not
checked, and a text kept from an unreachable service is checked when it answers again."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from lsprotocol import types
from server_helpers import diagnostics_for, insert, line_range, open_doc, start_session, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "index_tools"))
from service_helpers import Service, corpus, free_port, snippet  # noqa: E402

from index_tools import BuildOptions, build_index  # noqa: E402


def built(root: Path, *names: str) -> Path:
    out = root / "idx"
    build_index([corpus(root / "src", *names)], out, BuildOptions(jobs=1, progress=False))
    return out


def filler(chars: int) -> str:
    out, size, i = [], 0, 0
    while size < chars:
        out.append(f"record_{i} = table.lookup({i}, {i * 7 % 1000}, 'name{i}')\n")
        size += len(out[-1])
        i += 1
    return "".join(out)


def ranges(diags) -> list[tuple[int, int, int, int]]:
    return sorted(
        (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
        for d in diags
    )


def not_checked_logs(client) -> list[str]:
    return [m.message for m in client.log_messages if "not checked" in m.message]


@pytest.mark.parametrize("where", ["local", "service"])
async def test_a_large_document_is_flagged_through_a_service_as_through_the_local_index(
    client, tmp_path, workspace, where
):
    index = built(tmp_path, "beta", "gamma")
    half = filler(525_000)
    # 1.05 MB: the service's default request limit is 1 MiB; a quote far into it
    text = half + snippet("gamma") + half + snippet("beta")
    assert len(text.encode()) > 1 << 20
    expected = []
    for name in ("gamma", "beta"):
        first, last = (n - 1 for n in line_range(text, snippet(name)))  # 0-based
        expected.append((first, 0, last, len(text.split("\n")[last])))
    service = Service(index) if where == "service" else None
    if service is not None:
        await asyncio.to_thread(service.start)
    try:
        a = workspace["a"]
        location = service.url if service is not None else index
        await start_session(client, index=location, folders=[a], settings={"scanOnOpen": True})
        uri = (a / "big.py").as_uri()
        open_doc(client, uri, text)
        diags = await diagnostics_for(client, uri, count=2)
        assert ranges(diags) == expected
        assert not not_checked_logs(client)
    finally:
        if service is not None:
            await asyncio.to_thread(service.stop)


class FailingService(BaseHTTPRequestHandler):
    """An index service that answers its summary and fails every lookup (500)."""

    def do_GET(self):
        body = {"name": "one file", "format_version": 1, "shards": 1, "documents": 1,
                "files": 1, "words": 100, "vocabulary": 50, "bytes": 4096,
                "generation": "gen-1", "api_version": 1, "status": "ok"}  # fmt: skip
        self._answer(200, body)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.lookups += 1
        self._answer(500, {"error": "internal error", "reason": "internal"})

    def _answer(self, status: int, body: dict) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


async def test_a_lookup_the_service_fails_is_said_not_checked_never_nothing_found(
    client, workspace
):
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), FailingService)
    server.lookups = 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        a = workspace["a"]
        await start_session(client, index=url, folders=[a])
        await wait_for(lambda: [s for s in client.statuses if s["state"] == "ready"])
        uri = (a / "x.py").as_uri()
        open_doc(client, uri, "")
        insert(client, uri, 2, types.Position(0, 0), snippet("beta"))
        (logged,) = await wait_for(lambda: not_checked_logs(client), what="a not-checked log")
        assert logged == (
            f"Recitation: x.py was not checked: index service {url} answered 500: internal error"
        )
        status = await wait_for(
            lambda: [s for s in client.statuses if "not checked" in s["message"]],
            what="a not-checked status",
        )
        assert status[-1]["state"] == "error"
        assert status[-1]["message"] == (
            f"error: x.py was not checked: index service {url} answered 500: internal error"
        )
        assert server.lookups == 2  # tried once more
        assert not client.diagnostics.get(uri)
        with pytest.raises(Exception, match="not checked: index service .* answered 500"):
            await client.protocol.send_request_async(
                "recitation/check", {"text": snippet("beta"), "uri": uri}
            )
    finally:
        server.shutdown()
        server.server_close()


async def test_a_text_kept_from_a_service_down_is_checked_when_it_answers(
    client, tmp_path, workspace
):
    service = Service(built(tmp_path, "beta", "beta2"))
    await asyncio.to_thread(service.start)
    try:
        a = workspace["a"]
        await start_session(client, index=service.url, folders=[a])
        await wait_for(lambda: [s for s in client.statuses if s["state"] == "ready"])
        uri = (a / "x.py").as_uri()
        open_doc(client, uri, "")
        await asyncio.to_thread(service.stop)
        insert(client, uri, 2, types.Position(0, 0), snippet("beta"))
        (logged, *_) = await wait_for(lambda: not_checked_logs(client), what="a not-checked log")
        assert logged.startswith(
            f"Recitation: x.py was not checked: index service unreachable: {service.url}"
        )
        down = [s for s in client.statuses if "not checked" in s["message"]]
        assert down and down[-1]["state"] == "error"
        assert not client.diagnostics.get(uri)
        await asyncio.to_thread(service.start)  # the same port: it answers again
        (diag,) = await diagnostics_for(client, uri)
        assert "beta.py" in diag.message
        await wait_for(
            lambda: (
                client.statuses[-1]["state"] == "ready"
                and "not checked" not in client.statuses[-1]["message"]
            ),
            what="a ready status",
        )
    finally:
        await asyncio.to_thread(service.stop)
