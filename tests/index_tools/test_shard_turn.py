"""The Spark builder's shard tasks take turns on an executor: its memory is one shard's.

The turn is an OS lock in the executor's local directory; a task waits for it before it
reads its shard's documents from the shuffle. No Spark needed here: the task's function is
run in threads, as the Python worker runs it.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from index_tools.build.spark import _write_shard_task, shard_turn
from index_tools.store.lock import turn


def _hold(lock_path, spans: list, seconds: float) -> None:
    with turn(lock_path):
        start = time.monotonic()
        time.sleep(seconds)
        spans.append((start, time.monotonic()))


def test_turns_do_not_overlap(tmp_path):
    spans: list = []
    threads = [
        threading.Thread(target=_hold, args=(tmp_path / "t.lock", spans, 0.15)) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans.sort()
    assert len(spans) == 4
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_a_turn_is_released_when_its_holder_fails(tmp_path):
    lock = tmp_path / "t.lock"
    try:
        with turn(lock):
            raise RuntimeError("the task failed")
    except RuntimeError:
        pass
    spans: list = []
    worker = threading.Thread(target=_hold, args=(lock, spans, 0.0))
    worker.start()
    worker.join(timeout=5)
    assert spans, "the lock of a failed holder was kept"


def test_each_build_has_its_own_turn_in_the_executors_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_DIRS", f"{tmp_path / 'a'},{tmp_path / 'b'}")
    (tmp_path / "a").mkdir()
    spans: list = []
    with shard_turn("/indexes/one/gen-1"):
        other = threading.Thread(
            target=lambda: spans.append(_enter(shard_turn("/indexes/two/gen-1")))
        )
        other.start()
        other.join(timeout=5)
    assert spans == ["entered"]  # another build's shard task does not wait for this one's
    assert [p.parent.name for p in (tmp_path / "a").glob("recitation-shard-*.lock")] == ["a"] * 2


def _enter(cm) -> str:
    with cm:
        return "entered"


def test_a_shard_task_reads_its_documents_only_in_its_turn(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    gen = tmp_path / "gen"
    gen.mkdir()
    first_read: list[float] = []

    def items():
        first_read.append(time.monotonic())
        ids = np.arange(2, 40, dtype=np.uint32) % 7 + 2
        yield 0, (0, ids, None)

    results: list = []
    with shard_turn(str(gen)):
        task = threading.Thread(
            target=lambda: results.extend(_write_shard_task(0, items(), str(gen), 0, 0, 0))
        )
        task.start()
        time.sleep(0.3)
        assert not first_read, "the task read its documents while another shard task sorted"
        released = time.monotonic()
    task.join(timeout=30)
    assert first_read and first_read[0] >= released
    ((index, (words, documents, *_rest)),) = results
    assert (index, words, documents) == (0, 38, 1)
