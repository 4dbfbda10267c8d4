"""`POST /v1/source`: a source's lines beside a quote, from the served index.

The same rules as `/v1/match` (`app.py`): the bearer token, `--max-request-bytes` for the
body, `--read-timeout` to receive it, `--max-pending` and `--lookup-timeout` for the work,
and refusals that name a field, never the request's code. The answer is
`SourceView.to_dict` (docs/PROTOCOL.md): corpus metadata printable, the source's text as
stored, at most `MAX_WINDOW_LINES` lines and `MAX_WINDOW_CHARS` characters of it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from ..match.source_view import (
    SourceRequest,
    source_view,
)
from ..store.generations import IndexOpenError

log = logging.getLogger("recitation.service")

# Views run beside the lookups, not on their threads: a generation's first view reads every
# document's origins (seconds in an index of millions of files) and /v1/match goes on.
_views: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _views
    if _views is None:
        _views = ThreadPoolExecutor(1, "recitation-source")
    return _views


def parse_source_request(body: bytes, Refused) -> SourceRequest:  # noqa: N803
    """The request, checked (400 otherwise)."""
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError):
        raise Refused(400, "bad_json", "the body is not JSON") from None
    try:
        return SourceRequest.from_dict(raw)
    except ValueError as exc:
        raise Refused(400, "bad_request", str(exc)) from None


async def answer(service, headers: dict, receive, Refused):  # noqa: N803
    """The endpoint, for `IndexService` (which routes to it and gives its refusal)."""
    request = parse_source_request(await service._body(headers, receive), Refused)
    if service.pending >= service.config.max_pending:
        raise Refused(503, "busy", "too many lookups queued; retry", {"retry-after": "1"})
    if service.config.log_queries:
        log.info("source: %s", json.dumps(request.to_dict(), ensure_ascii=False))
    service.pending += 1
    loop = asyncio.get_running_loop()
    try:
        future = loop.run_in_executor(_executor(), _view, service, request)
        view, generation, seconds = await asyncio.wait_for(
            asyncio.shield(future), service.config.lookup_timeout
        )
    except asyncio.TimeoutError:
        raise Refused(
            503, "lookup_timeout", f"the lookup took over {service.config.lookup_timeout} s"
        ) from None
    except IndexOpenError as exc:
        raise Refused(503, "index_error", f"the index cannot be used: {exc}") from None
    finally:
        service.pending -= 1
    extra = {
        "server-timing": f"source;dur={seconds * 1000:.3f}",
        "x-recitation-generation": generation,
    }
    body = json.dumps(view, ensure_ascii=False).encode("utf-8")
    return 200, body, "application/json", extra


def _view(service, request: SourceRequest) -> tuple[dict, str, float]:
    with service.index.using() as index:
        t = time.perf_counter()
        view = source_view(index, request)
        return view.to_dict(request.quote), index.generation, time.perf_counter() - t
