"""A client of the index service (`recitation-index serve`), used like a local `Index`.

Pure standard library (http.client, one keep-alive connection per thread). What is sent:
the suggestion, its context window, the language id and min_tokens, to /v1/match; a source
as a match named it and the quoted text, to /v1/source; nothing else. `https://` anywhere; `http://` only to a loopback address, where nothing crosses a
network.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import io
import ipaddress
import json
import os
import socket
import ssl
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from ..match.matcher import MAX_CONTEXT_WORDS
from ..match.source_view import SourceRequest, SourceView
from ..model import Match
from ..store.generations import IndexOpenError
from ..store.small_files import read_small_file
from ..text.words import tokenize
from .answers import Malformed, match_dicts, summary_dict
from .remote_windows import TooLarge, Windows

TOKEN_ENV = "RECITATION_INDEX_TOKEN"
TOKEN_FILE_ENV = "RECITATION_INDEX_TOKEN_FILE"
CONNECT_TIMEOUT = 3.0
READ_TIMEOUT = 15.0  # the longest the service may stay silent
# a request's whole time, from connecting to the answer's last byte (a service sending its
# answer a byte at a time never holds a lookup longer); the service's own limit is 10 s
ANSWER_TIMEOUT = 30.0
MAX_ANSWER_BYTES = 256 << 20  # a larger answer is malformed
MAX_TOKEN_BYTES = 64 << 10  # a token file larger than this is refused
# a service's body limit until it says its own (/v1/stats `max_request_bytes`) or answers 413
DEFAULT_MAX_REQUEST_BYTES = 1 << 20
MIN_REQUEST_BYTES = 4 << 10  # a 413 below this is not taken as the service's limit


class IndexServiceError(IndexOpenError):
    """The service could not answer. `unreachable`: no connection or no answer in time
    (retry later); otherwise it answered with an error (`status`) or sent a malformed
    answer."""

    def __init__(self, message: str, unreachable: bool, status: int | None = None):
        super().__init__(message)
        self.unreachable = unreachable
        self.status = status


def is_remote(location: str | os.PathLike) -> bool:
    return isinstance(location, str) and location.lower().startswith(("http://", "https://"))


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_token() -> str | None:
    """The bearer token from RECITATION_INDEX_TOKEN or the file RECITATION_INDEX_TOKEN_FILE."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    path = os.environ.get(TOKEN_FILE_ENV)
    if not token and path:
        try:
            data = read_small_file(Path(path).expanduser(), MAX_TOKEN_BYTES)
        except OSError as e:
            raise IndexOpenError(f"{TOKEN_FILE_ENV}: {path}: {e.strerror or e}") from None
        token = data.decode("utf-8", errors="replace").strip()
    return token or None


class _Reader(io.RawIOBase):
    """A socket's file (`raw`, which holds the socket open while it is read), each read
    bounded by the silence allowed and by the request's deadline (monotonic seconds): past
    it, TimeoutError."""

    def __init__(self, raw, sock: socket.socket, silence: float, deadline: float):
        super().__init__()
        self._raw, self._sock, self._silence, self._deadline = raw, sock, silence, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the answer's time is up")
        self._sock.settimeout(min(self._silence, left))
        return self._raw.readinto(b)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _Response(http.client.HTTPResponse):
    """A response read through `_Reader`: its head and body end by the deadline."""

    def __init__(self, sock, *args, silence: float, deadline: float, **kwargs):
        super().__init__(sock, *args, **kwargs)
        self.fp = io.BufferedReader(_Reader(self.fp.detach(), sock, silence, deadline))


