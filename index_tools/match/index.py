"""Reading an index: open it read-only (memory-mapped) and match suggestions against it."""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import threading
import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import lmdb
import numpy as np

from ..model import Origin
from ..safe_text import printable
from ..store import generations as store
from ..store import shards as files
from ..store.generations import IndexOpenError, decompress
from ..store.line_table import LineTable
from ..store.map_ahead import MappedAhead, map_ahead, mapped_range
from ..text.words import WORD_RE
from . import kernel
from .kernel import status as search_status
from .suffix import PopularCounts, ShardView

# decompressed documents kept (they give sources their lines and renamed copies their names)
CACHE_WORDS = 1_500_000
WORD_CACHE = 1 << 20  # query words kept with their ids
LINE_POINTS = 32  # lines of a document kept to count the newlines of the next from
# indexes up to this size have every file's digest checked when opened (~0.1 s per 100 MB), so
# damaged bytes are an error, never a crash; larger ones have the digests of the files written
# since the build checked (size or mtime changed) and the structural checks
DIGESTS_ON_OPEN_BYTES = 512 << 20
_OPEN_TRIES = 3  # a publish while opening: the new generation is opened instead
REHEARSAL_WORDS = 200  # a document this long is looked up to warm a lookup thread
REHEARSAL_CHARS = 4000


_ORIGIN_TYPES = {"repository": str, "path": str, "commit": str, "license": str, "link": str,
                 "line_anchor": bool}  # fmt: skip


def _block_table_ok(table: np.ndarray, chars: int) -> bool:
    """A document's block table (rows: a block's first character and word) starts at 0, its
    characters rise within the text and its words never fall (the last block's words are
    checked when read: `StoredDocument._check_count`)."""
    if len(table) == 0 or table[0, 0] != 0 or table[0, 1] != 0 or table[-1, 0] >= chars:
        return False
    if len(table) <= 16:  # (most documents: a few blocks, faster read one by one)
        rows = table.tolist()
        return all(b[0] > a[0] and b[1] >= a[1] for a, b in zip(rows, rows[1:]))
    return bool(np.all(table[1:, 0] > table[:-1, 0]) and np.all(table[1:, 1] >= table[:-1, 1]))


def _origin(d) -> Origin:
    """A stored origin, its fields of the right types (ValueError otherwise)."""
    if not isinstance(d, dict) or not all(
        isinstance(d[k], t) for k, t in _ORIGIN_TYPES.items() if k in d
    ):
        raise ValueError("origin")
    return Origin.from_dict(d)


def _line_from(text: str, offset: int, at: tuple[int, ...], no: tuple[int, ...]):
    """The line of `offset` in `text`, counted from the nearest offset of `at` (ascending,
    `at[0]` 0) whose line `no` says; and the points with this one added, while fewer than
    LINE_POINTS (None: kept as they are)."""
    k = bisect_right(at, offset)  # at[k - 1] <= offset < at[k]
    if k == len(at) or offset - at[k - 1] <= at[k] - offset:
        line = no[k - 1] + text.count("\n", at[k - 1], offset)
    else:
        line = no[k] - text.count("\n", offset, at[k])
    if len(at) < LINE_POINTS and at[k - 1] != offset:
        return line, ((*at[:k], offset, *at[k:]), (*no[:k], line, *no[k:]))
    return line, None


class Frames:
    """The frames of a document stored in more than one (`build.process.compressed`): each
    read and checked when first asked for, kept with the document."""

    def __init__(self, doc_id: int, firsts, chars, lines, read):
        self.doc_id = doc_id
        self.firsts = firsts  # each frame's first block
        self.chars = chars  # each frame's first character
        self.lines = lines  # the newlines before each frame
        self._read = read  # frame -> its text
        self._texts: dict[int, str] = {}
        # frame -> offsets in it whose lines are known, ascending, and their lines
        self.line_points: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    def of_char(self, offset: int) -> int:
        return bisect_right(self.chars, offset) - 1

    def line_of(self, offset: int) -> int:
        """1-based line of a character offset of the document: counted in its frame from the
        nearest line known there (the frame's first: the newlines before it, plus one)."""
        f = self.of_char(offset)
        at, no = self.line_points.get(f) or ((0,), (self.lines[f] + 1,))
        line, points = _line_from(self.text(f), offset - self.chars[f], at, no)
        if points is not None:
            self.line_points[f] = points
        return line

    def of_block(self, b: int) -> int:
        return bisect_right(self.firsts, b) - 1

    def text(self, f: int) -> str:
        text = self._texts.get(f)
        if text is None:
            text = self._read(f)
            if f + 1 < len(self.firsts) and (
                len(text) != self.chars[f + 1] - self.chars[f]
                or text.count("\n") != self.lines[f + 1] - self.lines[f]
            ):
                self.damaged(f)
            self._texts[f] = text
        return text

    def damaged(self, f: int):
        raise IndexOpenError(f"index is damaged (document {self.doc_id}: frame {f})")


