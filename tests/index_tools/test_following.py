"""Several threads on one index: stored texts decompress correctly from any thread, and
FollowingIndex switches to a published generation while lookups run, closing the old one
only when its last lookup is done."""

from __future__ import annotations

import threading
import time

from service_helpers import corpus, snippet

from index_tools import BuildOptions, FollowingIndex, add_to_index, build_index
from index_tools.build.process import _compressor
from index_tools.store.generations import decompress

OPTIONS = BuildOptions(jobs=1, progress=False)


def test_stored_texts_decompress_from_many_threads_at_once():
    text = "".join(f"value_{i} = compute({i * 7}, 'row')\n" for i in range(40_000))
    frame = _compressor.compress(text.encode())
    wrong: list[str] = []

    def run() -> None:
        try:
            for _ in range(40):
                if decompress(frame) != text:
                    wrong.append("different text")
        except Exception as exc:  # a shared decompressor fails with "Data corruption"
            wrong.append(repr(exc))

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_a_published_generation_is_followed_and_the_old_one_closed_when_released(tmp_path):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "a", "alpha")], idx, OPTIONS)
    switched: list[str] = []
    following = FollowingIndex(idx, poll_seconds=0.0, on_switch=switched.append)
    first = following.generation
    with following.using() as old:  # a lookup under way on the first generation
        add_to_index(idx, [corpus(tmp_path / "b", "beta")], OPTIONS)
        with following.using() as new:
            assert new.generation != first and switched == [new.generation]
            assert new.match(snippet("beta"), min_tokens=20)
        # the old generation is still open for the lookup that holds it
        assert old.match(snippet("alpha"), min_tokens=20)
        assert old._docs_env is not None and old._text
    assert old._text.closed  # released: closed
    with following.using() as current:
        assert current.match(snippet("alpha"), min_tokens=20)
    following.close()


def test_a_lookup_that_must_not_open_a_generation_asks_whether_one_is_due(tmp_path):
    """`newer_due` reads CURRENT once a poll is due: a newer generation is due (and left for
    a lookup that follows: a lease not to follow keeps the one in use), the one in use is
    not, and that check is the poll (the next lease reads CURRENT no sooner)."""
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "a", "alpha")], idx, OPTIONS)
    following = FollowingIndex(idx, poll_seconds=3600.0)
    first = following.generation
    add_to_index(idx, [corpus(tmp_path / "b", "beta")], OPTIONS)
    assert not following.newer_due()  # (no poll due yet)
    following.poll_seconds = 0.0
    assert following.newer_due() and following.newer_due()  # (until a lookup switches)
    with following.using(follow=False) as index:
        assert index.generation == first
    with following.using() as index:
        assert index.generation != first
    following.poll_seconds = 1.0
    time.sleep(1.05)  # (a poll due)
    assert not following.newer_due()
    assert not following._switch_due()  # (that was the poll)
    following.close()


def test_lookups_from_threads_never_fail_while_generations_are_published(tmp_path):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "a", "alpha", "beta")], idx, OPTIONS)
    following = FollowingIndex(idx, poll_seconds=0.0)
    stop = threading.Event()
    failures: list[str] = []
    done = [0]

    def lookups() -> None:
        while not stop.is_set():
            try:
                with following.using() as index:
                    if not index.match(snippet("alpha"), min_tokens=20):
                        failures.append("alpha not found")
                done[0] += 1
            except Exception as exc:
                failures.append(repr(exc))

    threads = [threading.Thread(target=lookups) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(3):
            add_to_index(idx, [corpus(tmp_path / f"more{i}", f"more{i}")], OPTIONS)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    with following.using() as index:
        assert index.match(snippet("more2"), min_tokens=20)
    following.close()
    assert failures == [] and done[0] > 0


def test_mapping_ahead_holds_its_generation_and_never_switches(tmp_path, monkeypatch):
    """FollowingIndex.map_ahead reports once what it did with the generation it mapped; it
    does not switch to a newer one (lookups do), and the generation it holds stays open
    until it is done; with RECITATION_MAP_AHEAD=0 it reports at once that it did not."""
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "a", "alpha")], idx, OPTIONS)
    following = FollowingIndex(idx, poll_seconds=0.0)
    first = following.generation
    add_to_index(idx, [corpus(tmp_path / "b", "beta")], OPTIONS)  # published, not yet followed
    reports: list[tuple[object, object]] = []
    release = threading.Event()

    def report(index, done) -> None:
        reports.append((index, done))
        release.wait(10)  # (still inside the lease: the generation must stay open)

    thread = following.map_ahead(threading.Event(), report)
    for _ in range(1000):  # until it has mapped the generation it holds
        if reports:
            break
        thread.join(0.01)
    ((held, done),) = reports
    assert held.generation == first and (done.why_not or done.bytes > 0)
    with following.using() as current:  # a lookup follows the newer generation meanwhile
        assert current.generation != first and current.match(snippet("beta"), min_tokens=20)
    assert not held._text.closed  # still held
    release.set()
    thread.join(10)
    assert held._text.closed  # released: closed
    monkeypatch.setenv("RECITATION_MAP_AHEAD", "0")
    reports.clear()
    following.map_ahead(threading.Event(), report)
    ((held, done),) = reports
    assert held.generation != first and done.why_not == "RECITATION_MAP_AHEAD=0"
    following.close()
