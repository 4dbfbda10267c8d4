"""The end of the server's event loop is bounded: a session ends though a task will not,
and though it ends while a child process is starting (where `asyncio.run` waits forever)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
import textwrap
import time

import pytest
from server_helpers import REPO, frame, unframe

from server.event_loop import run_session

# a session that ends after `steps` turns of its loop, while a task starts `git --version`:
# CPython's transport, cancelled while it connects the child's pipes, never ends
ENDS_WHILE_A_CHILD_STARTS = textwrap.dedent(
    """
    import asyncio, subprocess, sys
    from server.event_loop import run_session

    async def child():
        pipes = dict(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        process = await asyncio.create_subprocess_exec("git", "--version", **pipes)
        await process.communicate()

    async def main(steps):
        asyncio.ensure_future(child())
        for _ in range(steps):
            await asyncio.sleep(0)
        return "ended"

    print(run_session(main(int(sys.argv[1])), grace=0.5))
    """
)


@pytest.mark.parametrize("steps", [0, 1, 2, 3])
def test_a_session_ends_though_it_ends_while_a_child_process_starts(steps):
    began = time.monotonic()
    ended = subprocess.run(
        [sys.executable, "-c", ENDS_WHILE_A_CHILD_STARTS, str(steps)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,  # asyncio.run here: never ends
    )
    assert (ended.returncode, ended.stdout) == (0, "ended\n"), ended.stderr
    assert time.monotonic() - began < 30
    assert "destroyed but it is pending" not in ended.stderr


def test_the_session_ends_though_a_task_ignores_its_cancellation(caplog):
    async def stubborn() -> None:
        while True:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)

    async def main() -> str:
        asyncio.ensure_future(stubborn()).set_name("stubborn")
        await asyncio.sleep(0)
        return "answered"

    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="server.event_loop"):
        assert run_session(main(), grace=0.3) == "answered"
    assert time.monotonic() - began < 10
    assert "1 task(s) did not stop within 0.3 s of the session's end; left behind: stubborn" in (
        caplog.text
    )


def test_the_tasks_that_stop_when_asked_end_with_the_session():
    stopped = []

    async def polite() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            stopped.append("polite")

    async def main() -> None:
        asyncio.ensure_future(polite())
        await asyncio.sleep(0)
        raise SystemExit(3)  # as pygls' `exit` ends a session

    with pytest.raises(SystemExit) as raised:
        run_session(main())
    assert raised.value.code == 3
    assert stopped == ["polite"]


def test_a_session_read_from_a_file_is_answered_and_ends_with_exit(tmp_path):
    """stdin a file, not a pipe (pygls' reader): the requests answered, `exit` obeyed."""
    messages = tmp_path / "session.jsonrpc"
    messages.write_bytes(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        + frame({"jsonrpc": "2.0", "method": "exit"})
    )
    with messages.open("rb") as stdin:
        ended = subprocess.run(
            [sys.executable, "-m", "server"],
            cwd=REPO,
            stdin=stdin,
            capture_output=True,
            timeout=120,
        )
    assert ended.returncode == 0, ended.stderr.decode()
    by_id = {a["id"]: a for a in unframe(ended.stdout) if "id" in a}
    assert by_id[1]["result"]["serverInfo"]["name"] == "recitation"
    assert by_id[2]["result"] is None
