"""LSP's base protocol read robustly: `Content-Length` framed bodies from a byte stream.

A stream can go wrong: a header line of megabytes, a missing or malformed
`Content-Length`, a length shorter than the body that follows, output that is not LSP at
all (a child process printing to stdout), a length over the limit (refused at once, its
body read as what it is: bytes before the next header). None of it ends the session or
makes the reader deaf: what cannot be read as a framed message is skipped up to the next
`Content-Length:` header and reported once per stretch through `on_garbage`. Reading is linear in the input
(no line length limit, no re-scanning of skipped bytes).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

HEADER = b"Content-Length:"
MAX_HEADER = 64 * 1024  # bytes of headers before a body; more is skipped as garbage
MAX_BODY = 256 * 1024 * 1024  # a larger message is refused, its bytes skipped as garbage
CHUNK = 256 * 1024
_LENGTH = re.compile(rb"(?im)^[ \t]*Content-Length:[ \t]*(\d{1,12})[ \t\r]*$")


class FrameReader:
    """Framed message bodies from an asyncio stream; `None` at the end of the stream."""

    def __init__(
        self,
        stream: asyncio.StreamReader,
        on_garbage: Callable[[str], None],
        max_body: int = MAX_BODY,
    ) -> None:
        self.stream = stream
        self.on_garbage = on_garbage
        self.max_body = max_body
        self._buf = bytearray()
        self._pos = 0  # start of the unread bytes in _buf

    async def read_body(self) -> bytes | None:
        while True:
            end = self._buf.find(b"\r\n\r\n", self._pos)
            if end < 0:
                if len(self._buf) - self._pos > MAX_HEADER:
                    self._skip("a header block longer than 64 KiB")
                    continue
                if not await self._fill():
                    if self._pending().strip():
                        self.on_garbage(f"the input ended inside a header: {self._preview()}")
                    return None
                continue
            block = bytes(self._buf[self._pos : end])
            found = _LENGTH.search(block)
            if found is None:
                self._skip(f"a header without a valid Content-Length: {block[:80]!r}")
                continue
            if found.start() > 0 and block[: found.start()].strip():
                self.on_garbage(f"output that is not LSP: {block[: min(found.start(), 80)]!r}")
            length = int(found.group(1))
            self._pos = end + 4
            if length > self.max_body:
                # refused at once: what follows is read for the next header, never waited
                # for (a length of a terabyte left the reader deaf while it discarded)
                self.on_garbage(
                    f"a message of {length} bytes, over the limit of {self.max_body}: refused"
                )
                continue
            while len(self._buf) - self._pos < length:
                if not await self._fill():
                    self.on_garbage("the input ended inside a message")
                    return None
            body = bytes(self._buf[self._pos : self._pos + length])
            self._pos += length
            return body

    def _pending(self) -> bytes:
        return bytes(self._buf[self._pos :])

    def _preview(self) -> str:
        return repr(bytes(self._buf[self._pos : self._pos + 80]))

    def _skip(self, why: str) -> None:
        """Drop unread bytes up to the next Content-Length header (not the one at the
        current position), keeping a tail that may be the start of one."""
        self.on_garbage(f"{why}; skipped to the next message")
        nxt = self._buf.find(HEADER, self._pos + 1)
        if nxt < 0:
            keep = len(HEADER) - 1
            self._pos = max(self._pos + 1, len(self._buf) - keep)
        else:
            self._pos = nxt

    async def _fill(self) -> bool:
        if self._pos > CHUNK and self._pos * 2 > len(self._buf):
            del self._buf[: self._pos]  # compact: each byte is moved a bounded number of times
            self._pos = 0
        chunk = await self.stream.read(CHUNK)
        if not chunk:
            return False
        self._buf += chunk
        return True
