"""The shards' suffix arrays against sorting every suffix by hand: every position, and
one in `stride` (blocks of ids ranked first), on ids with heavy repetition, frequent and
rare ids (their codes one to four bytes long); written to a file as found, with the top
table's places, and the ids let go before the sort."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from index_tools.build import suffix
from index_tools.build.suffix import JoinedShard, sorted_chunks, suffix_array, write_suffix_array
from index_tools.store.shards import SEPARATOR


def by_hand(ids: np.ndarray, stride: int) -> list[int]:
    places = [p for p in range(0, len(ids), stride) if ids[p] != SEPARATOR]
    return sorted(places, key=lambda p: ids[p:].tolist())


def separated(rng, n: int, a: float, most: int) -> np.ndarray:
    """n ids drawn from a Zipf law (a), at most `most`, one in twenty a separator, with a
    separator before and after them (uint32)."""
    ids = np.minimum(rng.zipf(a, n), most)
    ids[rng.random(n) < 0.05] = SEPARATOR
    return np.concatenate([[SEPARATOR], ids, [SEPARATOR]]).astype(np.uint32)


@pytest.mark.parametrize("stride", [1, 2, 3, 4, 7])
def test_suffix_array_sorts_every_sampled_suffix(stride):
    rng = np.random.default_rng(stride)
    for _ in range(300):
        n = int(rng.integers(1, 120))
        alphabet = int(rng.choice([1, 2, 5, 300, 70_000, 30_000_000]))
        if rng.random() < 0.5:  # few frequent ids, many rare ones: codes of every length
            ids = np.minimum(rng.zipf(1.2, n), alphabet)
        else:
            ids = rng.integers(0, alphabet + 1, n)
        ids = np.concatenate([[SEPARATOR], ids, [SEPARATOR]]).astype(np.uint32)
        width = 2 if alphabet < 1 << 16 else 3 if alphabet < 1 << 24 else 4
        got = suffix_array(ids, width, stride)
        assert got.dtype == np.dtype("<u4")
        assert got.tolist() == by_hand(ids, stride), (ids.tolist(), stride)


@pytest.mark.parametrize("stride", [1, 4])
def test_suffix_array_is_the_same_sorted_a_few_ids_at_a_time(stride, monkeypatch):
    """The code is written and divsufsort's array mapped back in chunks (to bound the
    memory of a large shard): chunks of a few ids, cut anywhere in a code, change nothing."""
    from index_tools.build import suffix

    rng = np.random.default_rng(10 + stride)
    for chunk in (1, 3, 64, 65):
        monkeypatch.setattr(suffix, "_CHUNK", chunk)
        for _ in range(60):
            n = int(rng.integers(1, 400))
            ids = separated(rng, n, 1.1, 30_000_000)
            width = 2 if stride > 1 else 4
            if stride > 1:
                ids = np.minimum(ids, (1 << 16) - 1).astype(np.uint32)
            assert suffix_array(ids, width, stride).tolist() == by_hand(ids, stride)


@pytest.mark.parametrize("stride", [1, 4])
def test_a_suffix_array_written_as_found_is_the_array_and_its_top_places(
    stride, tmp_path, monkeypatch
):
    """Written a chunk at a time (chunks of any size, a top table's step that does not
    divide them): the file holds the array, and the places kept for the top table are
    every step-th of it."""
    rng = np.random.default_rng(30 + stride)
    for chunk in (1, 5, 64, 1 << 20):
        monkeypatch.setattr(suffix, "_CHUNK", chunk)
        for _ in range(20):
            n = int(rng.integers(0, 300))
            ids = separated(rng, n, 1.2, 60_000)
            want = by_hand(ids, stride)
            for step in (1, 3, 7):
                path = tmp_path / "sa"
                places, top = write_suffix_array(path, ids.copy, 2, stride, step)
                assert np.fromfile(path, dtype="<u4").tolist() == want
                assert places == len(want)
                assert top.tolist() == want[::step]
            _, top = write_suffix_array(tmp_path / "sa", ids.copy, 2, stride, 0)
            assert len(top) == 0


@pytest.mark.parametrize("stride", [1, 4])
def test_the_ids_are_let_go_before_they_are_sorted(stride):
    """A shard's sort holds its code and divsufsort's array, not its ids (4 bytes a word):
    handed over, they are freed before the first place is found."""
    ids = np.concatenate([[SEPARATOR], np.arange(1, 5000) % 300 + 1, [SEPARATOR]])
    ids = ids.astype(np.uint32)
    want = by_hand(ids, stride)
    shard = JoinedShard(ids, np.array([1]), None)
    alive = weakref.ref(ids)
    del ids
    chunks = sorted_chunks(shard.take_ids, 2, stride)
    first = next(chunks)
    gc.collect()
    assert alive() is None and shard.ids is None
    assert np.concatenate([first, *chunks]).tolist() == want
    with pytest.raises(ValueError, match="taken already"):
        shard.take_ids()


def test_a_chunk_written_is_let_go_before_the_next_is_found(tmp_path, monkeypatch):
    """Writing holds one chunk at a time, the last one written while the next is found
    (the top table keeps copies of its places, not views that would hold every chunk, and
    with them the whole array)."""
    monkeypatch.setattr(suffix, "_CHUNK", 64)
    rng = np.random.default_rng(4)
    ids = np.concatenate([[SEPARATOR], rng.integers(1, 50, 3000), [SEPARATOR]]).astype(np.uint32)
    found = suffix.sorted_chunks
    alive: list[weakref.ref] = []

    def watched(take, width, stride=1):
        for chunk in found(take, width, stride):
            gc.collect()
            assert not any(ref() is not None for ref in alive[:-1])
            alive.append(weakref.ref(chunk))
            yield chunk
            del chunk

    monkeypatch.setattr(suffix, "sorted_chunks", watched)
    places, top = write_suffix_array(tmp_path / "sa", ids.copy, 2, 1, 5)
    assert len(alive) > 10 and places == len(by_hand(ids, 1))
    assert top.tolist() == by_hand(ids, 1)[::5]


@pytest.mark.parametrize("stride", [1, 2, 4])
def test_two_byte_ids_sort_as_four_byte_ones(stride, tmp_path):
    """The rename-insensitive view's ids are read back from their file as two bytes each
    (`--renamed-stride 1` sorts every one of them): the same array as their uint32."""
    rng = np.random.default_rng(50 + stride)
    for _ in range(40):
        n = int(rng.integers(1, 300))
        ids = separated(rng, n, 1.1, (1 << 16) - 1)
        want = by_hand(ids, stride)
        narrow = ids.astype(np.uint16)
        assert suffix_array(narrow, 2, stride).tolist() == want
        write_suffix_array(tmp_path / "sa", narrow.copy, 2, stride, 0)
        assert np.fromfile(tmp_path / "sa", dtype="<u4").tolist() == want
