"""A copy of an index with its documents' texts stored as the format-7 builder stored them
(a long text in frames of whole blocks; `reline_index.py` then adds format 8's line
tables), its shard and vocabulary files hard-linked, not rewritten: the same corpus in
both layouts for `bench_frames.py`, without building a large index again. Every document's
text is decompressed and stored anew; its records (meta, blocks, origins, content) are
copied, the meta given its new offset, size and frames.
Checked on the registry's 96th: the copy of an index built with every text in one frame
has the `text.zst` and records of a build of the same corpus in frames, byte for byte.

    .venv/bin/python bench/reframe_index.py IDX-ALL IDX-ALL-FRAMES

`--frame-chars` and `--framed-past` store the texts in frames of another size (a trial of
the builder's FRAME_CHARS: `frames.md`).
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
from index_tools.store import generations as store

COMMIT_EVERY = 10_000  # documents a write transaction


def reframe(
    src: Path, dst: Path, frame_chars: int = process.FRAME_CHARS, framed_past: int | None = None
) -> tuple[int, int]:
    """Write the copy; returns (documents, documents now in frames). The source must store
    each text in one frame (format 6): a frame is decompressed alone."""
    framed_past = frame_chars if framed_past is None else framed_past
    old_gen, header = store.read_header(src)
    dst.mkdir(parents=True)
    gen = dst / old_gen.name
    gen.mkdir()
    for p in old_gen.iterdir():
        if p.name not in (store.DOCS_NAME, store.TEXT_NAME, store.HEADER_NAME):
            os.link(p, gen / p.name)
    old = store.open_env(old_gen / store.DOCS_NAME, readonly=True, max_dbs=8)
    new = store.open_env(gen / store.DOCS_NAME, readonly=False, max_dbs=8)
    old_dbs = {n.decode(): old.open_db(n) for n in store.doc_dbs(header.format_version)}
    new_dbs = {n.decode(): new.open_db(n) for n in store.doc_dbs(7)}
    docs = framed = 0
    started = time.time()
    with open(old_gen / store.TEXT_NAME, "rb") as text_in, \
            open(gen / store.TEXT_NAME, "wb") as out, old.begin() as read:  # fmt: skip
        txn = new.begin(write=True)
        for key, raw in read.cursor(old_dbs["meta"]):
            meta = json.loads(raw)
            if "f" in meta:  # (a text in frames would be read as its first frame)
                raise SystemExit(f"{src}: its texts are in frames already: copy one of format 6")
            text_in.seek(meta["o"])
            text = store.decompress(text_in.read(meta["z"]))
            blocks = read.get(key, db=old_dbs["blocks"])
            chars = np.frombuffer(blocks, dtype="<u4")[0::2].tolist()
            raw_text = text.encode("utf-8", "surrogatepass")
            # a text of at most `framed_past` characters in one frame (its blocks as one)
            blocks_of = chars if len(text) > framed_past else [0]
            ztext, frames = process.compressed(text, raw_text, blocks_of, frame_chars)
            if frames:
                meta["f"] = [list(f) for f in frames]
                framed += 1
            meta["o"], meta["z"] = out.tell(), len(ztext)
            out.write(ztext)
            txn.put(key, json.dumps(meta).encode(), db=new_dbs["meta"], append=True)
            txn.put(key, blocks, db=new_dbs["blocks"], append=True)
            txn.put(key, read.get(key, db=old_dbs["origins"]), db=new_dbs["origins"], append=True)
            docs += 1
            if docs % COMMIT_EVERY == 0:
                txn.commit()
                txn = new.begin(write=True)
                print(f"{docs:,} documents, {framed:,} in frames, {time.time() - started:.0f} s")
        for content, key in read.cursor(old_dbs["content"]):
            txn.put(content, key, db=new_dbs["content"])
        txn.commit()
        out.flush()
        os.fsync(out.fileno())
    new.sync(True)
    new.close()
    old.close()
    store.finalize_generation(gen, dataclasses.replace(header, format_version=7))
    (dst / store.CURRENT_NAME).write_text(gen.name + "\n")
    return docs, framed


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("index", type=Path, help="the index copied")
    ap.add_argument("copy", type=Path, help="where the copy goes (a new folder)")
    ap.add_argument(
        "--frame-chars", type=int, default=process.FRAME_CHARS,
        help="characters a frame (default: the builder's FRAME_CHARS)",
    )  # fmt: skip
    ap.add_argument(
        "--framed-past", type=int,
        help="store in frames the texts of more than this many characters (default: "
        "--frame-chars, as the builder does)",
    )  # fmt: skip
    args = ap.parse_args()
    docs, framed = reframe(args.index, args.copy, args.frame_chars, args.framed_past)
    print(f"{args.copy}: {docs:,} documents, {framed:,} of them in frames")


if __name__ == "__main__":
    main()