class RemoteIndex:
    """An index served over HTTP. `match` returns the engine's `Match` objects, as a local
    `Index.match` does; failures raise `IndexServiceError` (never hang: each request ends
    within `answer_timeout` seconds), never an empty answer; an answer of the wrong shape
    is "malformed", never read as fewer matches.

    A text whose request would pass the service's body limit is matched in windows
    (remote_windows.py), each request under the limit: the limit the service names in
    /v1/stats once `summary` has asked, else 1 MiB, lowered when the service answers 413.
    Text is sent as UTF-8 JSON, unescaped (a CJK character: 3 bytes)."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
        answer_timeout: float | None = None,
    ):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise IndexOpenError(f"not an index service URL: {url}")
        if parts.username or parts.password:
            raise IndexOpenError("put the token in a token file, not in the URL")
        if parts.scheme == "http" and not _loopback(parts.hostname):
            raise IndexOpenError(
                f"{parts.hostname}: plain http:// is accepted only on loopback; use https://"
            )
        self.url = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._base = parts.path.rstrip("/")
        self._token = token
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._answer_timeout = ANSWER_TIMEOUT if answer_timeout is None else answer_timeout
        self._ssl = ssl_context or (ssl.create_default_context() if self._https else None)
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self.max_request_bytes = DEFAULT_MAX_REQUEST_BYTES

    # --- the Index interface used by the CLI and the server --------------------------------

    def match(
        self, suggestion: str, context: str = "", min_tokens: int = 60, language: str | None = None
    ) -> list[Match]:
        body = self._match_body(suggestion, context, min_tokens, language)
        if len(body) <= self.max_request_bytes:
            try:
                found = [Match.from_dict(m) for m in self._matches(body)]
                return with_char_offsets(found, suggestion, context)
            except TooLarge:
                pass  # the service's limit is lower: windows under it
        return self._windowed(suggestion, context, min_tokens, language, len(body))

    def query(
        self, suggestion: str, context: str = "", min_tokens: int = 60, language: str | None = None
    ) -> list[dict]:
        """The matches as JSON dicts (what `Match.to_dict` makes)."""
        body = self._match_body(suggestion, context, min_tokens, language)
        if len(body) <= self.max_request_bytes:
            try:
                return self._matches(body)
            except TooLarge:
                pass
        found = self._windowed(suggestion, context, min_tokens, language, len(body))
        return [m.to_dict() for m in found]

    def _match_body(
        self, suggestion: str, context: str, min_tokens: int, language: str | None
    ) -> bytes:
        body = {
            "suggestion": suggestion,
            "context": context,
            "language": language or None,
            "min_tokens": min_tokens,
        }
        # a lone surrogate (bytes a file held that are not UTF-8) is one "?": offsets stay
        return json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")

    def _matches(self, body: bytes) -> list[dict]:
        """One /v1/match request; TooLarge when the service refused it for its size (its
        limit, lowered to below this request, is then `max_request_bytes`)."""
        try:
            answer = self._request("POST", "/v1/match", body)
        except IndexServiceError as exc:
            if exc.status == 413 and len(body) > MIN_REQUEST_BYTES:
                self.max_request_bytes = max(
                    MIN_REQUEST_BYTES, min(self.max_request_bytes, len(body) * 3 // 4)
                )
                raise TooLarge(str(exc)) from None
            raise
        try:
            return match_dicts(answer)
        except Malformed:
            raise self._malformed() from None

    def _malformed(self) -> IndexServiceError:
        return IndexServiceError(
            f"the index service sent a malformed answer: {self.url}", False, 200
        )

    def _windowed(
        self, suggestion: str, context: str, min_tokens: int, language: str | None, size: int
    ) -> list[Match]:
        """The matches of a text too large for one request, from windows of it."""

        def lookup(text: str, before: str) -> list[Match]:
            body = self._match_body(text, before, min_tokens, language)
            return [Match.from_dict(m) for m in self._matches(body)]

        def fits(text: str, before: str) -> bool:
            body = self._match_body(text, before, min_tokens, language)
            return len(body) <= self.max_request_bytes

        # characters a request holds at first: the limit at this text's bytes per character
        chars = int(self.max_request_bytes * 0.9 * len(context + suggestion) / max(size, 1))
        try:
            return Windows(suggestion, context).match(lookup, fits, max(chars, 1))
        except TooLarge:
            raise IndexServiceError(
                f"index service {self.url} refuses requests of "
                f"{self.max_request_bytes} bytes: the text cannot be sent in windows",
                False,
                413,
            ) from None

    def source_view(self, request: SourceRequest) -> SourceView:
        """A source's lines beside a quote (`/v1/source`): what `source_view` gives for a
        local index. What is sent: the source as the match named it, the quoted text."""
        answer = self._request("POST", "/v1/source", request.to_dict())
        try:
            return SourceView.from_dict(answer, request)
        except ValueError:
            raise self._malformed() from None

    def summary(self) -> dict:
        try:
            summary = summary_dict(self._request("GET", "/v1/stats"))
        except Malformed:
            raise self._malformed() from None
        limit = summary.get("max_request_bytes")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            self.max_request_bytes = max(MIN_REQUEST_BYTES, limit)
        summary["path"] = self.url
        return summary

    def health(self) -> dict:
        return self._request("GET", "/v1/health")

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()

    def __enter__(self) -> RemoteIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- HTTP ------------------------------------------------------------------------------

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, and whether it was used before (it may have gone)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn, True
        if self._https:
            conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=self._connect_timeout, context=self._ssl
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self._connect_timeout)
        self._local.conn = conn
        with self._lock:
            self._connections.append(conn)
        return conn, False

    def _drop(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        self._local.conn = None
        with self._lock, contextlib.suppress(ValueError):
            self._connections.remove(conn)

    def _request(self, method: str, path: str, body: dict | bytes | None = None) -> dict:
        if isinstance(body, dict):  # JSON in UTF-8, non-ASCII unescaped
            data = json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")
        else:
            data = body
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if self._token:
            headers["authorization"] = f"Bearer {self._token}"
        deadline = time.monotonic() + self._answer_timeout
        for attempt in (0, 1):
            conn, reused = self._connection()
            conn.response_class = functools.partial(
                _Response, silence=self._read_timeout, deadline=deadline
            )
            try:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the answer's time is up")
                if conn.sock is None:
                    conn.timeout = min(self._connect_timeout, left)
                    conn.connect()
                conn.sock.settimeout(min(self._read_timeout, left))  # (sending included)
                conn.request(method, self._base + path, body=data, headers=headers)
                response = conn.getresponse()
                raw = response.read(MAX_ANSWER_BYTES + 1)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                self._drop(conn)
                if reused and attempt == 0:
                    continue  # a kept-alive connection the service closed meanwhile
                raise IndexServiceError(
                    f"index service unreachable: {self.url}: {e}", True
                ) from None
            except (OSError, http.client.HTTPException) as e:
                self._drop(conn)
                if isinstance(e, TimeoutError):
                    late = time.monotonic() >= deadline - 0.01  # (its last wait ended it)
                    waited = self._answer_timeout if late else None
                    reason = f"no answer in {waited or self._read_timeout:g} s"
                else:
                    reason = e
                raise IndexServiceError(
                    f"index service unreachable: {self.url}: {reason}", True
                ) from None
            if len(raw) > MAX_ANSWER_BYTES:
                self._drop(conn)
                raise self._malformed()
            if response.will_close or response.status == 413:
                self._drop(conn)  # (a 413 may leave our body unread on the connection)
            return self._decode(response.status, raw)
        raise AssertionError("unreachable")

    def _decode(self, status: int, raw: bytes) -> dict:
        try:
            answer = json.loads(raw)
        except (ValueError, RecursionError):  # (brackets nested deeper than the stack)
            answer = None
        if status != 200:
            said = answer.get("error") if isinstance(answer, dict) else None
            busy = status in (502, 503, 504)
            raise IndexServiceError(
                f"index service {self.url} answered {status}" + (f": {said}" if said else ""),
                unreachable=busy,
                status=status,
            )
        if not isinstance(answer, dict):
            raise self._malformed()
        return answer


def with_char_offsets(matches: list[Match], suggestion: str, context: str) -> list[Match]:
    """Set each match's character offsets in `context + suggestion` (not in the JSON) from
    its word span, as the matcher counts words: the context's last MAX_CONTEXT_WORDS, then
    the suggestion's."""
    if not matches:
        return matches
    kept = tokenize(context)[-MAX_CONTEXT_WORDS:]
    shift = len(context)
    words = [(w.start, w.end) for w in kept]
    words += [(w.start + shift, w.end + shift) for w in tokenize(suggestion)]
    for m in matches:
        if 0 <= m.query_start < m.query_end <= len(words):
            m.char_start, m.char_end = words[m.query_start][0], words[m.query_end - 1][1]
    return matches


def open_location(location: str | os.PathLike, token: str | None = None):
    """A local `Index` for a path, a `RemoteIndex` for an http(s) URL."""
    if is_remote(location):
        return RemoteIndex(str(location), token if token is not None else default_token())
    from ..match.index import open_index

    return open_index(location)
