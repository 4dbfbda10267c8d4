"""An index service that misbehaves: one that never finishes its answer, and answers of the
wrong shape. Every request ends within its deadline ("no answer in N s"), a malformed answer
is "the index service sent a malformed answer" in one line, exit 2, never "nothing found"
and never "unexpected error"."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest
from service_helpers import REPO

from index_tools import IndexServiceError, RemoteIndex

QUERY = "".join(f"value_{i} = compute({i}, scale={i}, name='item{i}')\n" for i in range(20))


def read_request(conn: socket.socket) -> bytes:
    """The request's head and its body (by Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


class Fake:
    """A loopback service that answers every request with `respond(conn, request)`."""

    def __init__(self, respond: Callable[[socket.socket, bytes], None]):
        self.respond = respond
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            try:
                while not self.stopped.is_set():
                    request = read_request(conn)
                    if not request:
                        return
                    self.respond(conn, request)
            except OSError:
                pass

    def __enter__(self) -> Fake:
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.sock.close()


def answer(body: bytes, status: str = "200 OK") -> Callable[[socket.socket, bytes], None]:
    def respond(conn: socket.socket, _request: bytes) -> None:
        conn.sendall(
            f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )

    return respond


def trickle(conn: socket.socket, _request: bytes) -> None:
    """A status line, then a header every 0.3 s, for good: no read waits long."""
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for i in range(10_000):
        time.sleep(0.3)
        conn.sendall(f"x-wait-{i}: 1\r\n".encode())


def trickle_body(conn: socket.socket, _request: bytes) -> None:
    """A whole head, then the body a byte every 0.3 s."""
    conn.sendall(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 99999\r\n\r\n"
    )
    for _ in range(10_000):
        time.sleep(0.3)
        conn.sendall(b" ")


CLIENT = """
import sys
from index_tools.service import remote
remote.ANSWER_TIMEOUT = float(sys.argv[1])
from index_tools.cli import main
sys.exit(main(sys.argv[2:]))
"""


def cli(*args: str, timeout_s: float = 30.0, input: str = QUERY) -> subprocess.CompletedProcess:
    """The CLI, its requests given `timeout_s` each."""
    return subprocess.run(
        [sys.executable, "-c", CLIENT, str(timeout_s), *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


@pytest.mark.parametrize("how", [trickle, trickle_body], ids=["head", "body"])
def test_an_answer_that_never_ends_is_an_error_at_the_deadline(how):
    with Fake(how) as fake:
        started = time.monotonic()
        with pytest.raises(IndexServiceError) as info:
            RemoteIndex(fake.url, answer_timeout=1.5).match(QUERY)
        took = time.monotonic() - started
        assert "no answer in 1.5 s" in str(info.value) and info.value.unreachable
        assert took < 4, took
        started = time.monotonic()
        r = cli("query", "--index", fake.url, timeout_s=1.5)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert r.stderr.strip().splitlines() == [
            f"recitation-index: index service unreachable: {fake.url}: no answer in 1.5 s"
        ]
        assert time.monotonic() - started < 10


def test_check_of_a_folder_ends_at_the_deadline(tmp_path):
    (tmp_path / "a.py").write_text(QUERY)
    with Fake(trickle) as fake:
        r = cli("check", str(tmp_path), "--index", fake.url, timeout_s=1.0)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "no answer in 1 s" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_default_deadline_is_said_in_seconds():
    from index_tools.service import remote

    assert 10 <= remote.ANSWER_TIMEOUT <= 120


MATCH = {
    "kind": "recitation",
    "length": 20,
    "query_start": 0,
    "query_end": 20,
    "file_count": 1,
    "file_count_exact": True,
    "text": "value_0",
    "sources": [
        {
            "repository": "acme/widgets",
            "path": "w.py",
            "commit": "abc",
            "license": "MIT",
            "url": "",
            "start_line": 1,
            "end_line": 2,
        }
    ],
}


def but(**changes) -> dict:
    out = json.loads(json.dumps(MATCH))
    for key, value in changes.items():
        if value is ...:
            out.pop(key)
        else:
            out[key] = value
    return out


def nested(n: int) -> bytes:
    return b'{"matches": ' + b"[" * n + b"]" * n + b"}"


MALFORMED = {
    "not matches": json.dumps({"matches": [1, "x", None]}).encode(),
    "no length": json.dumps({"matches": [but(length=...)]}).encode(),
    "length as text": json.dumps({"matches": [but(length="20")]}).encode(),
    "length a bool": json.dumps({"matches": [but(length=True)]}).encode(),
    "count negative": json.dumps({"matches": [but(file_count=-1)]}).encode(),
    "kind a list": json.dumps({"matches": [but(kind=["recitation"])]}).encode(),
    "sources a text": json.dumps({"matches": [but(sources="acme")]}).encode(),
    "a source of numbers": json.dumps({"matches": [but(sources=[{"repository": 1}])]}).encode(),
    "range a list": json.dumps({"matches": [but(range=[0, 1])]}).encode(),
    "range without its end": json.dumps(
        {"matches": [but(range={"start": {"line": 0, "character": 0}})]}
    ).encode(),
    "renamed of numbers": json.dumps({"matches": [but(renamed=[{"from": 1, "to": 2}])]}).encode(),
    "parts an object": json.dumps({"matches": [but(parts={"a": 1})]}).encode(),
    "a part without a kind": json.dumps(
        {"matches": [but(parts=[{"length": 3, "file_count": 1, "file_count_exact": True}])]}
    ).encode(),
    "span past the query": json.dumps({"matches": [but(query_start=5, query_end=2)]}).encode(),
    "matches nested 100,000 deep": nested(100_000),
    "an answer nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "a huge number": b'{"matches": [{"length": 1' + b"0" * 5000 + b"}]}",
    "not JSON": b"<html>busy</html>",
    "no matches": b'{"found": []}',
    "matches null": b'{"matches": null}',
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_is_one_line_never_nothing_found(case):
    with Fake(answer(MALFORMED[case])) as fake:
        with pytest.raises(IndexServiceError, match="malformed answer"):
            RemoteIndex(fake.url).match(QUERY)
        for command in (["query", "--index", fake.url], ["query", "--index", fake.url, "--json"]):
            r = cli(*command)
            assert r.returncode == 2, (case, command, r.returncode, r.stdout, r.stderr)
            (line,) = r.stderr.strip().splitlines()
            assert line == (
                f"recitation-index: the index service sent a malformed answer: {fake.url}"
            ), line
            assert r.stdout == ""


