"""A shard's places mapped to their documents (by blocks of words, then the documents that
start inside a block) against a search by hand, with documents of one word to thousands."""

from __future__ import annotations

from bisect import bisect_right

import numpy as np
import pytest

from index_tools.match.suffix import BLOCK_BITS, ShardView

BLOCK = 1 << BLOCK_BITS


def shard(lengths: np.ndarray, places: np.ndarray) -> ShardView:
    """Documents of these lengths (a separator after each); `places` as its suffix array."""
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
    size = int(starts[-1] + lengths[-1] + 1)
    ids = np.zeros(size, dtype=">u4").tobytes()
    sa = memoryview(places.astype(np.uint32).tobytes()).cast("I")
    return ShardView(ids, sa, starts, 0, None, 4, 1)


@pytest.mark.parametrize("seed", range(8))
def test_places_get_the_document_that_holds_them(seed):
    rng = np.random.default_rng(seed)
    # runs of tiny documents (many starts in one block) between long ones
    parts = [rng.integers(0, 3, int(rng.integers(1, 3 * BLOCK))) for _ in range(4)]
    parts += [rng.integers(BLOCK // 2, 4 * BLOCK, 30)]
    lengths = np.concatenate(parts)
    rng.shuffle(lengths)
    size = int((lengths + 1).sum())
    places = rng.integers(0, size, 6000)
    sh = shard(lengths, places)
    starts = sh.starts.tolist()
    for lo, hi in ((0, 1), (7, 262), (0, 256), (100, 6000)):  # a search each below 256 places
        want = [bisect_right(starts, p) - 1 for p in places[lo:hi].tolist()]  # last start <= p
        assert sh.documents_at(lo, hi).tolist() == want
