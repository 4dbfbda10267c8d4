"""The local builder: documents -> worker processes -> sorted runs -> LMDB shards.

Workers tokenize, hash, winnow and compress; the main process deduplicates identical files
by content hash, stores documents, and buffers postings by bucket (the fingerprint's top
bits). When the buffer exceeds the memory budget it is sorted and spilled to per-bucket run
files; at the end each bucket (1/256 of the postings) is sorted alone and appended to its
shard in key order. Everything goes into a new generation that is published atomically.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import shutil
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import lmdb
import numpy as np
import xxhash
from tqdm import tqdm

from ..model import Document
from ..store import generations as store
from ..store.lock import IndexBusyError, WriterLock
from ..text.fingerprint import HASH_NAME, KGRAM_NAME
from ..text.normalize import GRAMMARS, NORMALIZER_VERSION, supported
from ..text.words import TOKENIZER_VERSION
from .lookpast import UNCAPPED, finish_caps, local_mapper
from .process import ProcessedDoc, process

DEFAULT_K = 20
DEFAULT_WINDOW = 41
DEFAULT_SHARDS = 4
DEFAULT_POSTING_CAP = 256
ORIGIN_CAP = 32  # occurrences kept per unique document (all of them are counted)
DOC_BATCH = 512  # documents per LMDB write transaction

_RUN_DTYPE = np.dtype([("fp", "<u8"), ("doc", "<u4"), ("pos", "<u4")])


class BuildError(Exception):
    """A build could not run (bad source, unusable output directory...)."""


@dataclass
class BuildOptions:
    k: int = DEFAULT_K
    window: int = DEFAULT_WINDOW
    shards: int = DEFAULT_SHARDS
    posting_cap: int = DEFAULT_POSTING_CAP
    jobs: int = 0  # 0: all cores
    max_file_bytes: int = 1_000_000
    memory_mb: int = 256  # postings buffered before spilling a sorted run
    progress: bool | None = None  # None: when stderr is a terminal
    renamed: bool = True  # also index rename-insensitive fingerprints (supported languages)
    registry: object = None  # sources.RegistryOptions for pypi:/npm: sources (None: defaults)


@dataclass
class BuildSummary:
    path: str
    files: int = 0
    words: int = 0
    documents: int = 0
    duplicates: int = 0
    skipped: Counter = field(default_factory=Counter)
    fingerprints: int = 0
    postings: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["skipped"] = dict(self.skipped)
        d["bytes_per_word"] = round(self.bytes / self.words, 3) if self.words else None
        return d

    def lines(self) -> list[str]:
        skipped = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items())) or "none"
        bpw = f"{self.bytes / self.words:.2f}" if self.words else "-"
        rate = self.words / self.seconds if self.seconds else 0
        return [
            f"index: {self.path}",
            f"files: {self.files:,} ({self.documents:,} unique documents, "
            f"{self.duplicates:,} duplicates)",
            f"words: {self.words:,} in unique documents",
            f"skipped: {skipped}",
            f"fingerprints: {self.fingerprints:,} ({self.postings:,} postings)",
            f"index size: {self.bytes:,} bytes ({bpw} bytes per word)",
            f"time: {self.seconds:.1f} s ({rate:,.0f} words/s)",
        ]


# --- worker side -------------------------------------------------------------------------

_K = DEFAULT_K
_W = DEFAULT_WINDOW
_R = True


def _init_worker(k: int, window: int, renamed: bool = True) -> None:
    global _K, _W, _R
    _K, _W, _R = k, window, renamed


def _work(doc: Document) -> tuple[Document, ProcessedDoc]:
    return doc, process(doc.text, _K, _W, doc.language, _R)


# --- main side ---------------------------------------------------------------------------


class _Postings:
    """Postings buffered per bucket, spilled as sorted runs when over budget."""

    def __init__(self, run_dir: Path, budget_bytes: int):
        self.run_dir = run_dir
        self.budget = max(budget_bytes // _RUN_DTYPE.itemsize, 1)
        self.parts: list[np.ndarray] = []
        self.buffered = 0
        self.spilled = False

    def add(self, doc_id: int, fps: np.ndarray, positions: np.ndarray) -> None:
        if not len(fps):
            return
        rec = np.empty(len(fps), dtype=_RUN_DTYPE)
        rec["fp"] = store.keys_of(fps)
        rec["doc"] = doc_id
        rec["pos"] = positions
        self.parts.append(rec)
        self.buffered += len(rec)
        if self.buffered >= self.budget:
            self.spill()

    def _sorted_by_bucket(self) -> Iterator[tuple[int, np.ndarray]]:
        if not self.parts:
            return
        rec = np.concatenate(self.parts)
        self.parts, self.buffered = [], 0
        rec = rec[np.argsort(rec["fp"], kind="stable")]
        buckets = store.bucket_of(rec["fp"])
        edges = np.searchsorted(buckets, np.arange(store.BUCKETS + 1))
        for b in range(store.BUCKETS):
            lo, hi = edges[b], edges[b + 1]
            if hi > lo:
                yield b, rec[lo:hi]

    def spill(self) -> None:
        self.run_dir.mkdir(exist_ok=True)
        for b, rec in self._sorted_by_bucket():
            with open(self.run_dir / f"{b:03d}.run", "ab") as f:
                rec.tofile(f)
        self.spilled = True

    def buckets(self) -> Iterator[tuple[int, np.ndarray]]:
        """Each bucket's postings sorted by (fingerprint, document, position)."""
        if not self.spilled:
            yield from self._sorted_by_bucket()
            return
        self.spill()
        for b in range(store.BUCKETS):
            p = self.run_dir / f"{b:03d}.run"
            if not p.exists():
                continue
            rec = np.fromfile(p, dtype=_RUN_DTYPE)
            p.unlink()
            # runs hold ascending document ids, so a stable sort keeps them in order
            yield b, rec[np.argsort(rec["fp"], kind="stable")]
        shutil.rmtree(self.run_dir, ignore_errors=True)


