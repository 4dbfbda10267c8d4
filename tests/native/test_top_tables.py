"""Top tables: written by the builder for each suffix array, read into memory when opened;
an index built before them (no top files, top_step 0) opens and answers the same, and `add`
to it writes none either. Answers are those of the Python search, which reads no table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from index_tools import BuildOptions, add_to_index, build_index, open_index
from index_tools.match import kernel
from index_tools.store import generations as store
from index_tools.store import shards as files

CODE = "".join(
    f"def handler_{i}(request, limit={i}):\n    items = request.items[:limit]\n"
    f"    return [item.name for item in items if item.size > {i}]\n\n"
    for i in range(300)
)


def answers(index: Path) -> list:
    with open_index(index) as idx:
        out = []
        for start in range(0, len(CODE) - 3000, 2500):
            found = idx.match(CODE[start : start + 3000], "", 60, language="python")
            out.append([m.to_dict() for m in found])
        return out


def without_top_tables(index: Path) -> None:
    """The index as a build before top tables wrote it."""
    gen = index / store.current_name(index)
    header = store.Header(**json.loads((gen / store.HEADER_NAME).read_text()))
    for name in list(header.file_sizes):
        if name.endswith((".top", ".rtop")):
            (gen / name).unlink()
    header.top_step = header.top_bytes = 0
    store.finalize_generation(gen, header)


@pytest.fixture
def built(tmp_path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(8):
        (src / f"h{i}.py").write_text(CODE[i * 900 :] + CODE[: i * 900])
    build_index([str(src)], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    return tmp_path / "idx"


def test_the_builder_writes_top_tables_the_kernel_reads(built):
    with open_index(built) as idx:
        h = idx.header
        assert (h.top_step, h.top_bytes) == (files.TOP_STEP, files.TOP_BYTES)
        for sh in idx.shards + idx.renamed_shards:
            keys, step, nbytes = sh.top
            assert len(keys) == nbytes * -(-len(sh.sa) // step)
            first = np.frombuffer(sh.tok, np.uint8)[sh.sa[0] * sh.width :][:nbytes]
            assert bytes(keys[: len(first)]) == bytes(first)  # entry 0's first bytes


@pytest.mark.parametrize("path", ["native", "python"])
def test_an_index_built_before_top_tables_answers_the_same(built, tmp_path, path):
    with kernel.using("python"):
        expected = answers(built)
    assert any(expected)
    without_top_tables(built)
    with open_index(built) as idx:
        assert idx.header.top_step == 0 and all(sh.top is None for sh in idx.shards)
    with kernel.using(path):
        assert answers(built) == expected
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "more.py").write_text(CODE[:4000])
    add_to_index(built, [str(extra)], BuildOptions(jobs=1, progress=False))
    gen = built / store.current_name(built)
    assert not [p for p in gen.iterdir() if p.suffix in (".top", ".rtop")]
    with kernel.using(path):
        assert len(answers(built)) == len(expected)
