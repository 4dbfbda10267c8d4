"""uvicorn's pure-Python HTTP/1.1 protocol, with TCP_NODELAY on every connection.

asyncio sets TCP_NODELAY only on sockets it recognises as TCP; the listening socket that
uvicorn's worker processes inherit does not say so, and without it a response written as
head and body waits out the client's delayed ACK (about 40 ms on Linux) before its body
leaves."""

from __future__ import annotations

import contextlib
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol


class NoDelayH11Protocol(H11Protocol):
    def connection_made(self, transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
