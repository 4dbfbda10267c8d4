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
def test_places_get_the_document_that_holds_them(seed, search_path):
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


@pytest.mark.parametrize("seed", range(4))
def test_each_block_knows_the_document_holding_its_first_word(seed):
    """Documents starting on a block's first word, just before and after it, many in one
    block and none in several: the block table against a search for each first word."""
    rng = np.random.default_rng(seed)
    lengths = rng.choice([0, 1, BLOCK - 2, BLOCK - 1, BLOCK, 3 * BLOCK + 5], 300)
    sh = shard(lengths, np.zeros(1, dtype=np.int64))
    firsts = range(0, sh.size + BLOCK, BLOCK)  # every block's, and one past the words
    starts = sh.starts.tolist()
    assert sh.block_table().tolist() == [bisect_right(starts, p) - 1 for p in firsts]


@pytest.mark.parametrize("width", [2, 3, 4])
def test_runs_extend_alike_by_bytes_and_by_words(monkeypatch, width, search_path):
    """A few places are extended by comparing the words' bytes, many by comparing words:
    the same lengths, to either side, at the ends of the query and of the shard, with query
    words no shard of this width can hold."""
    from index_tools.match import suffix

    rng = np.random.default_rng(width)
    beyond = 1 << (8 * width) if width < 4 else 1 << 30  # no id of this shard
    for _ in range(40):
        alphabet = int(rng.choice([2, 3, 50]))
        ids = rng.integers(1, alphabet + 1, int(rng.integers(50, 400)))
        q = ids[rng.integers(0, len(ids) - 40) :][: int(rng.integers(1, 120))].copy()
        q[rng.random(len(q)) < 0.03] = beyond
        sh = ShardView(
            ids.astype(">u4").view(np.uint8).reshape(-1, 4)[:, 4 - width :].tobytes(),
            memoryview(b"").cast("I"), np.array([0], dtype=np.int64), 0, None, width, 1,
        )  # fmt: skip
        counts = suffix.Counts([sh], q)
        qs = rng.integers(0, len(q) + 1, 8)
        cs = rng.integers(0, len(ids) + 1, 8)
        got = {}
        for few in (0, 8):
            monkeypatch.setattr(suffix, "FEW_PLACES", few)
            right = suffix._equal_right(sh, counts, qs, cs).tolist()
            left = suffix._equal_left(sh, counts, qs, cs).tolist()
            got[few] = (right, left)
        assert got[0] == got[8]
        a, c = int(qs[0]), int(cs[0])  # and by hand
        k = 0
        while a + k < len(q) and c + k < len(ids) and q[a + k] == ids[c + k]:
            k += 1
        assert got[8][0][0] == k


@pytest.mark.parametrize("width", [3, 4])
def test_a_range_of_words_reads_as_its_places_do(width):
    """`word_range` (one slice, the renamed copies' check of a document's words) gives the
    ids `words` gives place by place, ids of one to four bytes."""
    from index_tools.store.shards import id_bytes

    rng = np.random.default_rng(width)
    ids = rng.integers(0, 1 << (8 * width - 1), 500).astype(np.uint32)
    ids[::7] = rng.integers(0, 300, len(ids[::7]))
    raw = id_bytes(ids, width).tobytes()
    sa = memoryview(np.arange(len(ids), dtype=np.uint32).tobytes()).cast("I")
    sh = ShardView(raw, sa, np.array([0], dtype=np.int64), 0, None, width, 1)
    for lo, hi in ((0, 0), (0, 1), (3, 200), (499, 500), (0, 500)):
        got = sh.word_range(lo, hi)
        assert got.dtype == np.int64
        assert got.tolist() == sh.words(np.arange(lo, hi)).tolist() == ids[lo:hi].tolist()