def _by_key(rec: np.ndarray, cap: int):
    """Per distinct key of a run sorted by key: keys, true counts, kept counts, and the kept
    (doc, pos) pairs in key order."""
    keys = rec["fp"]
    n = len(rec)
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    counts = np.diff(np.append(starts, n))
    kept = np.minimum(counts, cap)
    group = np.repeat(np.arange(len(starts)), counts)
    keep = (np.arange(n) - starts[group]) < kept[group]
    pairs = np.empty((int(keep.sum()), 2), dtype="<u4")
    pairs[:, 0] = rec["doc"][keep]
    pairs[:, 1] = rec["pos"][keep]
    return keys[starts], counts, kept, pairs


def _grouped(rec: np.ndarray, cap: int, prefix_bits: int = store.PREFIX_BITS):
    """LMDB items (prefix key, encoded group) of a run sorted by key, with the true and
    kept counts of its distinct keys. Every group is laid out as `store.encode_group`
    does, all at once in one array."""
    keys, counts, kept, pairs = _by_key(rec, cap)
    if not len(keys):
        return [], counts, kept
    prefix, suffix = store.split_keys(keys, prefix_bits)
    starts = np.flatnonzero(np.concatenate(([True], prefix[1:] != prefix[:-1])))
    sizes = np.diff(np.append(starts, len(keys)))  # keys per group
    group = np.repeat(np.arange(len(starts)), sizes)  # group of each key
    rank = np.arange(len(keys)) - starts[group]  # index of each key in its group
    capped = counts > kept
    kept_end = np.cumsum(kept)  # cumulative kept postings, over all keys
    key_first_pair = kept_end - kept
    group_pairs = np.add.reduceat(kept, starts)
    group_capped = np.add.reduceat(capped.astype(np.int64), starts)
    lengths = 2 + 2 * sizes + 2 * group_capped + 2 * group_pairs
    offsets = np.cumsum(lengths) - lengths
    out = np.zeros(int(lengths.sum()), dtype="<u4")
    out[offsets] = sizes
    out[offsets + 1] = group_capped
    base = offsets[group]
    out[base + 2 + rank] = suffix
    out[base + 2 + sizes[group] + rank] = kept_end - key_first_pair[starts][group]
    # capped keys: (index in group, true count), in key order within the group
    ci = np.flatnonzero(capped)
    if len(ci):
        c_rank = np.arange(len(ci)) - np.searchsorted(ci, starts[group[ci]])
        at = base[ci] + 2 + 2 * sizes[group[ci]] + 2 * c_rank
        out[at] = rank[ci]
        out[at + 1] = counts[ci]
    # postings: (doc, pos) pairs after the header of each group
    owner = np.repeat(np.arange(len(keys)), kept)  # key of each kept posting
    g = group[owner]
    in_group = np.arange(len(owner)) - key_first_pair[starts][g]
    at = offsets[g] + 2 + 2 * sizes[g] + 2 * group_capped[g] + 2 * in_group
    out[at] = pairs[:, 0]
    out[at + 1] = pairs[:, 1]
    buf = out.tobytes()
    pkeys = prefix[starts].astype(">u4").tobytes()
    ob, oe = (offsets * 4).tolist(), ((offsets + lengths) * 4).tolist()
    items = [(pkeys[i * 4 : i * 4 + 4], buf[ob[i] : oe[i]]) for i in range(len(starts))]
    return items, counts, kept


