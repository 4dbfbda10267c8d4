"""The search kernel's cases: random shards (heavy duplication, every id width, sampled
suffix arrays, damaged ones) with calls and the answers the Python search gives them.

`shards()` serves the in-process comparison (test_kernel.py); `write()` puts the same cases
in the text file that tests/native/driver.c replays against a library built for any target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from index_tools.build.suffix import joined, suffix_array
from index_tools.match import kernel, suffix
from index_tools.match.suffix import BLOCK_BITS, Counts, ShardView
from index_tools.store import shards as files
from index_tools.store.shards import id_bytes, top_keys
from index_tools.text.kinds import LEGAL_KEYS, is_license, is_repetitive, is_table
from index_tools.text.words import word_bounds


def needs_kernel() -> kernel.Kernel:
    """The loaded kernel, chosen; the test fails saying why when it is not."""
    if not kernel.available():
        pytest.fail(f"the native search did not load: {kernel.status()}")
    return kernel.active() or pytest.fail("the native search is not chosen")


@dataclass
class Case:
    kind: str  # interval, intervals, spans, extend, runs, crowded_spans, distinct,
    # first_places, documents, word_ids, is_table, span_checks, word_bounds
    args: tuple
    rc: int = 0
    answer: list = field(default_factory=list)


@dataclass
class RandomShard:
    view: ShardView
    ids: np.ndarray  # with separators
    tok: bytes
    sa: np.ndarray
    damaged: bool = False
    cases: list[Case] = field(default_factory=list)


def make_shard(rng: np.random.Generator, width: int, stride: int, damaged: bool) -> RandomShard:
    limit = {2: 0xFFFF, 3: 0xFFFFFF - 1, 4: 0x0FFFFFFF}[width]  # (a vocabulary of 2**28 words)
    alphabet = int(rng.choice([2, 3, 8, 60]))
    base = rng.integers(2, min(limit, 2 + alphabet * 997), alphabet)  # ids spread in range
    docs = []
    for _ in range(int(rng.integers(1, 40))):
        n = int(rng.choice([0, 1, 3, 50, 400, 1500]))
        doc = base[rng.integers(0, alphabet, n)].astype(np.uint32)
        if rng.random() < 0.1:  # separator lines: runs of one word, of many lengths
            k = int(rng.integers(1, 20))
            doc = np.repeat(base[rng.integers(0, alphabet, k)], rng.integers(1, 80, k))
            doc = doc.astype(np.uint32)
        elif docs and rng.random() < 0.4:  # a copy of an earlier document, maybe edited
            doc = docs[int(rng.integers(0, len(docs)))].copy()
            if len(doc) and rng.random() < 0.5:
                doc[int(rng.integers(0, len(doc)))] = base[0]
        docs.append(doc)
    ids, starts = joined(docs)
    if width == 4:
        ids[ids == base[-1]] = limit  # the widest ids too
    tok = id_bytes(ids, width).tobytes()
    sa = suffix_array(ids, width, stride).view(np.uint32).copy()
    damaged = damaged and len(sa) > 0
    if damaged:  # every entry past the ids (any probe finds one): what a damaged file gives
        sa[:] = len(ids) + rng.integers(0, 9, len(sa))
    top = None
    step = int(rng.choice([0, 2, 4, 16]))
    if step and not damaged:  # a top table (the kernel's own first probes)
        nbytes = int(rng.choice([1, width + 1, 16]))
        keys = top_keys(np.frombuffer(tok, np.uint8), sa, width, step, nbytes)
        top = (keys, step, nbytes)
    sa_view = memoryview(sa.tobytes()).cast("I")
    view = ShardView(tok, sa_view, starts, 0, None, width, stride, top)
    return RandomShard(view, ids, tok, sa, damaged)


def _pattern(rng: np.random.Generator, ids: np.ndarray) -> np.ndarray:
    n = int(rng.integers(1, 40))
    at = int(rng.integers(0, max(1, len(ids) - 1)))
    pat = ids[at : at + n].copy()
    if len(pat) and rng.random() < 0.3:
        pat[-1] = ids[int(rng.integers(0, len(ids)))]
    if rng.random() < 0.1:
        pat = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)  # anything
    return pat if len(pat) else ids[:1].copy()


@dataclass
class RandomVocabulary:
    """A vocabulary's files (words, offsets, (hash, id) records), as an index stores them."""

    words: bytes
    offsets: np.ndarray
    records: np.ndarray  # LOOKUP_DTYPE, sorted

    def reference(self) -> files.Vocabulary:
        return files.Vocabulary(self.words, self.offsets.tobytes(), self.records.tobytes(),
                                len(self.records))  # fmt: skip

    def native(self) -> kernel.NativeVocabulary:
        return kernel.NativeVocabulary(np.ascontiguousarray(self.records["hash"]),
                                       self.records.tobytes(), self.offsets, self.words)  # fmt: skip


