"""JSON-RPC over LSP's base protocol: `Content-Length` framed messages on byte streams.

The reader keeps each message's body bytes, so that a message the relay does not change is
written out exactly as it came in. Output that is not a framed JSON object (a child that
prints to stdout, a broken header, a body that is not JSON) is skipped up to the next
header and reported through `on_garbage`, never raised: one bad write must not end the
session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..framing import MAX_BODY, FrameReader

log = logging.getLogger(__name__)


@dataclass
class Message:
    """One JSON-RPC message: its parsed form and the bytes it arrived as."""

    data: dict[str, Any]
    body: bytes
    received: float = 0.0  # time.perf_counter() when it was read

    @property
    def method(self) -> str | None:
        method = self.data.get("method")
        return method if isinstance(method, str) else None

    @property
    def id(self) -> Any:
        return self.data.get("id")

    @property
    def is_request(self) -> bool:
        return self.method is not None and "id" in self.data

    @property
    def is_notification(self) -> bool:
        return self.method is not None and "id" not in self.data

    @property
    def is_response(self) -> bool:
        return self.method is None and "id" in self.data


def encode(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class MessageReader:
    """Reads framed messages from an asyncio stream; `None` at the end of the stream.
    Framing is `server.framing.FrameReader`'s: no line limit, linear skipping."""

    def __init__(
        self, stream: asyncio.StreamReader, on_garbage: Callable[[str], None] | None = None
    ) -> None:
        self.stream = stream
        self.on_garbage = on_garbage or (lambda what: log.warning("%s", what))
        self._frames = FrameReader(stream, self.on_garbage, MAX_BODY)

    async def read(self) -> Message | None:
        while True:
            body = await self._frames.read_body()
            if body is None:
                return None
            try:
                data = json.loads(body)
            except (ValueError, RecursionError) as exc:
                self.on_garbage(f"a message body is not JSON ({type(exc).__name__}): {body[:80]!r}")
                continue
            if not isinstance(data, dict):
                self.on_garbage(f"a message is not a JSON object: {body[:80]!r}")
                continue
            return Message(data, body, time.perf_counter())


class MessageWriter:
    """Writes framed messages to a binary file (the process's stdout) or a child's stdin."""

    def __init__(self, out: BinaryIO | asyncio.StreamWriter) -> None:
        self.out = out
        self.closed = False

    def write_body(self, body: bytes) -> None:
        if self.closed:
            return
        data = frame(body)
        try:
            if isinstance(self.out, asyncio.StreamWriter):
                if self.out.is_closing():
                    self.closed = True
                    return
                self.out.write(data)
            else:
                self.out.write(data)
                self.out.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as exc:
            log.info("cannot write: %s", exc)
            self.closed = True

    def write(self, data: dict[str, Any]) -> None:
        self.write_body(encode(data))
