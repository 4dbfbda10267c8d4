"""uvicorn's HTTP/1.1 protocols, with TCP_NODELAY on every connection: the C parser
(httptools) when it is installed, else the pure-Python one (h11).

asyncio sets TCP_NODELAY only on sockets it recognises as TCP; the listening socket that
uvicorn's worker processes inherit does not say so, and without it a response written as
head and body waits out the client's delayed ACK (about 40 ms on Linux) before its body
leaves."""

from __future__ import annotations

import contextlib
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol


def _no_delay(transport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class NoDelayH11Protocol(H11Protocol):
    def connection_made(self, transport) -> None:  # type: ignore[override]
        _no_delay(transport)
        super().connection_made(transport)


try:  # the C parser, where its wheels exist
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - depends on the platform
    HttpToolsProtocol = None

if HttpToolsProtocol is not None:

    class NoDelayHttpToolsProtocol(HttpToolsProtocol):  # at module level: workers import it
        def connection_made(self, transport) -> None:  # type: ignore[override]
            _no_delay(transport)
            super().connection_made(transport)


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
