"""Damaged indexes give a clean one-line error or a correct answer, never a crash, a hang or
a wrong answer: byte flips and truncations of every file, edited headers (types, ranges,
paths out of the generation), checked in process, through the CLI and over random damage."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index_tools import BuildOptions, IndexOpenError, build_index, open_index, store

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
    for name in names:
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
    "k is text": lambda h: h.update(k="20"),
    "k is zero": lambda h: h.update(k=0),
    "k is a bool": lambda h: h.update(k=True),
    "window negative": lambda h: h.update(window=-3),
    "too many shards": lambda h: h.update(shards=9999),
    "fewer shards": lambda h: h.update(shards=1),
    "file outside": lambda h: h["file_sizes"].update({"../../dev/zero": 0}),
    "digest outside": lambda h: h["file_hashes"].update({"../../dev/zero": "0"}),
    "absolute file": lambda h: h["file_sizes"].update({"/etc/passwd": 10}),
    "sizes not numbers": lambda h: h.update(file_sizes={k: "1" for k in h["file_sizes"]}),
    "sources not a list": lambda h: h.update(sources="x"),
    "other hash": lambda h: h.update(hash="md5"),
    "other tokenizer": lambda h: h.update(tokenizer_version=99),
    "version as text": lambda h: h.update(format_version=str(h["format_version"])),
    "documents negative": lambda h: h.update(documents=-1),
    "documents more": lambda h: h.update(documents=h["documents"] + 5),
    "a list": lambda h: (h.clear(), h.update(__list__=True)),
    "no files": lambda h: h.update(file_sizes={}, file_hashes={}),
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


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    which=st.integers(0, 100),
    offset=st.integers(0, 1 << 30),
    xor=st.integers(1, 255),
    cut=st.booleans(),
)
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
