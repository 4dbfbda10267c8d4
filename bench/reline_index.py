"""A copy of an index of format 6 or 7 with each document's line table added, as the format-8
builder stores it (`store/line_table.py`), its other files hard-linked, not rewritten: the
same corpus with and without line tables for `bench_commits.py`, without building a large
index again. Each document's text is read, its line table made and checked against its
stored word count; its records (meta, blocks, origins, content) are copied as they are.

    .venv/bin/python bench/reline_index.py IDX-ALL-FRAMES IDX-ALL-LINES

ASCII texts are split into words by the compiled kernel (`kernel.text_word_bounds`, the
same words as the builder's), the others as the builder splits them; every 97th document's
table is also made the builder's way and compared, byte for byte.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np

from index_tools.build import process
from index_tools.match import kernel
from index_tools.store import generations as store
from index_tools.store.line_table import line_table

COMMIT_EVERY = 10_000  # documents a write transaction
CHECK_EVERY = 97  # documents whose table is also made as the builder makes it


def text_of(meta: dict, data: memoryview) -> str:
    """A stored text: one zstd frame, or its frames back to back."""
    o, z = meta["o"], meta["z"]
    if "f" not in meta:
        return store.decompress(bytes(data[o : o + z]))
    out, at = [], o
    for _, size, _ in meta["f"]:
        out.append(store.decompress(bytes(data[at : at + size])))
        at += size
    return "".join(out)


def table_of(text: str) -> tuple[bytes, int]:
    """The line table of a text as the builder stores it, and its words."""
    if text.isascii() and kernel.available():
        starts, _ = kernel.text_word_bounds(text)
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        line = np.searchsorted(np.flatnonzero(codes == 10), starts)  # line feeds before each
        new = np.ones(len(line), dtype=bool)
        new[1:] = line[1:] != line[:-1]
        firsts = np.flatnonzero(new)
        return line_table(firsts.tolist(), line[firsts].tolist()), len(starts)
    words, _, firsts, lines = process.split_lines(text)
    return line_table(firsts, lines), len(words)


def reline(src: Path, dst: Path) -> int:
    """Write the copy; returns its documents."""
    old_gen, header = store.read_header(src)
    if header.format_version >= 8:
        raise SystemExit(f"{src}: format {header.format_version} has its line tables already")
    dst.mkdir(parents=True)
    gen = dst / old_gen.name
    gen.mkdir()
    for p in old_gen.iterdir():
        if p.name not in (store.DOCS_NAME, store.HEADER_NAME):
            os.link(p, gen / p.name)
    old = store.open_env(old_gen / store.DOCS_NAME, readonly=True, max_dbs=8)
    new = store.open_env(gen / store.DOCS_NAME, readonly=False, max_dbs=8)
    old_dbs = {n.decode(): old.open_db(n) for n in store.doc_dbs(header.format_version)}
    new_dbs = {n.decode(): new.open_db(n) for n in store.DOC_DBS}
    docs = 0
    started = time.time()
    with open(old_gen / store.TEXT_NAME, "rb") as f, old.begin() as read:
        data = memoryview(f.read()) if os.name == "nt" else memoryview(_map(f))
        txn = new.begin(write=True)
        for key, raw in read.cursor(old_dbs["meta"]):
            meta = json.loads(raw)
            text = text_of(meta, data)
            lines, words = table_of(text)
            if words != meta["w"]:
                raise SystemExit(
                    f"document {int.from_bytes(key, 'big')}: {words} words, {meta['w']} stored"
                )
            if docs % CHECK_EVERY == 0:
                _, _, firsts, numbers = process.split_lines(text)
                if line_table(firsts, numbers) != lines:
                    raise SystemExit(f"document {int.from_bytes(key, 'big')}: tables differ")
            txn.put(key, raw, db=new_dbs["meta"], append=True)
            txn.put(key, read.get(key, db=old_dbs["blocks"]), db=new_dbs["blocks"], append=True)
            txn.put(key, read.get(key, db=old_dbs["origins"]), db=new_dbs["origins"], append=True)
            txn.put(key, lines, db=new_dbs["lines"], append=True)
            docs += 1
            if docs % COMMIT_EVERY == 0:
                txn.commit()
                txn = new.begin(write=True)
                print(f"{docs:,} documents, {time.time() - started:.0f} s", flush=True)
        for content, key in read.cursor(old_dbs["content"]):
            txn.put(content, key, db=new_dbs["content"])
        txn.commit()
        data.release()
    new.sync(True)
    new.close()
    old.close()
    store.finalize_generation(gen, dataclasses.replace(header, format_version=store.FORMAT_VERSION))
    (dst / store.CURRENT_NAME).write_text(gen.name + "\n")
    return docs


def _map(f):
    import mmap

    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("index", type=Path, help="the index copied (format 6 or 7)")
    ap.add_argument("copy", type=Path, help="where the copy goes (a new folder)")
    args = ap.parse_args()
    docs = reline(args.index, args.copy)
    print(f"{args.copy}: {docs:,} documents, each with its line table")


if __name__ == "__main__":
    main()
