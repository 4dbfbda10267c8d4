"""The shards' suffix arrays against sorting every suffix by hand: every position, and
one in `stride` (blocks of ids ranked first), on ids with heavy repetition, frequent and
rare ids (their codes one to four bytes long)."""

from __future__ import annotations

import numpy as np
import pytest

from index_tools.build.suffix import suffix_array
from index_tools.store.shards import SEPARATOR


def by_hand(ids: np.ndarray, stride: int) -> list[int]:
    places = [p for p in range(0, len(ids), stride) if ids[p] != SEPARATOR]
    return sorted(places, key=lambda p: ids[p:].tolist())


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
            ids = np.minimum(rng.zipf(1.1, n), 30_000_000)
            ids[rng.random(n) < 0.05] = SEPARATOR
            ids = np.concatenate([[SEPARATOR], ids, [SEPARATOR]]).astype(np.uint32)
            width = 2 if stride > 1 else 4
            if stride > 1:
                ids = np.minimum(ids, (1 << 16) - 1).astype(np.uint32)
            assert suffix_array(ids, width, stride).tolist() == by_hand(ids, stride)
