"""Maximal common runs between a query and the indexed documents, from suffix arrays.

Each shard holds the word ids of its unique documents back to back (big-endian in 2, 3 or
4 bytes, a separator id 0 before, between and after them) and the suffix array of that
sequence. Every occurrence of a word sequence is one interval of the suffix array: two
binary searches. (The rename-insensitive view's suffix array holds every `stride`-th
position only: see `search`.)

A common run of at least `t` words contains a whole window of `w` words starting at an
anchor, anchors being every `g` query words (g + w = t + 1). Each anchor window is searched
in every shard:

- few places (at most `ENUMERATE`): each place is extended word by word, left and right,
  into its maximal run (found anchors that touch on one diagonal are one run). Every place
  of a span containing such an anchor is in its interval, so the span's documents are
  exactly the runs around it.
- more places (a license header, a repetitive line): the spans whose first anchor it is are
  found from counts alone. With c(s, e) the number of places of the query's words [s, e),
  the places maximal at exactly (s, e) number c(s, e) - c(s, e + 1) - c(s - 1, e)
  + c(s - 1, e + 1); a span's start lies within g words before its first anchor (anywhere
  before the first anchor searched) and its end where c(s, .) drops, both found by
  bisection on counts; once fewer places are left, they are read directly. A span's documents are then the distinct documents of its interval.

Counts are exact by construction; the work grows with the query and with the number of
distinct spans, not with the number of copies (listing a span's documents reads its
interval once).

Dead documents (every file of theirs taken out by `add` of a source's new version: no
occurrences left) stay in the shards and are skipped: an anchor's places are counted
without them (they decide whether it is read place by place), enumerated places in them
are dropped, a span from counts is kept only when a live place is maximal there, and its
documents are the live ones. What a query finds is then what an index built without those
documents finds. A shard knows how many places its dead documents have at most (their
words), so an interval is read to count its live places only when that could matter.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right, insort
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..store.shards import document_words, id_bytes, ids_of_bytes, ranges
from . import kernel

ENUMERATE = 512  # places of an anchor window extended one by one; more: from counts
READ_PLACES = 512  # crowded spans: places read directly once this few are left
MEMO_WORDS = 256  # counts of spans up to this long are memoized by their words too
BLOCK_BITS = 10  # blocks of 1024 words: places' documents found from their block's
# what compiled calls take (a warm 1.5B-word index), to decide when helpers pay (kernel.across)
SEARCH_US = 3.0  # an interval search
PLACE_US = 0.005  # a place's document found and counted
CALL_US = 10.0  # a call
MARK_SHARE = 16  # documents counted in a table of them all from 1/16 as many places on
POPULAR_PLACES = 4096  # spans with this many places: their counts kept from lookup to lookup
POPULAR_KEPT = 2048  # at most this many of them (the oldest let go first)


class PopularCounts:
    """The documents and files of spans with many places (POPULAR_PLACES: a separator
    comment, a license header, code vendored everywhere), by their words, kept from one
    lookup to the next on one index (its exact view): counting them reads every place, and
    the same ones come back in lookup after lookup. An index's files do not change under it,
    so a count kept is the count. Shared by the threads that look up."""

    def __init__(self, most: int = POPULAR_KEPT):
        self.most = most
        self._counts: dict[bytes, tuple[int, int]] = {}
        self._lock = threading.Lock()

    def get(self, words: bytes) -> tuple[int, int] | None:
        return self._counts.get(words)

    def keep(self, words: bytes, documents: int, files: int) -> None:
        with self._lock:
            if words not in self._counts and len(self._counts) >= self.most:
                del self._counts[next(iter(self._counts))]  # (the oldest kept)
            self._counts[words] = (documents, files)

    def __len__(self) -> int:
        return len(self._counts)


def anchors(n: int, t: int, stride: int = 1) -> tuple[list[int], int, int]:
    """Anchor positions, their spacing g and window w. An anchor's windows start at it and
    at the `stride - 1` positions after it, so that one of them is sampled wherever a run
    holds them all (g + w + stride - 1 = t + 1: a run of t words holds an anchor's)."""
    g = max(1, t // 2)
    w = max(1, t + 2 - stride - g)
    return list(range(0, n - w - stride + 2, g)), g, w


class ShardView:
    """What the search reads of one shard: ids, suffix array, document starts, which
    documents are live (None: all of them) and, where known, each document's files (its
    identical copies too: `weights`, the index's occurrences; a crowded span's files are
    then counted with its documents, not summed over their listing)."""

    def __init__(
        self, ids, sa, starts: np.ndarray, first_doc: int, alive, width: int, stride, top=None,
        weights: np.ndarray | None = None,
    ):  # fmt: skip
        self.tok = ids  # buffer of big-endian ids of `width` bytes (bytes or mmap)
        self.width = width
        self.sa = sa  # memoryview of native uint32: positions that are multiples of `stride`
        self.stride = stride
        self.starts = np.ascontiguousarray(starts, dtype=np.int64)  # documents' first words
        self.first_doc = first_doc
        # the ids as numbers (3 bytes: read as bytes, see `words`)
        self.raw = np.frombuffer(ids, dtype={4: ">u4", 3: np.uint8, 2: ">u2"}[width])
        self.size = len(self.raw) // (3 if width == 3 else 1)
        self.alive = alive  # per document of the shard: it has occurrences
        self.weights = weights  # per document of the shard: its files (uint32), or None
        self._blocks: np.ndarray | None = None  # see `documents_at`
        self._bounds: np.ndarray | None = None
        # the same arrays as the compiled kernel reads them (None: no library loaded)
        # and the top table of the suffix array, when the index has one: both searches
        # narrow a search by it, and check it against the suffix array where an answer
        # rests on it (`_narrow`, `_check_edges`)
        self.top = top  # (keys: uint8, step, bytes a key) or None
        self._top_bytes: bytes | None = None  # (the keys as bytes, for the Python search)
        self.native = kernel.NativeShard(ids, sa, width, top) if kernel.available() else None
        self.dead = 0  # places in dead documents: their words
        if alive is not None:
            self.dead = int(document_words(starts, self.size)[~alive].sum())

    def words(self, positions: np.ndarray) -> np.ndarray:
        """The ids at `positions` (a query's ids past the width's range equal none)."""
        if self.width != 3:
            return self.raw[positions]
        b, p = self.raw, positions * 3
        return (b[p].astype(np.uint32) << 16) | (b[p + 1].astype(np.uint32) << 8) | b[p + 2]

    def word_range(self, lo: int, hi: int) -> np.ndarray:
        """The ids at positions [lo, hi) (`words` of a range, read as one slice)."""
        if self.width != 3:
            return self.raw[lo:hi].astype(np.int64)
        return ids_of_bytes(self.raw[3 * lo : 3 * hi], 3).astype(np.int64)

    def live(self, positions: np.ndarray) -> np.ndarray:
        """The positions in live documents."""
        if self.alive is None:
            return positions
        return positions[self.alive[self.documents(positions)]]

    def release(self) -> None:
        """Let go of the maps (before they are closed)."""
        self.raw = None
        if self.native is not None:
            self.native.release()
            self.native = None
        self.sa.release()

    def compiled(self):
        """The kernel this shard's searches call now, None for the Python search."""
        return kernel.active() if self.native is not None else None

    def interval(self, pattern: bytes, lo: int, hi: int, known: int = 0) -> tuple[int, int]:
        """The suffixes in [lo, hi) that start with `pattern` (big-endian ids), all of
        which start with its first `known` words: only the words after them are read."""
        n = len(pattern)
        tok, width = self.tok, self.width
        skip = known * width
        k = self.compiled()
        if k is not None:
            return kernel.interval(k, self.native, pattern, skip, lo, hi)
        a0, b0 = self._narrow(pattern, lo, hi)
        size = self.size

        def key(p):
            if p >= size:
                raise kernel.damaged("suffix array")
            return tok[p * width + skip : p * width + n]

        rest = pattern[skip:]
        a = bisect_left(self.sa, rest, a0, b0, key=key)
        out = (a, a)
        if a < b0:
            first = key(self.sa[a])
            if first < rest:  # the first entry not less than the pattern is less
                raise kernel.damaged("suffix array")
            if first == rest:
                # galloping: most patterns have few places, found in a few probes past the first
                known, step = a, 1
                while known + step < b0:
                    here = key(self.sa[known + step])
                    if here < rest:  # an entry past one equal to the pattern is less
                        raise kernel.damaged("suffix array")
                    if here != rest:
                        break
                    known += step
                    step *= 2
                end = bisect_right(self.sa, rest, known + 1, min(known + step, b0), key=key)
                out = (a, end)
        self._check_edges(key, rest, lo, hi, a0, b0, out)
        return out

    def _narrow(self, pattern: bytes, a: int, b: int) -> tuple[int, int]:
        """[a, b) narrowed to where the suffixes starting with `pattern` can lie, by the top
        table when there is one and the range is wide (kernel.c `narrow`: the same steps)."""
        if self.top is None:
            return a, b
        if self._top_bytes is None:  # (the first search in Python: a copy of the table)
            self._top_bytes = self.top[0].tobytes() if self.top[2] else b""
        keys, step, nbytes = self._top_bytes, self.top[1], self.top[2]
        entries = len(keys) // nbytes if nbytes else 0
        m = len(pattern)
        if not (entries and step and m and b - a > 4 * step):
            return a, b
        k = min(m, nbytes)
        prefix = pattern[:k]

        def key(j: int) -> bytes:
            return keys[j * nbytes : j * nbytes + k]

        # the first key >= the prefix; the first > it, galloping from there
        first = past = bisect_left(range(entries), prefix, key=key)
        if first < entries and key(first) == prefix:
            known, gallop = first, 1
            while known + gallop < entries and key(known + gallop) == prefix:
                known += gallop
                gallop *= 2
            end = min(known + gallop, entries)
            past = bisect_right(range(entries), prefix, known + 1, end, key=key)
        lo = (first - 1) * step + 1 if first else 0
        hi = past * step if past < entries else len(self.sa)
        a, b = max(a, lo), min(b, hi)
        return min(a, b), b

    def _check_edges(self, key, rest: bytes, lo, hi, a0, b0, out) -> None:
        """kernel.c `check_edges`: an interval at an edge of the range the top table
        narrowed [lo, hi) to is bounded there only if the entry past the edge is less
        (before) or greater (after) than the pattern; the damaged error if not."""
        if out[0] == a0 and a0 > lo and key(self.sa[a0 - 1]) >= rest:
            raise kernel.damaged("suffix array")
        if out[1] == b0 and b0 < hi and key(self.sa[b0]) <= rest:
            raise kernel.damaged("suffix array")

    def places(self, lo: int, hi: int) -> np.ndarray:
        """Entries [lo, hi) of the suffix array, as they are stored (uint32, no copy)."""
        return np.frombuffer(self.sa, dtype=np.uint32, count=hi - lo, offset=lo * 4)

    def positions(self, lo: int, hi: int) -> np.ndarray:
        out = self.places(lo, hi).astype(np.int64)
        if len(out) and np.maximum.reduce(out) >= self.size:  # (no Python wrapper: hot)
            raise kernel.damaged("suffix array")  # (the kernel's reads check the same)
        return out

    def documents(self, positions: np.ndarray) -> np.ndarray:
        """Index (in this shard) of the document holding each position."""
        return np.searchsorted(self.starts, positions, side="right") - 1

    def block_table(self) -> np.ndarray:
        """The document holding the first word of each block of 2**BLOCK_BITS words (-1:
        the separator before the first document), made once."""
        if self._blocks is None:
            self._bounds = np.append(self.starts, self.size + 1).astype(np.uint32)
            step = 1 << BLOCK_BITS
            count = ((self.size + step - 1) >> BLOCK_BITS) + 1  # blocks (one past the words too)
            # the documents starting at or before each block's first word, less one: each
            # start counted at the first block whose first word is at or after it (a search
            # for every block's first word took 5-10 ms a shard of 270M words, in a lookup)
            first = (self.starts + step - 1) >> BLOCK_BITS
            before = np.cumsum(np.bincount(first, minlength=count)[:count])
            self._blocks = (before - 1).astype(np.int32)
        return self._blocks

    def documents_at(self, lo: int, hi: int) -> np.ndarray:
        """`documents` of the places [lo, hi) of the suffix array (int32): each one's
        document of its block of 2**BLOCK_BITS words' first word, then of the few that start
        in the block before it (a binary search for each place costs four times as much:
        its cache misses)."""
        k = self.compiled()
        if hi - lo < 256 and k is None:
            return self.documents(self.positions(lo, hi)).astype(np.int32)
        blocks = self.block_table()
        if k is not None:
            return kernel.documents(k, self.native, self.starts, blocks, BLOCK_BITS, lo, hi)
        places = self.places(lo, hi)
        docs = blocks[places >> BLOCK_BITS]
        for _ in range(3):
            later = self._bounds[docs + 1] <= places
            if not later.any():
                return docs
            docs += later
        rest = np.flatnonzero(self._bounds[docs + 1] <= places)
        docs[rest] = np.searchsorted(self.starts, places[rest], side="right") - 1
        return docs


@dataclass(slots=True)
class Crowded:
    """A span found from counts: its places per shard; its distinct documents counted
    when first asked (`documents`: a span that can be reported) and listed only when asked
    (`listing`: a reported span)."""

    start: int
    end: int
    _counts: Counts
    _documents: int | None = None
    _listing: np.ndarray | None = None

    @property
    def places(self) -> int:
        """Its places in all documents, dead ones too (at least its live documents)."""
        self._counts.fill_crowded(self.start)
        return self._counts.get(self.start, self.end)[0]

    @property
    def documents(self) -> int:
        if self._documents is None:
            self._documents = self._counts.distinct(self.start, self.end)
        return self._documents

    @property
    def files(self) -> int | None:
        """Its live documents' files (their identical copies too), counted with them; None
        where the shards do not know their documents' files."""
        return self._counts.files(self.start, self.end)

    def fewer_places_than(self, most: float) -> bool:
        """`places < most`, without searching its start's spans when a span searched inside
        it has fewer (`Counts.places_at_most`)."""
        if (
            self.start not in self._counts.filled
            and (self.start, self.end) not in self._counts.memo
        ):
            bound = self._counts.places_at_most(self.start, self.end)
            if bound is not None and bound < most:
                return True
        return self.places < most

    def fewer_documents_than(self, most: float) -> bool:
        """`documents < most`, without counting them when a span counted inside it has
        fewer (`Counts.documents_at_most`)."""
        if self._documents is None:
            bound = self._counts.documents_at_most(self.start, self.end)
            if bound is not None and bound < most:
                return True
        return self.documents < most

    def listing(self) -> np.ndarray:
        """Its live documents' ids, ascending."""
        if self._listing is None:
            docs = []
            for i, (lo, hi) in enumerate(self._counts.get(self.start, self.end)[1]):
                if hi > lo:
                    held = self._counts.held(i, lo, hi)
                    docs.append(held + self._counts.shards[i].first_doc)
            self._listing = np.concatenate(docs) if docs else np.empty(0, dtype=np.int64)
        return self._listing

    def places_in(self, doc_ids: np.ndarray) -> np.ndarray:
        """The word position of `start` in each of these documents (of its listing): at
        the document's first place in the suffix array's order."""
        out = np.zeros(len(doc_ids), dtype=np.int64)
        for i, (lo, hi) in enumerate(self._counts.get(self.start, self.end)[1]):
            sh = self._counts.shards[i]
            want = np.flatnonzero(
                (doc_ids >= sh.first_doc) & (doc_ids < sh.first_doc + len(sh.starts))
            )
            if hi <= lo or not len(want):
                continue
            docs = self._counts.documents(i, lo, hi)
            k = sh.compiled()
            if k is not None:
                held = doc_ids[want] - sh.first_doc
                first = kernel.first_places(k, docs, len(sh.starts), held)
                if len(first) and np.minimum.reduce(first) < 0:
                    raise ValueError("a document not in the span's listing")
                out[want] = sh.places(lo, hi)[first].astype(np.int64) - sh.starts[held]
                continue
            at = np.flatnonzero(np.isin(docs, doc_ids[want] - sh.first_doc))
            held, first = np.unique(docs[at], return_index=True)  # each one's first place
            pos = sh.places(lo, hi)[at[first]].astype(np.int64) - sh.starts[held]
            out[want] = pos[np.searchsorted(held, doc_ids[want] - sh.first_doc)]
        return out


def _key(starts: np.ndarray, ends: np.ndarray, n: int) -> np.ndarray:
    """One number for each span (start, end) of a query of `n` words."""
    return starts * (n + 1) + ends


class EndsByStart:
    """The ends of the crowded spans of each start (`get(start)`: a list, ascending, or
    `default`), read from the spans' arrays when a start is first asked for."""

    def __init__(self, starts: np.ndarray, ends: np.ndarray):
        order = np.lexsort((ends, starts))
        self._starts, self._ends = starts[order], ends[order]  # (each span once: `of`)
        new = np.ones(len(order), dtype=bool)  # where a start's ends begin
        new[1:] = self._starts[1:] != self._starts[:-1]
        at = np.flatnonzero(new)
        self._at = np.append(at, len(new))
        self._bounds = self._at.tolist()
        self._group = dict(zip(self._starts[new].tolist(), range(len(at))))
        self._lists: dict[int, list[int]] = {}

    def __contains__(self, start: int) -> bool:
        return start in self._group

    def get(self, start: int, default=None):
        made = self._lists.get(start)
        if made is None:
            g = self._group.get(start)
            if g is None:
                return default
            made = self._lists[start] = self._ends[self._bounds[g] : self._bounds[g + 1]].tolist()
        return made

    def spans_of(self, starts: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The spans of these starts (each one that has any), as arrays of starts and ends:
        one start's together, its ends ascending."""
        g = np.fromiter(map(self._group.__getitem__, starts), dtype=np.int64, count=len(starts))
        at = ranges(self._at[g], self._at[g + 1] - self._at[g])
        return self._starts[at], self._ends[at]


_NO_SPANS = np.empty(0, dtype=np.int64)
_NO_ENDS = EndsByStart(_NO_SPANS, _NO_SPANS)


class CrowdedSpans:
    """The spans a search found from counts, in the order found: their starts and ends as
    arrays, each one's `Crowded` made when first read (a quote of vendored code has
    hundreds of them, of which a lookup reads few)."""

    __slots__ = ("counts", "starts", "ends", "_made", "later")

    def __init__(self, counts: Counts, starts: np.ndarray, ends: np.ndarray):
        self.counts = counts
        self.starts, self.ends = starts, ends  # int64
        self._made: list[Crowded | None] = [None] * len(starts)
        self.later = 0  # crowded anchors inside runs' spans, not searched (`search`)

    @classmethod
    def of(
        cls, counts: Counts, found: list[np.ndarray], t: int, tail: int, known: np.ndarray
    ) -> CrowdedSpans:
        """The spans of `found` (rows (start, end), per anchor) of at least `t` words ending
        past `tail`, but for the `known` ones (the runs' spans, as `_key`s). (Each span is
        found once: the anchors' starts, within g words before each, do not overlap.)"""
        found = [f for f in found if len(f)]
        if not found:  # (most lookups: no crowded anchor)
            return cls(counts, _NO_SPANS, _NO_SPANS)
        rows = np.concatenate(found) if len(found) > 1 else found[0]
        s, e = rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64)
        key = _key(s, e, counts.n)
        keep = (e - s >= t) & (e > tail)
        if len(known) and len(key):
            known = np.sort(known)
            keep &= known[np.minimum(known.searchsorted(key), len(known) - 1)] != key
        return cls(counts, s[keep], e[keep])

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, k: int) -> Crowded:
        made = self._made[k]
        if made is None:
            made = self._made[k] = Crowded(int(self.starts[k]), int(self.ends[k]), self.counts)
        return made

    def __iter__(self):
        return (self[k] for k in range(len(self)))


class Counts:
    """Memoized places c(s, e) of the query's words [s, e), over all shards."""

    def __init__(
        self, shards: list[ShardView], q: np.ndarray, popular: PopularCounts | None = None
    ):
        self.shards = shards
        self.n = len(q)
        self.q = q.astype(np.uint32)  # compared with `ShardView.words`
        self.qb = {w: id_bytes(q, w).tobytes() for w in {sh.width for sh in shards}}
        self.memo: dict[tuple[int, int], tuple[int, Sequence[tuple[int, int]]]] = {}
        # the same words at other places of the query (periodic text: a line of `#`) have
        # the same intervals: memoized by content too
        self.by_words: dict[bytes, tuple[int, Sequence[tuple[int, int]]]] = {}
        # spans memoized (`_remember`) not yet by their words: (spans, their memo entries)
        self.words_due: list[tuple[list[tuple[int, int]], list]] = []
        self.q_bytes = self.q.tobytes()  # 4 bytes an id: the memo's keys
        self.ends: dict[int, list[int]] = {}  # start -> the ends memoized with it, ascending
        self.listed: list[list[tuple[int, int, np.ndarray]]] = [[] for _ in shards]
        self.has_dead = any(sh.alive is not None for sh in shards)
        self.read_live: list[list[tuple[int, int, np.ndarray]]] = [[] for _ in shards]
        self.crowded_ends = _NO_ENDS  # start -> the ends of its spans from counts (`search`)
        self.filled: set[int] = set()  # starts whose crowded spans were searched at once
        self.counted: dict[tuple[int, int], int] = {}  # (start, end) -> distinct documents
        self.weighted = bool(shards) and all(sh.weights is not None for sh in shards)
        self.counted_files: dict[tuple[int, int], int] = {}  # (start, end) -> their files
        self.popular = popular if self.weighted else None  # counts kept from lookup to lookup
        self.counted_ends: dict[int, list[int]] = {}  # start -> its counted ends, ascending
        # each shard's crowded spans as the compiled search found them, with their intervals
        # there (`kernel.crowded_spans`' rows), for `fill_crowded`
        self.found_rows: list[np.ndarray] = []
        self._found_keys: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None

    def known_documents(self, i: int, lo: int, hi: int) -> np.ndarray | None:
        """`documents` when read before (for an interval around this one), else None."""
        for a, b, docs in self.listed[i]:
            if a <= lo and hi <= b:
                return docs[lo - a : hi - a]
        return None

    def documents(self, i: int, lo: int, hi: int) -> np.ndarray:
        """The document (index in shard i) of each place [lo, hi) of its suffix array, in
        its order. Read once for an interval, then sliced for the intervals inside it."""
        docs = self.known_documents(i, lo, hi)
        if docs is not None:
            return docs
        docs = self.shards[i].documents_at(lo, hi)
        self.listed[i].append((lo, hi, docs))
        return docs

    def held(self, i: int, lo: int, hi: int) -> np.ndarray:
        """The live documents (indexes in shard i) holding places [lo, hi), ascending: few
        places sorted, more marked in a table of the shard's documents."""
        sh = self.shards[i]
        docs = self.documents(i, lo, hi)
        if MARK_SHARE * len(docs) < len(sh.starts):
            docs = _sorted_distinct(docs.astype(np.int64))
            return docs if sh.alive is None else docs[sh.alive[docs]]
        mark = np.zeros(len(sh.starts), dtype=bool)
        mark[docs] = True
        return np.flatnonzero(mark if sh.alive is None else mark & sh.alive)

    def distinct(self, s: int, e: int) -> int:
        """Distinct live documents holding the query's words [s, e) (and their files,
        `files`, where the shards know each document's).

        The places of the crowded spans of one start nest (a longer span's are among a
        shorter one's): the documents of all of them up to 8 times its places are counted
        at once, from the places of the shortest (`_distinct_compiled`, `_distinct_python`).
        Those of POPULAR_PLACES places or more are kept on the index (`popular`) and read
        back by the next lookups that ask."""
        hit = self.counted.get((s, e))
        if hit is not None:
            return hit
        popular = self.popular if e - s <= MEMO_WORDS else None  # (keys of bounded size)
        if popular is not None:
            kept = popular.get(self.q_bytes[s * 4 : e * 4])
            if kept is not None:
                insort(self.counted_ends.setdefault(s, []), e)
                self.counted[(s, e)], self.counted_files[(s, e)] = kept
                return kept[0]
        self.fill_crowded(s)
        most = 8 * self.get(s, e)[0]
        ends = [e] + [x for x in self.crowded_ends.get(s, ()) if x > e or self.get(s, x)[0] <= most]
        ends = sorted(set(ends))  # the widest interval first
        levels = [[self.get(s, x)[1][i] for x in ends] for i in range(len(self.shards))]
        todo = [i for i, ivs in enumerate(levels) if ivs[0][1] > ivs[0][0]]
        compiled = all(self.shards[i].compiled() is not None for i in todo)
        held, files = (self._distinct_compiled if compiled else self._distinct_python)(levels, todo)
        known = self.counted_ends.setdefault(s, [])
        for x, n in zip(ends, held.tolist()):
            if (s, x) not in self.counted:
                insort(known, x)
            self.counted[(s, x)] = n
        if files is not None:
            self.counted_files.update(((s, x), f) for x, f in zip(ends, files.tolist()))
        if popular is not None:
            for x in ends:
                if x - s <= MEMO_WORDS and self.get(s, x)[0] >= POPULAR_PLACES:
                    n, f = self.counted[(s, x)], self.counted_files[(s, x)]
                    popular.keep(self.q_bytes[s * 4 : x * 4], n, f)
        return self.counted[(s, e)]

    def files(self, s: int, e: int) -> int | None:
        """Files holding the query's words [s, e): its live documents and their identical
        copies, counted with them (`distinct`); None where the shards' weights are not
        known."""
        if not self.weighted:
            return None
        self.distinct(s, e)
        return self.counted_files[(s, e)]

    def places_at_most(self, s: int, e: int) -> int | None:
        """A bound on the places of [s, e) from the crowded spans searched so far (a place of
        [s, e) holds every span inside it: no more places than the least of them, of one
        start the longest inside); None when none is."""
        return _least_inside(s, e, self.filled, self.ends, lambda a, b: self.memo[(a, b)][0])

    def documents_at_most(self, s: int, e: int) -> int | None:
        """A bound on `distinct(s, e)` from the spans counted so far: a document holding
        [s, e) holds every span inside it, so it has no more documents than the least of
        them (of one start, the longest inside); None when none is counted."""
        return _least_inside(
            s, e, self.counted_ends, self.counted_ends, lambda a, b: self.counted[(a, b)]
        )

    def _distinct_python(self, levels: list[list[tuple[int, int]]], todo: list[int]):
        """`distinct`'s counts in Python, shard by shard (levels[i]: shard i's intervals,
        widest first): many places (at least 1/MARK_SHARE of the shard's documents) by
        marking a table of documents from the innermost interval out, counting the marks
        after each; fewer by sorting them by document and depth (the number of the
        intervals that hold a place), each document counted at its deepest."""
        k = len(levels[0]) + 1
        held = np.zeros(k, dtype=np.int64)  # held[j]: documents of the interval j - 1
        files = np.zeros(k, dtype=np.int64) if self.weighted else None  # and their files
        for i in todo:
            sh, ivs = self.shards[i], levels[i]
            lo0, hi0 = ivs[0]
            docs = self.documents(i, lo0, hi0)
            weights = sh.weights if files is not None else None
            if MARK_SHARE * len(docs) >= len(sh.starts):  # many places: marked, inside out
                mark = np.zeros(len(sh.starts), dtype=bool) if sh.alive is None else ~sh.alive
                dead = int(np.count_nonzero(mark))  # (dead documents marked from the start)
                dead_files = int(weights[mark].sum(dtype=np.int64)) if weights is not None else 0
                inner = None
                for j in range(len(ivs) - 1, -1, -1):
                    lo, hi = ivs[j][0] - lo0, ivs[j][1] - lo0
                    if hi <= lo:
                        continue
                    if inner is None:
                        mark[docs[lo:hi]] = True
                    else:
                        mark[docs[lo : inner[0]]] = True
                        mark[docs[inner[1] : hi]] = True
                    inner = (lo, hi)
                    held[j + 1] += int(np.count_nonzero(mark)) - dead
                    if weights is not None:
                        files[j + 1] += int(weights[mark].sum(dtype=np.int64)) - dead_files
                continue
            # few: each place's depth, the places sorted by document, then depth
            step = np.zeros(hi0 - lo0 + 1, dtype=np.int32)
            for lo, hi in ivs:
                if hi > lo:
                    step[lo - lo0] += 1
                    step[hi - lo0] -= 1
            depth = np.cumsum(step[:-1], dtype=np.int32)
            if sh.alive is not None:
                live = sh.alive[docs]
                docs, depth = docs[live], depth[live]
            key = np.sort(docs.astype(np.int64) * k + depth)
            last = np.ones(len(key), dtype=bool)
            last[:-1] = key[1:] // k != key[:-1] // k
            held += np.cumsum(np.bincount(key[last] % k, minlength=k)[::-1])[::-1]
            if weights is not None:  # (the live documents' only, as counted above)
                by_depth = np.zeros(k, dtype=np.int64)
                np.add.at(by_depth, key[last] % k, weights[key[last] // k].astype(np.int64))
                files += np.cumsum(by_depth[::-1])[::-1]
        return held[1:], files[1:] if files is not None else None

    def _distinct_compiled(self, levels: list[list[tuple[int, int]]], todo: list[int]):
        """`distinct`'s counts by the compiled search, the shards `todo` at once: each
        place once, from the innermost interval out (levels[i]: shard i's, widest first)."""

        def count(i: int) -> tuple[np.ndarray, np.ndarray, bool]:
            sh, (lo0, hi0) = self.shards[i], levels[i][0]
            docs = self.known_documents(i, lo0, hi0)
            new = docs is None
            if new:
                docs = sh.documents_at(lo0, hi0)
            k, weights = sh.compiled(), sh.weights if self.weighted else None
            found = kernel.distinct(k, docs, len(sh.starts), sh.alive, levels[i], weights)
            return docs, found, new

        each = [levels[i][0][1] - levels[i][0][0] for i in todo]  # (places: the work)
        cost = CALL_US * len(todo) + PLACE_US * sum(each)
        held = np.zeros(len(levels[0]), dtype=np.int64)
        files = np.zeros(len(levels[0]), dtype=np.int64) if self.weighted else None
        for i, (docs, (found, weighed), new) in zip(
            todo, kernel.across(count, todo, cost, sizes=each)
        ):
            if new:  # (kept for the listing of the intervals inside it, in this thread)
                self.listed[i].append((*levels[i][0], docs))
            held += found
            if files is not None:
                files += weighed
        return held, files

    def dead_at_most(self, ivs: list[tuple[int, int]]) -> int:
        """At most this many of the places of intervals `ivs` are in dead documents."""
        return sum(min(self.shards[i].dead, hi - lo) for i, (lo, hi) in enumerate(ivs))

    def live(self, s: int, e: int) -> int:
        """Places of the query's words [s, e) in live documents."""
        total = 0
        for i, (lo, hi) in enumerate(self.get(s, e)[1]):
            if hi <= lo:
                continue
            if self.shards[i].alive is None:
                total += hi - lo
                continue
            for a, b, before in self.read_live[i]:  # read once, sliced for intervals inside
                if a <= lo and hi <= b:
                    total += int(before[hi - a] - before[lo - a])
                    break
            else:
                alive = self.shards[i].alive[self.documents(i, lo, hi)]
                before = np.zeros(hi - lo + 1, dtype=np.int64)
                np.cumsum(alive, out=before[1:])
                self.read_live[i].append((lo, hi, before))
                total += int(before[-1])
        return total

    def live_maximal(self, s: int, e: int, maximal: int) -> bool:
        """Whether a place of a live document holds [s, e) maximal, given that `maximal`
        places do (extending neither left nor right: the live ones are counted the same
        way, c(s, e) - c(s, e + 1) - c(s - 1, e) + c(s - 1, e + 1))."""
        if not self.has_dead or maximal > self.dead_at_most(self.get(s, e)[1]):
            return maximal > 0
        live = self.live
        return live(s, e) - live(s, e + 1) - live(s - 1, e) + live(s - 1, e + 1) > 0

    def get(self, s: int, e: int) -> tuple[int, Sequence[tuple[int, int]]]:
        """Places of the query's words [s, e) and their interval in each shard, searched
        within those of the longest [s, e') known, e' < e, whose words are then not
        compared again: a long span costs what its new words do."""
        hit = self.memo.get((s, e))  # (first: most counts are asked more than once)
        if hit is not None:
            return hit
        if s < 0 or e > self.n:
            return 0, []
        ends = self.ends.setdefault(s, [])
        j = bisect_left(ends, e)
        # (a short span's words: a longer key would cost what the search saves)
        content = self.q_bytes[s * 4 : e * 4] if e - s <= MEMO_WORDS else None
        if content is not None and self.words_due:
            self._memo_words()
        hit = self.by_words.get(content) if content is not None else None
        if hit is not None:
            self.memo[(s, e)] = hit
            ends.insert(j, e)
            return hit
        known, within = 0, None
        if j:
            known = ends[j - 1] - s
            within = self.memo[(s, ends[j - 1])][1]
        ivs, total = [], 0
        for i, sh in enumerate(self.shards):
            lo, hi = within[i] if within else (0, len(sh.sa))
            pattern = self.qb[sh.width][s * sh.width : e * sh.width]
            a, b = sh.interval(pattern, lo, hi, known) if lo < hi else (lo, lo)
            ivs.append((a, b))
            total += b - a
        self.memo[(s, e)] = (total, ivs)
        if content is not None:
            self.by_words[content] = (total, ivs)
        ends.insert(j, e)
        return total, ivs

    def prefill(self, starts: list[int], w: int) -> None:
        """The windows [s, s + w) of these starts searched together, one call of the
        compiled search per shard (its probes interleaved), so that `get` finds them
        memoized; nothing on the Python search (`get` searches each then)."""
        ks = [sh.compiled() for sh in self.shards]
        if None in ks:
            return
        todo = [s for s in starts if s >= 0 and s + w <= self.n and (s, s + w) not in self.memo]
        if not todo:
            return
        at = np.array(todo, dtype=np.uint64)
        found = kernel.across(
            lambda ksh: kernel.intervals(
                ksh[0], ksh[1].native, self.qb[ksh[1].width], at * ksh[1].width, w * ksh[1].width
            ),
            zip(ks, self.shards),
            SEARCH_US * len(todo) * len(ks),
        )
        self._remember([(s, s + w) for s in todo], found)

    def _found_intervals(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """`found_rows` as each shard's searched spans' `_key`s (ascending) and intervals,
        read once (when a region's spans are first filled)."""
        if self._found_keys is None:
            self._found_keys = []
            for rows in self.found_rows:
                rows = rows[rows[:, 3] != np.uint64(kernel.UNKNOWN_INTERVAL)]
                key = _key(rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), self.n)
                order = np.argsort(key, kind="stable")
                self._found_keys.append((key[order], rows[order, 3], rows[order, 4]))
        return self._found_keys

    def fill_crowded(self, *starts: int) -> None:
        """The intervals of the crowded spans of these starts (all asked for when one's
        documents are counted; a region's parts ask for most starts') memoized, so that
        `get` finds them: those the search found in a shard as it found the spans
        (`found_rows`), the others searched at once, one call of the compiled search per
        shard (the shards at once; each end within the one before); nothing on the Python
        search (`get` searches each then)."""
        crowded = self.crowded_ends
        if len(starts) == 1:  # (most asks: a start whose spans are memoized already)
            new = [] if starts[0] in self.filled or starts[0] not in crowded else [*starts]
        else:
            new = [s for s in dict.fromkeys(starts) if s not in self.filled and s in crowded]
        if not new:
            return
        self.filled.update(new)
        ks = [sh.compiled() for sh in self.shards]
        if None in ks:
            return
        n = self.n
        ss, es = crowded.spans_of(new)  # (each start's ends ascending: each searched within
        # the one before), less those memoized already: a start's memoized ends are `ends`'
        memoized = [(s, e) for s in new for e in self.ends.get(s, ())]
        key = _key(ss, es, n)
        todo = (ss < es) & (es <= n)
        if memoized:
            done = np.array(memoized, dtype=np.int64)
            done = np.sort(_key(done[:, 0], done[:, 1], n))
            todo &= done[np.minimum(done.searchsorted(key), len(done) - 1)] != key
        if not todo.all():
            ss, es, key = ss[todo], es[todo], key[todo]
        if not len(ss):
            return
        ss, es = ss.astype(np.uint64), es.astype(np.uint64)
        found, missing = [], []
        known = self._found_intervals()
        for i in range(len(self.shards)):
            ivs = np.empty((len(ss), 2), dtype=np.uint64)
            hit = np.zeros(len(ss), dtype=bool)
            kept = known[i] if known else None  # (none: the Python search found the spans)
            if kept is not None and len(kept[0]):
                at = np.minimum(kept[0].searchsorted(key), len(kept[0]) - 1)
                hit = kept[0][at] == key
                ivs[hit, 0], ivs[hit, 1] = kept[1][at[hit]], kept[2][at[hit]]
            found.append(ivs)
            missing.append(np.flatnonzero(~hit))

        def search(i: int) -> None:  # (a start's missing ends still ascending)
            sh, miss = self.shards[i], missing[i]
            found[i][miss] = kernel.spans(
                ks[i], sh.native, self.qb[sh.width], n, ss[miss], es[miss]
            )

        todo_shards = [i for i, miss in enumerate(missing) if len(miss)]
        cost = SEARCH_US * sum(len(missing[i]) for i in todo_shards)
        kernel.across(search, todo_shards, cost, sizes=[len(missing[i]) for i in todo_shards])
        self._remember(list(zip(ss.tolist(), es.tolist())), found)

    def _remember(self, spans: list[tuple[int, int]], found: list[np.ndarray]) -> None:
        """Memoize the intervals the compiled search found for these spans: `found` holds
        each shard's, a row (start, end) per span. Their words are memoized when `get`
        first asks for a span not memoized (`_memo_words`): most lookups never do."""
        if not found:  # (no shards)
            return
        widths = found[0][:, 1] - found[0][:, 0]  # (uint64: an interval's end is past its start)
        for f in found[1:]:
            widths = widths + (f[:, 1] - f[:, 0])
        # (total, each shard's interval) a span, made by zips, not a loop: hundreds a lookup
        hits = list(zip(widths.tolist(), zip(*(map(tuple, f.tolist()) for f in found))))
        self.memo.update(zip(spans, hits))
        self.words_due.append((spans, hits))
        ends, start, known = self.ends, None, []
        for s, e in spans:  # (the spans of one start come together, their ends ascending)
            if s != start:
                start, known = s, ends.setdefault(s, [])
            if not known or known[-1] < e:
                known.append(e)
            else:
                insort(known, e)

    def _memo_words(self) -> None:
        """The spans `_remember` memoized, by their words too, in the order remembered."""
        by_words, q_bytes = self.by_words, self.q_bytes
        for spans, hits in self.words_due:
            for (s, e), hit in zip(spans, hits):
                if e - s <= MEMO_WORDS:
                    by_words.setdefault(q_bytes[s * 4 : e * 4], hit)
        self.words_due.clear()


FEW_PLACES = 8  # up to this many places are extended one at a time, by their bytes


def _equal_right(sh: ShardView, counts: Counts, qs: np.ndarray, cs: np.ndarray) -> np.ndarray:
    """How many words are equal from query position qs and corpus position cs on."""
    n, size = counts.n, sh.size
    k = sh.compiled()
    if k is not None:
        return kernel.extend(k, sh.native, counts.qb[sh.width], n, qs, cs, 1)
    if len(qs) <= FEW_PLACES:  # a quote's own documents: bisection on equal byte slices
        return _equal_bytes(sh, counts, qs, cs, 1)
    q = counts.q
    out = np.zeros(len(qs), dtype=np.int64)
    active = np.arange(len(qs))
    step = 32
    while len(active):
        qi = (qs[active] + out[active])[:, None] + np.arange(step)
        ci = (cs[active] + out[active])[:, None] + np.arange(step)
        eq = (qi < n) & (ci < size)
        eq &= q[np.minimum(qi, n - 1)] == sh.words(np.minimum(ci, size - 1))
        stop = ~eq
        has = stop.any(axis=1)
        out[active] += np.where(has, stop.argmax(axis=1), step)
        active = active[~has]
        step *= 4
    return out


def _equal_left(sh: ShardView, counts: Counts, qe: np.ndarray, ce: np.ndarray) -> np.ndarray:
    """How many words are equal before query position qe and corpus position ce."""
    k = sh.compiled()
    if k is not None:
        return kernel.extend(k, sh.native, counts.qb[sh.width], counts.n, qe, ce, -1)
    if len(qe) <= FEW_PLACES:
        return _equal_bytes(sh, counts, qe, ce, -1)
    q = counts.q
    out = np.zeros(len(qe), dtype=np.int64)
    active = np.arange(len(qe))
    step = 32
    while len(active):
        qi = (qe[active] - out[active] - 1)[:, None] - np.arange(step)
        ci = (ce[active] - out[active] - 1)[:, None] - np.arange(step)
        eq = (qi >= 0) & (ci >= 0) & (q[np.maximum(qi, 0)] == sh.words(np.maximum(ci, 0)))
        stop = ~eq
        has = stop.any(axis=1)
        out[active] += np.where(has, stop.argmax(axis=1), step)
        active = active[~has]
        step *= 4
    return out


def _equal_bytes(sh: ShardView, counts: Counts, qs: np.ndarray, cs: np.ndarray, way: int):
    """`_equal_right` (way 1) or `_equal_left` (way -1) one place at a time: the largest k
    whose k words' bytes are equal, by bisection (words equal over k words are over
    fewer)."""
    qb, tok, w = counts.qb[sh.width], sh.tok, sh.width
    out = []
    for a, c in zip(qs.tolist(), cs.tolist()):
        lo, hi = 0, min(counts.n - a, sh.size - c) if way > 0 else min(a, c)
        while lo < hi:
            k = (lo + hi + 1) // 2
            if way > 0:
                equal = qb[a * w : (a + k) * w] == tok[c * w : (c + k) * w]
            else:
                equal = qb[(a - k) * w : a * w] == tok[(c - k) * w : c * w]
            lo, hi = (k, hi) if equal else (lo, k - 1)
        out.append(lo)
    return np.array(out, dtype=np.int64)


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (np.unique's first call imports numpy.ma: 10 ms in a
    lookup)."""
    values = np.sort(values)
    new = np.ones(len(values), dtype=bool)
    new[1:] = values[1:] != values[:-1]
    return values[new]


def _least_inside(s: int, e: int, starts, ends: dict[int, list[int]], count) -> int | None:
    """The least `count(a, b)` over the spans [a, b) inside [s, e) from these `starts`, each
    with its known `ends` ascending (of one start, the longest by e has the least), or None:
    every place or document holding [s, e) holds them too."""
    least = None
    for a in starts:
        if s <= a < e:
            known = ends.get(a, ())
            k = bisect_right(known, e) - 1
            if k >= 0:
                n = count(a, known[k])
                least = n if least is None else min(least, n)
    return least


NO_RUNS = np.empty((0, 4), dtype=np.int64)


def search(
    shards: list[ShardView], q: np.ndarray, t: int, tail: int, *, crowded: bool = True,
    check=lambda: None, popular: PopularCounts | None = None, inside_runs_later: bool = False,
) -> tuple[np.ndarray, CrowdedSpans]:  # fmt: skip
    """Maximal common runs of at least `t` words ending past query position `tail`.

    Returns the runs around anchors with few places (each document's, exactly), rows
    (query start, end, document, its position of start) of an int64 array, and the
    spans of crowded anchors that no such run gives (see the module's docstring). With
    `crowded` false, crowded anchors are left out (the rename-insensitive view). `check`
    is called before each anchor's step (a deadline's: it raises when the time is up);
    `popular`: the counts of spans with many places kept from lookup to lookup (the
    index's, for these shards). `inside_runs_later`: a crowded anchor whose spans all lie
    inside a run's span (`_inside_runs`) is not searched, its spans left out (counted in
    the crowded spans' `later`): they can only be parts of the region the run's span is
    the primary one of, which a lookup that leaves its parts for later searches then.

    Suffix arrays sampled every `stride` positions (the rename-insensitive view's, never
    with `crowded`) are searched with `stride` windows per anchor, each place of a run
    found through the one that starts at a sampled position; an anchor is enumerated when
    each of its windows has at most ENUMERATE / stride sampled places (as many places as a
    full array's ENUMERATE), so that every place of its runs is seen."""
    n = len(q)
    stride = shards[0].stride if shards else 1
    if crowded and stride != 1:
        raise ValueError("spans from counts need every suffix")
    starts, g, w = anchors(n, t, stride)
    most = ENUMERATE // stride
    # a run ending past `tail` holds its last t words whole, and with them the windows of an
    # anchor after tail - t: the anchors before are searched only for a run whose anchors
    # after tail - t are all crowded, found only through an anchor with few places before
    # them. With `crowded`, never (the first anchor searched answers for every span
    # starting before it); without, when one of them is crowded (left out).
    late = [a for a in starts if a > tail - t]
    counts = Counts(shards, q, popular)
    # each shard's windows: (window, places), or (window, interval) where the kernel reads
    # the places itself (`_runs`)
    found: list[list[tuple]] = [[] for _ in shards]
    native = [sh.compiled() is not None for sh in shards]
    enumerated, crowded_anchors = [], []

    def visit(group: list[int]) -> bool:
        """These anchors searched; whether one was crowded and left out."""
        left_out = False
        counts.prefill([b for a in group for b in range(a, a + stride)], w)
        for a in group:
            check()
            windows = []  # (start, places, intervals) of each of the anchor's windows
            for b in range(a, a + stride):
                total, ivs = counts.get(b, b + w)
                if counts.has_dead and total - counts.dead_at_most(ivs) <= most:
                    total = counts.live(b, b + w)  # the places that count: in live documents
                windows.append((b, total, ivs))
                if total > most:  # a crowded window makes the anchor crowded
                    break
            if not any(total for _, total, _ in windows):
                continue
            if all(total <= most for _, total, _ in windows):
                enumerated.append(a)
                for b, total, ivs in windows:
                    for i, (lo, hi) in enumerate(ivs):
                        if total and hi > lo and native[i]:
                            found[i].append((b, lo, hi))
                        elif total and hi > lo:
                            pos = shards[i].live(shards[i].positions(lo, hi))
                            if len(pos):
                                found[i].append((b, pos))
            elif crowded:
                crowded_anchors.append(a)
            else:
                left_out = True
        return left_out

    if visit(late):
        visit([a for a in starts if a <= tail - t])
    enumerated.sort()  # (the context's anchors searched after)
    check()
    runs, keys = _runs(shards, counts, found, enumerated, w, w + stride - 1, t, tail)
    lows = [(a, 0 if a == late[0] else a - g + 1) for a in crowded_anchors]
    later = 0
    if inside_runs_later and lows and len(runs):
        inside = _inside_runs(counts, [a for a, _ in lows], w, runs)
        later = len(inside)
        lows = [low for low, held in zip(lows, inside) if not held] if later else lows
    crowded = CrowdedSpans.of(
        counts, _crowded_spans(counts, lows, w, t, tail, check), t, tail, keys
    )
    crowded.later = later
    if len(crowded):  # (their ends, for `Counts.fill_crowded` and `Counts.distinct`)
        counts.crowded_ends = EndsByStart(crowded.starts, crowded.ends)
    return runs, crowded


def _inside_runs(counts: Counts, anchors: list[int], w: int, runs: np.ndarray) -> list[bool]:
    """For each crowded anchor a: whether every span holding its window [a, a + w) lies
    inside the span [s, e) of one of the runs (rows start, end, ...), s <= a, a + w <= e:
    so when no place holds [s - 1, a + w) (a span starting before s would) nor [a, e + 1)
    (one ending past e would); 0 outside the query. Such spans are shorter than the run's
    and inside its region: not its primary span, nor other regions' (`find_matches`)."""
    bounds = _sorted_distinct(runs[:, 0] * (counts.n + 1) + runs[:, 1])
    starts, ends = (bounds // (counts.n + 1)).tolist(), (bounds % (counts.n + 1)).tolist()
    out = []
    for a in anchors:
        out.append(
            any(
                s <= a and a + w <= e
                and counts.get(s - 1, a + w)[0] == 0
                and counts.get(a, e + 1)[0] == 0
                for s, e in zip(starts, ends)
            )
        )  # fmt: skip
    return out


def _runs(
    shards, counts: Counts, found, enumerated, w, reach, t, tail
) -> tuple[np.ndarray, np.ndarray]:
    """Runs around the found windows (of `w` words); kept when they hold an enumerated
    anchor's windows whole (the `reach` words from it): rows (start, end, document, its
    position of start), shard by shard. Also their spans' `_key`s. A compiled shard's
    found in one call (kernel.c `rc_runs`: the same steps)."""
    runs = [NO_RUNS]
    keys = [np.empty(0, dtype=np.int64)]
    en = np.array(enumerated, dtype=np.int64)
    for i, sh in enumerate(shards):
        if not found[i]:
            continue
        k = sh.compiled()
        if k is not None:  # (the windows' intervals: see `search`)
            rows = kernel.runs(k, sh.native, counts.qb[sh.width], counts.n, found[i], sh.starts,
                               sh.block_table(), BLOCK_BITS, sh.alive, en, w, reach, t,
                               tail)  # fmt: skip
            if len(rows):
                if sh.first_doc:
                    rows[:, 2] += sh.first_doc
                runs.append(rows)
                keys.append(_key(rows[:, 0], rows[:, 1], counts.n))
            continue
        a = np.repeat([b for b, _ in found[i]], [len(pos) for _, pos in found[i]])
        d = np.concatenate([pos for _, pos in found[i]]) - a  # diagonals
        order = np.lexsort((a, d))
        a, d = a[order], d[order]
        # found windows that touch on one diagonal lie in one run
        new = np.ones(len(a), dtype=bool)
        new[1:] = (d[1:] != d[:-1]) | (a[1:] - a[:-1] > w)
        first = np.flatnonzero(new)
        last = np.append(first[1:], len(a)) - 1
        a0, a1, d = a[first], a[last], d[first]
        s = a0 - _equal_left(sh, counts, a0, a0 + d)
        e = a1 + w + _equal_right(sh, counts, a1 + w, a1 + w + d)
        # a run is this path's only around an enumerated anchor: then every place of its
        # spans was seen (a run of crowded anchors only is found from counts)
        j = np.searchsorted(en, s)
        keep = (e - s >= t) & (e > tail) & (j < len(en))
        keep &= en[np.minimum(j, len(en) - 1)] + reach <= e
        s, e, c = s[keep], e[keep], (s + d)[keep]
        if not len(s):
            continue
        order = np.lexsort((c, e, s))  # distinct runs, in order
        s, e, c = s[order], e[order], c[order]
        new = np.ones(len(s), dtype=bool)
        new[1:] = (s[1:] != s[:-1]) | (e[1:] != e[:-1]) | (c[1:] != c[:-1])
        s, e, c = s[new], e[new], c[new]
        docs = sh.documents(c)
        doc_pos = c - sh.starts[docs]
        runs.append(np.stack((s, e, docs + sh.first_doc, doc_pos), axis=1).astype(np.int64))
        keys.append(_key(s, e, counts.n))
    return np.concatenate(runs) if len(runs) > 1 else NO_RUNS, np.concatenate(keys)


def _steps(f, x: int, y: int, settle=lambda x, y: False) -> list[int]:
    """Every k in [x, y) where f(k) != f(k + 1), for an f that moves one way only, by
    bisection (a range with f equal at both ends has none); `settle(x, y)` may take a range
    on itself (True: done). f is evaluated once per point."""
    out: list[int] = []
    todo = [(x, y, f(x), f(y))]
    while todo:
        x, y, fx, fy = todo.pop()
        if fx == fy or settle(x, y):
            continue
        if y - x == 1:
            out.append(x)
            continue
        m = (x + y) // 2
        fm = f(m)
        todo.append((m, y, fm, fy))  # popped after the left half: ascending order
        todo.append((x, m, fx, fm))
    return out


def _maximal_ends(counts: Counts, s: int, first: int) -> list[tuple[int, int]]:
    """The ends e from `first` on at which places of the query's words [s, e) extend
    neither left nor right, ascending, with how many places do (the dead documents'
    too): c(s, e) - c(s, e + 1) - c(s - 1, e) + c(s - 1, e + 1) > 0. (The compiled search
    finds them in `_crowded_spans`: kernel.c's maximal_ends.)"""
    n = counts.n

    def c(s: int, e: int) -> int:  # memoized by `counts`; 0 outside the query
        return counts.get(s, e)[0]

    ends: set[int] = set()

    def read_ends(x: int, y: int) -> bool:
        """Few places left: their ends read directly."""
        if c(s, x) > READ_PLACES:
            return False
        for i, (lo, hi) in enumerate(counts.get(s, x)[1]):
            if hi > lo:
                sh = counts.shards[i]
                pos = sh.positions(lo, hi) + (x - s)
                more = _equal_right(sh, counts, np.full(len(pos), x), pos)
                ends.update(e for e in (x + more).tolist() if e < y)
        return True

    # places of [s, e) that do not extend left: only where their number drops can a
    # place be maximal, so ends are searched where it drops (a periodic query against
    # a periodic file has places ending every few words, few of them left-maximal)
    ends.update(_steps(lambda e: c(s, e) - c(s - 1, e), first, n + 1, read_ends))
    out = []
    for e in sorted(ends):
        maximal = c(s, e) - c(s, e + 1) - c(s - 1, e) + c(s - 1, e + 1)
        if maximal > 0:
            out.append((e, maximal))
    return out


def _crowded_spans(
    counts: Counts, anchors: list[tuple[int, int]], w: int, t: int, tail: int,
    check=lambda: None,
) -> list[np.ndarray]:  # fmt: skip
    """For each crowded anchor (a, lowest): the spans (s, e) whose first anchor searched is
    `a` (s from `lowest` to a), held by a place that extends neither left nor right; those
    of at least `t` words ending past `tail` (no end before is looked for). Rows (s, e):
    each anchor's ascending, the anchors' in their order (in arrays of one anchor each, or
    of all)."""
    ks = [sh.compiled() for sh in counts.shards]
    if None not in ks:  # each anchor and shard in one call of the compiled search, all at once
        check()
        least_end = max(0, tail + 1)

        def spans_in(job) -> np.ndarray:
            check()  # (before each anchor and shard: a periodic query has thousands)
            (a, lowest), k, sh = job
            qb = counts.qb[sh.width]
            return kernel.crowded_spans(
                k, sh.native, qb, counts.n, lowest, a, a + w, t, least_end, READ_PLACES
            )

        jobs = [(anchor, k, sh) for anchor in anchors for k, sh in zip(ks, counts.shards)]
        # (an anchor's work in a shard grows with its window's places there: the most first)
        sizes = [hi - lo for a, _ in anchors for lo, hi in counts.get(a, a + w)[1]]
        done = kernel.across(spans_in, jobs, sizes=sizes)
        if done:  # (each shard's spans' intervals, for `Counts.fill_crowded`)
            counts.found_rows = [np.concatenate(done[i :: len(ks)]) for i in range(len(ks))]
        if not counts.has_dead:  # every maximal place is live: the spans found anywhere
            if not done:
                return []
            # each anchor's, each (start, end) once, ascending as one shard's: all anchors
            # at once, keyed by (anchor, start, end)
            rows = np.concatenate(done)
            which = np.repeat(np.arange(len(done), dtype=np.uint64) // np.uint64(len(ks)),
                              [len(r) for r in done])  # fmt: skip
            ends = np.uint64(counts.n + 1)
            key = _sorted_distinct((which * ends + rows[:, 0]) * ends + rows[:, 1])
            return [np.stack(((key // ends) % ends, key % ends), axis=1).astype(np.int64)]
        done = iter(done)
        out = []
        for _ in anchors:
            per_shard = [next(done) for _ in ks]
            found: dict[tuple[int, int], int] = {}  # maximal places summed over the shards
            for rows in per_shard:
                for s, e, m, _, _ in rows.tolist():
                    found[(s, e)] = found.get((s, e), 0) + m
            live = [span for span, m in sorted(found.items()) if counts.live_maximal(*span, m)]
            out.append(_rows(live))
        return out

    def c(s: int, e: int) -> int:  # memoized by `counts`; 0 outside the query
        return counts.get(s, e)[0]

    out = []
    for a, lowest in anchors:
        check()
        e0 = a + w
        # c(., e0) can only drop as the start moves left: a span can start where it does
        starts = [k + 1 for k in _steps(lambda s, e0=e0: c(s, e0), lowest - 1, a)]
        here = []
        for s in starts:
            check()
            for e, maximal in _maximal_ends(counts, s, max(e0, s + t, tail + 1)):
                if counts.live_maximal(s, e, maximal):
                    here.append((s, e))
        out.append(_rows(here))
    return out


def _rows(spans: list[tuple[int, int]]) -> np.ndarray:
    return np.array(spans, dtype=np.int64).reshape(-1, 2)