def doc_meta(pd: ProcessedDoc, language: str, offset: int, occurrences: int = 1) -> dict:
    """The `meta` record of a unique document whose text is at `offset` in text.zst."""
    return {
        "w": pd.words,
        "l": language,
        "n": occurrences,
        "h": pd.content_hash.hex(),
        "o": offset,
        "z": len(pd.ztext),
    }


def append_bucket(
    txn, rec: np.ndarray, cap: int, prefix_bits: int = store.PREFIX_BITS
) -> tuple[int, int, int]:
    """Append one bucket's postings (sorted by key, document, position) to a new shard;
    returns (fingerprints, postings kept, fingerprints capped)."""
    items, counts, kept = _grouped(rec, cap, prefix_bits)
    txn.cursor().putmulti(items, append=True)
    return len(counts), int(kept.sum()), int((counts > kept).sum())


class DocStore:
    """The unique documents of a generation being written: docs.mdb and text.zst."""

    def __init__(self, gen: Path):
        self.env = store.open_env(gen / store.DOCS_NAME, readonly=False, max_dbs=8)
        self.dbs = {name.decode(): self.env.open_db(name) for name in store.DOC_DBS}
        self.txn = self.env.begin(write=True)
        self.pending = 0
        self.text = open(gen / store.TEXT_NAME, "ab")  # noqa: SIM115 - closed in close()

    def put(
        self, doc_id: int, pd: ProcessedDoc, language: str, origins: list, occurrences: int = 1
    ) -> None:
        """Store a new document (ids ascending)."""
        key = store.doc_key(doc_id)
        meta = doc_meta(pd, language, self.text.tell(), occurrences)
        self.text.write(pd.ztext)
        txn, dbs = self.txn, self.dbs
        txn.put(key, json.dumps(meta).encode(), db=dbs["meta"], append=True)
        txn.put(key, pd.blocks, db=dbs["blocks"], append=True)
        txn.put(key, json.dumps(origins).encode(), db=dbs["origins"], append=True)
        txn.put(pd.content_hash, key, db=dbs["content"])

    def tick(self) -> None:
        """Count one stored file; commit every DOC_BATCH."""
        self.pending += 1
        if self.pending >= DOC_BATCH:
            self.txn.commit()
            self.txn = self.env.begin(write=True)
            self.pending = 0

    def close(self) -> None:
        self.txn.commit()
        self.env.sync(True)
        self.env.close()
        self.text.flush()
        os.fsync(self.text.fileno())
        self.text.close()


