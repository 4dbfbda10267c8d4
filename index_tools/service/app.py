"""The index service as an ASGI application: one per worker process, all mapping the same
index files (the page cache holds them once).

Routes (documented in docs/PROTOCOL.md): POST /v1/match, POST /v1/source (source_route.py),
GET /v1/stats, GET /v1/health,
GET /metrics. Every answer is JSON (metrics: Prometheus text); a refusal says why in
`{"error": ...}` and never repeats the request's code.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import json
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from ..match.following import FollowingIndex
from ..model import query_report
from ..store.generations import IndexOpenError
from ..store.small_files import read_small_file
from . import source_route
from .deadline import Deadline, LookupExpired
from .metrics import ServiceMetrics, forget_dead_workers

log = logging.getLogger("recitation.service")

CONFIG_ENV = "RECITATION_SERVICE_CONFIG"  # how `serve` hands the config to its workers
API_VERSION = 1
MAX_MIN_TOKENS = 100_000
MAX_LANGUAGE_CHARS = 40


@dataclass
class ServiceConfig:
    index: str
    token_file: str | None = None
    max_body_bytes: int = 1 << 20
    read_timeout: float = 10.0  # to receive a request's body
    lookup_timeout: float = 10.0  # to answer once received
    max_pending: int = 64  # lookups queued or running in one worker; beyond: 503 busy
    lookup_threads: int = 1  # per worker (lookups hold the GIL most of their time)
    log_queries: bool = False
    poll_seconds: float = 1.0  # how often CURRENT is checked for a new generation
    # before a request is read (protocol.py): its head's size and time, and the
    # connections one worker holds (lowered to stay below the descriptor limit)
    max_header_bytes: int = 16 * 1024
    header_timeout: float = 10.0
    max_connections: int = 1000

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServiceConfig:
        return cls(**json.loads(os.environ[CONFIG_ENV]))


class Refused(Exception):
    def __init__(self, status: int, reason: str, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.reason, self.headers = status, reason, headers or {}


def _too_large(limit: int) -> Refused:
    """A body over the limit is answered before it is read: the connection is closed after
    the answer (the rest of the body would otherwise be read as the next request's head)."""
    return Refused(413, "too_large", f"the request is over {limit} bytes", {"connection": "close"})


def read_token(path: str) -> str:
    """The token in a file (a regular file of at most 64 KiB); OSError otherwise."""
    token = read_small_file(path, 64 << 10).decode("utf-8", errors="replace").strip()
    if not token:
        raise ValueError(f"the token file {path} is empty")
    return token


class IndexService:
    def __init__(self, config: ServiceConfig):
        self.config = config
        self.token = read_token(config.token_file) if config.token_file else None
        self.metrics = ServiceMetrics()
        self.index: FollowingIndex | None = None
        self.executor = ThreadPoolExecutor(config.lookup_threads, "recitation-lookup")
        # lookups in the executor, queued or running, until they end (not until their
        # request is answered: one answered 503 at its deadline still holds its thread
        # until the matcher's next check)
        self.pending = 0
        self._serving: str | None = None
        self._stop = threading.Event()  # set at shutdown: mapping the index ahead ends
        self._mapped: dict[str, str] = {}  # generation -> what mapping it ahead did
        self.routes = {
            "/v1/match": ("POST", self.match),
            "/v1/source": ("POST", self.source),
            "/v1/stats": ("GET", self.stats),
            "/v1/health": ("GET", self.health),
            "/metrics": ("GET", self.prometheus),
        }

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        self.index = FollowingIndex(
            self.config.index, self.config.poll_seconds, on_switch=self._switched
        )
        self._switched(self.index.generation)

    def _switched(self, generation: str) -> None:
        assert self.index is not None
        words = self.index.summary().get("words") or 0
        self.metrics.serving(generation, self._serving, words)
        self._serving = generation
        self.index.map_ahead(
            self._stop,
            self._mapped_ahead,
            lookups=self.executor,
            threads=self.config.lookup_threads,
        )

    def _mapped_ahead(self, index, done) -> None:
        said = self._mapped[index.generation] = done.describe()  # (this worker's: /v1/stats)
        log.log(done.level, "index %s: %s", index.generation, said)

    def stop(self) -> None:
        self._stop.set()
        self.executor.shutdown(wait=True, cancel_futures=True)
        if self.index is not None:
            self.index.close()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await asyncio.get_running_loop().run_in_executor(self.executor, self.start)
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                # what the worker loaded lives as long as it: kept out of the collector's
                # full passes, which would otherwise pause lookups (as the language server)
                gc.collect()
                gc.freeze()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # --- HTTP ----------------------------------------------------------------------------

    async def _http(self, scope, receive, send) -> None:
        started = time.perf_counter()
        path = scope["path"]
        endpoint = path if path in self.routes else "other"
        headers = {k.decode("latin-1").lower(): v for k, v in scope["headers"]}
        try:
            status, body, content_type, extra = await self._dispatch(
                scope["method"], path, headers, receive
            )
        except Refused as refused:
            self.metrics.errors.labels(refused.reason).inc()
            status, content_type, extra = refused.status, "application/json", refused.headers
            body = _json({"error": str(refused), "reason": refused.reason})
        except Exception:
            log.exception("answering %s", path)  # the traceback names no request content
            self.metrics.errors.labels("internal").inc()
            status, content_type, extra = 500, "application/json", {}
            body = _json({"error": "internal error", "reason": "internal"})
        raw = [
            (b"content-type", content_type.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
        ]
        raw += [(k.encode(), str(v).encode()) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body})
        self.metrics.requests.labels(endpoint, str(status)).inc()
        self.metrics.latency.labels(endpoint).observe(time.perf_counter() - started)

    async def _dispatch(self, method: str, path: str, headers: dict, receive):
        route = self.routes.get(path)
        if route is None:
            raise Refused(404, "not_found", f"no such endpoint: {path[:200]}")
        allowed, handler = route
        if method != allowed:
            raise Refused(405, "method", f"{path} takes {allowed}", {"allow": allowed})
        if self.token is not None and path != "/v1/health":
            self._authorize(headers.get("authorization", b""))
        return await handler(headers, receive)

    def _authorize(self, value: bytes) -> None:
        scheme, _, given = value.partition(b" ")
        # compare_digest takes time independent of where the bytes differ
        if scheme.lower() != b"bearer" or not hmac.compare_digest(
            given.strip(), self.token.encode()
        ):
            raise Refused(
                401, "unauthorized", "a valid bearer token is needed",
                {"www-authenticate": 'Bearer realm="recitation"'},
            )  # fmt: skip

    async def _body(self, headers: dict, receive) -> bytes:
        limit = self.config.max_body_bytes
        declared = headers.get("content-length")
        if declared is not None:
            declared = declared.strip(b" \t")  # optional whitespace around a field's value
            if not declared.isdigit():
                raise Refused(400, "bad_request", "Content-Length is not a number")
            if int(declared) > limit:
                raise _too_large(limit)
        chunks: list[bytes] = []
        size = 0

        async def read() -> None:
            nonlocal size
            more = True
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise Refused(400, "disconnected", "the client went away")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(chunk)
                more = message.get("more_body", False)

        try:
            await asyncio.wait_for(read(), self.config.read_timeout)
        except asyncio.TimeoutError:
            raise Refused(
                408, "read_timeout", f"the request was not received in {self.config.read_timeout} s"
            ) from None
        return b"".join(chunks)

    # --- endpoints -----------------------------------------------------------------------

    async def match(self, headers: dict, receive):
        query = parse_match_request(await self._body(headers, receive))
        if self.pending >= self.config.max_pending:
            raise Refused(503, "busy", "too many lookups queued; retry", {"retry-after": "1"})
        if self.config.log_queries:
            log.info("query: %s", json.dumps(query, ensure_ascii=False))
        deadline = Deadline(self.config.lookup_timeout)
        self.pending += 1
        future = asyncio.get_running_loop().run_in_executor(
            self.executor, self._lookup, query, deadline
        )
        future.add_done_callback(self._lookup_ended)
        try:
            # the lookup stops itself at the deadline; waiting ends there too, in case
            # one step of it runs long past the deadline
            report, generation, seconds = await asyncio.wait_for(
                asyncio.shield(future), deadline.remaining() + 0.05
            )
        except (asyncio.TimeoutError, LookupExpired):
            raise Refused(
                503, "lookup_timeout", f"the lookup took over {self.config.lookup_timeout} s"
            ) from None
        except IndexOpenError as exc:
            raise Refused(503, "index_error", f"the index cannot be used: {exc}") from None
        self.metrics.lookup.observe(seconds)
        extra = {
            "server-timing": f"lookup;dur={seconds * 1000:.3f}",
            "x-recitation-generation": generation,
        }
        return 200, _json(report), "application/json", extra

    def _lookup_ended(self, future: asyncio.Future) -> None:
        self.pending -= 1
        if future.cancelled():
            return
        error = future.exception()  # retrieved here also when its request was answered
        if isinstance(error, LookupExpired):
            self.metrics.expired.labels(error.stage).inc()

    def _lookup(self, query: dict, deadline: Deadline) -> tuple[dict, str, float]:
        assert self.index is not None
        deadline.start()  # one that waited past its time in the queue never runs
        with self.index.using() as index:
            t = time.perf_counter()
            matches = index.match(
                query["suggestion"],
                query["context"],
                min_tokens=query["min_tokens"],
                language=query["language"],
                deadline=deadline,
            )
            seconds = time.perf_counter() - t
            return (
                query_report(query["suggestion"], query["context"], matches),
                (index.generation),
                seconds,
            )

    async def source(self, headers: dict, receive):
        return await source_route.answer(self, headers, receive, Refused)

    async def stats(self, headers: dict, receive):
        summary = await asyncio.get_running_loop().run_in_executor(None, self._summary)
        return 200, _json(summary), "application/json", {}

    def _summary(self) -> dict[str, Any]:
        assert self.index is not None
        with self.index.using() as index:
            summary = index.summary()
            summary["generation"] = index.generation
            summary["mapped_ahead"] = self._mapped.get(index.generation, "under way")
        summary.pop("path", None)  # where the files are is the server's business
        summary.pop("sources", None)  # source specs can name the server's folders
        summary["api_version"] = API_VERSION
        # what a client may send: larger texts are sent in windows (remote_windows.py)
        summary["max_request_bytes"] = self.config.max_body_bytes
        return summary

    async def health(self, headers: dict, receive):
        generation = self.index.generation if self.index is not None else None
        body = {"status": "ok", "api_version": API_VERSION, "generation": generation}
        return 200, _json(body), "application/json", {}

    async def prometheus(self, headers: dict, receive):
        body, content_type = self.metrics.exposition()
        return 200, body, content_type, {}


def parse_match_request(body: bytes) -> dict:
    """The fields of a /v1/match request, checked (400 otherwise)."""
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError):
        raise Refused(400, "bad_json", "the body is not JSON") from None
    if not isinstance(raw, dict):
        raise Refused(400, "bad_request", "the body must be a JSON object")
    suggestion = raw.get("suggestion")
    context = raw.get("context", "")
    language = raw.get("language")
    min_tokens = raw.get("min_tokens", 60)
    if not isinstance(suggestion, str):
        raise Refused(400, "bad_request", "`suggestion` must be a string")
    if not isinstance(context, str):
        raise Refused(400, "bad_request", "`context` must be a string")
    if language is not None and (
        not isinstance(language, str) or len(language) > MAX_LANGUAGE_CHARS
    ):
        raise Refused(400, "bad_request", "`language` must be a short string or null")
    if type(min_tokens) is not int or not 1 <= min_tokens <= MAX_MIN_TOKENS:
        raise Refused(400, "bad_request", f"`min_tokens` must be 1..{MAX_MIN_TOKENS}")
    return {
        "suggestion": suggestion,
        "context": context,
        "language": language or None,
        "min_tokens": min_tokens,
    }


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def create_app() -> IndexService:
    """The application of one worker, configured by `serve` through the environment."""
    config = ServiceConfig.from_env()
    if not log.handlers:  # warnings always; each query only with --log-queries
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO if config.log_queries else logging.WARNING)
        log.propagate = False
    forget_dead_workers()
    return IndexService(config)
