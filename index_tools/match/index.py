"""Reading an index: open it read-only (memory-mapped) and match suggestions against it."""

from __future__ import annotations

import json
import mmap
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import lmdb
import numpy as np

from ..model import Origin
from ..store import generations as store
from ..store.generations import IndexOpenError, capped_mask, decompress
from ..text.fingerprint import WordHasher, guarantee, kgram_fingerprints
from ..text.normalize import identifier_mask, normalized_hashes
from ..text.words import WORD_RE

# decompressed documents kept for verification, in words (each costs ~70 bytes once its
# words are hashed): near-copies hit by one query (forks, vendored files) stay cached
CACHE_WORDS = 1_500_000
# indexes up to this size have every file's digest checked when opened (~0.1 s per 100 MB), so
# damaged bytes are an error, never a crash; larger ones have the digests of the files written
# since the build checked (size or mtime changed) and the structural checks
DIGESTS_ON_OPEN_BYTES = 512 << 20
_OPEN_TRIES = 3  # a publish while opening: the new generation is opened instead


_ORIGIN_TYPES = {"repository": str, "path": str, "commit": str, "license": str, "link": str,
                 "line_anchor": bool}  # fmt: skip


def _origin(d) -> Origin:
    """A stored origin, its fields of the right types (ValueError otherwise)."""
    if not isinstance(d, dict) or not all(
        isinstance(d[k], t) for k, t in _ORIGIN_TYPES.items() if k in d
    ):
        raise ValueError("origin")
    return Origin.from_dict(d)


class BlockCache:
    """Tokenized blocks (words, hashes) by their text, shared by all documents: a block
    that copies of a file share is tokenized and hashed once."""

    def __init__(self, max_words: int):
        self._blocks: OrderedDict[str, tuple[list[str], np.ndarray]] = OrderedDict()
        self._words = 0
        self._max_words = max_words
        self._lock = threading.Lock()

    def get(self, text: str) -> tuple[list[str], np.ndarray] | None:
        with self._lock:
            found = self._blocks.get(text)
            if found is not None:
                self._blocks.move_to_end(text)
            return found

    def put(self, text: str, block: tuple[list[str], np.ndarray]) -> None:
        with self._lock:
            if text in self._blocks:
                return
            self._blocks[text] = block
            self._words += len(block[0])
            while self._words > self._max_words and len(self._blocks) > 1:
                self._words -= len(self._blocks.popitem(last=False)[1][0])


