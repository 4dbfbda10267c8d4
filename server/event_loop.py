"""The end of the server's event loop, bounded.

`asyncio.run` cancels the tasks still running at its end and waits for them without a
bound. CPython's subprocess transport (3.11 to 3.13) never ends when it is cancelled while
it connects a child's pipes (python/cpython#125502): `exit` arriving while the server
started a `git` or an indexer left the server running, waiting for itself. Here the tasks
get a bounded time to stop, and the process exits as the client asked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

CLOSE_GRACE = 2.0  # seconds the tasks still running at the session's end get to stop

_LEFT: set[asyncio.Future] = set()  # tasks left running at the end, kept from the collector


def run_session(main: Coroutine[Any, Any, T], grace: float = CLOSE_GRACE) -> T:
    """`asyncio.run(main)` whose end cannot hang: the tasks still running when `main` ends
    (or raises, as `exit` does with SystemExit) are cancelled and given `grace` seconds;
    one still running then is left behind, said in the log, and the process goes on to
    exit."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            _stop_tasks(loop, grace)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _stop_tasks(loop: asyncio.AbstractEventLoop, grace: float) -> None:
    deadline = loop.time() + grace
    seen: set[asyncio.Future] = set()
    while True:  # a task may start others as it stops
        running = asyncio.all_tasks(loop)
        if not running:
            break
        for task in running - seen:
            task.cancel()
        seen |= running
        left = deadline - loop.time()
        if left <= 0:
            break
        loop.run_until_complete(asyncio.wait(running, timeout=left))
    for task in seen:
        if task.done() and not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "a task failed while the session ended",
                    "exception": task.exception(),
                    "task": task,
                }
            )
    pending = {t for t in seen if not t.done()}
    if pending:
        _LEFT.update(pending)
        for task in pending:  # said here, not again as "destroyed but pending" at exit
            task._log_destroy_pending = False  # type: ignore[attr-defined]
        log.warning(
            "%d task(s) did not stop within %.1f s of the session's end; left behind: %s",
            len(pending),
            grace,
            ", ".join(sorted(t.get_name() for t in pending)),
        )
