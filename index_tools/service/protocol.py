"""uvicorn's HTTP/1.1 protocols, with TCP_NODELAY on every connection and limits on what a
client can hold before its request is read: the C parser (httptools) when it is installed,
else the pure-Python one (h11).

asyncio sets TCP_NODELAY only on sockets it recognises as TCP; the listening socket that
uvicorn's worker processes inherit does not say so, and without it a response written as
head and body waits out the client's delayed ACK (about 40 ms on Linux) before its body
leaves.

Limits (per worker process, from the service's config; uvicorn has none of them for
httptools, and none at all before a connection's first request):

- a request's head (request line and headers) over `max_header_bytes` is answered 431
  before the parser buffers it (the parser never sees more than the limit plus one read);
- a head must arrive whole within `header_timeout` of the connection's start or of its
  first byte (on a kept-alive connection): an idle, half-sent or trickled head is closed
  (408 when some of it came); between requests uvicorn's keep-alive timeout applies;
- at most `max_connections` connections, and always fewer than the descriptors the process
  may open: at the limit a new connection closes the one waiting longest for a request
  (idle, or sending a head), so held connections never lock new clients out; only when
  every connection has a request in progress is the new one refused (503).

A refused connection is closed gracefully: the answer is sent, the sending side shut, and
what the client still sends is read and dropped for a moment (`LINGER`), so the client
reads the answer instead of a reset.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections import OrderedDict

from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import CONFIG_ENV, ServiceConfig

LINGER = 2.0  # seconds a refused connection's input is read and dropped before closing
DESCRIPTOR_HEADROOM = 64  # descriptors kept free for the index, logs and metrics
HEAD_END = b"\r\n\r\n"


def _no_delay(transport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def open_descriptors() -> int | None:
    for folder in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(folder))
    return None


def connection_cap(configured: int) -> int:
    """`configured`, lowered so that the connections and what the process holds now stay
    `DESCRIPTOR_HEADROOM` below its descriptor limit (accept() never fails for want of one)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return configured
    if soft == resource.RLIM_INFINITY:
        return configured
    used = open_descriptors() or DESCRIPTOR_HEADROOM
    return max(1, min(configured, soft - used - DESCRIPTOR_HEADROOM))


class Limits:
    """This worker's limits, read once from the config `serve` put in the environment."""

    _current: Limits | None = None

    def __init__(self, config: ServiceConfig) -> None:
        self.max_header_bytes = config.max_header_bytes
        self.header_timeout = config.header_timeout
        self.max_connections = connection_cap(config.max_connections)

    @classmethod
    def get(cls) -> Limits:
        if cls._current is None:
            config = (
                ServiceConfig.from_env() if CONFIG_ENV in os.environ else ServiceConfig(index="")
            )
            cls._current = cls(config)
        return cls._current


# this worker's connections, least recently active first
OPEN: OrderedDict[object, None] = OrderedDict()


def _answer(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"error": message, "reason": reason}).encode()
    phrase = {
        408: "Request Timeout",
        431: "Request Header Fields Too Large",
        503: "Service Unavailable",
    }[status]
    head = (
        f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class GuardedConnection:
    """The limits above, mixed into uvicorn's protocol classes (see the module's doc)."""

    def connection_made(self, transport) -> None:  # type: ignore[override]
        _no_delay(transport)
        self._limits = Limits.get()
        self._head_bytes = 0
        self._tail = b""  # the last bytes of the head so far (its end may straddle reads)
        self._head_timer = None
        self._dropping = False
        super().connection_made(transport)
        OPEN[self] = None
        self._arm_head_timer()
        if len(OPEN) > self._limits.max_connections:
            self._make_room()

    def connection_lost(self, exc) -> None:
        OPEN.pop(self, None)
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._dropping:
            return
        if self in OPEN:
            OPEN.move_to_end(self)
        if not self._waiting():
            super().data_received(data)
            return
        # the bytes of a head: is its end in this read, within the limit?
        room = self._limits.max_header_bytes - self._head_bytes
        seen = self._tail + data[: max(room, 0)]
        if HEAD_END not in seen and len(data) > room:
            self._refuse(
                431, "header_too_large",
                f"the request's head is over {self._limits.max_header_bytes} bytes",
            )  # fmt: skip
            return
        self._head_bytes += len(data)
        self._tail = seen[-3:]
        if self._head_timer is None:
            self._arm_head_timer()
        super().data_received(data)
        if not self._waiting():  # the head is complete: its request is being answered
            self._cancel_head_timer()
            self._head_bytes, self._tail = 0, b""

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._waiting():  # (a pipelined request may have started)
            self._head_bytes, self._tail = 0, b""
        # between requests uvicorn's keep-alive timeout applies; the head timer starts
        # again with the next request's first byte

    # -- the limits ---------------------------------------------------------------------

    def _waiting(self) -> bool:
        """No request in progress: waiting for (the rest of) a request's head."""
        return self.cycle is None or self.cycle.response_complete

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self._limits.header_timeout, self._head_late)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if not self._waiting() or self.transport.is_closing():
            return
        if self._head_bytes:
            self._refuse(
                408, "header_timeout",
                f"the request's head did not arrive in {self._limits.header_timeout} s",
            )  # fmt: skip
        else:
            self._count("idle_timeout")
            self.transport.close()

    def _make_room(self) -> None:
        """Over the connection limit: close a refused connection still lingering, else the
        one waiting longest for a request; refuse this one when every other has a request
        in progress."""
        others = [c for c in OPEN if c is not self]
        for other in [c for c in others if c._dropping] or [c for c in others if c._waiting()]:
            if not other._dropping:
                other._count("evicted")
            other._dropping = True
            other.transport.close()
            OPEN.pop(other, None)
            return
        self._refuse(503, "busy", "too many connections; retry")

    def _refuse(self, status: int, reason: str, message: str) -> None:
        self._count(reason)
        self._cancel_head_timer()
        self._dropping = True  # still counted while it lingers: the first closed for room
        transport = self.transport
        if transport.is_closing():
            return
        transport.write(_answer(status, reason, message))
        if transport.can_write_eof():
            with contextlib.suppress(OSError, RuntimeError):
                transport.write_eof()
            self.loop.call_later(LINGER, transport.close)  # what still comes is dropped
        else:
            transport.close()

    def _count(self, reason: str) -> None:
        metrics = getattr(self.app, "metrics", None)
        if metrics is not None:
            with contextlib.suppress(Exception):
                metrics.errors.labels(reason).inc()


class NoDelayH11Protocol(GuardedConnection, H11Protocol):
    pass


try:  # the C parser, where its wheels exist
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - depends on the platform
    HttpToolsProtocol = None

if HttpToolsProtocol is not None:
    # at module level: the workers import it
    class NoDelayHttpToolsProtocol(GuardedConnection, HttpToolsProtocol):
        pass


def http_protocol(choice: str = "auto") -> type:
    """The protocol class for `--http`: `h11`, `httptools`, or `auto` (httptools if
    installed). ImportError when httptools is asked for and missing."""
    if choice == "h11":
        return NoDelayH11Protocol
    if HttpToolsProtocol is None:
        if choice == "httptools":
            raise ImportError("httptools")
        return NoDelayH11Protocol
    return NoDelayHttpToolsProtocol
