"""HTTP for the package registries: metadata requests and verified, cached, resumable
downloads. Standard library only (urllib).

- `Endpoint`: a registry's base URL and its credentials (user:password in the URL, as pip
  takes them, or a token). Credentials go only to that registry's scheme, host and port,
  never to another host a redirect or a tarball URL points at, and never into a message.
- `Http.get_json` / `Http.get_text`: a response of bounded size; connection failures, 5xx
  and 429 are tried again a few times; failures become `RegistryError` with one line, naming
  the URL that failed (after redirects: that one, and the first).
- `Http.download`: into a `.part` file continued with a Range request after an interruption,
  checked against the expected digest (sha512 / sha256 / sha1) and moved into place only
  when it matches; a stale partial file that does not verify is fetched again once whole. A
  body shorter than its `Content-Length` (or than the size the registry gave) is a download
  cut off, continued, and said so if it stays short, never a digest mismatch.
- Every request (a download, a registry document) has an overall deadline, `deadline`
  seconds for all its attempts, redirects, headers and body: when it passes, the
  connections are shut (a read blocked in a trickle returns at once) and the request fails
  with one line naming the URL. The per-read `timeout` alone would wait forever on a
  registry that sends a byte now and then.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPException, IncompleteRead
from pathlib import Path

from ...safe_text import printable, redact_credentials
from ...store.small_files import writable_target
from .base import SourceError

USER_AGENT = "recitation-index (package sources)"
METADATA_MAX_BYTES = 256 << 20  # a registry document (npm's full packuments reach ~100 MB)
DOWNLOAD_MAX_BYTES = 1 << 30  # one package archive
DEADLINE_SECONDS = 600.0  # one request, all of it (RECITATION_DOWNLOAD_TIMEOUT, --download-timeout)
ENV_DEADLINE = "RECITATION_DOWNLOAD_TIMEOUT"
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class RegistryError(SourceError):
    """A registry request that failed: not found, unreachable, refused, digest mismatch."""


class NotFound(RegistryError):
    """The registry answered 404 / 410."""


def _safe_url(url: str) -> str:
    """A URL fit for a message: no credentials, printable."""
    return printable(redact_credentials(url), 200)


@dataclass(frozen=True)
class Endpoint:
    """A registry base URL (without credentials) and the Authorization header for it."""

    url: str
    authorization: str = field(default="", repr=False)

    @classmethod
    def parse(cls, url: str, token: str = "") -> Endpoint:
        """`https://user:pass@host/path` (Basic) or a URL and a token (Bearer)."""
        parts = urllib.parse.urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RegistryError(f"not an http(s) registry URL: {_safe_url(url)}")
        auth = ""
        if parts.username is not None or parts.password is not None:
            user = urllib.parse.unquote(parts.username or "")
            password = urllib.parse.unquote(parts.password or "")
            auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        if token:
            auth = f"Bearer {token.strip()}"
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        path = parts.path if parts.path.endswith("/") else parts.path + "/"
        clean = urllib.parse.urlunsplit((parts.scheme, host, path, "", ""))
        return cls(clean, auth)

    def join(self, *segments: str) -> str:
        """The base URL with path segments appended, each percent-quoted."""
        return self.url + "/".join(urllib.parse.quote(s, safe="@") for s in segments)

    def headers_for(self, url: str) -> dict[str, str]:
        """The Authorization header when `url` is on this registry's origin."""
        if self.authorization and _origin(url) == _origin(self.url):
            return {"Authorization": self.authorization}
        return {}


def _origin(url: str) -> tuple[str, str, int | None]:
    p = urllib.parse.urlsplit(url)
    port = p.port or {"http": 80, "https": 443}.get(p.scheme)
    return p.scheme, (p.hostname or "").lower(), port


