"""Winnowing and the guarantee: any common run of t = window + k - 1 words is found."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index_tools import BuildOptions, Document, Origin, build_index, open_index
from index_tools.text.fingerprint import WordHasher, guarantee, kgram_fingerprints, winnow


@settings(max_examples=300, deadline=None)
@given(
    fps=st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 5), min_size=1, max_size=300),
    window=st.integers(1, 60),
)
def test_every_window_keeps_a_fingerprint(fps, window):
    arr = np.array(fps, dtype=np.uint64)
    kept = set(winnow(arr, window).tolist())
    assert kept
    for j in range(max(1, len(arr) - window + 1)):
        win = range(j, min(j + window, len(arr)))
        assert kept & set(win), f"window {j} has no kept fingerprint"
    # only window minima are kept
    for i in kept:
        lo, hi = max(0, i - window + 1), min(i, max(0, len(arr) - window))
        assert any(arr[i] == arr[j : j + window].min() for j in range(lo, hi + 1))


def test_kgrams_depend_on_order_and_content():
    h = WordHasher().hashes(["a", "b", "c", "d", "a", "b", "c"])
    fp = kgram_fingerprints(h, 3)
    assert len(fp) == 5
    assert fp[0] == kgram_fingerprints(WordHasher().hashes(["a", "b", "c"]), 3)[0]
    assert fp[0] != fp[1]
    assert len(kgram_fingerprints(h[:2], 3)) == 0


class _Memory:
    """An in-memory corpus source."""

    def __init__(self, texts):
        self.texts = texts
        self.name = "memory"
        self.skipped = {}

    def describe(self):
        return {"spec": "memory", "name": self.name, "kind": "memory"}

    def documents(self):
        for i, t in enumerate(self.texts):
            yield Document(t, Origin("mem/corpus", f"doc{i}.txt"), "")


VOCAB = ["a", "b", "(", ")", "x", "=", "1", "if", ":", "."]
words_st = st.lists(st.sampled_from(VOCAB), max_size=150)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    before=words_st,
    after=words_st,
    q_before=words_st,
    q_after=words_st,
    seed=st.integers(0, 2**32 - 1),
    k=st.sampled_from([5, 8, 20]),
    window=st.sampled_from([4, 9, 41]),
)
def test_planted_common_run_of_t_words_is_always_found(
    tmp_path_factory, before, after, q_before, q_after, seed, k, window
):
    t = guarantee(k, window)
    rng = np.random.default_rng(seed)
    # the planted run: t words drawn from the same small vocabulary as its surroundings
    planted = [VOCAB[i] for i in rng.integers(0, len(VOCAB), size=t)]
    doc = " ".join(before + planted + after)
    query = " ".join(q_before + planted + q_after)
    out = tmp_path_factory.mktemp("planted") / "idx"
    build_index([_Memory([doc])], out, BuildOptions(k=k, window=window, jobs=1, progress=False))
    with open_index(out) as idx:
        matches = idx.match(query, min_tokens=t)
    lo, hi = len(q_before), len(q_before) + t
    assert any(m.query_start <= lo and m.query_end >= hi for m in matches), (
        f"planted run of {t} words at {lo}..{hi} not found: "
        f"{[(m.query_start, m.query_end) for m in matches]}"
    )


@settings(max_examples=200, deadline=None)
@given(
    entries=st.dictionaries(
        st.integers(0, 2**32 - 1),
        st.tuples(st.integers(1, 40), st.integers(0, 2**31)),
        min_size=1,
        max_size=30,
    ),
    cap=st.integers(1, 8),
)
def test_posting_groups_round_trip(entries, cap):
    """A group stores each key's first `cap` postings and its true count."""
    from index_tools.store import generations as store

    suffixes = np.array(sorted(entries), dtype=np.uint32)
    counts = np.array([entries[s][0] for s in sorted(entries)], dtype=np.int64)
    kept = np.minimum(counts, cap)
    pairs = [
        np.array([[entries[s][1] + j, j] for j in range(k)], dtype="<u4").reshape(-1, 2)
        for s, k in zip(sorted(entries), kept.tolist())
    ]
    value = store.encode_group(suffixes, counts, kept, np.concatenate(pairs))
    for s, c, p in zip(suffixes.tolist(), counts.tolist(), pairs):
        count, got = store.group_lookup(value, s)
        assert count == c
        assert got.tolist() == p.tolist()
    absent = next(x for x in range(2**32) if x not in entries)
    assert store.group_lookup(value, absent) is None
    dec_suffixes, dec_counts, _, _ = store.decode_group(value)
    assert dec_suffixes.tolist() == suffixes.tolist() and dec_counts.tolist() == counts.tolist()


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 2**64 - 1) | st.integers(0, 40), st.integers(0, 9), st.integers(0, 99)
        ),
        min_size=1,
        max_size=300,
    ),
    cap=st.integers(1, 4),
    prefix_bits=st.sampled_from([8, 16, 24]),
)
def test_vectorized_groups_equal_one_by_one_encoding(rows, cap, prefix_bits):
    from index_tools.build.local import _RUN_DTYPE, _by_key, _grouped
    from index_tools.store import generations as store

    rec = np.array(sorted(rows), dtype=_RUN_DTYPE)
    items, _, _ = _grouped(rec, cap, prefix_bits)
    keys, counts, kept, pairs = _by_key(rec, cap)
    prefix, suffix = store.split_keys(keys, prefix_bits)
    expected = []
    ends = np.concatenate(([0], np.cumsum(kept)))
    for p in sorted(set(prefix.tolist())):
        idx = np.flatnonzero(prefix == p)
        a, b = idx[0], idx[-1] + 1
        value = store.encode_group(suffix[a:b], counts[a:b], kept[a:b], pairs[ends[a] : ends[b]])
        expected.append((store.prefix_key(p), value))
    assert items == expected


def test_keys_sharing_a_suffix_are_both_returned():
    from index_tools.store import generations as store

    pairs = np.array([[1, 10], [2, 20], [3, 30], [4, 40]], dtype="<u4")
    value = store.encode_group(
        np.array([5, 5, 7], dtype=np.uint32),
        np.array([1, 9, 1]),
        np.array([1, 2, 1]),
        pairs,
    )
    count, got = store.group_lookup(value, 5)
    assert count == 10 and got.tolist() == [[1, 10], [2, 20], [3, 30]]
    assert store.group_lookup(value, 7)[1].tolist() == [[4, 40]]
    assert store.group_lookup(value, 6) is None
