"""`serve` before the token and past its time: lookups stop at their deadline, so that
`--max-pending` bounds the work (issue 26, reproduction 9)."""

from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from service_helpers import Service, corpus, snippet

from index_tools import BuildOptions, build_index, open_index
from index_tools.service.deadline import Deadline, LookupExpired

# a file of one line repeated: a query of the same line is the slowest lookup a small index
# offers (6,000 lines: 2-4 s here, most of it searching the crowded spans' ends)
REPEATED = "x = f(1)\n"
SLOW = REPEATED * 6_000


@pytest.fixture(scope="module")
def slow_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("slow")
    src = Path(corpus(root / "src", "alpha", "beta"))
    (src / "repeated.py").write_text(REPEATED * 20_000)
    out = root / "idx"
    build_index([str(src)], out, BuildOptions(jobs=1, progress=False))
    return out


def test_a_lookup_stops_at_its_deadline_and_never_answers_short(slow_index):
    with open_index(slow_index) as index:
        with pytest.raises(LookupExpired):  # the query takes longer than this: a test
            index.match(SLOW, "", 60, language="python", deadline=Deadline(0.5))
        t = time.monotonic()
        with pytest.raises(LookupExpired):
            index.match(SLOW, "", 60, language="python", deadline=Deadline(0.05))
        stopped = time.monotonic() - t
        with pytest.raises(LookupExpired):
            index.match("x = 1\n" * 100, "", 20, deadline=Deadline(0.0))
        # with time enough the answer is the one without a deadline
        text = "import os\n" + snippet("alpha") + REPEATED * 20
        expected = index.match(text, "", 20)
        assert expected and index.match(text, "", 20, deadline=Deadline(60)) == expected
    # the matcher checks before each crowded anchor's search of a shard (this query has
    # thousands, the whole search 5-13 s here): its longest step is a few milliseconds
    assert stopped < 2.0, f"stopped {stopped:.2f} s after a 0.05 s deadline"


def metric(service: Service, name: str) -> float:
    text = service.get("/metrics")[1].decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def test_after_a_burst_of_lookups_past_their_time_a_trivial_one_is_answered_at_once(slow_index):
    with Service(slow_index, "--lookup-timeout", "1", "--max-pending", "64") as service:
        body = json.dumps({"suggestion": SLOW, "language": "python"}).encode()

        def slow(_):
            status, raw, _ = service.request("POST", "/v1/match", body)
            return status, json.loads(raw).get("reason")

        with ThreadPoolExecutor(8) as pool:
            burst = list(pool.map(slow, range(8)))
        assert burst and {s for s, _ in burst} == {503}, burst
        assert "lookup_timeout" in {r for _, r in burst}, burst
        # the running lookup stops at its matcher's next check, up to ~0.5 s after its
        # answer here (longer on a busy machine): the lookups of the burst end first
        ended = 'recitation_lookups_expired_total{stage="'
        limit = time.monotonic() + 60
        while metric(service, ended) < len(burst) and time.monotonic() < limit:
            time.sleep(0.05)
        assert metric(service, ended) == len(burst), "the burst's lookups never ended"
        t = time.monotonic()
        status, answer = service.match("x = 1\n")
        took = time.monotonic() - t
        assert status == 200, answer
        assert took < 1.0, f"a trivial lookup took {took:.2f} s after the burst"
        # the lookups that waited past their time never ran; the running one stopped
        assert metric(service, 'recitation_lookups_expired_total{stage="queued"}') >= 1
        assert metric(service, 'recitation_lookups_expired_total{stage="running"}') >= 1


# --- before the request is read (reproduction 8) ----------------------------------------


