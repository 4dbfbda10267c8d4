"""A lookup's parts left for after its diagnostic (the server's lookups): made from the
generation the lookup was answered from, even after a newer one was published and switched
to, which is let go once they are made."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from index_tools import BuildOptions, add_to_index, build_index
from server import indexes
from server.detection import Checker, PendingCheck
from server.indexes import Found, IndexHandle

OPTIONS = BuildOptions(jobs=1, progress=False)


def statements(first: int, last: int) -> str:
    return "".join(f"v{3 * i} = v{3 * i + 1} + v{3 * i + 2}\n" for i in range(first, last))


async def opened_with_a_part(tmp_path: Path, monkeypatch) -> tuple[Path, IndexHandle]:
    """An index whose `statements(0, 20)` is one quote with a nested part (in more files),
    and a handle open on it (not mapped ahead: that thread would hold a lease of its own
    for a while, longer on a busy machine)."""
    monkeypatch.setenv("RECITATION_MAP_AHEAD", "0")
    src = tmp_path / "corpus"
    src.mkdir()
    (src / "long.py").write_text(statements(0, 20), encoding="utf-8")
    (src / "short.py").write_text("x = 1\n" + statements(3, 17), encoding="utf-8")
    idx = tmp_path / "idx"
    build_index([str(src)], idx, OPTIONS)
    handle = IndexHandle(idx)
    handle.open()
    await handle.wait()
    return idx, handle


async def test_parts_left_for_later_are_read_from_their_generation_across_a_switch(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(indexes, "POLL_SECONDS", 0.0)  # every lookup looks for a newer one
    more = tmp_path / "more"
    more.mkdir()
    (more / "other.py").write_text(statements(40, 60), encoding="utf-8")
    idx, handle = await opened_with_a_part(tmp_path, monkeypatch)
    try:
        found = await handle.match(statements(0, 20), "", 20, "python", defer_parts=True)
        assert isinstance(found, Found)
        (m,) = found
        (part,) = m.parts
        assert not part.settled and part.file_count == 2
        old = found.lease.index
        whole = old.match(statements(0, 20), "", 20, language="python")  # (made at once)
        add_to_index(idx, [str(more)], OPTIONS)
        assert await handle.match(statements(40, 60), "", 20, "python")  # switched to it
        assert handle.generation != old.generation
        assert not old._text.closed  # held for the parts still to be made
        await handle.settle(found)
        assert part.settled and m.to_dict() == whole[0].to_dict()
        assert "short.py" in {s.path for s in part.sources}
        assert old._text.closed  # let go once they are made
        # a lookup with nothing left for later holds nothing
        plain = await handle.match(statements(40, 60), "", 20, "python", defer_parts=True)
        assert plain and not isinstance(plain, Found)
    finally:
        handle.close()


async def test_a_deferred_lookup_nobody_waits_for_lets_its_generation_go(tmp_path, monkeypatch):
    """A check cancelled while its lookup runs on the worker (the document closed): the
    answer that comes after holds nothing (its parts are never read)."""
    monkeypatch.setattr(indexes, "INLINE_CHARS", 0)  # (every lookup on the worker)
    _, handle = await opened_with_a_part(tmp_path, monkeypatch)
    try:
        started, gate = threading.Event(), threading.Event()
        follow = handle._follow

        def held_up() -> None:  # (the lookup under way on the worker when cancelled)
            started.set()
            gate.wait(10)
            follow()

        handle._follow = held_up
        task = asyncio.ensure_future(
            handle.match(statements(0, 20), "", 20, "python", defer_parts=True)
        )
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.sleep(0)
        handle._follow = follow
        gate.set()
        done = await asyncio.get_running_loop().run_in_executor(handle._executor, lambda: 1)
        assert done == 1 and task.cancelled()
        assert handle._following._held.leases == 0  # (the cancelled lookup's let go)
        # the same lookup awaited holds its generation until settled
        found = await handle.match(statements(0, 20), "", 20, "python", defer_parts=True)
        assert isinstance(found, Found) and handle._following._held.leases == 1
        await handle.settle(found)
        assert handle._following._held.leases == 0
    finally:
        handle.close()


async def test_a_lookup_is_made_on_the_event_loop_when_the_worker_is_idle(tmp_path, monkeypatch):
    """No thread woken for a suggestion's lookup while the worker is idle; while it works
    (making parts, following a generation) the lookup waits for it and is made there,
    never beside it; a text longer than INLINE_CHARS goes to the worker too, and so does a
    lookup that finds a newer generation published (opened there, not on the loop). The
    answers are the same every way."""
    monkeypatch.setattr(indexes, "POLL_SECONDS", 0.0)  # every lookup looks for a newer one
    more = tmp_path / "more"
    more.mkdir()
    (more / "other.py").write_text(statements(40, 60), encoding="utf-8")
    idx, handle = await opened_with_a_part(tmp_path, monkeypatch)
    loop_thread = threading.current_thread()
    try:
        made_on: list[threading.Thread] = []
        with_lease = handle._with_lease

        def recorded(work, follow=True):
            made_on.append(threading.current_thread())
            assert handle._executor.turn.locked()  # (in the index's turn, whoever makes it)
            assert follow or threading.current_thread() is loop_thread
            return with_lease(work, follow)

        handle._with_lease = recorded
        expected = [m.to_dict() for m in await handle.match(statements(0, 20), "", 20, "python")]
        assert expected and made_on[-1] is loop_thread

        started, gate = threading.Event(), threading.Event()

        def work() -> bool:  # (the worker at work)
            started.set()
            return gate.wait(10)

        busy = handle._executor.submit(work)
        while not started.is_set():
            await asyncio.sleep(0.01)
        task = asyncio.ensure_future(handle.match(statements(0, 20), "", 20, "python"))
        await asyncio.sleep(0.05)
        assert not task.done()  # (it waits its turn)
        gate.set()
        assert [m.to_dict() for m in await task] == expected and busy.result()
        assert made_on[-1] is not loop_thread

        before = handle.generation
        add_to_index(idx, [str(more)], OPTIONS)
        found = await handle.match(statements(0, 20), "", 20, "python")
        assert [m.to_dict() for m in found] == expected and made_on[-1] is not loop_thread
        assert handle.generation != before  # (switched on the worker)
        found = await handle.match(statements(40, 60), "", 20, "python")
        assert found and made_on[-1] is loop_thread  # (the new one's, on the loop again)

        monkeypatch.setattr(indexes, "INLINE_CHARS", len(statements(0, 20)) - 1)
        found = await handle.match(statements(0, 20), "", 20, "python")
        assert [m.to_dict() for m in found] == expected and made_on[-1] is not loop_thread
    finally:
        handle.close()


class SlowPart:
    """A part left for later whose making is recorded (and can be held up)."""

    def __init__(self, name: str, order: list[str], gate: threading.Event | None = None):
        self.name, self.order, self.gate, self.settled = name, order, gate, False
        self.started = threading.Event()

    def settle(self) -> None:
        self.started.set()
        if self.gate is not None:
            self.gate.wait(10)
        self.order.append(self.name)
        self.settled = True


class SlowMatch:
    """A match whose parts are made (as `parts`), or left for later: made by `later`'s
    settling (recorded as its name)."""

    def __init__(self, parts: list[SlowPart], later: SlowPart | None = None):
        self.parts, self.later = parts, later

    @property
    def parts_made(self) -> bool:
        return self.later is None or self.later.settled

    def settle_parts(self) -> None:
        assert self.later is not None
        self.later.settle()


class Held:
    """A lease that counts its releases."""

    def __init__(self):
        self.released = 0

    def release(self) -> None:
        self.released += 1


async def test_a_lookup_asked_while_parts_are_made_runs_before_the_rest_of_them(
    tmp_path, monkeypatch
):
    """The parts made after a diagnostic yield to the next lookup (an editor's next
    suggestion): it waits for the part being made, not for all of them; all are made."""
    _, handle = await opened_with_a_part(tmp_path, monkeypatch)
    try:
        order: list[str] = []
        gate = threading.Event()
        first = SlowPart("part 1", order, gate)
        match = SlowMatch([first, SlowPart("part 2", order)])
        lease = Held()
        found = Found([match, SlowMatch([SlowPart("part 3", order)])], lease)
        settling = asyncio.ensure_future(handle.settle(found))
        while not first.started.is_set():  # (part 1 under way on the worker)
            await asyncio.sleep(0.01)
        match_of = handle._match

        def recorded(*args):
            order.append("lookup")
            return match_of(*args)

        handle._match = recorded
        lookup = asyncio.ensure_future(handle.match(statements(0, 20), "", 20, "python"))
        await asyncio.sleep(0.05)  # (asked while part 1 is made)
        gate.set()
        assert await lookup
        await settling
        assert order == ["part 1", "lookup", "part 2", "part 3"]
        assert lease.released == 1
        # with nobody waiting, all in one go: a match's parts left for later (searched
        # and counted, one step), then their kinds and sources
        order.clear()
        parts = [SlowPart(f"p{i}", order) for i in range(3)]
        lease = Held()
        later = SlowMatch(parts, SlowPart("the parts", order))
        await handle.settle(Found([SlowMatch([]), later], lease))
        assert order == ["the parts", "p0", "p1", "p2"] and lease.released == 1
    finally:
        handle.close()


async def test_parts_wait_until_the_editors_checks_have_been_quiet():
    """The parts left for later are made once no check has been asked for, run or ended
    for a moment: suggestions accepted one after another are looked up first."""
    loop = asyncio.get_running_loop()
    ended: list[float] = []

    async def run_check(uri: str, check: PendingCheck) -> None:
        await asyncio.sleep(0.05)
        ended.append(loop.time())

    checker = Checker(run_check)
    checker.add("file:///a.py", PendingCheck(0, 10))
    await asyncio.sleep(0.01)  # (its lookup under way)
    quiet = asyncio.ensure_future(checker.quiet(0.1))
    await asyncio.sleep(0.08)
    checker.add("file:///b.py", PendingCheck(0, 10))  # another suggestion meanwhile
    await quiet
    assert len(ended) == 2 and not checker.busy()
    assert loop.time() >= ended[-1] + 0.1 - 0.005  # (quiet for 0.1 s after the last)


async def test_parts_wait_for_quiet_checks_a_bounded_time():
    """A check that takes long (one waiting for an index to open) holds the parts back
    no longer than `at_most`."""
    loop = asyncio.get_running_loop()

    async def run_check(uri: str, check: PendingCheck) -> None:
        await asyncio.sleep(1.0)

    checker = Checker(run_check)
    checker.add("file:///a.py", PendingCheck(0, 10))
    began = loop.time()
    await checker.quiet(0.02, at_most=0.2)
    assert 0.2 - 0.005 <= loop.time() - began < 0.9 and checker.busy()
    checker.cancel("file:///a.py")