@dataclass
class StoredDocument:
    """A unique document of the index, decompressed."""

    doc_id: int
    text: str
    words: int
    language: str
    occurrences: int
    origins: list[Origin]
    block_chars: np.ndarray
    block_words: np.ndarray
    _blocks: dict = field(default_factory=dict)  # block -> (words, hashes), filled lazily
    _offsets: dict = field(default_factory=dict)  # block -> word (start, end) offsets
    _renamed: dict = field(default_factory=dict)  # (block, language) -> normalized hashes
    _shared: BlockCache | None = None  # blocks tokenized in any document, by their text
    _all: dict = field(default_factory=dict)  # "exact"/language -> hashes of every word

    def _block_of(self, pos: int) -> int:
        return int(np.searchsorted(self.block_words, pos, side="right")) - 1

    def _block_end(self, b: int) -> int:
        return int(self.block_chars[b + 1]) if b + 1 < len(self.block_chars) else len(self.text)

    def _block(self, b: int, hasher: WordHasher | None) -> tuple[list[str], np.ndarray | None]:
        cached = self._blocks.get(b)
        if cached is None or (hasher is not None and cached[1] is None):
            text = self.text[int(self.block_chars[b]) : self._block_end(b)]
            shared = self._shared.get(text) if self._shared is not None else None
            if shared is not None and (hasher is None or shared[1] is not None):
                cached = shared
            else:
                words = cached[0] if cached else WORD_RE.findall(text)
                cached = (words, hasher.hashes(words) if hasher else None)
                if self._shared is not None and hasher is not None:
                    self._shared.put(text, cached)
            self._blocks[b] = cached
        return cached

    def word_texts(self, lo: int, hi: int) -> list[str]:
        """The words at positions [lo, hi)."""
        hi = min(hi, self.words)
        if lo >= hi:
            return []
        b = self._block_of(lo)
        first = int(self.block_words[b])
        out: list[str] = []
        while b < len(self.block_chars) and first + len(out) < hi:
            out.extend(self._block(b, None)[0])
            b += 1
        return out[lo - first : hi - first]

    def word_hashes(self, lo: int, hi: int, hasher: WordHasher) -> np.ndarray:
        """xxh3 hashes of the words at positions [lo, hi); blocks are hashed once."""
        return self._span(lo, hi, lambda b: self._block(b, hasher)[1])

    def _span(self, lo: int, hi: int, block_hashes) -> np.ndarray:
        """Positions [lo, hi) of the per-block arrays `block_hashes(b)`, joined."""
        hi = min(hi, self.words)
        if lo >= hi:
            return np.empty(0, dtype=np.uint64)
        b = self._block_of(lo)
        first = int(self.block_words[b])
        parts = []
        end = first
        while b < len(self.block_chars) and end < hi:
            h = block_hashes(b)
            parts.append(h)
            end += len(h)
            b += 1
        joined = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return joined[lo - first : hi - first]

    def all_hashes(self, hasher: WordHasher, language: str | None = None) -> np.ndarray:
        """Hashes of every word (rename-insensitive with a `language`), kept: a document
        compared along many diagonals is read as one array."""
        key = language or ""
        found = self._all.get(key)
        if found is None:
            if language:
                found = self.renamed_hashes(0, self.words, hasher, language)
            else:
                found = self.word_hashes(0, self.words, hasher)
            self._all[key] = found
        return found

    def renamed_hashes(self, lo: int, hi: int, hasher: WordHasher, language: str) -> np.ndarray:
        """Hashes of the words [lo, hi) with identifiers normalized (`normalize`), as the
        rename-insensitive fingerprints see them; blocks are normalized once."""

        def normalized(b: int) -> np.ndarray:
            h = self._renamed.get((b, language))
            if h is None:
                h = self._renamed[(b, language)] = self._normalize_block(b, hasher, language)
            return h

        return self._span(lo, hi, normalized)

    def _normalize_block(self, b: int, hasher: WordHasher, language: str) -> np.ndarray:
        words, hashes = self._block(b, hasher)
        # one word more on each side: a word between quotes is told by its neighbours
        start = int(self.block_words[b])
        before = self.word_texts(start - 1, start) if start else []
        after = self.word_texts(start + len(words), start + len(words) + 1)
        mask = identifier_mask(before + words + after, language)
        if mask is None:
            return hashes
        return normalized_hashes(hashes, mask[len(before) : len(before) + len(words)])

    def word_offsets(self, pos: int) -> tuple[int, int]:
        """Start and end character offsets of the word at position `pos`."""
        b = self._block_of(pos)
        spans = self._offsets.get(b)
        if spans is None:
            it = WORD_RE.finditer(self.text, int(self.block_chars[b]), self._block_end(b))
            spans = self._offsets[b] = [m.span() for m in it]
        return spans[pos - int(self.block_words[b])]

    def word_at(self, offset: int) -> int:
        """Position of the word that starts at character `offset`."""
        b = int(np.searchsorted(self.block_chars, offset, side="right")) - 1
        start = int(self.block_chars[b])
        return int(self.block_words[b]) + len(WORD_RE.findall(self.text, start, offset))

    def line_of(self, offset: int) -> int:
        """1-based line of a character offset."""
        return self.text.count("\n", 0, offset) + 1