class _Writer:
    """Stores documents and postings of one generation."""

    def __init__(self, gen: Path, header: store.Header, next_doc: int, budget_bytes: int):
        self.gen = gen
        self.header = header
        self.next_doc = next_doc
        self.first_new = next_doc  # documents before it were stored by an earlier build
        self.docs = DocStore(gen)
        self.postings = _Postings(gen / "runs", budget_bytes)
        self.renamed = _Postings(gen / "runs-renamed", budget_bytes)

    def add(self, doc: Document, pd: ProcessedDoc, summary: BuildSummary) -> None:
        txn, dbs = self.docs.txn, self.docs.dbs
        summary.files += 1
        existing = txn.get(pd.content_hash, db=dbs["content"])
        if existing is not None:
            summary.duplicates += 1
            meta = json.loads(txn.get(existing, db=dbs["meta"]))
            meta["n"] += 1
            txn.put(existing, json.dumps(meta).encode(), db=dbs["meta"])
            if meta["n"] <= ORIGIN_CAP:
                origins = json.loads(txn.get(existing, db=dbs["origins"]))
                origins.append(doc.origin.to_dict())
                txn.put(existing, json.dumps(origins).encode(), db=dbs["origins"])
        else:
            doc_id = self.next_doc
            self.next_doc += 1
            self.docs.put(doc_id, pd, doc.language, [doc.origin.to_dict()])
            self.postings.add(doc_id, pd.fps, pd.positions)
            self.renamed.add(doc_id, pd.renamed_fps, pd.renamed_positions)
            summary.documents += 1
            summary.words += pd.words
        self.docs.tick()

    def finish(self, summary: BuildSummary, merge: bool) -> None:
        """Write the postings into the shards (merging into existing ones for `add`)."""
        self.docs.close()
        h = self.header
        counts = _write_shards(self.gen, self.postings, h, merge, renamed=False)
        h.fingerprints, h.postings, h.capped = counts
        if h.renamed_languages:
            counts = _write_shards(self.gen, self.renamed, h, merge, renamed=True)
            h.renamed_fingerprints, h.renamed_postings, h.renamed_capped = counts
        summary.fingerprints, summary.postings = h.fingerprints, h.postings


def _merge_groups(old: bytes, new: bytes, cap: int) -> tuple[bytes, tuple[int, int, int]]:
    """The union of two groups (old postings first), and the old group's counts."""
    merged: dict[int, tuple[int, np.ndarray]] = {}
    stats = [0, 0, 0]
    for i, value in enumerate((old, new)):
        suffixes, counts, ends, pairs = store.decode_group(value)
        starts = np.concatenate(([0], ends[:-1]))
        if i == 0:
            kept = ends - starts
            stats = [len(suffixes), int(kept.sum()), int((counts > kept).sum())]
        for j, sfx in enumerate(suffixes.tolist()):
            p = pairs[starts[j] : ends[j]]
            if sfx in merged:
                c, q = merged[sfx]
                merged[sfx] = (c + int(counts[j]), np.concatenate((q, p))[:cap])
            else:
                merged[sfx] = (int(counts[j]), p)
    order = sorted(merged)
    counts = np.array([merged[x][0] for x in order], dtype=np.int64)
    pairs = [merged[x][1] for x in order]
    kept = np.array([len(p) for p in pairs], dtype=np.int64)
    value = store.encode_group(
        np.array(order, dtype=np.uint32), counts, kept,
        np.concatenate(pairs) if pairs else np.empty((0, 2), dtype="<u4"),
    )  # fmt: skip
    return value, tuple(stats)


