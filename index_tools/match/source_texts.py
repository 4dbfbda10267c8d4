"""The stored text behind a source: the one thing the source view asks of an index.

A `Source` names a file by its origin (repository, path, commit), as every client sees it;
it carries no document id, and ids are not stable across generations anyway. This module
answers "the stored text of the document with this origin, in the index's generation" and
nothing else, so that it can be re-pointed at another index engine by changing the two calls
it makes of an `Index`: `origins()` (a scan of every document's origins) and
`document(doc_id)` (its text and language).

The origins are scanned once per open generation into a sorted table of 64-bit keys (12
bytes per origin), shared by the threads using that `Index` and dropped with it. A key is
the xxh3 hash of the origin's fields as a `Source` shows them (`printable`), so that what a
client sends back finds what the matcher reported; a hash collision is ruled out by
comparing the stored origin itself.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np
import xxhash

from ..model import Origin
from ..safe_text import printable

MAX_CANDIDATES = 8  # documents sharing one origin (a dataset listing a path twice) looked at


@dataclass(frozen=True)
class SourceText:
    """A stored document found by its origin."""

    text: str
    language: str
    origin: Origin  # the stored origin (untrusted metadata: shown through `printable`)
    occurrences: int  # identical files the document stands for
    generation: str  # the generation it was read from


def shown(repository: str, path: str, commit: str) -> tuple[str, str, str]:
    """The origin's names as a `Source` carries them (`matcher._sources`)."""
    return printable(repository), printable(path), printable(commit, 80)


def origin_key(repository: str, path: str, commit: str) -> int:
    joined = "\x00".join(shown(repository, path, commit))
    return xxhash.xxh3_64_intdigest(joined.encode("utf-8", "surrogatepass"))


class _OriginTable:
    """Sorted origin keys and the document id of each."""

    def __init__(self, index) -> None:
        keys: list[int] = []
        docs: list[int] = []
        for doc_id, origins in index.origins():
            for o in origins:
                keys.append(origin_key(o.repository, o.path, o.commit))
                docs.append(doc_id)
        order = np.argsort(np.asarray(keys, dtype=np.uint64), kind="stable")
        self.keys = np.asarray(keys, dtype=np.uint64)[order]
        self.docs = np.asarray(docs, dtype=np.uint32)[order]

    def documents(self, key: int) -> list[int]:
        k = np.uint64(key)
        lo = int(np.searchsorted(self.keys, k, side="left"))
        hi = int(np.searchsorted(self.keys, k, side="right"))
        return list(dict.fromkeys(self.docs[lo : min(hi, lo + MAX_CANDIDATES)].tolist()))


_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_building: dict[int, threading.Event] = {}


def _table(index) -> _OriginTable:
    """The origin table of an open index, made once (other threads wait for it)."""
    while True:
        with _lock:
            table = _tables.get(index)
            if table is not None:
                return table
            waiting = _building.get(id(index))
            if waiting is None:
                done = _building[id(index)] = threading.Event()
                break
        waiting.wait()
    try:
        table = _OriginTable(index)
        with _lock:
            _tables[index] = table
        return table
    finally:
        with _lock:
            _building.pop(id(index), None)
        done.set()


def source_texts(index, repository: str, path: str, commit: str) -> list[SourceText]:
    """The stored documents whose origin is (repository, path, commit) in this index's
    generation, as a `Source` names them; [] when there is none (removed since)."""
    want = shown(repository, path, commit)
    out = []
    for doc_id in _table(index).documents(origin_key(*want)):
        doc = index.document(doc_id)
        for o in doc.origins:
            if shown(o.repository, o.path, o.commit) == want:
                out.append(
                    SourceText(doc.whole_text(), doc.language, o, doc.occurrences, index.generation)
                )
                break
    return out
