"""`recitation-server --wrap -- CMD [ARGS...]`: Recitation in front of another language server.

Design. The editor talks to one process, this relay, over stdio. The relay starts two
children: CMD (the upstream, e.g. pylsp or a Copilot-style completion server) and
Recitation's own server (`python -m server`, unchanged). Every message is framed and
parsed once to read its method and id; a message the relay does not change is written on
as the very bytes it arrived as, so the upstream's answers reach the editor exactly as they
would directly.

Why two children rather than the upstream behind pygls: Recitation's server keeps all its
behaviour (settings, insertion checks, hover, quick fixes, commands) with no second code
path, and the upstream sees an editor, not a pygls client re-encoding its messages through
lsprotocol types (which would drop fields newer than those types). Why the relay checks
completions itself instead of asking our server per item: a completion list is on the
critical path of typing; the relay reads the index directly (memory-mapped, so the pages are
shared with our server's), runs one lookup batch per response on a worker thread, and adds
no extra round trip. The relay tracks open documents' text only to read the context before a
completion, and reads the `recitation` settings the same way our server does
(initializationOptions, then `workspace/configuration` per folder) with the same parser.

Modules: `framing` (base protocol io), `child` (a child process and its pending requests),
`relay` (routing, ids, failures), `capabilities` (initialize merge), `completion` (item
checks), `diagnostics` (publishDiagnostics merge), `documents` (text tracking).

Failures of the upstream never end the session: if it cannot start, exits, stops answering
or writes something that is not LSP, the editor gets a `window/showMessage` saying so, and
Recitation's own features keep working.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import stat
import sys
import threading

from ..event_loop import run_session
from .relay import Relay

log = logging.getLogger(__name__)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="recitation-server --wrap",
        description="Run a language server behind Recitation: its completion items are "
        "checked against the index, its diagnostics merged with Recitation's.",
        usage="recitation-server --wrap [options] -- CMD [ARGS...]",
    )
    parser.add_argument("--wrap", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--log-file", help="write the relay's log to this file")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument(
        "--upstream-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="after this long without an answer the wrapped server is reported as hung; "
        "hover and code actions then answer without it (default 10)",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="a request the wrapped server has not answered in this long is answered with an "
        "error (default 60)",
    )
    if "--" in argv:
        at = argv.index("--")
        own, command = argv[:at], argv[at + 1 :]
    else:
        own, command = argv, []
    args = parser.parse_args(own)
    if not command:
        parser.error("give the language server to wrap after `--`: --wrap -- CMD [ARGS...]")
    args.command = command
    return args


def _stdin_is_async_pipe(platform: str = sys.platform) -> bool:
    """Whether the event loop can read stdin itself: a pipe or socket on POSIX. On Windows
    the editor's pipe is not opened for overlapped I/O, so a thread reads it there."""
    if platform == "win32":
        return False
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _stdin_reader() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    if _stdin_is_async_pipe():
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return reader

    def pump() -> None:
        while chunk := sys.stdin.buffer.read1(1 << 16):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
        loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, daemon=True, name="stdin").start()
    return reader


async def serve(command: list[str], timeout: float, request_timeout: float = 60.0) -> int:
    relay = Relay(command, timeout=timeout, request_timeout=request_timeout)
    return await relay.run(await _stdin_reader())


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    handler: logging.Handler = (
        logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    )
    logging.basicConfig(
        level=args.log_level, handlers=[handler], format="%(asctime)s %(name)s %(message)s"
    )
    try:
        return run_session(serve(args.command, args.upstream_timeout, args.request_timeout))
    except KeyboardInterrupt:
        return 1