def _write_shards(
    gen: Path, postings: _Postings, h: store.Header, merge: bool, renamed: bool
) -> tuple[int, int, int]:
    """Append (or, for `add`, merge) every bucket into its shard; returns the new totals of
    (fingerprints, postings, capped fingerprints)."""
    if renamed:
        fingerprints, kept_total, capped_total = (
            h.renamed_fingerprints,
            h.renamed_postings,
            h.renamed_capped,
        )
    else:
        fingerprints, kept_total, capped_total = h.fingerprints, h.postings, h.capped
    envs = [
        store.open_env(gen / store.shard_name(i, renamed), readonly=False) for i in range(h.shards)
    ]
    txns = [env.begin(write=True) for env in envs]
    cap = UNCAPPED  # lists are written whole; `finish_caps` cuts them
    for b, rec in postings.buckets():
        txn = txns[store.shard_of_bucket(b, h.shards)]
        if not merge:
            fps, kept, capped = append_bucket(txn, rec, cap, h.prefix_bits)
            fingerprints += fps
            kept_total += kept
            capped_total += capped
            continue
        for key, value in _grouped(rec, cap, h.prefix_bits)[0]:
            old = txn.get(key)
            if old is not None:
                value, stats = _merge_groups(old, value, cap)
                fingerprints -= stats[0]
                kept_total -= stats[1]
                capped_total -= stats[2]
            suffixes, counts, ends, _ = store.decode_group(value)
            kept = np.diff(ends, prepend=0)
            fingerprints += len(suffixes)
            kept_total += int(kept.sum())
            capped_total += int((counts > kept).sum())
            txn.put(key, value)
    for txn, env in zip(txns, envs):
        txn.commit()
        env.sync(True)
        env.close()
    return fingerprints, kept_total, capped_total


def _bounded(items: Iterable[Document], slots: threading.Semaphore) -> Iterator[Document]:
    for item in items:
        slots.acquire()
        yield item


def _documents(sources, summary: BuildSummary) -> Iterator[Document]:
    for src in sources:
        yield from src.documents()
        summary.skipped.update(src.skipped)


def _run(sources, writer: _Writer, opts: BuildOptions, summary: BuildSummary) -> None:
    jobs = opts.jobs or os.cpu_count() or 1
    show = opts.progress if opts.progress is not None else sys.stderr.isatty()
    bar = tqdm(
        desc="indexing", unit=" files", disable=not show, file=sys.stderr, dynamic_ncols=True
    )
    docs = _documents(sources, summary)
    try:
        if jobs <= 1:
            results: Iterable = (_run_one(d, opts) for d in docs)
            slots = None
        else:
            # fork shares the loaded modules; Windows has only spawn
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
            pool = ctx.Pool(
                jobs, initializer=_init_worker, initargs=(opts.k, opts.window, opts.renamed)
            )
            slots = threading.Semaphore(jobs * 64)  # documents in flight, bounds memory
            results = pool.imap(_work, _bounded(docs, slots), chunksize=8)
        try:
            for doc, pd in results:
                if slots is not None:
                    slots.release()
                writer.add(doc, pd, summary)
                bar.update(1)
                if bar.n % 64 == 0:
                    bar.set_postfix_str(f"{summary.words / 1e6:.1f}M words", refresh=False)
        finally:
            if slots is not None:
                pool.terminate()
                pool.join()
    finally:
        bar.close()


def _run_one(doc: Document, opts: BuildOptions) -> tuple[Document, ProcessedDoc]:
    return doc, process(doc.text, opts.k, opts.window, doc.language, opts.renamed)


def _open_sources(specs: list[str], opts: BuildOptions) -> list:
    sources = []
    for spec in specs:
        if not isinstance(spec, str):  # an already opened source
            sources.append(spec)
            continue
        from .sources import SourceError, open_source

        try:
            sources.append(
                open_source(spec, max_file_bytes=opts.max_file_bytes, registry=opts.registry)
            )
        except SourceError as e:
            raise BuildError(str(e)) from None
    return sources