def test_a_well_formed_answer_is_read(tmp_path):
    """(The checks refuse only what is malformed: a match of the same shape is shown.)"""
    with Fake(answer(json.dumps({"matches": [MATCH]}).encode())) as fake:
        (found,) = RemoteIndex(fake.url).match(QUERY)
        assert found.length == 20 and found.sources[0].repository == "acme/widgets"
        r = cli("query", "--index", fake.url, "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["matches"][0]["sources"][0]["repository"] == "acme/widgets"


def test_check_of_a_malformed_answer_is_exit_2(tmp_path):
    (tmp_path / "a.py").write_text(QUERY)
    with Fake(answer(nested(100_000))) as fake:
        r = cli("check", str(tmp_path), "--index", fake.url)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "malformed answer" in r.stderr and len(r.stderr.strip().splitlines()) == 1


SUMMARY = {
    "name": "lib",
    "format_version": 6,
    "shards": 1,
    "documents": 2,
    "files": 2,
    "words": 100,
    "vocabulary": 40,
    "shard_words": [100],
    "shard_id_bytes": [2],
    "renamed_stride": 4,
    "bytes": 5000,
    "bytes_per_word": 50.0,
    "search": "native",
    "skipped": {"binary": 1},
    "sources": [],
}


def summary_but(**changes) -> bytes:
    out = dict(SUMMARY)
    for key, value in changes.items():
        if value is ...:
            out.pop(key)
        else:
            out[key] = value
    return json.dumps(out).encode()


MALFORMED_SUMMARIES = {
    "no files": summary_but(files=...),
    "files as text": summary_but(files="2"),
    "skipped a list": summary_but(skipped=[1]),
    "skipped of text": summary_but(skipped={"binary": "1"}),
    "id widths of text": summary_but(shard_id_bytes=["2"]),
    "sources an object": summary_but(sources={"a": 1}),
    "name a number": summary_but(name=5),
    "nested": b'{"files": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("case", sorted(MALFORMED_SUMMARIES))
def test_stats_of_a_malformed_summary_is_one_line(case):
    with Fake(answer(MALFORMED_SUMMARIES[case])) as fake:
        r = cli("stats", fake.url)
    assert r.returncode == 2, (case, r.returncode, r.stdout, r.stderr)
    assert r.stderr.strip().splitlines() == [
        f"recitation-index: the index service sent a malformed answer: {fake.url}"
    ]


def test_stats_of_a_service_shows_its_names_printable():
    name = "lib\x1b]0;pwned\x07"
    with Fake(answer(summary_but(name=name, skipped={"bin\x1b[2J": 1}))) as fake:
        r = cli("stats", fake.url)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert r.stdout.startswith(f"index: {fake.url} (lib")


def test_stats_of_a_service_reads_source_records_of_any_shape():
    odd = [
        {"kind": "workspace", "workspace": "w", "plan": {"ecosystems": 5, "not_indexed": "x"}},
        {"kind": ["npm"], "workspace": "w", "packages": 3},
        {"kind": "npm", "workspace": "w", "packages": [1, {"name": "left-pad"}]},
        {"kind": "workspace", "workspace": "v", "plan": {"ecosystems": [{"files": 7}]}},
    ]
    with Fake(answer(summary_but(sources=odd))) as fake:
        r = cli("stats", fake.url)
    assert r.returncode == 0, r.stderr
    assert "left-pad" in r.stdout
