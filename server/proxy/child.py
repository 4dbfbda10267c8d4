"""A language server child process: its framed stdin/stdout, the requests sent to it that
are waiting for an answer, and how much of what it was sent it has not read yet.

What the relay writes to a child is buffered up to `WRITE_HIGH` bytes; past it the relay
waits (`drain`) before reading the editor's next message, so a child that stops reading
holds the editor back instead of growing the relay's memory."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ntpath
import shutil
import sys
import time
from collections.abc import Callable
from typing import Any

from .framing import Message, MessageReader, MessageWriter

log = logging.getLogger(__name__)


WRITE_HIGH = 4 << 20  # bytes written to a child and not yet read by it, before waiting
WRITE_LOW = 1 << 20  # ... until it has read down to this


class ChildGone(Exception):
    """The child exited (or could not start) before answering."""


def id_key(value: Any) -> tuple[bool, Any]:
    """JSON-RPC ids 1 and "1" are different requests."""
    return (isinstance(value, str), value)


def resolve_command(
    command: list[str],
    platform: str = sys.platform,
    which: Callable[[str], str | None] = shutil.which,
) -> list[str]:
    """On Windows a bare program name is looked up with PATHEXT (`pylsp` is `pylsp.exe`,
    npm's launchers are `.cmd`), which process creation alone does not do."""
    if platform != "win32" or not command or ntpath.dirname(command[0]):
        return command
    found = which(command[0])
    return [found, *command[1:]] if found else command


class Child:
    def __init__(self, name: str, command: list[str], env: dict[str, str] | None = None) -> None:
        self.name = name
        self.command = command
        self.env = env
        self.proc: asyncio.subprocess.Process | None = None
        self.writer: MessageWriter | None = None
        self.reader: MessageReader | None = None
        self.pending: dict[tuple[bool, Any], asyncio.Future[Message]] = {}
        self.alive = False
        # False while a restarted child is being initialized again: the editor's messages
        # are not sent to it until then (the relay sends it the open documents after)
        self.ready = True
        self.exit_code: int | None = None
        self.start_error = ""
        self.started_at = 0.0
        self.init_data: dict[str, Any] | None = None  # the initialize request it was sent
        self.quick_exits = 0  # exits soon after a start, in a row (for the restart backoff)
        self.restarts = 0

    async def start(self, on_garbage: Callable[[str], None]) -> bool:
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *resolve_command(self.command),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=self.env,
                limit=1 << 20,
            )
        except OSError as exc:
            self.start_error = f"{type(exc).__name__}: {exc}"
            return False
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with contextlib.suppress(AttributeError, NotImplementedError):
            self.proc.stdin.transport.set_write_buffer_limits(high=WRITE_HIGH, low=WRITE_LOW)
        self.writer = MessageWriter(self.proc.stdin)
        self.reader = MessageReader(self.proc.stdout, on_garbage)
        self.alive = True
        self.exit_code = None
        self.started_at = time.monotonic()
        return True

    def send_body(self, body: bytes, force: bool = False) -> bool:
        if not self.alive or self.writer is None or not (self.ready or force):
            return False
        self.writer.write_body(body)
        return not self.writer.closed

    def send(self, data: dict[str, Any], force: bool = False) -> bool:
        if not self.alive or self.writer is None or not (self.ready or force):
            return False
        self.writer.write(data)
        return not self.writer.closed

    def unread(self) -> int:
        """Bytes written to the child that it has not read yet (beyond the pipe's buffer)."""
        if self.proc is None or self.proc.stdin is None or not self.alive:
            return 0
        try:
            return self.proc.stdin.transport.get_write_buffer_size()
        except (AttributeError, NotImplementedError):
            return 0

    async def drain(self, timeout: float) -> bool:
        """Wait until the child has read what it was sent down to `WRITE_LOW` bytes; False
        when it has not in `timeout` seconds."""
        if self.unread() <= WRITE_HIGH or self.proc is None or self.proc.stdin is None:
            return True
        try:
            await asyncio.wait_for(self.proc.stdin.drain(), timeout)
        except asyncio.TimeoutError:
            return False
        except (ConnectionError, OSError):
            pass  # it is gone: its reader says so
        return True

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    def request(
        self, msg: Message, body: bytes | None = None, force: bool = False
    ) -> asyncio.Future[Message]:
        """Send an editor request (its id unchanged: each child has its own id space for
        requests coming from the editor); the future gets the response."""
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        if not self.send_body(body if body is not None else msg.body, force):
            fut.set_exception(ChildGone(self.name))
            return fut
        self.pending[id_key(msg.id)] = fut
        # a caller that stopped waiting (a deadline) must not leave an unread exception
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        return fut

    def resolve(self, msg: Message) -> bool:
        fut = self.pending.pop(id_key(msg.id), None)
        if fut is None or fut.done():
            return False
        fut.set_result(msg)
        return True

    def gone(self) -> None:
        self.alive = False
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(ChildGone(self.name))
        self.pending.clear()

    async def wait_exit(self, timeout: float) -> None:
        """Wait for the process to end; kill it at the deadline."""
        if self.proc is None:
            return
        try:
            self.exit_code = await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            log.warning("%s did not exit in %.0f s: killing it", self.name, timeout)
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            self.exit_code = await self.proc.wait()

    def close_stdin(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(Exception):
                self.proc.stdin.close()