def _check_params(opts: BuildOptions) -> None:
    if not (2 <= opts.k <= 64):
        raise BuildError(f"k must be between 2 and 64 (got {opts.k})")
    if not (1 <= opts.window <= 512):
        raise BuildError(f"window must be between 1 and 512 (got {opts.window})")
    if not (1 <= opts.shards <= store.BUCKETS):
        raise BuildError(f"shards must be between 1 and {store.BUCKETS} (got {opts.shards})")
    if opts.posting_cap < 1:
        raise BuildError("the posting cap must be at least 1")


def _finish(
    root: Path,
    gen: Path,
    writer: _Writer,
    summary: BuildSummary,
    merge: bool,
    started: float,
    opts: BuildOptions,
    old_capped: tuple[np.ndarray, np.ndarray] | None = None,
) -> BuildSummary:
    writer.finish(summary, merge)
    h = writer.header
    finish_caps(gen, h, local_mapper(opts.jobs), old_capped, writer.first_new)
    summary.fingerprints, summary.postings = h.fingerprints, h.postings
    h.skipped = dict(Counter(h.skipped) + summary.skipped)
    if merge:  # rewrite compactly: in-place updates leave free pages behind
        for p in sorted(gen.glob("*.mdb")):
            env = store.open_env(p, readonly=False, max_dbs=8)
            tmp = p.with_suffix(".compact")
            env.copy(str(tmp), compact=True)
            env.close()
            os.replace(tmp, p)
    store.finalize_generation(gen, h)
    store.publish(root, gen)
    summary.bytes = sum(h.file_sizes.values())
    summary.seconds = time.perf_counter() - started
    return summary


def prepare_build(specs: list, out: str | os.PathLike, opts: BuildOptions) -> tuple[list, Path]:
    """Checked parameters, opened sources and the output root of a new build."""
    _check_params(opts)
    sources = _open_sources(specs, opts)
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise BuildError(f"{root} exists and is not a directory")
    try:
        foreign = [p.name for p in root.iterdir() if not store.is_ours(p.name)]
    except FileNotFoundError:
        foreign = []
    except OSError as e:
        raise BuildError(f"cannot read {root}: {e.strerror or e}") from None
    foreign = [name for name in foreign if name not in _DESKTOP_FILES]
    if foreign and not (root / store.CURRENT_NAME).exists():
        raise BuildError(f"{root} is not empty and is not an index; choose another --out")
    return sources, root


# what a file manager leaves in any folder it shows: not a reason to refuse an index folder
_DESKTOP_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


class InterruptedAfterPublish(KeyboardInterrupt):
    """Interrupted once the new generation was live: the index is complete and new."""


@contextlib.contextmanager
def writing(root: Path):
    """Hold the index's writer lock while building into `root`, clean what interrupted
    writers left, and turn failures (disk full, permissions, a source that breaks while it
    is read) into one-line errors."""
    from .sources import SourceError

    lock = WriterLock(root)
    try:
        lock.acquire()
    except IndexBusyError as e:
        raise BuildError(str(e)) from None
    except OSError as e:
        raise BuildError(f"cannot write to {root}: {e.strerror or e}") from None
    try:
        store.clean(root)
        yield
    except SourceError as e:
        raise BuildError(str(e)) from None
    except (OSError, lmdb.Error) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise BuildError(f"cannot write the index at {root}: {reason}") from None
    finally:
        lock.release()


def abandon(gen: Path, error: BaseException) -> None:
    """After a failed or interrupted build: remove its generation unless it is live (CURRENT
    is read again: an interruption can come right after the swap). When CURRENT cannot be
    read the generation stays for the next writer's cleanup."""
    live = store.is_live(gen)
    if live is False:
        store.discard(gen)
    elif live and isinstance(error, KeyboardInterrupt):
        raise InterruptedAfterPublish() from None


def new_generation(root: Path) -> Path:
    try:
        return store.new_generation(root)
    except OSError as e:
        raise BuildError(f"cannot create {root}: {e}") from None