class _SameOriginAuthRedirect(urllib.request.HTTPRedirectHandler):
    """Follows redirects, dropping credentials when the target is another origin; the
    request's deadline goes with it."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urllib.parse.urlsplit(newurl).scheme not in ("http", "https"):
            raise urllib.error.HTTPError(newurl, code, "redirect to a non-http(s) URL", headers, fp)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != _origin(req.full_url):
            new.remove_header("Authorization")
        if new is not None:
            new.recitation_deadline = getattr(req, "recitation_deadline", None)
        return new


def deadline_seconds(value: float | str | None = None) -> float:
    """A request's deadline: `value`, else $RECITATION_DOWNLOAD_TIMEOUT, else
    DEADLINE_SECONDS; RegistryError for one that is not a positive number of seconds."""
    if value is None or value == "":
        value = os.environ.get(ENV_DEADLINE, "").strip() or DEADLINE_SECONDS
        where = f"${ENV_DEADLINE}"
    else:
        where = "the download timeout"
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= 86_400):
        raise RegistryError(
            f"{where}: {printable(str(value), 40)!r} is not a number of seconds above 0 "
            "and at most 86400"
        )
    return seconds


class _Deadline:
    """One request's time, all of it: the URLs it opened (redirects included) and their
    connections, which are shut when the time is up, so that a read blocked on a registry
    that trickles returns at once (and the request fails, `expired`)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.urls: list[str] = []
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if seconds is not None:
            self._timer = threading.Timer(seconds, self._expire)
            self._timer.daemon = True
            self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def opened(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def failing_url(self, first: str) -> str:
        """The URL a failure is about: the last one opened (after redirects), else `first`."""
        return self.urls[-1] if self.urls else first

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def __enter__(self) -> _Deadline:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _shut(sock: socket.socket) -> None:
    # the plain socket's shutdown, also for a TLS one (whose own would drop its TLS state
    # under a thread reading it): the read sees the end of the stream, or an error
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _watched(connection_class, req):
    """A connection class for `req` whose connections its deadline can shut."""
    deadline = getattr(req, "recitation_deadline", None)
    if deadline is None:
        return connection_class
    deadline.urls.append(req.full_url)

    def make(*args, **kwargs):
        conn = connection_class(*args, **kwargs)
        connect = conn.connect

        def watched_connect():
            connect()
            deadline.opened(conn.sock)

        conn.connect = watched_connect
        return conn

    return make


class _WatchedHTTP(urllib.request.HTTPHandler):
    def do_open(self, http_class, req, **kwargs):
        return super().do_open(_watched(http_class, req), req, **kwargs)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def do_open(self, http_class, req, **kwargs):
        return super().do_open(_watched(http_class, req), req, **kwargs)


class _CutOff(OSError):
    """A body that ended before its declared length."""

    def __init__(self, have: int, expected: int):
        super().__init__(f"{have:,} of {expected:,} bytes arrived")
        self.have, self.expected = have, expected


def _declared_total(resp, status: int, have: int) -> int | None:
    """The whole file's size as the response declares it (None when it does not): its
    Content-Length, past what we have when it is the rest (206)."""
    if status == 206:
        total = (resp.headers.get("Content-Range") or "").rpartition("/")[2].strip()
        if total.isdigit():
            return int(total)
    length = (resp.headers.get("Content-Length") or "").strip()
    if not length.isdigit():
        return None
    return int(length) + (have if status == 206 else 0)


@dataclass
class Digest:
    """An expected digest: algorithm ("sha512", "sha256", "sha1") and its hex value."""

    algorithm: str
    hex: str

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.hex}"


def sri_digests(integrity: str) -> list[Digest]:
    """The digests of an npm `integrity` string (Subresource Integrity), strongest first."""
    order = {"sha512": 0, "sha384": 1, "sha256": 2, "sha1": 3}
    found = []
    for item in (integrity or "").split():
        algo, _, b64 = item.partition("-")
        algo = algo.lower()
        if algo not in order or not b64:
            continue
        try:
            raw = base64.b64decode(b64.split("?")[0], validate=True)
        except ValueError:
            continue
        found.append(Digest(algo, raw.hex()))
    return sorted(found, key=lambda d: order[d.algorithm])


def cache_file(path: Path) -> Path:
    """`path` in a cache, where only regular files of ours belong: a folder, a named pipe,
    a device, a socket or a link there is refused (NotRegularFile, one line), never read
    (a pipe would block) nor replaced."""
    return writable_target(path, follow_links=False)


