"""A text too large for one request to an index service is matched in windows, each under
the service's body limit, and comes back as one lookup of the whole text on the local index
gives it: the same regions, ranges, offsets and word spans (issue #37: a 1.05 MB text got
413 and read as "no quote")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from service_helpers import Service, corpus, snippet

from index_tools import BuildOptions, IndexServiceError, RemoteIndex, build_index, open_index


@pytest.fixture(scope="module")
def small_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("windows")
    out = root / "idx"
    names = ("alpha", "beta", "gamma")
    build_index([corpus(root / "src", *names)], out, BuildOptions(jobs=1, progress=False))
    return out


@pytest.fixture(scope="module")
def service(small_index):
    with Service(small_index) as s:
        yield s


@pytest.fixture(scope="module")
def small_limit(small_index):
    with Service(small_index, "--max-request-bytes", "65536") as s:
        yield s


def filler(chars: int, line: str = "record_{i} = table.lookup({i}, {j}, 'name{i}')\n") -> str:
    out, size, i = [], 0, 0
    while size < chars:
        out.append(line.format(i=i, j=i * 7 % 1000))
        size += len(out[-1])
        i += 1
    return "".join(out)


def seen(matches) -> list[tuple]:
    """What a match shows, everywhere it is placed."""
    return [
        (
            m.query_start,
            m.query_end,
            m.primary_start,
            m.primary_end,
            m.char_start,
            m.char_end,
            m.text,
            m.range,
            m.suggestion_words,
            m.length,
            m.file_count,
            [(s.repository, s.path) for s in m.sources],
            [(p.query_start, p.query_end, p.range, p.suggestion_words) for p in m.parts],
        )
        for m in matches
    ]


def match_requests(service: Service) -> int:
    _, raw, _ = service.request("GET", "/metrics", None, {})
    found = re.findall(
        rb'recitation_requests_total\{[^}]*endpoint="/v1/match"[^}]*status="200"[^}]*\} (\S+)',
        raw,
    )
    return int(sum(float(n) for n in found))


def test_a_text_over_the_body_limit_is_matched_in_windows_as_the_local_index_does(
    service, small_index
):
    half = filler(525_000)
    text = half + snippet("gamma") + half + snippet("beta")  # 1.05 MB, a quote at the end
    assert len(text.encode()) > 1 << 20
    local = open_index(small_index).match(text, "", 60, language="python")
    assert [m.best_source.path for m in local] == ["gamma.py", "beta.py"]
    before = match_requests(service)
    with RemoteIndex(service.url) as remote:
        found = remote.match(text, "", 60, language="python")
        assert seen(found) == seen(local)
        assert match_requests(service) - before >= 2  # windows, each accepted
        # with a context before the text, and a quote at a window's cut
        context = "import os\n" + snippet("alpha")
        text = filler(600_000) + snippet("beta") + filler(600_000)
        local = open_index(small_index).match(text, context, 60)
        assert seen(remote.match(text, context, 60)) == seen(local)
        assert [m.to_dict() for m in local] == remote.query(text, context, 60)


@pytest.mark.parametrize("end", ["\n", "\r\n", " ", ""])
def test_a_quote_at_any_place_of_a_cut_is_found_once_as_locally(service, small_index, end):
    """Windows cut after a line break (else between two words: a minified line, or one
    with no space at all): a quote near a cut, in a margin or across one, is one region."""
    with RemoteIndex(service.url) as remote:
        remote.max_request_bytes = 200_000
        for at in range(150_000, 200_000, 7_000):
            pad = filler(at).replace("\n", end)
            text = pad + snippet("alpha").replace("\n", end) + filler(100_000).replace("\n", end)
            local = open_index(small_index).match(text, "", 60)
            assert local, at
            assert seen(remote.match(text, "", 60)) == seen(local), at


def test_the_client_keeps_under_a_lower_limit_the_service_names_or_answers(
    small_limit, small_index
):
    text = filler(300_000) + snippet("beta") + filler(10_000)
    local = seen(open_index(small_index).match(text, "", 60))
    # not told: the service's 413 lowers the limit, and the windows go under it
    with RemoteIndex(small_limit.url) as remote:
        assert seen(remote.match(text, "", 60)) == local
        assert remote.max_request_bytes <= 65536
    # told by /v1/stats
    with RemoteIndex(small_limit.url) as remote:
        assert remote.summary()["max_request_bytes"] == 65536
        assert remote.max_request_bytes == 65536
        before = match_requests(small_limit)
        assert seen(remote.match(text, "", 60)) == local
        assert match_requests(small_limit) - before >= 5  # each accepted: under 64 KiB


def test_non_ascii_text_is_sent_as_utf8_not_escaped(service, small_index):
    """300,000 CJK characters (900 kB in UTF-8, 1.8 MB escaped as \\uXXXX) are one request."""
    text = filler(300_000, "数据{i} = 查找({i}, {j})  # 值\n")[:300_000] + "\n" + snippet("beta")
    assert len(text.encode()) < 1 << 20 < len(text) * 6
    before = match_requests(service)
    with RemoteIndex(service.url) as remote:
        found = remote.match(text, "", 60)
    assert match_requests(service) - before == 1
    assert seen(found) == seen(open_index(small_index).match(text, "", 60))


def test_a_limit_too_small_for_any_window_is_an_error_not_an_empty_answer(small_index):
    with (
        Service(small_index, "--max-request-bytes", "600") as tiny,
        RemoteIndex(tiny.url) as remote,
        pytest.raises(IndexServiceError) as e,
    ):
        remote.match(filler(50_000) + snippet("beta"), "", 60)
    assert e.value.status == 413 and "over 600 bytes" in str(e.value)


def test_a_413_closes_the_connection_so_the_unread_body_is_not_a_next_request(small_limit):
    """Answered before its body is read, a request too large leaves that body on the
    connection: it was read as the next request's head (431) until the service closed it."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", small_limit.port, timeout=10)
    try:
        body = b'{"suggestion": "' + b"x = 1 " * 40_000 + b'"}'
        conn.request("POST", "/v1/match", body, {"content-type": "application/json"})
        response = conn.getresponse()
        response.read()
        assert response.status == 413
        assert response.getheader("connection") == "close" and response.will_close
    finally:
        conn.close()