def new_header(opts: BuildOptions, sources: list) -> store.Header:
    return store.Header(
        format_version=store.FORMAT_VERSION,
        k=opts.k,
        window=opts.window,
        shards=opts.shards,
        posting_cap=opts.posting_cap,
        hash=HASH_NAME,
        kgram=KGRAM_NAME,
        tokenizer_version=TOKENIZER_VERSION,
        name=" + ".join(s.name for s in sources),
        sources=[s.describe() for s in sources],
        renamed_languages=sorted(g for g in GRAMMARS if supported(g)) if opts.renamed else [],
        normalizer_version=NORMALIZER_VERSION if opts.renamed else 0,
    )


def build_index(
    specs: list[str], out: str | os.PathLike, options: BuildOptions | None = None
) -> BuildSummary:
    """Build a new index of `specs` (corpus sources) and publish it at `out`.

    An index already at `out` is replaced only when the new one is complete.
    """
    opts = options or BuildOptions()
    sources, root = prepare_build(specs, out, opts)
    started = time.perf_counter()
    with writing(root):
        gen = new_generation(root)
        header = new_header(opts, sources)
        summary = BuildSummary(path=str(root))
        try:
            writer = _Writer(gen, header, 0, opts.memory_mb << 20)
            _run(sources, writer, opts, summary)
            header.documents, header.words, header.files = (
                summary.documents,
                summary.words,
                summary.files,
            )
            return _finish(root, gen, writer, summary, False, started, opts)
        except BaseException as e:
            abandon(gen, e)
            raise


def add_to_index(
    path: str | os.PathLike, specs: list[str], options: BuildOptions | None = None
) -> BuildSummary:
    """Extend the index at `path` with more sources (same parameters), atomically."""
    opts = options or BuildOptions()
    root = Path(path)
    store.read_header(root)  # a clear error before taking the lock when there is no index
    with writing(root):
        return _add(root, specs, opts)


def _copy_checked(src: Path, dst: Path, digest: str, root: Path) -> None:
    """Copy a file of the live generation, checking its digest on the way: `add` never
    carries damage into a new generation (whose header would vouch for it)."""
    h = xxhash.xxh3_128()
    with os.fdopen(store.open_regular(src), "rb") as f, open(dst, "wb") as out:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            out.write(chunk)
    if h.hexdigest() != digest:
        raise BuildError(
            f"index at {root} is damaged ({src.name}: contents differ from the header's "
            "digest); rebuild it"
        )


def _add(root: Path, specs: list[str], opts: BuildOptions) -> BuildSummary:
    old_gen, header = store.read_header(root)
    problems = store.structure_problems(old_gen, header)
    if problems:
        raise BuildError(f"index at {root} is damaged ({problems[0]}); rebuild it")
    opts.k, opts.window = header.k, header.window
    opts.renamed = bool(header.renamed_languages)
    sources = _open_sources(specs, opts)
    started = time.perf_counter()
    gen = store.new_generation(root)
    try:
        for name in sorted(header.file_sizes):
            if not name.endswith(".u64"):  # the capped sets are written anew
                _copy_checked(old_gen / name, gen / name, header.file_hashes[name], root)
        header.sources = header.sources + [s.describe() for s in sources]
        header.name = " + ".join(
            [header.name] + [s.name for s in sources] if header.name else [s.name for s in sources]
        )
        summary = BuildSummary(path=str(root))
        writer = _Writer(gen, header, header.documents, opts.memory_mb << 20)
        _run(sources, writer, opts, summary)
        header.documents += summary.documents
        header.words += summary.words
        header.files += summary.files
        old_capped = tuple(
            store.load_capped(old_gen / store.capped_name(renamed)) for renamed in (False, True)
        )
        return _finish(root, gen, writer, summary, True, started, opts, old_capped)
    except BaseException as e:
        abandon(gen, e)
        raise
