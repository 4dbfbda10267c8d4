"""Damaged indexes give a clean one-line error or a correct answer, never a crash, a hang or
a wrong answer: byte flips and truncations of every file, edited headers (types, ranges,
paths out of the generation), checked in process, through the CLI and over random damage."""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index_tools import (
    BuildError,
    BuildOptions,
    IndexOpenError,
    add_to_index,
    build_index,
    open_index,
)
from index_tools.cli import main as cli_main
from index_tools.match import index as index_module
from index_tools.store import generations as store

SNIPPET = "".join(
    f"    result_{i} = transform(values[{i}], scale={i}, name='item{i}')\n" for i in range(12)
)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pristine")
    src = root / "src"
    src.mkdir()
    (src / "a.py").write_text("def run(values):\n" + SNIPPET + "    return result_0\n")
    (src / "b.py").write_text("import os\n\n\ndef other():\n    return os.getcwd()\n" * 20)
    build_index([str(src)], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


def answer(index_dir: Path):
    """What a lookup says, or the error an open or a lookup raises."""
    try:
        with open_index(index_dir) as idx:
            return [
                (m.length, m.file_count, [s.path for s in m.sources]) for m in idx.match(SNIPPET)
            ]
    except IndexOpenError as e:
        assert "\n" not in str(e)
        return "error"


def copy_of(pristine: Path, tmp: Path) -> tuple[Path, Path]:
    dest = tmp / "idx"
    shutil.copytree(pristine, dest)
    gen = dest / store.current_name(dest)
    return dest, gen


def data_files(gen: Path) -> list[Path]:
    header = json.loads((gen / store.HEADER_NAME).read_text())
    return [gen / name for name, size in sorted(header["file_sizes"].items()) if size]


def test_the_pristine_index_answers(pristine):
    ((length, files, paths),) = answer(pristine)
    assert length >= 60 and files == 1 and paths == ["a.py"]


def flip(path: Path, offset: int, xor: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset % len(data)] ^= xor or 1
    path.write_bytes(bytes(data))


def test_byte_flips_in_every_file(pristine, tmp_path):
    good = answer(pristine)
    rng = random.Random(5)
    names = [p.name for p in data_files(pristine / store.current_name(pristine))]
    for name in set(names) - {"shares.u32"}:  # (each source's files: read by `add` alone)
        for _ in range(6):
            case = tmp_path / f"{name}-{rng.randrange(10**9)}"
            dest, gen = copy_of(pristine, case)
            flip(gen / name, rng.randrange(1 << 30), rng.randrange(1, 256))
            assert answer(dest) in (good, "error")


def test_truncated_files(pristine, tmp_path):
    for path in data_files(pristine / store.current_name(pristine)):
        dest, gen = copy_of(pristine, tmp_path / path.name)
        data = (gen / path.name).read_bytes()
        (gen / path.name).write_bytes(data[: len(data) // 2])
        assert answer(dest) == "error"


HEADER_EDITS = {
    "shard words as text": lambda h: h.update(shard_words=["20"]),
    "shard words negative": lambda h: h.update(shard_words=[-3]),
    "shards a bool": lambda h: h.update(shards=True),
    "ids of 4 bytes said": lambda h: h.update(shard_id_bytes=[4] * h["shards"]),
    "ids of 2 bytes": lambda h: h.update(shard_id_bytes=[2] * h["shards"]),
    "no id widths": lambda h: h.pop("shard_id_bytes"),
    "renamed stride 0": lambda h: h.update(renamed_stride=0),
    "renamed stride other": lambda h: h.update(renamed_stride=1),
    "renamed places more": lambda h: h.update(
        shard_renamed_places=[n + 1 for n in h["shard_renamed_places"]]
    ),
    "renamed places missing": lambda h: h.update(shard_renamed_places=[]),
    "too many shards": lambda h: h.update(shards=9999),
    "fewer shards": lambda h: h.update(shards=0),
    "more words": lambda h: h.update(words=h["words"] + 1),
    "vocabulary larger": lambda h: h.update(vocabulary=h["vocabulary"] + 1),
    "file outside": lambda h: h["file_sizes"].update({"../../dev/zero": 0}),
    "digest outside": lambda h: h["file_hashes"].update({"../../dev/zero": "0"}),
    "absolute file": lambda h: h["file_sizes"].update({"/etc/passwd": 10}),
    "sizes not numbers": lambda h: h.update(file_sizes={k: "1" for k in h["file_sizes"]}),
    "sources not a list": lambda h: h.update(sources="x"),
    "other tokenizer": lambda h: h.update(tokenizer_version=99),
    "version as text": lambda h: h.update(format_version=str(h["format_version"])),
    "documents negative": lambda h: h.update(documents=-1),
    "documents more": lambda h: h.update(documents=h["documents"] + 5),
    "a list": lambda h: (h.clear(), h.update(__list__=True)),
    "no files": lambda h: h.update(file_sizes={}, file_hashes={}),
    "more source files": lambda h: h.update(source_files=[n + 1 for n in h["source_files"]]),
    "source files a number": lambda h: h.update(source_files=h["files"]),
}


@pytest.mark.parametrize("edit", sorted(HEADER_EDITS))
def test_edited_headers_are_refused_in_one_line(pristine, tmp_path, edit):
    dest, gen = copy_of(pristine, tmp_path)
    header = json.loads((gen / store.HEADER_NAME).read_text())
    HEADER_EDITS[edit](header)
    text = "[1, 2]" if header.get("__list__") else json.dumps(header)
    (gen / store.HEADER_NAME).write_text(text)
    assert answer(dest) == "error"
    # --verify checks the header too, and ends
    r = subprocess.run(
        [sys.executable, "-m", "index_tools.cli", "stats", str(dest), "--verify"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stdout
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_a_data_file_replaced_by_a_link_is_refused(pristine, tmp_path):
    dest, gen = copy_of(pristine, tmp_path)
    target = data_files(gen)[0]
    target.unlink()
    target.symlink_to("/dev/zero")
    assert answer(dest) == "error"


def test_the_cli_reports_damage_in_one_line(pristine, tmp_path):
    dest, gen = copy_of(pristine, tmp_path)
    flip(gen / store.DOCS_NAME, 4096 + 17, 0x40)
    r = subprocess.run(
        [sys.executable, "-m", "index_tools.cli", "query", str(dest)],
        input=SNIPPET,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "damaged" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def random_damage(test):
    """Hypothesis draws of damage: which file, where, which bits flipped, or cut short."""
    return settings(
        max_examples=30,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )(
        given(
            which=st.integers(0, 100),
            offset=st.integers(0, 1 << 30),
            xor=st.integers(1, 255),
            cut=st.booleans(),
        )(test)
    )


@random_damage
def test_random_damage_is_an_error_or_the_right_answer(pristine, tmp_path, which, offset, xor, cut):
    good = answer(pristine)
    case = tmp_path / uuid.uuid4().hex
    dest, gen = copy_of(pristine, case)
    files = data_files(gen) + [gen / store.HEADER_NAME]
    path = files[which % len(files)]
    if cut:
        data = path.read_bytes()
        path.write_bytes(data[: offset % max(len(data), 1)])
    else:
        flip(path, offset, xor)
    assert answer(dest) in (good, "error")


# --- files that are not what they claim to be ------------------------------------------------


def cli_verify(dest: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "index_tools.cli", "stats", str(dest), "--verify"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _link(target: str):
    def edit(path: Path) -> None:
        path.unlink()
        path.symlink_to(target)

    return edit


SPECIAL = {
    "header is a pipe": (store.HEADER_NAME, _fifo),
    "header links to /dev/zero": (store.HEADER_NAME, _link("/dev/zero")),
    "header nested too deeply": (store.HEADER_NAME, lambda p: p.write_text("[" * 200_000)),
    "header not utf-8": (store.HEADER_NAME, lambda p: p.write_bytes(b"\xff\xfe{}")),
    "header is a folder": (store.HEADER_NAME, lambda p: (p.unlink(), p.mkdir())),
    "CURRENT is a pipe": (store.CURRENT_NAME, _fifo),
    "CURRENT links to /dev/zero": (store.CURRENT_NAME, _link("/dev/zero")),
    "CURRENT not utf-8": (store.CURRENT_NAME, lambda p: p.write_bytes(b"gen-\xff\n")),
    "CURRENT names a missing generation": (
        store.CURRENT_NAME,
        lambda p: p.write_text("gen-19700101-000000-00000000\n"),
    ),
    "CURRENT names a parent": (store.CURRENT_NAME, lambda p: p.write_text("../idx\n")),
    "CURRENT names a file": (store.CURRENT_NAME, lambda p: p.write_text("gen-x/HEADER.json\n")),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes and links")
@pytest.mark.parametrize("case", sorted(SPECIAL))
def test_special_files_are_refused_without_hanging(pristine, tmp_path, case):
    dest, gen = copy_of(pristine, tmp_path)
    name, edit = SPECIAL[case]
    edit((dest if name == store.CURRENT_NAME else gen) / name)
    r = cli_verify(dest)  # a hang is a timeout, a failure
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "unexpected" not in r.stderr
    if "pipe" not in case and "/dev/zero" not in case:
        assert answer(dest) == "error"


def test_a_generation_that_links_elsewhere_is_refused(pristine, tmp_path):
    dest, gen = copy_of(pristine, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    gen.rename(elsewhere)
    gen.symlink_to(elsewhere, target_is_directory=True)
    assert answer(dest) == "error"
    assert cli_verify(dest).returncode == 2


# --- the checks that stand in for digests in large indexes -----------------------------------


@pytest.fixture
def large(monkeypatch):
    """Open as a large index: digests only of the files written since the build."""
    monkeypatch.setattr(index_module, "DIGESTS_ON_OPEN_BYTES", 0)


def keep_mtime(path: Path, edit) -> None:
    """Edit a file and give it back its modification time (damage a writer did not make)."""
    st = path.stat()
    edit(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def reseal(gen: Path) -> None:
    """Record the generation's files as they are now (sizes, mtimes, digests): damage the
    header vouches for, as a buggy writer would leave it."""
    header = store.Header(**json.loads((gen / store.HEADER_NAME).read_text()))
    store.finalize_generation(gen, header)


def test_large_indexes_check_the_digests_of_files_written_since(pristine, tmp_path, large):
    good = answer(pristine)
    assert answer(pristine) == good  # nothing written since: no digest needed, same answer
    rng = random.Random(11)
    for path in data_files(pristine / store.current_name(pristine)):
        for _ in range(3):
            dest, gen = copy_of(pristine, tmp_path / f"{path.name}-{rng.randrange(10**9)}")
            flip(gen / path.name, rng.randrange(1 << 30), rng.randrange(1, 256))
            assert answer(dest) == "error"


LMDB_META = {
    "magic": (16, b"\0\0\0\0"),
    "version": (20, b"\x07\0\0\0"),
    "page size": (16 + 24, b"\x00\x03\0\0"),  # 768: not a power of two
    "last page past the end": (16 + 120, (1 << 40).to_bytes(8, "little")),
    "root past the end": (16 + 24 + 48 + 40, (1 << 30).to_bytes(8, "little")),
    "deep tree": (16 + 24 + 48 + 6, b"\xff\x00"),
}


@pytest.mark.skipif(sys.byteorder != "little" or sys.maxsize < 2**32, reason="64-bit layout")
@pytest.mark.parametrize("file", [store.DOCS_NAME])
@pytest.mark.parametrize("field", sorted(LMDB_META))
def test_lmdb_meta_pages_are_checked_before_lmdb_reads_them(pristine, tmp_path, large, file, field):
    dest, gen = copy_of(pristine, tmp_path)
    offset, value = LMDB_META[field]

    def edit(path: Path) -> None:
        data = bytearray(path.read_bytes())
        for page in (0, 1):  # both meta pages, whichever LMDB would trust
            at = page * 4096 + offset
            data[at : at + len(value)] = value
        path.write_bytes(bytes(data))

    keep_mtime(gen / file, edit)
    assert answer(dest) == "error"
    assert any(file in p for p in store.verify(dest))


def answer_and_texts(index_dir: Path):
    """`answer`, and every stored text as read (a source's lines come from its line table:
    its text is read for the compare view), or the error either raises."""
    try:
        with open_index(index_dir) as idx:
            texts = [idx.document(d).whole_text() for d in range(idx.header.documents)]
    except IndexOpenError as e:
        assert "\n" not in str(e)
        return "error"
    found = answer(index_dir)
    return "error" if found == "error" else (found, texts)


def test_stored_texts_carry_checksums(pristine, tmp_path, large):
    """A changed byte of a stored text whose file kept its mtime: an error, never a
    different text (which would be a wrong answer)."""
    good = answer_and_texts(pristine)
    size = (pristine / store.current_name(pristine) / store.TEXT_NAME).stat().st_size
    results = set()
    for offset in range(0, size, 3):
        dest, gen = copy_of(pristine, tmp_path / str(offset))
        keep_mtime(gen / store.TEXT_NAME, lambda p, o=offset: flip(p, o, 0x20))
        got = answer_and_texts(dest)
        results.add("good" if got == good else got)
    assert results <= {"good", "error"} and "error" in results


def _edit_document(gen: Path, db: bytes, edit) -> None:
    env = store.open_env(gen / store.DOCS_NAME, readonly=False, max_dbs=8)
    try:
        handle = env.open_db(db)
        with env.begin(write=True) as txn:
            cursor = txn.cursor(handle)
            for key, value in list(cursor):
                txn.put(key, edit(value), db=handle)
    finally:
        env.close()
    reseal(gen)


def _meta(**changes):
    def edit(value: bytes) -> bytes:
        meta = json.loads(value)
        meta.update(changes)
        return json.dumps(meta).encode()

    return edit


def _reversed_blocks(value: bytes) -> bytes:
    pairs = [value[i : i + 8] for i in range(0, len(value), 8)]
    return b"".join(reversed(pairs)) if len(pairs) > 1 else b"\x05\0\0\0\0\0\0\0" + value


DOCUMENT_EDITS = {
    "word count as text": (b"meta", _meta(w="80")),
    "negative offset": (b"meta", _meta(o=-4)),
    "occurrences a list": (b"meta", _meta(n=[1])),
    "language a number": (b"meta", _meta(l=7)),
    "fewer words than its blocks": (b"meta", _meta(w=1)),
    "text past the end": (b"meta", _meta(z=10**9)),
    "record not an object": (b"meta", lambda v: b"[1, 2, 3]"),
    "blocks out of order": (b"blocks", _reversed_blocks),
    "blocks cut": (b"blocks", lambda v: v[:-3]),
    "origins not a list": (b"origins", lambda v: b'{"a": 1}'),
    "origin of wrong types": (b"origins", lambda v: b'[{"repository": 5, "path": []}]'),
}


@pytest.mark.parametrize("case", sorted(DOCUMENT_EDITS))
def test_stored_records_of_the_wrong_shape_are_errors(pristine, tmp_path, case):
    dest, gen = copy_of(pristine, tmp_path)
    db, edit = DOCUMENT_EDITS[case]
    _edit_document(gen, db, edit)
    assert answer_and_texts(dest) == "error"  # (a block table is read with its text)


def test_add_does_not_carry_damage_into_a_new_generation(pristine, tmp_path, large):
    dest, gen = copy_of(pristine, tmp_path)
    keep_mtime(gen / store.TEXT_NAME, lambda p: flip(p, 7, 0x10))
    src = tmp_path / "more"
    src.mkdir()
    (src / "m.py").write_text("def more():\n" + SNIPPET)
    with pytest.raises(BuildError, match="damaged"):
        add_to_index(dest, [str(src)], BuildOptions(jobs=1, progress=False))
    assert store.current_generation(dest) == gen.name
    assert sorted(p.name for p in dest.iterdir() if p.name.startswith("gen-")) == [gen.name]


def test_verify_reads_what_the_open_of_a_large_index_trusts(pristine, tmp_path, large, capsys):
    dest, gen = copy_of(pristine, tmp_path)
    keep_mtime(gen / store.TEXT_NAME, lambda p: flip(p, 7, 0x10))
    with open_index(dest):
        pass  # size and mtime as recorded: opened
    assert cli_main(["stats", str(dest), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "text.zst: contents differ from the header's digest" in out


# --- random damage, more kinds ----------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)
HEADER_KEYS = sorted(store.Header.__dataclass_fields__)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(key=st.sampled_from(HEADER_KEYS), value=JSON, drop=st.booleans())
def test_random_header_values_are_an_error_or_the_right_answer(
    pristine, tmp_path, key, value, drop
):
    good = answer(pristine)
    dest, gen = copy_of(pristine, tmp_path / uuid.uuid4().hex)
    header = json.loads((gen / store.HEADER_NAME).read_text())
    if drop:
        header.pop(key, None)
    else:
        header[key] = value
    (gen / store.HEADER_NAME).write_text(json.dumps(header))
    assert answer(dest) in (good, "error")


@random_damage
def test_random_damage_to_a_large_index_is_an_error(
    pristine, tmp_path, monkeypatch, which, offset, xor, cut
):
    monkeypatch.setattr(index_module, "DIGESTS_ON_OPEN_BYTES", 0)
    dest, gen = copy_of(pristine, tmp_path / uuid.uuid4().hex)
    files = data_files(gen)
    path = files[which % len(files)]
    data = path.read_bytes()
    if cut:
        path.write_bytes(data[: offset % len(data)])
    else:
        flip(path, offset, xor)
    assert answer(dest) == "error"


@pytest.mark.skipif(sys.byteorder != "little" or sys.maxsize < 2**32, reason="64-bit layout")
def test_verify_reads_before_anything_maps_the_files(pristine, tmp_path):
    """Damage inside an LMDB tree that keeps the file's size and mtime, in a large index:
    the open trusts it, `--verify` reports it and exits 1 without mapping the file (LMDB
    could crash on the damaged page)."""
    dest, gen = copy_of(pristine, tmp_path)

    def first_node_past_its_page(path: Path) -> None:
        # the main tree's root (as the newer meta page says): its first node pointer sent
        # past the page, where opening the named databases reads (a bus error in LMDB)
        data = bytearray(path.read_bytes())
        metas = [struct.unpack_from("<QQ", data, m * 4096 + 16 + 120) for m in (0, 1)]
        _, txn_root = max((txn, m) for m, (_, txn) in enumerate(metas))
        (root,) = struct.unpack_from("<Q", data, txn_root * 4096 + 16 + 24 + 48 + 40)
        struct.pack_into("<H", data, root * 4096 + 16, 0xFFF0)
        path.write_bytes(bytes(data))

    keep_mtime(gen / store.DOCS_NAME, first_node_past_its_page)
    script = (
        "import sys\n"
        "from index_tools.match import index\n"
        "from index_tools.cli import main\n"
        "index.DIGESTS_ON_OPEN_BYTES = 0\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", script, "stats", str(dest), "--verify"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "docs.mdb: contents differ from the header's digest" in r.stdout


CUT_UNDER_A_READER = """
import os, sys
from index_tools import IndexOpenError, open_index
from index_tools.match import kernel
kernel.use(sys.argv[1])
snippet = open(sys.argv[3]).read()
with open_index(sys.argv[2]) as idx:
    assert idx.match(snippet), "the pristine copy answers"
    path = os.path.join(sys.argv[2], open(os.path.join(sys.argv[2], "CURRENT")).read().strip(), sys.argv[4])
    os.truncate(path, os.path.getsize(path) // 2)
    try:
        idx.match(snippet)
    except IndexOpenError as e:
        print("error:", e)
    else:
        print("answered")
"""


@pytest.mark.parametrize("search", ["native", "python"])
def test_a_file_cut_short_under_an_open_index_is_the_damaged_error(pristine, tmp_path, search):
    """A data file truncated in place while an index is open (a reader of a long-lived
    process: the language server, `serve`): the next lookup is the damaged error, never a
    read past the end of the map (a bus error, or zeros read as words)."""
    from index_tools.match import kernel

    if search == "native" and not kernel.available():
        pytest.skip("no kernel library for this machine")
    query = tmp_path / "query.py"
    query.write_text(SNIPPET)
    names = [p.name for p in data_files(pristine / store.current_name(pristine))]
    for name in set(names) - {"shares.u32"}:  # (each source's files: read by `add` alone)
        dest, _ = copy_of(pristine, tmp_path / name)
        r = subprocess.run(
            [sys.executable, "-c", CUT_UNDER_A_READER, search, str(dest), str(query), name],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert r.returncode == 0, (name, r.returncode, r.stderr[-2000:])
        assert r.stdout.startswith("error:") and "damaged" in r.stdout, (name, r.stdout)
        assert f"{name} was cut short" in r.stdout


@pytest.mark.parametrize("search", ["native", "python"])
@pytest.mark.parametrize("starts", [(0x10000, 0x20000), (1 << 31, (1 << 32) - 1), (2, 0x20)])
def test_document_starts_past_the_ids_are_the_damaged_error(pristine, tmp_path, search, starts):
    """A shard's document starts moved, in order (the header resealed): past its words, or
    the first one after a word of no document. Both searches say the index is damaged,
    never an IndexError."""
    from index_tools.match import kernel

    if search == "native" and not kernel.available():
        pytest.skip("no kernel library for this machine")
    dest, gen = copy_of(pristine, tmp_path)
    docs = gen / "shard-000.docs"
    data = bytearray(docs.read_bytes())
    assert len(data) == 8  # (two documents)
    data[:] = struct.pack("<II", *starts)
    docs.write_bytes(bytes(data))
    reseal(gen)
    with kernel.using(search):
        assert answer(dest) == "error"