def file_digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Http:
    """Requests to the registries, with retries and one-line errors. `timeout`: seconds
    for each read; `deadline`: seconds for a whole request (None: no deadline)."""

    def __init__(
        self,
        *,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        deadline: float | None = DEADLINE_SECONDS,
    ):
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.deadline = deadline
        context = ssl.create_default_context()
        self._opener = urllib.request.build_opener(
            _SameOriginAuthRedirect(), _WatchedHTTP(), _WatchedHTTPS(context=context)
        )
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ requests

    def _late(self, deadline: _Deadline, url: str, what: str) -> RegistryError:
        return RegistryError(
            _p(what) + f"{_where(deadline, url)} did not finish in {deadline.seconds:g} s "
            "(--download-timeout)"
        )

    def _open(self, url: str, headers: dict[str, str], what: str, deadline: _Deadline):
        """The response to a GET, after retries; RegistryError otherwise."""
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise RegistryError(_p(what) + f"not an http(s) URL: {_safe_url(url)}")
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * (2 ** (attempt - 1)))
            if deadline.expired:
                raise self._late(deadline, url, what)
            req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **headers})
            req.recitation_deadline = deadline
            try:
                return self._opener.open(req, timeout=self.timeout)
            except urllib.error.HTTPError as e:
                e.close()
                failed = _where(deadline, url, getattr(e, "url", None) or e.filename)
                if e.code in (404, 410):
                    raise NotFound(_p(what) + f"not found: {failed} answered {e.code}") from None
                if e.code in (401, 403):
                    raise RegistryError(
                        _p(what) + f"access refused: {failed} answered {e.code} "
                        "(check the registry credentials)"
                    ) from None
                if e.code == 416:
                    raise
                if 300 <= e.code < 400:  # a redirect refused, or one too many
                    target = str(getattr(e, "url", None) or e.filename or "")
                    reason = printable(" ".join(str(e.msg).split()), 120)
                    if target and target != deadline.failing_url(url):
                        raise RegistryError(
                            _p(what) + f"{_where(deadline, url)} redirected to "
                            f"{_safe_url(target)}: {reason}"
                        ) from None
                    raise RegistryError(
                        _p(what) + f"{failed} answered {e.code}: {reason}"
                    ) from None
                last = f"{failed} answered {e.code}"
                if e.code not in _RETRY_STATUS:
                    break
            except (urllib.error.URLError, HTTPException, OSError, ValueError) as e:
                if deadline.expired:
                    raise self._late(deadline, url, what) from None
                last = f"cannot reach {_where(deadline, url)}: {_network_reason(e)}"
        raise RegistryError(_prefixed(what, last))

    def get_bytes(
        self, url: str, headers: dict[str, str], what: str, max_bytes: int = METADATA_MAX_BYTES
    ) -> tuple[bytes, str, str]:
        """The body (at most max_bytes), its content type and the URL it came from (after
        redirects)."""
        with _Deadline(self.deadline) as deadline:
            for attempt in range(self.retries + 1):
                resp = self._open(url, headers, what, deadline)
                try:
                    with resp:
                        body = resp.read(max_bytes + 1)
                        ctype = resp.headers.get("Content-Type", "")
                        final = resp.geturl() or url
                        if deadline.expired:
                            raise self._late(deadline, url, what)
                        declared = _declared_total(resp, getattr(resp, "status", 200), 0)
                        if declared is not None and len(body) < min(declared, max_bytes + 1):
                            raise _CutOff(len(body), declared)
                except (OSError, HTTPException) as e:
                    if deadline.expired:
                        raise self._late(deadline, url, what) from None
                    if attempt < self.retries:
                        continue
                    if isinstance(e, _CutOff):
                        raise RegistryError(
                            _p(what) + f"the answer of {_where(deadline, url)} was cut off: {e}"
                        ) from None
                    raise RegistryError(
                        _p(what) + f"the response broke off: {_network_reason(e)}"
                    ) from None
                if len(body) > max_bytes:
                    raise RegistryError(
                        _p(what) + f"the response is larger than {max_bytes:,} bytes"
                    )
                return body, ctype, final
        raise RegistryError(_p(what) + "no response")  # pragma: no cover

    def get_json(self, url: str, headers: dict[str, str], what: str) -> dict:
        body, _, _ = self.get_bytes(url, headers, what)
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):
            raise RegistryError(_p(what) + "the registry sent something that is not JSON") from None
        if not isinstance(value, dict):
            raise RegistryError(_p(what) + "the registry sent an unexpected document")
        return value

    # ------------------------------------------------------------------ downloads

    def download(
        self,
        url: str,
        dest: Path,
        digests: list[Digest],
        *,
        headers: dict[str, str],
        what: str,
        max_bytes: int = DOWNLOAD_MAX_BYTES,
        on_bytes: Callable[[int], None] | None = None,
        size: int = 0,
    ) -> Path:
        """`dest`, downloaded (or already there) and verified against the strongest of
        `digests`; a `.part` file left by an interrupted download is continued. `size`: the
        archive's size as the registry gave it (0: not given)."""
        if not digests:
            raise RegistryError(_p(what) + "the registry gives no digest to verify the download")
        digest = digests[0]
        cache_file(dest)
        if dest.exists():
            if file_digest(dest, digest.algorithm) == digest.hex:
                return dest
            dest.unlink()  # damaged in the cache: fetched again
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        with _file_lock(dest.with_name(dest.name + ".lock")), _Deadline(self.deadline) as deadline:
            if dest.exists() and file_digest(dest, digest.algorithm) == digest.hex:
                return dest
            for whole in (False, True):
                if whole and part.exists():
                    part.unlink()
                declared = self._fetch_into(url, part, headers, what, max_bytes, on_bytes, deadline)
                got = file_digest(part, digest.algorithm)
                if got == digest.hex:
                    os.replace(part, cache_file(dest))
                    return dest
                if whole:
                    have = part.stat().st_size if part.exists() else 0
                    part.unlink(missing_ok=True)
                    expected = declared or size
                    if expected and have < expected:
                        raise RegistryError(
                            _p(what) + f"the download of {_where(deadline, url)} was cut off: "
                            f"{have:,} of {expected:,} bytes arrived"
                        )
                    raise RegistryError(
                        _p(what) + f"digest mismatch: expected {digest.algorithm} "
                        f"{digest.hex[:16]}..., the download has {got[:16]}..."
                    )
        raise RegistryError(_p(what) + "download failed")  # pragma: no cover

    def _fetch_into(
        self, url, part: Path, headers, what, max_bytes, on_bytes, deadline: _Deadline
    ) -> int | None:
        """The body into `part` (continued where it has some); the file's whole size as
        the response declared it (None when it did not)."""
        have = part.stat().st_size if part.exists() else 0
        declared = None
        for attempt in range(self.retries + 1):
            hdrs = dict(headers)
            if have:
                hdrs["Range"] = f"bytes={have}-"
            try:
                resp = self._open(url, hdrs, what, deadline)
            except urllib.error.HTTPError as e:  # 416: the part is complete (or wrong)
                if e.code == 416:
                    return declared
                raise
            try:
                with resp:
                    status = getattr(resp, "status", 200)
                    mode = "ab" if have and status == 206 else "wb"
                    if mode == "wb":
                        have = 0
                    declared = _declared_total(resp, status, have)
                    with open(part, mode) as f:
                        while True:
                            block = resp.read(1 << 16)
                            if not block:
                                break
                            have += len(block)
                            if have > max_bytes:
                                raise RegistryError(
                                    _p(what) + f"the download is larger than {max_bytes:,} bytes"
                                )
                            f.write(block)
                            if on_bytes:
                                on_bytes(len(block))
                    if deadline.expired:
                        raise self._late(deadline, url, what)
                    if declared is not None and have < declared:
                        raise _CutOff(have, declared)  # continued with a Range request
                return declared
            except RegistryError:
                raise
            except (OSError, HTTPException) as e:
                if deadline.expired:
                    raise self._late(deadline, url, what) from None
                have = part.stat().st_size if part.exists() else 0
                if attempt >= self.retries:
                    if isinstance(e, (_CutOff, IncompleteRead)):
                        cut = f"{have:,} of {declared:,} bytes arrived" if declared else str(e)
                        raise RegistryError(
                            _p(what) + f"the download of {_where(deadline, url)} was cut off: {cut}"
                        ) from None
                    raise RegistryError(
                        _p(what) + f"the download of {_where(deadline, url)} broke off: "
                        f"{_network_reason(e)}"
                    ) from None
                time.sleep(self.backoff * (2**attempt))
        return declared  # pragma: no cover


@contextlib.contextmanager
def _file_lock(path: Path):
    """An exclusive lock between processes sharing a cache (POSIX; a no-op elsewhere)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _p(what: str) -> str:
    return f"{what}: " if what else ""


def _where(deadline: _Deadline, first: str, failed: str | None = None) -> str:
    """The URL a failure is about, for a message: the one that failed, and the first one
    asked when a redirect led there."""
    failed = failed or deadline.failing_url(first)
    if failed == first:
        return _safe_url(first)
    return f"{_safe_url(failed)} (redirected from {_safe_url(first)})"


def _prefixed(what: str, text: str) -> str:
    return _p(what) + text


def _network_reason(e: BaseException) -> str:
    reason = getattr(e, "reason", None) or e
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(reason, socket.gaierror):
        return "unknown host"
    if isinstance(reason, ssl.SSLError):
        return f"TLS error ({printable(getattr(reason, 'reason', '') or reason, 80)})"
    text = getattr(reason, "strerror", None) or str(reason)
    return printable(text, 120) or type(reason).__name__
