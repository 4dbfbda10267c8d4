"""Posting caps that keep the guarantee: the builders' last pass over a new generation.

A fingerprint kept by more than `posting_cap` documents (license headers, vendored code) has
its postings capped: only the first `cap` are stored, with the true count. A document that
holds such a run must still be found, so every document that keeps a capped fingerprint
also keeps, in each of its windows, the smallest *uncapped* fingerprint (`winnow_past`).
The query winnows past the same capped set (stored as `capped.u64`), so any common run of
t words that has an uncapped k-gram in one of its windows shares a complete posting list.

The builders write every posting list whole; this pass then, until nothing changes:
  1. counts the postings of every key and finds the keys over the cap (newly capped ones);
  2. finds the documents that keep a newly capped key (their lists are still complete) —
     with `add`, also the new documents that keep a key capped before;
  3. winnows those documents again past the capped set and adds the postings they gain.
Adding postings can push more keys over the cap, hence the loop (it ends: the capped set only
grows). Finally each shard is rewritten with its lists cut at the cap, and the capped set is
written beside it. The same code serves the local builder, `add` and the Spark builder (whose
executors do step 3 when given a Spark context).
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..store import generations as store
from ..store.generations import decompress
from .process import look_past

UNCAPPED = 0xFFFFFFFF  # the cap the builders write with, before this pass
_EXTRA = np.dtype([("key", "<u8"), ("doc", "<u4"), ("pos", "<u4")])


@dataclass
class LookPastParams:
    gen: str
    k: int
    window: int
    prefix_bits: int
    capped: np.ndarray  # sorted capped ids, exact family
    renamed_capped: np.ndarray | None  # the rename-insensitive family, None when absent


# --- step 3: documents winnowed again (in worker processes or Spark executors) --------------


class _DocReader:
    """Texts and languages of a generation being written (not yet published)."""

    def __init__(self, gen: Path):
        self.env = store.open_env(gen / store.DOCS_NAME, readonly=True, max_dbs=8)
        self.meta = self.env.open_db(b"meta", create=False)
        self.text = open(gen / store.TEXT_NAME, "rb")  # noqa: SIM115 - closed in close()

    def get(self, doc_id: int) -> tuple[str, str]:
        with self.env.begin() as txn:
            meta = json.loads(txn.get(store.doc_key(doc_id), db=self.meta))
        self.text.seek(meta["o"])
        return decompress(self.text.read(meta["z"])), meta.get("l", "")

    def close(self) -> None:
        self.text.close()
        self.env.close()


def look_past_docs(params: LookPastParams, doc_ids: Iterable[int]) -> Iterator[tuple]:
    """(family, extra postings) of each document: family 0 exact, 1 rename-insensitive."""
    reader = _DocReader(Path(params.gen))
    try:
        for doc_id in doc_ids:
            text, language = reader.get(int(doc_id))
            fps, pos, rfps, rpos = look_past(
                text, params.k, params.window, language, params.capped,
                params.renamed_capped, params.prefix_bits,
            )  # fmt: skip
            for family, (f, p) in enumerate(((fps, pos), (rfps, rpos))):
                if len(f):
                    rec = np.empty(len(f), dtype=_EXTRA)
                    rec["key"] = store.keys_of(f)
                    rec["doc"] = doc_id
                    rec["pos"] = p
                    yield family, rec.tobytes()
    finally:
        reader.close()


_PARAMS: LookPastParams | None = None


def _pool_job(doc_ids: list[int]) -> list[tuple]:
    assert _PARAMS is not None
    return list(look_past_docs(_PARAMS, doc_ids))


def local_mapper(jobs: int) -> Callable[[LookPastParams, np.ndarray], Iterator[tuple]]:
    """Step 3 on this machine's cores."""

    def run(params: LookPastParams, doc_ids: np.ndarray) -> Iterator[tuple]:
        global _PARAMS
        n = jobs or os.cpu_count() or 1
        # the workers inherit the parameters by fork; where there is none (Windows): here
        if n <= 1 or len(doc_ids) < 64 or "fork" not in multiprocessing.get_all_start_methods():
            yield from look_past_docs(params, doc_ids.tolist())
            return
        _PARAMS = params  # inherited by the forked workers
        chunks = [c.tolist() for c in np.array_split(doc_ids, max(1, len(doc_ids) // 64))]
        ctx = multiprocessing.get_context("fork")
        try:
            with ctx.Pool(n) as pool:
                for out in pool.imap(_pool_job, chunks):
                    yield from out
        finally:
            _PARAMS = None

    return run


# --- steps 1, 2 and the final rewrite -------------------------------------------------------


def _group_ids(pkey: bytes, suffixes: np.ndarray, prefix_bits: int) -> np.ndarray:
    prefix = np.uint64(int.from_bytes(pkey, "big"))
    return (prefix << np.uint64(32)) | suffixes.astype(np.uint64)


class _Family:
    """One postings family (exact or rename-insensitive) of the generation."""

    def __init__(self, gen: Path, header: store.Header, renamed: bool):
        self.gen, self.header, self.renamed = gen, header, renamed
        self.paths = [gen / store.shard_name(i, renamed) for i in range(header.shards)]
        self.extras: list[np.ndarray] = []

    def groups(self) -> Iterator[tuple[bytes, bytes]]:
        for p in self.paths:
            env = store.open_env(p, readonly=True)
            try:
                with env.begin(buffers=False) as txn:
                    yield from txn.cursor()
            finally:
                env.close()

    def extra(self) -> np.ndarray:
        """The postings added so far, without repeats, sorted by (key, doc, pos)."""
        if not self.extras:
            return np.empty(0, dtype=_EXTRA)
        rec = np.unique(np.concatenate(self.extras))  # sorts by key, doc, pos
        self.extras = [rec]
        return rec

    def stored(self, ids: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Stored counts of the given ids and the documents of their stored postings."""
        pb = self.header.prefix_bits
        counts = np.zeros(len(ids), dtype=np.int64)
        docs: list[np.ndarray] = []
        if not len(ids):
            return counts, docs
        keys = ids << np.uint64(32 - pb)
        prefix, suffix = store.split_keys(keys, pb)
        shard = store.bucket_of(keys) * self.header.shards // store.BUCKETS
        envs = [store.open_env(p, readonly=True) for p in self.paths]
        try:
            txns = [e.begin(buffers=True) for e in envs]
            pkeys = prefix.astype(">u4").tobytes()
            for i, sfx in enumerate(suffix.tolist()):
                value = txns[shard[i]].get(pkeys[4 * i : 4 * i + 4])
                hit = store.group_lookup(value, sfx) if value is not None else None
                if hit is not None:
                    counts[i] = hit[0]
                    docs.append(hit[1][:, 0].astype(np.int64))
            for t in txns:
                t.abort()
        finally:
            for e in envs:
                e.close()
        return counts, docs


def _scan(family: _Family, cap: int, old_capped: np.ndarray, first_new: int):
    """Step 1 and 2 over the stored lists: (capped ids, documents to winnow again)."""
    pb = family.header.prefix_bits
    capped: list[np.ndarray] = []
    docs: list[np.ndarray] = []
    for pkey, value in family.groups():
        suffixes, counts, ends, pairs = store.decode_group(value)
        over = counts > cap
        if not over.any():
            continue
        ids = _group_ids(pkey, suffixes, pb)
        capped.append(ids[over])
        starts = np.concatenate(([0], ends[:-1]))
        was = np.isin(ids, old_capped) if len(old_capped) else np.zeros(len(ids), dtype=bool)
        for j in np.flatnonzero(over).tolist():
            d = pairs[starts[j] : ends[j], 0].astype(np.int64)
            docs.append(d[d >= first_new] if was[j] else d)
    ids = np.unique(np.concatenate(capped)) if capped else np.empty(0, dtype=np.uint64)
    affected = np.unique(np.concatenate(docs)) if docs else np.empty(0, dtype=np.int64)
    return ids, affected


def _newly_capped(family: _Family, cap: int, capped: np.ndarray):
    """Step 1 and 2 after postings were added: ids newly over the cap, their documents."""
    rec = family.extra()
    if not len(rec):
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    ids_all = store.key_ids(rec["key"], family.header.prefix_bits)
    ids, first, added = np.unique(ids_all, return_index=True, return_counts=True)
    fresh = ~np.isin(ids, capped)
    ids, first, added = ids[fresh], first[fresh], added[fresh]
    stored, stored_docs = family.stored(ids)
    over = stored + added > cap
    if not over.any():
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    newly = ids[over]
    docs = [rec["doc"][np.isin(ids_all, newly)].astype(np.int64)]
    # lists of the newly capped ids as stored (complete: they were under the cap)
    held = np.flatnonzero(stored > 0).tolist()
    docs += [d for i, d in zip(held, stored_docs) if over[i]]
    return newly, np.unique(np.concatenate(docs))


def _rewrite(family: _Family, cap: int) -> tuple[int, int, int]:
    """Each shard again with the added postings and its lists cut at the cap; returns the
    (fingerprints, postings, capped) totals."""
    h = family.header
    rec = family.extra()
    buckets = store.bucket_of(rec["key"]) if len(rec) else np.empty(0, dtype=np.int64)
    shard_of = buckets * h.shards // store.BUCKETS
    totals = [0, 0, 0]
    for i, path in enumerate(family.paths):
        mine = rec[shard_of == i]
        prefix, suffix = store.split_keys(mine["key"], h.prefix_bits)
        pk = prefix.astype(np.int64)
        tmp = path.with_suffix(".rewrite")
        tmp.unlink(missing_ok=True)
        src = store.open_env(path, readonly=True)
        dst = store.open_env(tmp, readonly=False)
        try:
            with src.begin(buffers=False) as rtxn, dst.begin(write=True) as wtxn:
                items = _merged(rtxn.cursor(), pk, suffix, mine, cap, totals)
                wtxn.cursor().putmulti(items, append=True)
            dst.sync(True)
        finally:
            src.close()
            dst.close()
        os.replace(tmp, path)
    return totals[0], totals[1], totals[2]


def _merged(cursor, pk: np.ndarray, suffix: np.ndarray, rec: np.ndarray, cap: int, totals):
    """(prefix key, group) items in key order: the stored groups with the added postings,
    merged as the two sorted streams go."""
    n = len(rec)
    starts = np.flatnonzero(np.concatenate(([True], pk[1:] != pk[:-1]))) if n else []
    bounds = list(zip(list(starts), [*list(starts)[1:], n]))
    added = [(store.prefix_key(int(pk[s])), s, e) for s, e in bounds]
    j = 0
    for pkey, value in cursor:
        while j < len(added) and added[j][0] < pkey:
            _, s, e = added[j]
            yield added[j][0], _cut(_merge_group(None, suffix[s:e], rec[s:e]), cap, totals)
            j += 1
        if j < len(added) and added[j][0] == pkey:
            _, s, e = added[j]
            value = _merge_group(value, suffix[s:e], rec[s:e])
            j += 1
        yield pkey, _cut(value, cap, totals)
    for pkey, s, e in added[j:]:
        yield pkey, _cut(_merge_group(None, suffix[s:e], rec[s:e]), cap, totals)


def _merge_group(value, suffixes: np.ndarray, rec: np.ndarray) -> bytes:
    """A stored group (or none) with postings added; a posting it holds already is not
    added twice (`add` can find again what an earlier look-past pass stored)."""
    lists: dict[int, tuple[int, np.ndarray]] = {}
    if value is not None:
        sfx, counts, ends, pairs = store.decode_group(value)
        starts = np.concatenate(([0], ends[:-1]))
        for j, x in enumerate(sfx.tolist()):
            lists[x] = (int(counts[j]), pairs[starts[j] : ends[j]])
    new = np.stack([rec["doc"], rec["pos"]], axis=1).astype("<u4")
    cut = np.flatnonzero(np.concatenate(([True], suffixes[1:] != suffixes[:-1])))
    for s, e in zip(cut.tolist(), [*cut[1:].tolist(), len(suffixes)]):
        x = int(suffixes[s])
        count, old = lists.get(x, (0, np.empty((0, 2), dtype="<u4")))
        add = new[s:e]
        if len(old):
            seen = set(map(tuple, old.tolist()))
            add = add[[tuple(p) not in seen for p in add.tolist()]]
        both = np.concatenate((old, add))
        lists[x] = (count + len(add), both[np.lexsort((both[:, 1], both[:, 0]))])
    order = sorted(lists)
    counts = np.array([lists[x][0] for x in order], dtype=np.int64)
    kept = np.array([len(lists[x][1]) for x in order], dtype=np.int64)
    pairs = np.concatenate([lists[x][1] for x in order])
    return store.encode_group(np.array(order, dtype=np.uint32), counts, kept, pairs)


def _cut(value: bytes, cap: int, totals: list) -> bytes:
    """A group with its lists cut at the cap (true counts kept)."""
    suffixes, counts, ends, pairs = store.decode_group(value)
    kept = np.diff(ends, prepend=0)
    totals[0] += len(suffixes)
    over = kept > cap
    if not over.any():
        totals[1] += int(kept.sum())
        totals[2] += int((counts > kept).sum())
        return bytes(value)
    starts = ends - kept
    new_kept = np.minimum(kept, cap)
    keep = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, new_kept)])
    totals[1] += int(new_kept.sum())
    totals[2] += int((counts > new_kept).sum())
    return store.encode_group(suffixes, counts, new_kept, pairs[keep])


def finish_caps(
    gen: Path,
    header: store.Header,
    mapper: Callable[[LookPastParams, np.ndarray], Iterator[tuple]],
    old_capped: tuple[np.ndarray, np.ndarray] | None = None,
    first_new_doc: int = 0,
) -> None:
    """Run the look-past pass over a generation written with uncapped lists; sets the
    header's fingerprint, posting and capped totals and writes the capped sets."""
    cap = header.posting_cap
    renamed = bool(header.renamed_languages)
    families = [_Family(gen, header, False)] + ([_Family(gen, header, True)] if renamed else [])
    empty = np.empty(0, dtype=np.uint64)
    olds = old_capped or (empty, empty)
    capped: list[np.ndarray] = []
    todo: list[np.ndarray] = []
    for i, fam in enumerate(families):
        ids, docs = _scan(fam, cap, olds[i], first_new_doc)
        capped.append(ids)
        todo.append(docs)
    while any(len(t) for t in todo):
        params = LookPastParams(
            str(gen), header.k, header.window, header.prefix_bits, capped[0],
            capped[1] if renamed else None,
        )  # fmt: skip
        docs = np.unique(np.concatenate(todo))
        for family, blob in mapper(params, docs):
            families[family].extras.append(np.frombuffer(blob, dtype=_EXTRA))
        todo = []
        for i, fam in enumerate(families):
            newly, affected = _newly_capped(fam, cap, capped[i])
            capped[i] = np.union1d(capped[i], newly)
            todo.append(affected)
    for i, fam in enumerate(families):
        totals = _rewrite(fam, cap)
        capped[i].astype("<u8").tofile(gen / store.capped_name(fam.renamed))
        if fam.renamed:
            header.renamed_fingerprints, header.renamed_postings, header.renamed_capped = totals
        else:
            header.fingerprints, header.postings, header.capped = totals