def _word(rng: np.random.Generator) -> str:
    letters = ["a", "b", "_", "é", "日", "\udc80", "0", "(", "Z"]  # (a lone surrogate too)
    return "".join(rng.choice(letters, int(rng.integers(1, 7))).tolist())


def word_ids_case(rng: np.random.Generator, damaged: bool) -> Case:
    """Query words looked up in a random vocabulary: some of its words, some new ones, words
    whose hash another word's entry has too (a collision: the bytes decide), a damaged
    entry (id or offsets out of range) where asked."""
    words = list(dict.fromkeys(_word(rng) for _ in range(int(rng.choice([0, 1, 5, 40, 300])))))
    encoded = [w.encode("utf-8", "surrogatepass") for w in words]
    offsets = np.zeros(len(words) + 1, dtype="<u8")
    np.cumsum([len(b) + 1 for b in encoded], out=offsets[1:])
    records = np.empty(len(words), dtype=files.LOOKUP_DTYPE)
    records["hash"] = [files.word_hash(w) for w in words]
    records["id"] = np.arange(files.FIRST_WORD_ID, files.FIRST_WORD_ID + len(words))
    for _ in range(len(words) // 4):  # another word's hash: found by it, never taken for it
        i, j = rng.integers(0, len(words), 2)
        records["hash"][j] = records["hash"][i]
    records.sort(order=("hash", "id"))
    if damaged and len(words):
        k = int(rng.integers(0, len(words)))
        if rng.random() < 0.5:
            records["id"][k] = int(rng.choice([0, 1, len(words) + 2, 0xFFFFFFFF]))
        else:
            offsets[k + 1 if rng.random() < 0.5 else k] = int(offsets[-1]) + 7
    vocabulary = RandomVocabulary(b"".join(b + b"\n" for b in encoded), offsets, records)
    queries = [w for w in words if rng.random() < 0.6] + [_word(rng) for _ in range(20)]
    queries = list(dict.fromkeys(queries))
    try:
        found = vocabulary.reference().ids(queries)
        answer = [found.get(w, files.UNKNOWN) for w in queries]
        return Case("word_ids", (vocabulary, queries, bool(rng.random() < 0.8)), 0, answer)
    except ValueError:
        return Case("word_ids", (vocabulary, queries, True), kernel.RC_DAMAGED)


# what rows are made of: names, numbers, strings (closed or not), brackets, comments, every
# ASCII line break and space Python knows (\x0b, \x0c, \x1c-\x1e end a line; \x1f is a space)
_ROW_PIECES = [
    "NAME", "x1", "_y", "1", "0x1F", "1.5e3", "3.", " ", "\t", "\x1f", ",", ", ", "=", ":", ";",
    "'a'", '"b c"', "'", '"', "''", "#", "# c", "(", ")", "[", "]", "{", "}", "$", "-", "+",
    "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e",
]  # fmt: skip


def table_text(rng: np.random.Generator) -> str:
    """ASCII text of rows, most of them alike in some (a table, or almost one)."""

    def row() -> str:
        return "".join(rng.choice(_ROW_PIECES, int(rng.integers(0, 9))).tolist())

    common = row()
    rows = [common if rng.random() < rng.choice([0.5, 0.7, 0.9]) else row()
            for _ in range(int(rng.choice([0, 1, 5, 8, 20, 60])))]  # fmt: skip
    numbered = [r.replace("1", str(int(rng.integers(0, 1000)))) for r in rows]
    return str(rng.choice(["\n", "\r\n", "\r"])).join(numbered) + str(rng.choice(["", "\n"]))


def is_table_case(rng: np.random.Generator) -> Case:
    text = table_text(rng)
    return Case("is_table", (text,), 0, [int(is_table(text))])


# the words of a span: names, numbers (counted alike), punctuation, words of legal keys
_SPAN_WORDS = [
    "x", "Name", "_y", "self", "0", "1", "42", "3e5", "0x1F", "(", ")", ",", "=", ".", ":",
    "License", "LICENSE", "warranty", "WARRANTIES", "free", "Software", "in", "no", "event",
    "GPL", "open", "source", "rights", "reserved", "terms", "and", "ap", "licen", "-", "+",
]  # fmt: skip


def span_words(rng: np.random.Generator) -> list[str]:
    """Words of a span: a short pattern repeated with some noise, or any words; sometimes
    with signs put before some of its numbers (`1.0, -1.0`: a sign is its number's)."""
    n = int(rng.choice([1, 2, 3, 7, 40, 97, 300, 700]))
    pattern = rng.choice(_SPAN_WORDS, int(rng.integers(1, 40))).tolist()
    noise = rng.choice([0.0, 0.1, 0.25, 0.5, 1.0])
    words = [str(rng.choice(_SPAN_WORDS)) if rng.random() < noise else pattern[i % len(pattern)]
             for i in range(n)]  # fmt: skip
    signs = rng.choice([0.0, 0.0, 0.3, 0.7])
    out = []
    for w in words:
        if w[0].isdigit() and rng.random() < signs:
            out.append(str(rng.choice(["-", "+"])))
        out.append(w)
    return out


def span_checks_case(rng: np.random.Generator) -> Case:
    """A span's words: whether they hold a legal key (is_license's first step) and whether
    they are repetitive, as kinds.py answers."""
    words = span_words(rng)
    text = " ".join(words).lower()
    key = any(k in text for k in LEGAL_KEYS)
    assert key or not is_license(words)
    return Case("span_checks", (words,), 0, [int(key), int(is_repetitive(words))])


def word_bounds_case(rng: np.random.Generator) -> Case:
    """Words of ASCII text: rows of a table, or any of the 128 characters."""
    if rng.random() < 0.5:
        text = table_text(rng)
    else:
        text = bytes(rng.integers(0, 128, int(rng.choice([0, 1, 7, 300])))).decode("ascii")
    starts, ends = word_bounds(text)
    return Case("word_bounds", (text,), 0, [*starts.tolist(), *ends.tolist()])


def query_around(rng: np.random.Generator, sh: RandomShard, longest: int) -> np.ndarray:
    """A query of 2 to `longest` words of the shard around a random place, some of them
    changed (none a separator)."""
    at = int(rng.integers(0, max(1, sh.view.size - longest)))
    q = sh.ids[at : at + int(rng.integers(2, longest))].copy()
    if len(q) < 2:
        q = np.array([1, 1], dtype=np.uint32)
    q[rng.random(len(q)) < 0.03] = 1
    q[q == 0] = 1  # (a query holds no separator)
    return q


def runs_case(rng: np.random.Generator, sh: RandomShard) -> Case:
    """Windows of a query found in the shard (a long query around a real place, with some
    words changed), some of its documents dead, a random `t`, `tail` and anchors: the runs
    `_runs` finds around them on the Python search."""
    view, width = sh.view, sh.view.width
    q = query_around(rng, sh, 200)
    n = len(q)
    w = int(rng.integers(1, min(n, 12) + 1))
    reach = w + view.stride - 1
    t = int(rng.integers(1, n + 1))
    tail = int(rng.integers(-1, n + 1))
    enumerated = np.unique(rng.integers(0, n - w + 1, int(rng.integers(1, 12)))).astype(np.int64)
    qb = id_bytes(q, width).tobytes()
    ndocs = len(view.starts)
    alive = rng.random(ndocs) < 0.7 if rng.random() < 0.5 else None
    if sh.damaged:  # every entry past the ids
        args = (qb, n, [(0, 0, len(sh.sa))], alive, enumerated, w, reach, t, tail)
        return Case("runs", args, kernel.RC_DAMAGED)
    live = ShardView(sh.tok, view.sa, view.starts, 0, alive, width, view.stride, None)
    found, windows = [], []
    for b in sorted({int(x) for x in rng.integers(0, n - w + 1, int(rng.integers(1, 20)))}):
        lo, hi = view.interval(qb[b * width : (b + w) * width], 0, len(sh.sa))
        if hi > lo and hi - lo <= 512:
            windows.append((b, lo, hi))
            pos = live.live(live.positions(lo, hi))
            if len(pos):
                found.append((b, pos))
    counts = Counts([live], q)
    with kernel.using("python"):
        rows, _ = suffix._runs([live], counts, [found], enumerated.tolist(), w, reach, t, tail)
    answer = [x for r in rows for x in r]
    return Case("runs", (qb, n, windows, alive, enumerated, w, reach, t, tail), 0, answer)


def fill_cases(rng: np.random.Generator, sh: RandomShard, each: int = 40) -> None:
    """Calls of every kind on `sh`, answered by the Python search (a damaged shard: the
    kernel's error)."""
    view, width = sh.view, sh.view.width
    for _ in range(each // 8):  # (the vocabulary's: the shard plays no part)
        sh.cases.append(word_ids_case(rng, damaged=rng.random() < 0.2))
    for _ in range(each // 4):  # (the kind check's: no shard either)
        sh.cases.append(is_table_case(rng))
        sh.cases.append(span_checks_case(rng))
        sh.cases.append(word_bounds_case(rng))
    with kernel.using("python"):
        for _ in range(each):
            pat = _pattern(rng, sh.ids)
            pb = id_bytes(pat, width).tobytes()
            known, lo, hi = 0, 0, len(sh.sa)
            if len(pat) > 1 and rng.random() < 0.5 and not sh.damaged:
                known = int(rng.integers(1, len(pat)))
                lo, hi = view.interval(pb[: known * width], 0, len(sh.sa))
            if sh.damaged:
                sh.cases.append(Case("interval", (pb, known * width, lo, hi), kernel.RC_DAMAGED))
            else:
                answer = list(view.interval(pb, lo, hi, known))
                sh.cases.append(Case("interval", (pb, known * width, lo, hi), 0, answer))
        for _ in range(each // 8):  # windows of one query searched together
            q = _pattern(rng, sh.ids)
            q = np.concatenate([q, _pattern(rng, sh.ids), sh.ids[: int(rng.integers(0, 50))]])
            qb = id_bytes(q, width).tobytes()
            w = int(rng.integers(1, len(q) + 1))
            offs = np.sort(rng.integers(0, len(q) - w + 1, int(rng.integers(1, 40)))) * width
            if sh.damaged:
                sh.cases.append(Case("intervals", (qb, offs, w * width), kernel.RC_DAMAGED))
                continue
            answer = [
                x
                for o in offs.tolist()
                for x in view.interval(qb[o : o + w * width], 0, len(sh.sa))
            ]
            sh.cases.append(Case("intervals", (qb, offs, w * width), 0, answer))
        for _ in range(each // 8):  # spans of one query, runs of one start with ascending ends
            q = _pattern(rng, sh.ids)
            q = np.concatenate([q, _pattern(rng, sh.ids), sh.ids[: int(rng.integers(0, 50))]])
            qb, n = id_bytes(q, width).tobytes(), len(q)
            starts = np.sort(rng.integers(0, n, int(rng.integers(1, 30))))
            ends = np.array([int(rng.integers(x + 1, n + 1)) for x in starts.tolist()])
            order = np.lexsort((ends, starts))
            starts, ends = starts[order], ends[order]
            if sh.damaged:
                sh.cases.append(Case("spans", (qb, n, starts, ends), kernel.RC_DAMAGED))
                continue
            answer = [
                x
                for a, b in zip(starts.tolist(), ends.tolist())
                for x in view.interval(qb[a * width : b * width], 0, len(sh.sa))
            ]
            sh.cases.append(Case("spans", (qb, n, starts, ends), 0, answer))
        size = view.size
        for _ in range(each // 4):
            q = _pattern(rng, sh.ids)
            if rng.random() < 0.5:  # a long query around a real place
                at = int(rng.integers(0, max(1, size - 200)))
                q = sh.ids[at : at + 200].copy()
                q[rng.random(len(q)) < 0.02] = sh.ids[0] + 1
            counts = Counts([view], q)
            count = int(rng.choice([1, 5, 8, 9, 60]))
            qs = rng.integers(0, len(q) + 1, count)
            cs = rng.integers(0, size + 1, count)
            for way in (1, -1):
                if sh.damaged:
                    bad = cs.copy()
                    bad[0] = size + 1 + int(rng.integers(0, 5))
                    args = (counts.qb[width], len(q), qs, bad, way)
                    sh.cases.append(Case("extend", args, kernel.RC_DAMAGED))
                    continue
                f = suffix._equal_right if way == 1 else suffix._equal_left
                answer = f(view, counts, qs, cs).tolist()
                sh.cases.append(Case("extend", (counts.qb[width], len(q), qs, cs, way), 0, answer))
        for _ in range(each // 4):  # runs around found windows (suffix.py's _runs)
            sh.cases.append(runs_case(rng, sh))
        # a crowded anchor's spans (full suffix arrays: the exact view's)
        for _ in range(each // 4 if view.stride == 1 else 0):
            q = query_around(rng, sh, 120)
            n = len(q)
            e0 = int(rng.integers(1, n + 1))
            a = int(rng.integers(0, e0))
            if rng.random() < 0.3:  # the anchor in a run of one word (its starts share searches)
                i = int(rng.integers(0, a + 1))
                q[i : a + int(rng.integers(1, 40))] = q[a]
            lowest = int(rng.integers(0, a + 1))
            t = int(rng.integers(1, n + 1))
            least_end = int(rng.integers(0, n + 2))
            few = int(rng.choice([0, 1, 4, 512]))
            qb = id_bytes(q, width).tobytes()
            args = (qb, n, lowest, a, e0, t, least_end, few)
            if sh.damaged:
                sh.cases.append(Case("crowded_spans", args, kernel.RC_DAMAGED))
                continue
            counts = Counts([view], q)

            def c(s: int, e: int, counts=counts) -> int:
                return counts.get(s, e)[0]

            # a shard with few places of the words every span holds has its spans read from
            # them, their intervals not searched
            reach = max(e0, lowest + t, least_end)
            read = reach <= n and c(a, reach) <= few
            answer = []  # by the definition: every start and end tried, no bisection
            for s in range(lowest, a + 1):
                for e in range(max(e0, s + t, least_end), n + 1):
                    m = c(s, e) - c(s, e + 1) - c(s - 1, e) + c(s - 1, e + 1)
                    if m:
                        lo, hi = (kernel.UNKNOWN_INTERVAL,) * 2 if read else counts.get(s, e)[1][0]
                        answer += [s, e, m, lo, hi]
            sh.cases.append(Case("crowded_spans", args, 0, answer))
        n, ndocs = len(sh.sa), len(view.starts)
        for _ in range(each // 8 if not sh.damaged else 0):  # nested intervals' documents
            lo = int(rng.integers(0, n + 1))
            levels = [(lo, int(rng.integers(lo, n + 1)))]
            for _ in range(int(rng.integers(0, 6))):
                a, b = levels[-1]
                x = int(rng.integers(a, b + 1))
                levels.append((x, int(rng.integers(x, b + 1))))
            docs = view.documents(view.positions(*levels[0])).astype(np.int32)
            alive = rng.random(ndocs) < 0.7 if rng.random() < 0.5 else None
            # each document's files (its identical copies too), or none given
            weights = None
            if rng.random() < 0.5:
                weights = rng.integers(0, 3000, size=ndocs).astype(np.uint32)
                weights[rng.random(ndocs) < 0.05] = 4_000_000_000  # (the sums pass 32 bits)
            answer, weighed = [], []
            for a, b in levels:
                held = np.unique(docs[a - lo : b - lo])  # (inside an empty one: empty)
                if alive is not None:
                    held = held[alive[held]]
                answer.append(len(held))
                weighed.append(
                    int(weights[held].astype(np.int64).sum()) if weights is not None else 0
                )
            if weights is not None:
                answer += weighed
            sh.cases.append(Case("distinct", (docs, ndocs, alive, levels, weights), 0, answer))
            want = rng.permutation(ndocs)[: int(rng.integers(0, ndocs + 1))].astype(np.int32)
            first = {}
            for i, d in enumerate(docs.tolist()):
                first.setdefault(d, i)
            answer = [first.get(d, -1) for d in want.tolist()]
            sh.cases.append(Case("first_places", (docs, ndocs, want), 0, answer))
        for _ in range(each // 4):
            lo = int(rng.integers(0, n + 1))
            hi = int(rng.integers(lo, n + 1))
            bad = sh.damaged and np.any(sh.sa[lo:hi] >= size)
            if bad:
                sh.cases.append(Case("documents", (lo, hi), kernel.RC_DAMAGED))
            elif not sh.damaged:
                answer = view.documents(view.positions(lo, hi)).tolist()
                sh.cases.append(Case("documents", (lo, hi), 0, answer))


def shards(seed: int, count: int = 24) -> list[RandomShard]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        width = (2, 3, 4)[i % 3]
        stride = int(rng.choice([1, 1, 3, 4])) if width == 2 else 1
        sh = make_shard(rng, width, stride, damaged=i % 8 == 7)
        fill_cases(rng, sh)
        out.append(sh)
    return out


def run_native(sh: RandomShard, case: Case) -> tuple[int, list]:
    """A case through the loaded library (the in-process replay): (error code, answer)."""
    k, view = kernel.active(), sh.view
    try:
        if case.kind == "interval":
            pb, skip, lo, hi = case.args
            return 0, list(kernel.interval(k, view.native, pb, skip, lo, hi))
        if case.kind == "intervals":
            qb, offs, m = case.args
            return 0, kernel.intervals(k, view.native, qb, offs, m).reshape(-1).tolist()
        if case.kind == "spans":
            qb, n, starts, ends = case.args
            return 0, kernel.spans(k, view.native, qb, n, starts, ends).reshape(-1).tolist()
        if case.kind == "extend":
            q, qn, qs, cs, way = case.args
            return 0, kernel.extend(k, view.native, q, qn, qs, cs, way).tolist()
        if case.kind == "distinct":
            docs, ndocs, alive, levels, weights = case.args
            held, weighed = kernel.distinct(k, docs, ndocs, alive, levels, weights)
            return 0, held.tolist() + (weighed.tolist() if weighed is not None else [])
        if case.kind == "first_places":
            return 0, kernel.first_places(k, *case.args).tolist()
        if case.kind == "crowded_spans":  # (the starts' searches shared, or each its own)
            shared, alone = (
                kernel.crowded_spans(k, view.native, *case.args, share=share).reshape(-1).tolist()
                for share in (True, False)
            )
            return 0, shared if shared == alone else ["differ", shared, alone]
        if case.kind == "word_ids":
            vocabulary, queries, _ = case.args
            hashes, joined, offsets = files.Vocabulary.encoded(queries)
            return 0, kernel.word_ids(k, vocabulary.native(), hashes, joined, offsets).tolist()
        if case.kind == "word_bounds":
            starts, ends = kernel.word_bounds(k, case.args[0].encode("ascii"))
            return 0, [*starts.tolist(), *ends.tolist()]
        if case.kind == "is_table":
            return 0, [int(kernel.is_table(k, case.args[0].encode("ascii")))]
        if case.kind == "runs":
            qb, n, windows, alive, en, w, reach, t, tail = case.args
            rows = kernel.runs(k, view.native, qb, n, windows, view.starts, view.block_table(),
                               BLOCK_BITS, alive, en, w, reach, t, tail)  # fmt: skip
            return 0, rows.reshape(-1).tolist()
        if case.kind == "span_checks":
            words = case.args[0]
            joined = "\n".join(words).encode("ascii")
            return 0, [int(x) for x in kernel.span_checks(k, joined, len(words), kernel._KEYS)]
        lo, hi = case.args
        blocks = view.block_table()
        docs = kernel.documents(k, view.native, view.starts, blocks, BLOCK_BITS, lo, hi)
        return 0, docs.tolist()
    except kernel.IndexOpenError:
        return kernel.RC_DAMAGED, []


def write(path: Path, all_shards: list[RandomShard]) -> int:
    """The cases as driver.c reads them; returns how many."""
    out = [str(kernel.VERSION)]
    n = 0

    def nums(values) -> str:
        return " ".join(map(str, values))

    for sh in all_shards:
        v = sh.view
        blocks = v.block_table()
        keys, step, nbytes = v.top if v.top is not None else (np.zeros(0, np.uint8), 0, 0)
        out.append(
            f"shard {v.width} {len(sh.tok)} {len(sh.sa)} {len(v.starts)} {len(blocks)} "
            f"{BLOCK_BITS} {step} {nbytes}"
        )
        out += [nums(sh.tok), nums(sh.sa.tolist()), nums(v.starts.tolist()), nums(blocks.tolist())]
        out.append(nums(keys.tolist()))
        for c in sh.cases:
            n += 1
            if c.kind == "interval":
                pb, skip, lo, hi = c.args
                a, b = c.answer or (0, 0)
                out.append(f"interval {c.rc} {len(pb)} {skip} {lo} {hi} {nums(pb)} {a} {b}")
            elif c.kind == "intervals":
                qb, offs, m = c.args
                answer = c.answer or [0] * (2 * len(offs))
                out.append(
                    f"intervals {c.rc} {len(qb)} {len(offs)} {m} {nums(qb)} "
                    f"{nums(offs.tolist())} {nums(answer)}"
                )
            elif c.kind == "spans":
                qb, qn, starts, ends = c.args
                answer = c.answer or [0] * (2 * len(starts))
                out.append(
                    f"spans {c.rc} {qn} {len(starts)} {nums(qb)} {nums(starts.tolist())} "
                    f"{nums(ends.tolist())} {nums(answer)}"
                )
            elif c.kind == "extend":
                q, qn, qs, cs, way = c.args
                answer = c.answer or [0] * len(qs)
                out.append(
                    f"extend {c.rc} {way} {qn} {len(qs)} {nums(q)} {nums(qs.tolist())} "
                    f"{nums(cs.tolist())} {nums(answer)}"
                )
            elif c.kind == "distinct":
                docs, ndocs, alive, levels, weights = c.args
                live = "-1" if alive is None else nums(alive.astype(np.uint8).tolist())
                weighed = "-1" if weights is None else nums(weights.tolist())
                out.append(
                    f"distinct {c.rc} {len(docs)} {nums(docs.tolist())} {ndocs} {live} "
                    f"{weighed} {len(levels)} {nums(x for lv in levels for x in lv)} "
                    f"{nums(c.answer)}"
                )
            elif c.kind == "first_places":
                docs, ndocs, want = c.args
                out.append(
                    f"first_places {c.rc} {len(docs)} {nums(docs.tolist())} {ndocs} "
                    f"{len(want)} {nums(want.tolist())} {nums(c.answer)}"
                )
            elif c.kind == "crowded_spans":
                qb, qn, lowest, a, e0, t, least_end, few = c.args
                out.append(
                    f"crowded_spans {c.rc} {qn} {lowest} {a} {e0} {t} {least_end} {few} "
                    f"{nums(qb)} {len(c.answer) // 5} {nums(c.answer)}"
                )
            elif c.kind == "word_ids":
                vocabulary, queries, buckets = c.args
                hashes, joined, offsets = files.Vocabulary.encoded(queries)
                records = vocabulary.records
                answer = c.answer or [0] * len(queries)
                out.append(
                    f"word_ids {c.rc} {int(buckets)} {len(records)} "
                    f"{nums(records['hash'].tolist())} {nums(records['id'].tolist())} "
                    f"{nums(vocabulary.offsets.tolist())} {len(vocabulary.words)} "
                    f"{nums(vocabulary.words)} {len(queries)} {nums(hashes.tolist())} "
                    f"{nums(offsets.tolist())} {len(joined)} {nums(joined)} {nums(answer)}"
                )
            elif c.kind == "word_bounds":
                text = c.args[0].encode("ascii")
                out.append(
                    f"word_bounds {c.rc} {len(text)} {nums(text)} {len(c.answer) // 2} "
                    f"{nums(c.answer)}"
                )
            elif c.kind == "is_table":
                text = c.args[0].encode("ascii")
                out.append(f"is_table {c.rc} {len(text)} {nums(text)} {nums(c.answer)}")
            elif c.kind == "runs":
                qb, qn, windows, alive, en, w, reach, t, tail = c.args
                flat = [x for win in windows for x in win]
                live = "0" if alive is None else f"1 {nums(alive.astype(int).tolist())}"
                out.append(
                    f"runs {c.rc} {qn} {nums(qb)} {len(windows)} {nums(flat)} {live} {len(en)} "
                    f"{nums(en.tolist())} {w} {reach} {t} {tail} {len(c.answer) // 4} "
                    f"{nums(c.answer)}"
                )
            elif c.kind == "span_checks":
                words = c.args[0]
                joined = "\n".join(words).encode("ascii")
                out.append(
                    f"span_checks {c.rc} {len(words)} {len(joined)} {nums(joined)} "
                    f"{len(kernel._KEYS)} {nums(kernel._KEYS)} {nums(c.answer)}"
                )
            else:
                lo, hi = c.args
                answer = c.answer or [0] * (hi - lo)
                out.append(f"documents {c.rc} {lo} {hi} {nums(answer)}")
    path.write_text("\n".join(out) + "\n")
    return n