def raw(service: Service, timeout: float = 10.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", service.port), timeout=timeout)


def read_until_closed(s: socket.socket, limit: float) -> tuple[bytes, float]:
    """What the server sends until it closes the connection (or `limit` seconds pass:
    then the answer so far, and `limit`)."""
    t = time.monotonic()
    got = b""
    s.settimeout(0.2)
    while time.monotonic() - t < limit:
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            break
        if not chunk:
            break
        got += chunk
    return got, time.monotonic() - t


def peak_memory(service: Service) -> int:
    """The peak resident memory of the service's one worker (with --workers 1, the service
    process itself), bytes."""
    assert service.process is not None
    worker = service.process.pid
    for line in Path(f"/proc/{worker}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_a_huge_header_is_refused_early_with_431(slow_index, http):
    pytest.importorskip(http)
    with Service(slow_index, "--http", http) as service:
        before = peak_memory(service)
        s = raw(service)

        def send() -> None:  # 64 MiB of one header line, as long as the server reads
            try:
                s.sendall(b"GET /v1/health HTTP/1.1\r\nhost: x\r\nx-pad: ")
                piece = b"a" * (1 << 20)
                for _ in range(64):
                    s.sendall(piece)
            except OSError:
                pass

        sender = threading.Thread(target=send)
        sender.start()
        answer, _ = read_until_closed(s, 30)
        sender.join(30)
        s.close()
        assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
        assert b"header_too_large" in answer
        assert service.get("/v1/health")[0] == 200  # and the worker goes on
        grown = peak_memory(service) - before
        assert grown < 32 << 20, f"the worker grew by {grown >> 20} MiB"


def test_connections_that_never_send_a_whole_head_are_closed(slow_index):
    with Service(slow_index, "--header-timeout", "1") as service:
        idle, partial, trickle = raw(service), raw(service), raw(service)
        partial.sendall(b"GET /v1/health HTTP/1.1\r\nho")
        stop = threading.Event()

        def drip() -> None:  # a byte every 0.25 s, each within any idle timeout
            head = b"GET /v1/health HTTP/1.1\r\nhost: x\r\nx-slow: " + b"a" * 1000
            for byte in head:
                if stop.wait(0.25):
                    return
                try:
                    trickle.send(bytes([byte]))
                except OSError:
                    return

        dripping = threading.Thread(target=drip)
        dripping.start()
        try:
            outcomes = {
                name: read_until_closed(s, 15)
                for name, s in (("idle", idle), ("partial", partial), ("trickle", trickle))
            }
        finally:
            stop.set()
            dripping.join(10)
            for s in (idle, partial, trickle):
                s.close()
        for name, (_, took) in outcomes.items():
            assert took < 15, f"the {name} connection was still open after {took:.0f} s"
        assert outcomes["idle"][0] == b""
        assert outcomes["partial"][0].startswith(b"HTTP/1.1 408"), outcomes["partial"][0]
        assert outcomes["trickle"][0].startswith(b"HTTP/1.1 408"), outcomes["trickle"][0]
        # a kept-alive connection serves request after request within the limits
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", service.port, timeout=10)
        for _ in range(3):
            conn.request("GET", "/v1/health")
            assert conn.getresponse().read() and True
        conn.close()


def test_held_connections_do_not_lock_out_new_clients(slow_index):
    """300 idle connections on a worker that may open 256 descriptors."""
    with Service(slow_index, nofile=256) as service:
        held = []
        try:
            for _ in range(300):
                held.append(raw(service))
            t = time.monotonic()
            status, _, _ = service.get("/v1/health")
            assert status == 200
            assert time.monotonic() - t < 5
            # the service took in as many as it may hold, and closed the oldest
            closed = 0
            for s in held:
                s.settimeout(0.01)
                try:
                    closed += s.recv(1) == b""
                except TimeoutError:
                    pass
                except OSError:
                    closed += 1
            assert closed >= 300 - 256, closed
        finally:
            for s in held:
                s.close()


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_a_content_length_with_spaces_around_it_is_read(slow_index, http):
    pytest.importorskip(http)
    body = json.dumps({"suggestion": "x = 1\n"}).encode()
    with Service(slow_index, "--http", http) as service, raw(service) as s:
        s.sendall(
            b"POST /v1/match HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
            b"content-length: %d \r\n\r\n" % len(body) + body
        )
        answer, _ = read_until_closed(s, 10)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