def frames_of(doc_id: int, rows, chars: np.ndarray, o: int, z: int, read) -> Frames:
    """A document's frame table (per frame: first block, compressed size, newlines before
    it), checked against its block table (`chars`: each block's first character) and its
    stored size (`z` bytes at `o`); `read(offset, size)` decompresses one frame."""
    if not isinstance(rows, list) or len(rows) < 2:
        raise ValueError("frame table")
    if not all(
        isinstance(r, list) and len(r) == 3 and all(type(v) is int and v >= 0 for v in r)
        for r in rows
    ):
        raise ValueError("frame table")
    firsts, sizes, lines = (tuple(col) for col in zip(*rows))
    if (
        firsts[0] != 0
        or lines[0] != 0
        or firsts[-1] >= len(chars)
        or sum(sizes) != z
        or 0 in sizes
        or not all(b > a for a, b in zip(firsts, firsts[1:]))
        or not all(b >= a for a, b in zip(lines, lines[1:]))
    ):
        raise ValueError("frame table")
    at = tuple(np.cumsum((o, *sizes[:-1])).tolist())

    def frame(f: int) -> str:
        try:
            return read(at[f], sizes[f])
        except IndexOpenError:
            raise
        except Exception as e:  # damaged stored data: one clear error
            raise IndexOpenError(
                f"index is damaged (document {doc_id}, frame {f}: {type(e).__name__}); rebuild it"
            ) from None

    return Frames(doc_id, firsts, tuple(chars[list(firsts)].tolist()), lines, frame)