class Index:
    """A published index, mapped read-only. Safe to use from several threads.

    Opening resolves CURRENT once and checks the generation it names before mapping it: the
    header (`store.read_header`), each file's structure and digests (`store.open_problems`
    with `DIGESTS_ON_OPEN_BYTES`), the capped sets, the document count. Damage is an
    `IndexOpenError` (one line), found later in stored data too (`document`, `postings`).
    When a publish replaces the generation while it is being opened, the new one is opened.

    `generation` is the name of the generation this Index maps: a reader notices a newer one
    when `store.current_generation(root)` differs from it (see there). A published
    generation is never written again, so what an open Index maps stays valid.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        for attempt in range(_OPEN_TRIES):
            before = store.current_generation(self.root)
            try:
                self._open()
                break
            except IndexOpenError:
                # the generation named when we began was replaced (and removed) meanwhile
                if attempt == _OPEN_TRIES - 1 or store.current_generation(self.root) == before:
                    raise
        self._hasher = WordHasher()
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, StoredDocument] = OrderedDict()
        self._cached_words = 0
        self._block_cache = BlockCache(CACHE_WORDS)

    def _open(self) -> None:
        self.gen, self.header = store.read_header(self.root)
        self.generation = self.gen.name
        h = self.header
        problems = store.open_problems(self.gen, h, DIGESTS_ON_OPEN_BYTES, capped=False)
        if problems:
            raise IndexOpenError(f"index at {self.root} is damaged ({problems[0]}); rebuild it")
        self._text = b""
        self._docs_env = None
        self._shards, self._renamed = [], []
        try:
            self._capped = [
                store.load_capped(self.gen / store.capped_name(renamed))
                for renamed in (False, True)
            ]
            self._docs_env = store.open_env(self.gen / store.DOCS_NAME, readonly=True, max_dbs=8)
            self._dbs = {n.decode(): self._docs_env.open_db(n, create=False) for n in store.DOC_DBS}
            for i in range(h.shards):
                self._shards.append(store.open_env(self.gen / store.shard_name(i), readonly=True))
                if h.renamed_languages:
                    self._renamed.append(
                        store.open_env(self.gen / store.shard_name(i, renamed=True), readonly=True)
                    )
            with self._docs_env.begin() as txn:
                stored = txn.stat(self._dbs["meta"])["entries"]
            if stored != h.documents:
                raise ValueError(f"{stored} documents stored, the header says {h.documents}")
            with os.fdopen(store.open_regular(self.gen / store.TEXT_NAME), "rb") as f:
                size = os.fstat(f.fileno()).st_size
                self._text = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except (lmdb.Error, OSError, ValueError) as e:
            self.close()
            reason = getattr(e, "strerror", None) or str(e)
            raise IndexOpenError(
                f"index at {self.root} is damaged ({reason}); rebuild it"
            ) from None
        self.k = h.k
        self.window = h.window

    # --- facts ---------------------------------------------------------------------------

    @property
    def guarantee(self) -> int:
        return guarantee(self.k, self.window)

    def summary(self) -> dict:
        h = self.header
        size = sum(h.file_sizes.values())
        return {
            "path": str(self.root),
            "name": h.name,
            "format_version": h.format_version,
            "k": h.k,
            "window": h.window,
            "guarantee": self.guarantee,
            "shards": h.shards,
            "posting_cap": h.posting_cap,
            "hash": h.hash,
            "documents": h.documents,
            "files": h.files,
            "words": h.words,
            "fingerprints": h.fingerprints,
            "postings": h.postings,
            "capped": h.capped,
            "bytes": size,
            "bytes_per_word": round(size / h.words, 3) if h.words else None,
            "skipped": h.skipped,
            "sources": h.sources,
            "created": h.created,
        }

    def close(self) -> None:
        if isinstance(self._text, mmap.mmap):
            self._text.close()
        if self._docs_env is not None:
            self._docs_env.close()
        for env in self._shards + self._renamed:
            env.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- documents -----------------------------------------------------------------------

    def document(self, doc_id: int) -> StoredDocument:
        with self._lock:
            doc = self._cache.get(doc_id)
            if doc is not None:
                self._cache.move_to_end(doc_id)
                return doc
        try:
            doc = self._load_document(doc_id)
        except IndexOpenError:
            raise
        except Exception as e:  # damaged stored data: one clear error, never a wrong answer
            raise IndexOpenError(
                f"index at {self.root} is damaged (document {doc_id}: {type(e).__name__}); "
                "rebuild it"
            ) from None
        with self._lock:
            if doc_id not in self._cache:
                self._cache[doc_id] = doc
                self._cached_words += doc.words
            while self._cached_words > CACHE_WORDS and len(self._cache) > 1:
                self._cached_words -= self._cache.popitem(last=False)[1].words
        return doc

    def _load_document(self, doc_id: int) -> StoredDocument:
        key = store.doc_key(doc_id)
        dbs = self._dbs
        with self._docs_env.begin(buffers=False) as txn:
            meta_raw = txn.get(key, db=dbs["meta"])
            if meta_raw is None:
                raise IndexOpenError(f"index at {self.root} is damaged (document {doc_id} missing)")
            meta = json.loads(meta_raw)
            w, n, o, z = meta["w"], meta["n"], meta["o"], meta["z"]
            language = meta.get("l", "")
            if not all(type(v) is int and v >= 0 for v in (w, n, o, z)) or not isinstance(
                language, str
            ):
                raise ValueError("document record")
            table = np.frombuffer(txn.get(key, db=dbs["blocks"]), dtype="<u4").reshape(-1, 2)
            ztext = self._text[o : o + z]
            if len(ztext) != z:
                raise IndexOpenError(f"index at {self.root} is damaged (text of {doc_id} cut)")
            text = decompress(ztext)  # the zstd frame's checksum finds changed bytes
            origins = [_origin(o) for o in json.loads(txn.get(key, db=dbs["origins"]))]
        chars = table[:, 0].astype(np.int64)
        words = table[:, 1].astype(np.int64)
        if (
            len(chars) == 0
            or chars[0] != 0
            or words[0] != 0
            or np.any(np.diff(chars) <= 0)
            or np.any(np.diff(words) < 0)
            or chars[-1] >= len(text)
            # the last block (about a kilobyte) holds the words the table does not count
            or int(words[-1]) + len(WORD_RE.findall(text, int(chars[-1]))) != w
        ):
            raise ValueError("block table")
        return StoredDocument(
            doc_id=doc_id,
            text=text,
            words=w,
            language=language,
            occurrences=n,
            origins=origins,
            block_chars=chars,
            block_words=words,
            _shared=self._block_cache,
        )

    # --- lookups -------------------------------------------------------------------------

    def postings(self, fps: np.ndarray, renamed: bool = False) -> dict[int, tuple[int, np.ndarray]]:
        """For each distinct fingerprint that is stored: (true count, (doc, pos) pairs)."""
        h = self.header
        found: dict[int, tuple[int, np.ndarray]] = {}
        envs = self._renamed if renamed else self._shards
        if not len(fps) or not envs:
            return found
        keys = store.keys_of(fps)
        prefix, suffix = store.split_keys(keys, h.prefix_bits)
        shard_ids = (store.bucket_of(keys) * h.shards // store.BUCKETS).tolist()
        pkeys = prefix.astype(">u4").tobytes()
        lookup = store.group_lookup
        txns = [env.begin(buffers=True) for env in envs]
        try:
            for i, sfx in enumerate(suffix.tolist()):
                value = txns[shard_ids[i]].get(pkeys[4 * i : 4 * i + 4])
                if value is not None:
                    hit = lookup(value, sfx)
                    if hit is not None:
                        found[i] = (hit[0], hit[1].copy())
        except Exception as e:  # damaged postings: one clear error, never a wrong answer
            raise IndexOpenError(
                f"index at {self.root} is damaged (postings: {type(e).__name__}); rebuild it"
            ) from None
        finally:
            for t in txns:
                t.abort()
        return found

    def capped_mask(self, fps: np.ndarray, renamed: bool = False) -> np.ndarray:
        """Which fingerprints have capped postings (as the builder decided)."""
        return capped_mask(fps, self._capped[int(renamed)], self.header.prefix_bits)

    def fingerprint_count(self, fps: np.ndarray) -> list[int]:
        """True posting counts of the given fingerprints (0 when absent)."""
        found = self.postings(fps)
        return [found[i][0] if i in found else 0 for i in range(len(fps))]

    def match(self, suggestion: str, context: str = "", min_tokens: int = 60, **options):
        """Spans of `context + suggestion` quoted from indexed files that overlap the
        suggestion and are at least `min_tokens` words long; with `language=`, renamed
        copies too. See `matcher.find_matches`."""
        from .matcher import find_matches

        return find_matches(self, suggestion, context, min_tokens, **options)

    def word_hashes(self, words: list[str]) -> np.ndarray:
        return self._hasher.hashes(words)

    def document_hashes(self, doc: StoredDocument, lo: int, hi: int) -> np.ndarray:
        """Word hashes of a stored document's words [lo, hi), as `word_hashes` makes them."""
        return doc.word_hashes(lo, hi, self._hasher)

    def document_all_hashes(self, doc: StoredDocument, language: str | None = None) -> np.ndarray:
        """Hashes of all of a stored document's words (rename-insensitive with a language)."""
        return doc.all_hashes(self._hasher, (doc.language or language) if language else None)

    def document_renamed_hashes(
        self, doc: StoredDocument, lo: int, hi: int, language: str
    ) -> np.ndarray:
        """Rename-insensitive word hashes of a stored document's words [lo, hi)."""
        return doc.renamed_hashes(lo, hi, self._hasher, doc.language or language)

    def kgrams(self, words: list[str]) -> np.ndarray:
        return kgram_fingerprints(self.word_hashes(words), self.k)


def open_index(path: str | os.PathLike) -> Index:
    """Open a published index read-only; raises IndexOpenError with a clear message."""
    return Index(path)
