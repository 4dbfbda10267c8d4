"""`serve` before the token and past its time: lookups stop at their deadline, so that
`--max-pending` bounds the work (issue 26, reproduction 9)."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from service_helpers import Service, corpus

from index_tools import BuildOptions, build_index, open_index
from index_tools.service.deadline import Deadline, LookupExpired

# a file of one line repeated: a query of the same line compares along thousands of
# diagonals, the slowest lookup a small index offers (seconds on the winnowing engine)
REPEATED = "x = f(1)\n"
SLOW = REPEATED * 50_000  # 450 KB, under the default request limit


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
        t = time.monotonic()
        with pytest.raises(LookupExpired):
            index.match(SLOW, "", 60, language="python", deadline=Deadline(0.05))
        stopped = time.monotonic() - t
        with pytest.raises(LookupExpired):
            index.match("x = 1\n" * 100, "", 20, deadline=Deadline(0.0))
        # with time enough the answer is the one without a deadline
        text = REPEATED * 200
        assert index.match(text, "", 60, deadline=Deadline(60)) == index.match(text, "", 60)
        t = time.monotonic()
        index.match(SLOW, "", 60, language="python")
        whole = time.monotonic() - t
    assert whole > 1.0, f"the query is not slow on this engine ({whole:.2f} s): pick a slower one"
    # the matcher's longest step between two checks is about 0.2 s on this query
    assert stopped < min(0.6, whole / 2), f"stopped {stopped:.2f} s after a 0.05 s deadline"


def metric(service: Service, name: str) -> float:
    text = service.get("/metrics")[1].decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def test_after_a_burst_of_lookups_past_their_time_a_trivial_one_is_answered_at_once(slow_index):
    with Service(slow_index, "--lookup-timeout", "0.3", "--max-pending", "64") as service:
        body = json.dumps({"suggestion": SLOW, "language": "python"}).encode()

        def slow(_):
            status, raw, _ = service.request("POST", "/v1/match", body)
            return status, json.loads(raw).get("reason")

        with ThreadPoolExecutor(8) as pool:
            burst = list(pool.map(slow, range(8)))
        assert burst and {s for s, _ in burst} == {503}, burst
        assert "lookup_timeout" in {r for _, r in burst}, burst
        t = time.monotonic()
        status, answer = service.match("x = 1\n")
        took = time.monotonic() - t
        assert status == 200, answer
        assert took < 1.0, f"a trivial lookup took {took:.2f} s after the burst"
        # the lookups that waited past their time never ran; the running one stopped
        assert metric(service, 'recitation_lookups_expired_total{stage="queued"}') >= 1
        assert metric(service, 'recitation_lookups_expired_total{stage="running"}') >= 1