@dataclass
class StoredDocument:
    """A unique document of the index, its text read when first needed: whole, or for a
    long one the frame a block is in. What it derives is kept in tuples of numbers and
    strings, which the garbage collector stops visiting once it has seen them (the cache of
    documents in lists was walked by every full collection: pauses of 20-40 ms in
    lookups)."""

    doc_id: int
    # the whole text, of a document stored as one frame (else `frames`); None until read by
    # `read_text` when one is given
    text: str | None
    words: int
    language: str
    occurrences: int
    origins: list[Origin]
    block_chars: np.ndarray | None  # each block's first character (None: not read yet)
    block_words: np.ndarray | None  # and its first word
    frames: Frames | None = None
    read_text: Callable[[], str] | None = None  # the text of one frame, when first needed
    stored_lines: bytes | None = None  # the line table (format 8), read when first asked
    stored_blocks: bytes | None = None  # the block table, read when first needed
    _line_table: LineTable | None = None
    _blocks: dict = field(default_factory=dict)  # block -> its words, filled lazily
    _offsets: dict = field(default_factory=dict)  # block -> its words' starts and ends
    # offsets whose lines are known, ascending, and their lines (the start's: 1)
    _line_points: tuple[tuple[int, ...], tuple[int, ...]] = ((0,), (1,))
    _first_words: tuple[int, ...] = ()  # block_words, for scalar lookups
    _shown: tuple[tuple[str, str, str, str], ...] | None = None  # origins, printable

    def __post_init__(self):
        if self.block_words is not None:
            self._first_words = tuple(self.block_words.tolist())

    def _block_table(self) -> None:
        """The block table read from `stored_blocks` when first needed (a source's lines
        come from the line table: most documents loaded never need it)."""
        if self.block_chars is not None:
            return
        try:
            table = np.frombuffer(self.stored_blocks, dtype="<u4").reshape(-1, 2)
            chars = table[:, 0].astype(np.int64)
            if not _block_table_ok(table, int(chars[-1]) + 1 if len(chars) else 0):
                raise ValueError
        except (ValueError, TypeError):
            raise IndexOpenError(
                f"index is damaged (document {self.doc_id}: block table)"
            ) from None
        words = table[:, 1].astype(np.int64)
        self._first_words = tuple(words.tolist())  # (set before block_chars, which says it is
        self.block_words, self.block_chars = words, chars  # read: lookups in other threads)

    def _text(self) -> str:
        """The text of a document stored as one frame, read when first needed."""
        text = self.text
        if text is None and self.read_text is not None:
            self._block_table()
            text = self.read_text()
            if len(self.block_chars) and int(self.block_chars[-1]) >= len(text):
                raise IndexOpenError(f"index is damaged (document {self.doc_id}: block table)")
            self.text = text
        return text

    def whole_text(self) -> str:
        """The document's text (every frame of a long one)."""
        if self.frames is None:
            return self._text()
        return "".join(self.frames.text(f) for f in range(len(self.frames.firsts)))

    def head(self, chars: int) -> str:
        """The document's first `chars` characters, or fewer (its first frame's)."""
        return self._piece(0)[0][:chars]

    def _piece(self, b: int) -> tuple[str, int]:
        """The text holding block b, and the offset it starts at in the document."""
        fr = self.frames
        if fr is None:
            return self._text(), 0
        f = fr.of_block(b)
        piece, base = fr.text(f), fr.chars[f]
        if b == len(self.block_chars) - 1 and base + len(piece) <= int(self.block_chars[b]):
            fr.damaged(f)  # the last block starts past the text
        return piece, base

    def _block_of(self, pos: int) -> int:
        self._block_table()
        return bisect_right(self._first_words, pos) - 1

    def _block_bounds(self, b: int) -> tuple[str, int, int]:
        """The text holding block b and the block's start and end in it."""
        piece, base = self._piece(b)
        end = int(self.block_chars[b + 1]) - base if b + 1 < len(self.block_chars) else len(piece)
        return piece, int(self.block_chars[b]) - base, min(end, len(piece))

    def _block(self, b: int) -> list[str]:
        words = self._blocks.get(b)
        if words is None:
            piece, start, end = self._block_bounds(b)
            words = tuple(WORD_RE.findall(piece, start, end))
            self._check_count(b, len(words))
            self._blocks[b] = words
        return words

    def _check_count(self, b: int, count: int) -> None:
        """The words read from block b, checked for the last block against the document's
        word count: the block table does not count that block's words."""
        if b == len(self._first_words) - 1 and self._first_words[b] + count != self.words:
            raise IndexOpenError(f"index is damaged (document {self.doc_id}: block table)")

    def word_texts(self, lo: int, hi: int) -> list[str]:
        """The words at positions [lo, hi)."""
        hi = min(hi, self.words)
        if lo >= hi:
            return []
        b = self._block_of(lo)
        first = self._first_words[b]
        out: list[str] = []
        while b < len(self.block_chars) and first + len(out) < hi:
            out.extend(self._block(b))
            b += 1
        return out[lo - first : hi - first]

    def word_offsets(self, pos: int) -> tuple[int, int]:
        """Start and end character offsets of the word at position `pos`."""
        b = self._block_of(pos)
        bounds = self._offsets.get(b)
        if bounds is None:
            piece, start, end = self._block_bounds(b)
            starts, ends = kernel.text_word_bounds(piece, start, end)
            self._check_count(b, len(starts))
            base = int(self.block_chars[b]) - start
            bounds = (starts + base, ends + base) if base else (starts, ends)
            self._offsets[b] = bounds
        i = pos - self._first_words[b]
        if not 0 <= i < len(bounds[0]):  # a place past the document: damaged shard files
            raise IndexOpenError(f"index is damaged (document {self.doc_id} has no word {pos})")
        return int(bounds[0][i]), int(bounds[1][i])

    def line_of(self, offset: int) -> int:
        """1-based line of a character offset: the newlines counted from the nearest offset
        whose line is known, before or after it (the lines a match asks of a large file lie
        close together: its sources' and its parts' lines, counted from one another)."""
        if self.frames is not None:
            return self.frames.line_of(offset)
        line, points = _line_from(self._text(), offset, *self._line_points)
        if points is not None:
            self._line_points = points
        return line

    def lines_of(self, start: int, end: int) -> tuple[int, int]:
        """`line_of` both offsets (start <= end)."""
        return self.line_of(start), self.line_of(end)

    def word_lines(self, first: int, last: int) -> tuple[int, int]:
        """The 1-based lines of the words at positions `first` and `last` (first <= last):
        from the line table where the index keeps one (no text read), else counted in the
        text (`lines_of` the first's start and the last's end)."""
        if self.stored_lines is None:
            return self.lines_of(self.word_offsets(first)[0], self.word_offsets(last)[1] - 1)
        if not 0 <= first <= last < self.words:  # a place past the document: damaged shards
            raise IndexOpenError(f"index is damaged (document {self.doc_id} has no word {last})")
        try:
            if self._line_table is None:
                self._line_table = LineTable(self.stored_lines, self.words)
            return self._line_table.line(first) + 1, self._line_table.line(last) + 1
        except ValueError:
            raise IndexOpenError(f"index is damaged (document {self.doc_id}: line table)") from None

    def shown_origins(self) -> tuple[tuple[str, str, str, str], ...]:
        """(repository, path, commit, license) of each origin as printable text (corpus
        metadata is untrusted), made once per document."""
        if self._shown is None:
            self._shown = tuple(
                (printable(o.repository), printable(o.path), printable(o.commit, 80),
                 printable(o.license, 120))
                for o in self.origins
            )  # fmt: skip
        return self._shown


