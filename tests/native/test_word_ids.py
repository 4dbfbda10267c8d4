"""The query words' ids: the compiled lookup (kernel.c `rc_word_ids`, a bucket of hashes
then the bytes) answers as the Python one on a built index, for every word it holds and for
words it lacks or that no stored word can be (a line break, a lone surrogate, empty)."""

from __future__ import annotations

import pytest

from index_tools import BuildOptions, build_index, open_index
from index_tools.match import kernel
from index_tools.store import shards as files
from index_tools.text.words import word_texts

CODE = "".join(
    f"def área_{i}(valores, escala={i}.5):\n    return sum(v * escala for v in valores) // {i}\n"
    for i in range(60)
)


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("words")
    (root / "src").mkdir()
    (root / "src" / "m.py").write_text(CODE, encoding="utf-8")
    build_index([str(root / "src")], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


def test_both_lookups_give_every_word_its_id(index_dir):
    if not kernel.available():
        pytest.fail(f"the native search did not load: {kernel.status()}")
    stored = sorted(set(word_texts(CODE)))
    odd = ["nowhere", "a\nb", "", "\udc80", "área_7", "área_999", "\x00", "日本"]
    ids = {}
    for path in ("python", "native"):
        with kernel.using(path), open_index(index_dir) as idx:
            ids[path] = idx.word_ids(stored + odd).tolist()
            assert [idx.word(i) for i in ids[path][: len(stored)]] == stored
    assert ids["native"] == ids["python"]
    assert ids["native"][len(stored) :][:4] == [files.UNKNOWN] * 4  # lacked, or no word
