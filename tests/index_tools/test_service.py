"""`recitation-index serve`: real processes, real HTTP over loopback. The CLI gets the same
JSON from a served index as from the local one; tokens, size limits, malformed requests and
metrics; a generation published by `add` is served without a failed request."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from service_helpers import Service, cli, corpus, free_port, snippet

from index_tools import (
    BuildOptions,
    IndexOpenError,
    IndexServiceError,
    RemoteIndex,
    build_index,
    open_index,
)


@pytest.fixture(scope="module")
def small_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("served")
    out = root / "idx"
    build_index([corpus(root / "src", "alpha", "beta")], out, BuildOptions(jobs=1, progress=False))
    return out


@pytest.fixture(scope="module")
def service(small_index):
    with Service(small_index) as s:
        yield s


@pytest.fixture(scope="module")
def guarded(small_index, tmp_path_factory):
    token = tmp_path_factory.mktemp("token") / "token"
    token.write_text("s3cret-token\n")
    args = ("--token-file", str(token), "--max-request-bytes", "4096", "--read-timeout", "1")
    with Service(small_index, *args) as s:
        s.token_file = token
        yield s


def test_query_over_http_prints_the_same_json_as_the_local_index(service, small_index):
    text = "x = 1\n" + snippet("alpha") + "\nprint('done')\n"
    local = cli("query", str(small_index), "--json", "--language", "python", input=text)
    remote = cli("query", "--index", service.url, "--json", "--language", "python", input=text)
    assert local.returncode == remote.returncode == 0, remote.stderr
    assert json.loads(local.stdout)["matches"], "the query must find the quoted function"
    assert remote.stdout == local.stdout
    # the text report too
    assert (
        cli("query", service.url, input=text).stdout
        == cli("query", str(small_index), input=text).stdout
    )


def test_the_client_gives_the_matches_a_local_index_gives(service, small_index):
    context = "import os\n" + snippet("alpha")[:300]
    suggestion = snippet("alpha")[300:] + "\n\n" + snippet("beta") + "x = 1\n"
    with open_index(small_index) as local:
        expected = local.match(suggestion, context, min_tokens=20, language="python")
    found = RemoteIndex(service.url).match(suggestion, context, 20, "python")
    assert len(expected) == 2 and found == expected  # char offsets too (not in the JSON)


def test_the_api_answers_match_stats_and_health(service):
    status, answer = service.match(snippet("beta"), context="import os\n", min_tokens=20)
    assert status == 200
    assert answer["version"] == 2 and answer["matches"][0]["sources"][0]["path"] == "beta.py"
    status, raw, _ = service.get("/v1/stats")
    stats = json.loads(raw)
    assert status == 200 and stats["files"] == 2 and stats["generation"].startswith("gen-")
    assert "path" not in stats  # where the index lives stays on the server
    for _ in range(100):  # the worker maps its index ahead beside the lookups, and says so
        if stats["mapped_ahead"] != "under way":
            break
        time.sleep(0.05)
        stats = json.loads(service.get("/v1/stats")[1])
    said = stats["mapped_ahead"]
    if sys.platform.startswith("linux"):
        assert re.match(r"[\d.]+ (MiB|GiB) in memory mapped ahead in [\d.]+ s", said), said
    else:
        assert said.startswith("not mapped ahead (the system has no MADV_POPULATE_READ"), said
    assert re.search(r"; a lookup rehearsed in [\d.]+ ms$", said), said  # (its lookup thread)
    status, raw, _ = service.get("/v1/health")
    assert status == 200 and json.loads(raw)["status"] == "ok"


def test_stats_over_http(service):
    shown = cli("stats", service.url, "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["files"] == 2
    refused = cli("stats", service.url, "--verify")
    assert refused.returncode == 2 and "where the index is served" in refused.stderr


def test_malformed_requests_get_400_and_unknown_routes_404(service):
    for body in (b"{not json", b"[1, 2]", b'{"context": "x"}', b'{"suggestion": 3}'):
        status, raw, _ = service.request("POST", "/v1/match", body)
        assert status == 400, body
        assert json.loads(raw)["error"]
    status, answer = service.match("x", min_tokens=0)
    assert status == 400 and "min_tokens" in answer["error"]
    assert service.get("/v2/match")[0] == 404
    assert service.get("/v1/match")[0] == 405


def test_a_token_is_required_and_compared(guarded):
    assert guarded.match("x = 1")[0] == 401
    assert guarded.match("x = 1", headers={"authorization": "Bearer wrong"})[0] == 401
    status, raw, headers = guarded.get("/v1/stats", {"authorization": "Basic czNjcmV0"})
    assert status == 401 and headers.get("www-authenticate", "").startswith("Bearer")
    assert guarded.get("/metrics")[0] == 401
    ok = {"authorization": "Bearer s3cret-token"}
    assert guarded.match("x = 1", headers=ok)[0] == 200
    assert guarded.get("/v1/health")[0] == 200  # for load balancers: says nothing
    # the CLI: with the token file, from the environment, and refused without
    text = snippet("alpha")
    with_file = cli("query", guarded.url, "--token-file", str(guarded.token_file), input=text)
    assert with_file.returncode == 0 and "alpha.py" in with_file.stdout
    env = {"RECITATION_INDEX_TOKEN_FILE": str(guarded.token_file)}
    assert "alpha.py" in cli("query", guarded.url, input=text, env=env).stdout
    refused = cli("query", guarded.url, input=text)
    assert refused.returncode == 2 and "401" in refused.stderr


def test_an_oversize_request_gets_413(guarded):
    ok = {"authorization": "Bearer s3cret-token"}
    status, answer = guarded.match("x = 1\n" * 2000, headers=ok)
    assert status == 413 and "4096" in answer["error"]
    # the request's code is not repeated in the answer
    assert "x = 1" not in json.dumps(answer)


def test_metrics_count_requests_latency_errors_and_the_generation(service):
    service.match(snippet("alpha"))
    service.request("POST", "/v1/match", b"{bad")
    status, raw, headers = service.get("/metrics")
    text = raw.decode()
    assert status == 200 and headers["content-type"].startswith("text/plain")
    assert 'recitation_requests_total{endpoint="/v1/match",status="200"}' in text
    assert 'recitation_request_errors_total{reason="bad_json"}' in text
    assert 'recitation_request_seconds_bucket{endpoint="/v1/match",le="0.01"}' in text
    generation = json.loads(service.get("/v1/health")[1])["generation"]
    assert f'recitation_index_generation_info{{generation="{generation}"}} 1.0' in text


def test_a_generation_published_while_serving_is_picked_up_without_a_failure(small_index, tmp_path):
    idx = tmp_path / "idx"
    shutil.copytree(small_index, idx)
    failures: list[str] = []
    answered = 0
    stop = threading.Event()
    with Service(idx, workers=2) as service:
        remote = RemoteIndex(service.url)
        # answers leave at once (TCP_NODELAY in the workers: no delayed-ACK wait of ~40 ms)
        times = []
        for _ in range(15):
            t = time.perf_counter()
            remote.match("x = 1")
            times.append(time.perf_counter() - t)
        assert sorted(times)[7] < 0.030, times

        def load() -> None:
            nonlocal answered
            client = RemoteIndex(service.url)
            while not stop.is_set():
                try:
                    if not client.match(snippet("alpha"), min_tokens=20):
                        failures.append("alpha not found")
                    answered += 1
                except IndexServiceError as exc:
                    failures.append(str(exc))
            client.close()

        threads = [threading.Thread(target=load) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            assert remote.match(snippet("gamma")) == []
            added = cli("add", str(idx), corpus(tmp_path / "more", "gamma"), "-q", "-j", "1")
            assert added.returncode == 0, added.stderr
            deadline = time.monotonic() + 30
            while not remote.match(snippet("gamma")) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert remote.match(snippet("gamma")), "the new generation is not served"
            time.sleep(1.5)  # every worker has polled CURRENT by now
            for _ in range(6):  # whichever worker answers
                assert remote.match(snippet("gamma"))
        finally:
            stop.set()
            for t in threads:
                t.join(30)
            remote.close()
    assert failures == []
    assert answered > 10


def test_an_unreachable_service_is_an_error_not_a_hang():
    client = RemoteIndex(f"http://127.0.0.1:{free_port()}")
    t = time.monotonic()
    with pytest.raises(IndexServiceError) as info:
        client.match("x = 1")
    assert info.value.unreachable and "unreachable" in str(info.value)
    assert time.monotonic() - t < 5


@pytest.mark.parametrize(
    "url", ["http://10.1.2.3:8765", "http://example.org", "ftp://127.0.0.1", "https://u:p@h"]
)
def test_plain_http_is_refused_beyond_loopback(url):
    with pytest.raises(IndexOpenError):
        RemoteIndex(url)
    assert RemoteIndex("https://index.internal.example").url.startswith("https://")
    assert RemoteIndex("http://[::1]:9/").url == "http://[::1]:9"


def test_a_body_that_does_not_arrive_in_time_gets_408(guarded):
    with socket.create_connection(("127.0.0.1", guarded.port), timeout=10) as s:
        s.sendall(
            b"POST /v1/match HTTP/1.1\r\nhost: x\r\nauthorization: Bearer s3cret-token\r\n"
            b'content-type: application/json\r\ncontent-length: 100\r\n\r\n{"sugg'
        )
        answer = b""
        while b"read_timeout" not in answer:  # the head and the body may come apart
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
    assert b"read_timeout" in answer


def test_the_check_command_takes_a_url_too(service, small_index, tmp_path):
    f = tmp_path / "copied.py"
    f.write_text("import os\n\n" + snippet("beta"))
    local = cli(
        "check", str(f), "--index", str(small_index), "--format", "json", "--fail-on", "hint"
    )
    remote = cli("check", str(f), "--index", service.url, "--format", "json", "--fail-on", "hint")
    assert local.returncode == remote.returncode == 1, remote.stderr
    assert json.loads(local.stdout)["results"]
    assert remote.stdout == local.stdout


def test_check_reads_a_large_file_through_the_service_in_windows_it_accepts(
    service, small_index, tmp_path
):
    """Windows sent to an index service stay under its default request size (1 MiB)."""
    f = tmp_path / "big.py"
    pad = "".join(f"value_{i} = 'd\u00e9j\u00e0 vu {i}'\n" for i in range(60_000))  # ~2 MiB
    f.write_text(pad + snippet("beta") + pad)
    remote = cli("check", str(f), "--index", service.url, "--format", "json", "--fail-on", "hint")
    assert remote.returncode == 1, remote.stderr
    (found,) = json.loads(remote.stdout)["results"]
    assert found["range"]["start"]["line"] == 60_000
    local = cli("check", str(f), "--index", str(small_index), "--format", "json")
    # the same report, word offsets (query_start, query_end) too: the file is read in the
    # same windows, which the client sends in requests under the service's limit
    a, b = json.loads(local.stdout)["results"], json.loads(remote.stdout)["results"]
    assert len(a) == len(b) == 1
    assert {k: v for k, v in a[0].items() if a[0][k] != b[0].get(k)} == {}, b[0]
    assert json.loads(local.stdout) == json.loads(remote.stdout)


@pytest.mark.parametrize("log_queries", [False, True])
def test_code_is_logged_only_when_asked(small_index, log_queries):
    args = ("--log-queries",) if log_queries else ()
    secret = "very_private_function_name_" + "x" * 8
    with Service(small_index, *args) as s:
        assert s.match(f"def {secret}(): pass\n")[0] == 200
    assert (secret in s.output) is log_queries, s.output


def test_a_lookup_over_its_time_limit_gets_503(small_index):
    with Service(small_index, "--lookup-timeout", "0.00001") as s:
        status, answer = s.match(snippet("alpha") * 20)
        assert status == 503 and answer["reason"] == "lookup_timeout"
        assert s.get("/v1/health")[0] == 200  # and the service goes on


@pytest.mark.skipif(os.name != "posix", reason="liveness is probed with signal 0")
def test_live_gauges_of_dead_workers_are_forgotten(tmp_path, monkeypatch):
    from index_tools.service.metrics import METRICS_DIR_ENV, forget_dead_workers

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    for pid in (gone.pid, os.getpid()):
        (tmp_path / f"gauge_livemax_{pid}.db").write_bytes(b"")
    (tmp_path / f"counter_{gone.pid}.db").write_bytes(b"")  # counts stay: they happened
    monkeypatch.setenv(METRICS_DIR_ENV, str(tmp_path))
    forget_dead_workers()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([f"counter_{gone.pid}.db", f"gauge_livemax_{os.getpid()}.db"])


@pytest.mark.parametrize("http", ["h11", "httptools"])
def test_both_http_parsers_serve_the_same_answers(small_index, http):
    """The C parser (httptools, the default where installed) and the pure-Python one (h11,
    for platforms without its wheels) give the same JSON."""
    pytest.importorskip(http)
    text = "x = 1\n" + snippet("alpha") + "\n"
    local = cli("query", str(small_index), "--json", input=text)
    with Service(small_index, "--http", http, "--workers", "2") as s:
        remote = cli("query", "--index", s.url, "--json", input=text)
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout and json.loads(local.stdout)["matches"]


def test_the_protocol_choice():
    from index_tools.service.protocol import NoDelayH11Protocol, http_protocol

    assert http_protocol("h11") is NoDelayH11Protocol
    pytest.importorskip("httptools")
    chosen = http_protocol("auto")
    assert chosen is http_protocol("httptools") and chosen.__name__ == "NoDelayHttpToolsProtocol"
    assert chosen.__module__ == "index_tools.service.protocol"  # importable by the workers