class Index:
    """A published index, mapped read-only. Safe to use from several threads.

    Opening resolves CURRENT once and checks the generation it names before mapping it: the
    header (`store.read_header`: counts, and every file's size from them), each file's
    structure and digests (`store.open_problems` with `DIGESTS_ON_OPEN_BYTES`), the document
    count. Damage is an `IndexOpenError` (one line), found later in stored data too
    (`document`). When a publish replaces the generation while it is being opened, the new
    one is opened.

    `generation` is the name of the generation this Index maps: a reader notices a newer one
    when `store.current_generation(root)` differs from it (see there). A published
    generation is never written again, so what an open Index maps stays valid.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self._native_vocabulary: kernel.NativeVocabulary | None = None  # made when first used
        for attempt in range(_OPEN_TRIES):
            before = store.current_generation(self.root)
            try:
                self._open()
                break
            except IndexOpenError:
                # the generation named when we began was replaced (and removed) meanwhile
                if attempt == _OPEN_TRIES - 1 or store.current_generation(self.root) == before:
                    raise
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, StoredDocument] = OrderedDict()
        self._cached_words = 0
        self._word_ids: dict[str, int] = {}

    def _open(self) -> None:
        self.gen, self.header = store.read_header(self.root)
        self.generation = self.gen.name
        h = self.header
        problems = store.open_problems(self.gen, h, DIGESTS_ON_OPEN_BYTES)
        if problems:
            raise IndexOpenError(f"index at {self.root} is damaged ({problems[0]}); rebuild it")
        self._text = b""
        self._docs_env = None
        self._docs_fd: int | None = None
        self._maps: list = []
        self._map_names: list[str] = []
        self.vocabulary = None
        self.shards: list[ShardView] = []
        self.renamed_shards: list[ShardView] = []
        # the counts of spans with many places (a separator comment, a license header)
        # kept from lookup to lookup: the same ones come back
        self.popular_counts = PopularCounts()
        try:
            self._docs_env = store.open_shared_env(self.gen / store.DOCS_NAME, max_dbs=8)
            self._docs_fd = store.open_regular(self.gen / store.DOCS_NAME)  # (its size, later)
            self._dbs = {
                n.decode(): self._docs_env.open_db(n, create=False)
                for n in store.doc_dbs(h.format_version)
            }
            with self._docs_env.begin() as txn:
                stored = txn.stat(self._dbs["meta"])["entries"]
            if stored != h.documents:
                raise ValueError(f"{stored} documents stored, the header says {h.documents}")
            # (maps read at random places: a fault reads its page, not megabytes around it)
            self._text = self._map(store.TEXT_NAME, random=True)
            vocabulary = (files.WORDS_NAME, files.OFFSETS_NAME, files.LOOKUP_NAME)
            self.vocabulary = files.Vocabulary(
                *(self._map(n, random=True) for n in vocabulary),
                h.vocabulary,
            )
            self.occurrences = np.frombuffer(self._map(files.OCCURRENCES_NAME), dtype="<u4")
            # documents whose files all left (a source's old version, taken out by `add`):
            # still in the shards, skipped by every search
            live = self.occurrences > 0
            first = 0
            for i, docs in enumerate(h.shard_documents):
                starts = np.frombuffer(self._map(files.shard_file(i, "docs")), dtype="<u4")
                starts = starts.astype(np.int64)
                if len(starts) and (starts[0] < 1 or np.any(np.diff(starts) <= 0)):
                    raise ValueError(f"{files.shard_file(i, 'docs')}: starts out of order")
                weights = self.occurrences[first : first + docs]  # (a document's files)
                alive = live[first : first + docs]
                alive = None if alive.all() else alive
                width = h.shard_id_bytes[i]
                view = self._shard(i, "ids", "sa", starts, first, alive, weights, width, 1, "top")
                # the first document right after the first separator, the last before the
                # end: every word of the shard is then in a document
                if len(starts) and (starts[0] != 1 or starts[-1] >= view.size):
                    raise ValueError(f"{files.shard_file(i, 'docs')}: starts past the words")
                self.shards.append(view)
                if h.renamed_languages:
                    width, stride = files.RENAMED_WIDTH, h.renamed_stride
                    shard = self._shard(
                        i, "rids", "rsa", starts, first, alive, weights, width, stride, "rtop"
                    )
                    self.renamed_shards.append(shard)
                first += docs
        except (lmdb.Error, OSError, ValueError) as e:
            self.close()
            reason = getattr(e, "strerror", None) or str(e)
            raise IndexOpenError(
                f"index at {self.root} is damaged ({reason}); rebuild it"
            ) from None

    def _map(self, name: str, random: bool = False):
        m = store.map_file(self.gen / name, random)
        self._maps.append(m)
        self._map_names.append(name)
        return m

    def check_files(self, stored_only: bool = False) -> None:
        """The damaged error when a mapped file is shorter now than when it was mapped (cut
        short in place): a read past its end would be a bus error, or zeros read as data.
        One fstat a file (16 µs for 4 shards' files); called before each lookup, and before
        a document is read for the stored documents' files alone (`stored_only`)."""
        try:
            maps = zip(self._map_names, self._maps)
            for name, m in ((store.TEXT_NAME, self._text),) if stored_only else maps:
                if isinstance(m, mmap.mmap) and m.size() < len(m):
                    raise IndexOpenError(
                        f"index at {self.root} is damaged ({name} was cut short); rebuild it"
                    )
            docs = self.header.file_sizes.get(store.DOCS_NAME)
            if self._docs_fd is not None and os.fstat(self._docs_fd).st_size < (docs or 0):
                raise IndexOpenError(
                    f"index at {self.root} is damaged ({store.DOCS_NAME} was cut short); rebuild it"
                )
        except (OSError, ValueError) as e:  # (a closed index: ValueError)
            raise IndexOpenError(f"index at {self.root} cannot be read ({e})") from None

    def _shard(
        self,
        i: int,
        ids: str,
        sa: str,
        starts: np.ndarray,
        first: int,
        alive: np.ndarray | None,
        weights: np.ndarray,
        width: int,
        stride: int,
        top: str,
    ) -> ShardView:
        array = self._map(files.shard_file(i, sa), random=True)
        table = None
        if self.header.top_step:  # read into memory: the first probes of every search
            keys = np.frombuffer(self._map(files.shard_file(i, top)), dtype=np.uint8).copy()
            table = (keys, self.header.top_step, self.header.top_bytes)
        return ShardView(
            self._map(files.shard_file(i, ids), random=True),
            memoryview(array).cast("I") if len(array) else memoryview(b"").cast("I"),
            starts,
            first,
            alive,
            width,
            stride,
            table,
            weights,
        )

    # --- facts ---------------------------------------------------------------------------

    def summary(self) -> dict:
        h = self.header
        size = sum(h.file_sizes.values())
        return {
            "path": str(self.root),
            "name": h.name,
            "format_version": h.format_version,
            "shards": h.shards,
            "documents": h.documents,
            "files": h.files,
            "words": h.words,
            # words of documents no file holds any more (old versions taken out by `add`)
            "dead_words": sum(sh.dead for sh in self.shards),
            "vocabulary": h.vocabulary,
            "renamed_languages": h.renamed_languages,
            "shard_words": h.shard_words,
            "shard_id_bytes": h.shard_id_bytes,
            "renamed_stride": h.renamed_stride,
            "bytes": size,
            "bytes_per_word": round(size / h.words, 3) if h.words else None,
            "search": str(search_status()),
            "skipped": h.skipped,
            "sources": h.sources,
            "created": h.created,
        }

    def map_ahead(self, stop: threading.Event | None = None) -> MappedAhead:
        """Fill the page tables of this generation's files where their pages are in
        memory (see store/map_ahead.py), then make each shard's block table (the document
        of every 1,024 words' first: 5-30 ms a shard of 800M words, else paid by the first
        lookup that counts a shard's documents): a language server does it once on a
        background thread, so that its first lookups take no page fault a page."""
        done = map_ahead(list(self._maps), stop, self._docs_mapped())
        for shard in self.shards + self.renamed_shards:
            if stop is not None and stop.is_set():
                break
            shard.block_table()  # (from the document starts, in memory: no map is read)
        if kernel.available():
            self._kernel_vocabulary()  # (its table of buckets)
        return done

    def _docs_mapped(self) -> tuple[tuple[int, int], ...]:
        """Where LMDB maps the documents' database in this process, within the file (its
        map may reach past it): (address, length), or nothing where it cannot be told."""
        if self._docs_env is None or self._docs_fd is None:
            return ()
        found = mapped_range(self.gen / store.DOCS_NAME)
        if found is None:
            return ()
        try:
            size = os.fstat(self._docs_fd).st_size
        except OSError:
            return ()
        return ((found[0], min(found[1], size)),)

    def warm(self) -> float:
        """Rehearse a lookup in this thread, so that the first one asked costs what later
        ones do (a new process's first took 2-6 ms where the median takes 0.8): the
        matcher's modules and every language's keywords loaded, the kernel's helper
        threads started and this thread's scratch arrays made, then a stored document of
        at least REHEARSAL_WORDS words looked up (the tables of kinds, templates and
        licenses, the documents' store; its answer dropped). Milliseconds taken."""
        from ..text import normalize
        from .matcher import find_matches

        began = time.perf_counter()
        for language in normalize.GRAMMARS:
            normalize.keywords(language)
        self.warm_thread()
        doc = self._rehearsal_document()
        if doc is not None:
            text = doc.head(REHEARSAL_CHARS)
            self.check_files()
            find_matches(self, text, "", 60, language=doc.language or "python")
        return (time.perf_counter() - began) * 1000

    def warm_thread(self) -> None:
        """This thread's scratch arrays made (each thread's first lookup would make them:
        the pages of 3 MB at 700K documents faulted in), and the kernel's helper threads
        started."""
        if kernel.available():
            kernel.warm_thread(max((len(s.starts) for s in self.shards), default=0))

    def _rehearsal_document(self) -> StoredDocument | None:
        """The first live document of at least REHEARSAL_WORDS words among the first
        hundred (None in an index with none)."""
        for doc_id in range(min(self.header.documents, 100)):
            if self.occurrences[doc_id] and self.document(doc_id).words >= REHEARSAL_WORDS:
                return self.document(doc_id)
        return None

    def close(self) -> None:
        for shard in self.shards + self.renamed_shards:
            shard.release()
        self.shards, self.renamed_shards = [], []
        self.occurrences = None
        if self._native_vocabulary is not None:
            self._native_vocabulary.release()  # (its views of the maps first)
            self._native_vocabulary = None
        if self.vocabulary is not None:
            self.vocabulary.close()
        for m in self._maps:
            if isinstance(m, mmap.mmap):
                with contextlib.suppress(BufferError):  # a view still held elsewhere
                    m.close()
        self._maps, self._map_names = [], []
        if self._docs_fd is not None:
            os.close(self._docs_fd)
            self._docs_fd = None
        if self._docs_env is not None:
            store.release_shared_env(self._docs_env)
            self._docs_env = None

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def origins(self) -> Iterator[tuple[int, list[Origin]]]:
        """Every unique document's id and origins, in id order: a full scan of the stored
        origins (`source_texts` keeps what it needs of it, once per generation)."""
        try:
            with self._docs_env.begin(buffers=False) as txn:
                for key, raw in txn.cursor(db=self._dbs["origins"]):
                    yield int.from_bytes(key, "big"), [_origin(o) for o in json.loads(raw)]
        except Exception as e:  # damaged stored data: one clear error, never a wrong answer
            raise IndexOpenError(
                f"index at {self.root} is damaged (origins: {type(e).__name__}); rebuild it"
            ) from None

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
        self.check_files(stored_only=True)
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
            blocks = txn.get(key, db=dbs["blocks"])
            origins = [_origin(o) for o in json.loads(txn.get(key, db=dbs["origins"]))]
            lines = txn.get(key, db=dbs["lines"]) if "lines" in dbs else None
        if o + z > len(self._text):  # (its bytes are read, and checked, when first needed)
            raise ValueError("text past the end")
        if not blocks or len(blocks) % 8:
            raise ValueError("block table")
        if lines is not None and "f" not in meta:  # (its lines from the table: text, blocks
            return StoredDocument(  # and all read when first needed)
                doc_id, None, w, language, n, origins, None, None, stored_blocks=blocks,
                read_text=lambda: self._read_text(doc_id, o, z), stored_lines=lines,
            )  # fmt: skip
        table = np.frombuffer(blocks, dtype="<u4").reshape(-1, 2)
        chars = table[:, 0].astype(np.int64)
        words = table[:, 1].astype(np.int64)
        if "f" in meta:  # a long text in frames: each read when first needed
            frames = self._frames(doc_id, meta["f"], chars, o, z)
            if not _block_table_ok(table, int(chars[-1]) + 1):  # (the text's end: when read)
                raise ValueError("block table")
            return StoredDocument(doc_id, None, w, language, n, origins, chars, words, frames,
                                  stored_lines=lines)  # fmt: skip
        text = self._text_at(doc_id, o, z)  # (no line table: a source's lines are counted in it)
        if not _block_table_ok(table, len(text)):
            raise ValueError("block table")
        return StoredDocument(doc_id, text, w, language, n, origins, chars, words)

    def _read_stored(self, doc_id: int, o: int, z: int) -> str:
        """z bytes of stored text at o, decompressed, once the file is known whole."""
        self.check_files(stored_only=True)
        return self._text_at(doc_id, o, z)

    def _read_text(self, doc_id: int, o: int, z: int) -> str:
        """A document's text read after it was loaded (the line table answered before)."""
        try:
            return self._read_stored(doc_id, o, z)
        except IndexOpenError:
            raise
        except Exception as e:  # damaged stored data: one clear error
            raise IndexOpenError(
                f"index at {self.root} is damaged (document {doc_id}: {type(e).__name__}); "
                "rebuild it"
            ) from None

    def _text_at(self, doc_id: int, o: int, z: int) -> str:
        """The zstd frame of z bytes at offset o of text.zst, decompressed."""
        store.will_need(self._text, o, z)  # its pages read at once
        ztext = self._text[o : o + z]
        if len(ztext) != z:
            raise IndexOpenError(f"index at {self.root} is damaged (text of {doc_id} cut)")
        return decompress(ztext)  # the zstd frame's checksum finds changed bytes

    def _frames(self, doc_id: int, rows, chars: np.ndarray, o: int, z: int) -> Frames:
        read = lambda at, size: self._read_stored(doc_id, at, size)  # noqa: E731
        return frames_of(doc_id, rows, chars, o, z, read)

    def document_ids(self, doc_id: int, start: int, end: int) -> np.ndarray:
        """The word ids of a document's words [start, end), from its shard (int64)."""
        for sh in self.shards:
            k = doc_id - sh.first_doc
            if 0 <= k < len(sh.starts):
                first = int(sh.starts[k])
                return sh.word_range(first + start, first + end)
        raise IndexError(f"no document {doc_id}")

    def documents_ids(
        self, doc_ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray
    ) -> np.ndarray:
        """`document_ids` of many ranges at once: each document's words [start, start +
        length), one range after the other in one array (int64)."""
        doc_ids, lengths = np.asarray(doc_ids, dtype=np.int64), np.asarray(lengths)
        out = np.empty(int(lengths.sum()), dtype=np.int64)
        left = np.ones(len(doc_ids), dtype=bool)
        for sh in self.shards:
            k = doc_ids - sh.first_doc
            here = (k >= 0) & (k < len(sh.starts))
            if here.all():  # (one shard's documents: no selection)
                return sh.words(files.ranges(sh.starts[k] + starts, lengths)).astype(np.int64)
            if here.any():
                at = files.ranges(sh.starts[k[here]] + starts[here], lengths[here])
                out[np.repeat(here, lengths)] = sh.words(at)
                left &= ~here
        if left.any():
            raise IndexError(f"no document {int(doc_ids[left][0])}")
        return out

    def word(self, word_id: int) -> str:
        """The vocabulary's word of an id."""
        try:
            return self.vocabulary.word(word_id).decode("utf-8", "surrogatepass")
        except ValueError as e:  # out of range or undecodable: one clear error
            raise IndexOpenError(f"index at {self.root} is damaged ({e}); rebuild it") from None

    # --- lookups -------------------------------------------------------------------------

    def word_ids(self, words: list[str]) -> np.ndarray:
        """The vocabulary's id of each word (`UNKNOWN` for a word it lacks)."""
        known = self._word_ids
        missing = set(words).difference(known)
        if missing:  # words not looked up before
            if len(known) + len(missing) > WORD_CACHE:
                known.clear()
                missing = set(words)
            todo = list(missing)
            known.update(zip(todo, self._vocabulary_ids(todo)))
        return np.fromiter(map(known.__getitem__, words), dtype=np.int64, count=len(words))

    def _kernel_vocabulary(self) -> kernel.NativeVocabulary | None:
        """The vocabulary as the kernel reads it, made once (None when it is empty)."""
        if self._native_vocabulary is None and self.vocabulary.size:
            v = self.vocabulary
            self._native_vocabulary = kernel.NativeVocabulary(
                v.hashes, v.records, v.offsets, v.words
            )
        return self._native_vocabulary

    def _vocabulary_ids(self, words: list[str]) -> list[int]:
        """The ids of distinct words: compiled where the search is, else in Python (also
        for words no query has, with a line break: the kernel's terminator)."""
        k = kernel.active()
        encoded = None
        if k is not None and self.vocabulary.size:
            encoded = files.Vocabulary.encoded(words)  # (None: a word with a line break)
        try:
            if encoded is not None:
                return kernel.word_ids(k, self._kernel_vocabulary(), *encoded).tolist()
            found = self.vocabulary.ids(words)
        except IndexOpenError:
            raise
        except ValueError as e:  # damaged stored data: one clear error, never a wrong answer
            raise IndexOpenError(f"index at {self.root} is damaged ({e}); rebuild it") from None
        return [found.get(w, files.UNKNOWN) for w in words]

    def match(self, suggestion: str, context: str = "", min_tokens: int = 60, **options):
        """Spans of `context + suggestion` quoted from indexed files that overlap the
        suggestion and are at least `min_tokens` words long; with `language=`, renamed
        copies too. See `matcher.find_matches`."""
        from .matcher import find_matches

        self.check_files()
        return find_matches(self, suggestion, context, min_tokens, **options)


def open_index(path: str | os.PathLike) -> Index:
    """Open a published index read-only; raises IndexOpenError with a clear message."""
    return Index(path)
