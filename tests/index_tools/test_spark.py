"""The Spark builder makes the same index as the local builder: every key and value of the
documents' database, the same bytes in every other file (texts, shards, suffix arrays,
vocabulary), the same header counts and the same answers to queries.

Needs PySpark and Java 17 (`pip install -e '.[dev,spark]'`); skipped, saying which is
missing, when either is absent.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from engine_fixtures import GEO, HAVERSINE, ROUTES, git, make_corpus, make_repo

from index_tools import BuildOptions, add_to_index, build_index, open_index
from index_tools.store.generations import DOC_DBS, DOCS_NAME, TEXT_NAME, open_env, read_header
from index_tools.text.words import WORD_RE


def _java_major() -> int:
    java = shutil.which("java")
    if not java:
        return 0
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        return 0
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _skip_reason() -> str | None:
    if importlib.util.find_spec("pyspark") is None:
        return "PySpark is not installed (pip install -e '.[dev,spark]')"
    if _java_major() < 17:
        return "Java 17 is not on PATH (Spark needs it)"
    return None


needs_spark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")

STDLIB = Path(sysconfig.get_paths()["stdlib"])
STDLIB_FILES = [
    "json/__init__.py",
    "json/decoder.py",
    "json/encoder.py",
    "textwrap.py",
    "bisect.py",
    "heapq.py",
    "shlex.py",
    "fnmatch.py",
    "colorsys.py",
    "keyword.py",
    "argparse.py",  # (a long file: its text in frames)
]
SMALL = "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n"
OPTS = dict(shard_words=40_000, progress=False)  # several shards


def _corpus(tmp: Path) -> list[str]:
    """Five git repositories with real files, copies across and within repositories (more
    copies of one file than the origin cap), and two installed distributions."""
    base = make_corpus(tmp)
    real = {f"lib/{rel}": (STDLIB / rel).read_text(encoding="utf-8") for rel in STDLIB_FILES}
    stdcopy, _ = make_repo(tmp / "stdcopy", real, "https://github.com/copies/stdcopy.git")
    vendored = {f"third_party/{p}": t for p, t in list(real.items())[:6]}
    vendored["third_party/lib/heapq.py"] = real["lib/heapq.py"].replace("heap", "pile")
    vendored.update({f"util/m{i:02d}/clamp.py": SMALL for i in range(40)})
    vendored["util/geo.py"] = GEO
    vendored["util/routes_copy.py"] = ROUTES + "\n" + HAVERSINE
    vend, _ = make_repo(tmp / "vendored", vendored, "https://gitlab.com/vend/app.git")
    return [*base["repos"], str(stdcopy), str(vend), "python:site-packages=tqdm,platformdirs"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from index_tools.build.spark import build_index_spark

    tmp = tmp_path_factory.mktemp("spark")
    specs = _corpus(tmp / "corpus")
    local = build_index(specs, tmp / "local", BuildOptions(jobs=2, **OPTS))
    spark = build_index_spark(
        specs,
        tmp / "spark",
        BuildOptions(jobs=2, **OPTS),
        master="local[2]",
        chunk_bytes=48_000,  # several map tasks, so ids cross partitions
    )
    return tmp, specs, local, spark


def _dump(path: Path, names=(None,)) -> dict:
    env = open_env(path, readonly=True, max_dbs=8)
    out = {}
    with env.begin() as txn:
        for name in names:
            db = env.open_db(name, txn=txn) if name else None
            out[name] = list(txn.cursor(db=db)) if db is not None else list(txn.cursor())
    env.close()
    return out


@needs_spark
def test_summaries_agree(built):
    _, _, local, spark = built
    assert local.files > 80 and local.duplicates > 40
    for field in ("files", "documents", "duplicates", "words", "vocabulary", "shards"):
        assert getattr(spark, field) == getattr(local, field), field
    assert dict(spark.skipped) == dict(local.skipped)


@needs_spark
def test_headers_agree(built):
    tmp, *_ = built
    (_, hl), (_, hs) = read_header(tmp / "local"), read_header(tmp / "spark")
    a, b = dict(hl.__dict__), dict(hs.__dict__)
    for volatile in ("created", "file_sizes", "file_hashes", "file_mtimes"):
        a.pop(volatile), b.pop(volatile)
    assert a == b
    assert hl.shards >= 3  # shards are built in parallel
    assert sorted(hl.file_sizes) == sorted(hs.file_sizes)


@needs_spark
def test_every_key_and_value_agrees(built):
    tmp, *_ = built
    gl, _ = read_header(tmp / "local")
    gs, hs = read_header(tmp / "spark")
    docs_l, docs_s = _dump(gl / DOCS_NAME, DOC_DBS), _dump(gs / DOCS_NAME, DOC_DBS)
    for name in DOC_DBS:
        assert docs_l[name] == docs_s[name], name.decode()
    origins = [json.loads(v) for _, v in docs_l[b"origins"]]
    assert max(len(o) for o in origins) == 32  # the origin cap
    metas = [json.loads(v) for _, v in docs_l[b"meta"]]
    assert max(m["n"] for m in metas) >= 40
    assert any(len(m.get("f", ())) >= 2 for m in metas)  # a long text in frames
    assert (gl / TEXT_NAME).read_bytes() == (gs / TEXT_NAME).read_bytes()
    others = sorted(n for n in hs.file_sizes if n != DOCS_NAME)
    assert len(others) >= 5 * hs.shards
    for name in others:
        assert (gl / name).read_bytes() == (gs / name).read_bytes(), name


def _queries(tmp: Path) -> list[tuple[str, str]]:
    heapq_text = (STDLIB / "heapq.py").read_text(encoding="utf-8")
    decoder = (STDLIB / "json/decoder.py").read_text(encoding="utf-8")
    spans = [m.start() for m in WORD_RE.finditer(decoder)]
    at, end = spans[120], spans[min(420, len(spans) - 1)]
    snippet, context = decoder[at:end], decoder[spans[20] : at]
    renamed = snippet.replace("s", "z")
    novel = "\n".join(f"def f{i}(a, b):\n    return a * {i} + b - {i * i}" for i in range(40))
    return [
        (GEO, ""),
        (ROUTES, ""),
        (HAVERSINE, ""),
        (SMALL * 30, ""),
        (heapq_text, ""),
        (snippet, context),
        (snippet, ""),
        (renamed, context),
        (novel, context),
        (novel + "\n" + HAVERSINE + "\n" + snippet, "import os\n"),
    ]


@needs_spark
def test_queries_answer_identically(built):
    tmp, *_ = built
    queries = _queries(tmp)
    with open_index(tmp / "local") as li, open_index(tmp / "spark") as si:
        found = 0
        for suggestion, context in queries:
            for min_tokens in (30, 60):
                a = [m.to_dict() for m in li.match(suggestion, context, min_tokens=min_tokens)]
                b = [m.to_dict() for m in si.match(suggestion, context, min_tokens=min_tokens)]
                assert a == b
                found += len(a)
    assert found > 5


@needs_spark
def test_a_new_version_added_to_a_spark_built_index(built, tmp_path):
    """The Spark builder records each source's files as the local builder does (the shares
    file is compared byte for byte above): `add` of a source's new version takes the old one
    out of a Spark-built index exactly as out of a locally built one."""
    tmp, specs, *_ = built
    vendored = tmp_path / "vendored"  # a clone of the same repository, one commit later
    shutil.copytree(specs[4], vendored)
    for i in range(10):  # 40 copies of one file, more than the origin cap: 30 left
        (vendored / f"util/m{i:02d}/clamp.py").unlink()
    (vendored / "util/geo.py").write_text(GEO.replace("Geometry", "Geodesy"))
    git(vendored, "commit", "-qam", "fewer copies")
    indexes = []
    for name in ("local", "spark"):
        shutil.copytree(tmp / name, tmp_path / name)
        with open_index(tmp_path / name) as idx:
            (before,) = idx.match(GEO)
        summary = add_to_index(tmp_path / name, [str(vendored)], BuildOptions(**OPTS))
        assert summary.replaced and summary.removed > 40 and summary.files == summary.removed - 10
        with open_index(tmp_path / name) as idx:
            (after,) = idx.match(GEO)
        assert after.file_count == before.file_count - 1  # the changed util/geo.py left
        assert "util/geo.py" not in {s.path for s in after.sources}
        indexes.append(read_header(tmp_path / name))
    (gl, hl), (gs, hs) = indexes
    assert hl.source_files == hs.source_files and hl.files == hs.files
    docs_l, docs_s = _dump(gl / DOCS_NAME, DOC_DBS), _dump(gs / DOCS_NAME, DOC_DBS)
    for name in DOC_DBS:
        assert docs_l[name] == docs_s[name], name.decode()
    metas = {k: json.loads(v) for k, v in docs_l[b"meta"]}
    origins = {k: json.loads(v) for k, v in docs_l[b"origins"]}
    small = next(k for k, m in metas.items() if m["n"] == 30)  # the 40 copies, 30 left
    assert len(origins[small]) == 30
    for name in sorted(n for n in hs.file_sizes if n != DOCS_NAME):
        assert (gl / name).read_bytes() == (gs / name).read_bytes(), name


def test_cli_engine_spark_without_pyspark_says_so(monkeypatch, tmp_path, capsys):
    import builtins

    from index_tools.cli import main

    real_import = builtins.__import__

    def no_pyspark(name, *args, **kwargs):
        if name == "pyspark" or name.startswith("pyspark."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyspark)
    repo, _ = make_repo(tmp_path / "r", {"routes.py": ROUTES}, None)
    code = main(["build", str(repo), "--out", str(tmp_path / "idx"), "--engine", "spark", "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "pip install 'recitation[spark]'" in err and "\n" not in err


def test_master_needs_spark_engine(tmp_path, capsys):
    from index_tools.cli import main

    code = main(["build", "python:stdlib", "--out", str(tmp_path / "i"), "--master", "local[2]"])
    assert code == 2 and "--master needs --engine spark" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--spark-conf", "spark.driver.memory=2g"], "--spark-conf needs --engine spark"),
        (["--engine", "spark", "--spark-conf", "driver.memory=2g"], "with a spark.* key"),
        (["--engine", "spark", "--spark-conf", "spark.driver.memory"], "KEY=VALUE"),
        (["--engine", "spark", "--spark-conf", "spark.driver.memory="], "KEY=VALUE"),
    ],
)
def test_spark_settings_are_checked_before_spark_starts(tmp_path, capsys, args, message):
    from index_tools.cli import main

    code = main(["build", "python:stdlib", "--out", str(tmp_path / "i"), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and "\n" not in err
    assert not (tmp_path / "i").exists()


@needs_spark
def test_a_failed_spark_build_says_why_in_one_line_and_publishes_nothing(tmp_path):
    """Spark's JVM cannot start with this setting (a process of its own: a JVM started by
    an earlier test could not take it): one line, no traceback, nothing at --out, and the
    setting given reached Spark."""
    repo, _ = make_repo(tmp_path / "r", {"routes.py": ROUTES}, None)
    out = tmp_path / "idx"
    command = [sys.executable, "-m", "index_tools.cli", "build", str(repo), "--out", str(out)]
    command += ["--engine", "spark", "-q", "--spark-conf", "spark.driver.memory=not-a-size"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2
    assert err[-1].startswith("recitation-index: the Spark build failed: ")
    assert "Traceback" not in done.stderr
    assert not (out / "CURRENT").exists()


@needs_spark
def test_local_mode_s_workers_are_forked_with_the_builder_imported(tmp_path):
    """Each task's worker ends with it; it is forked from a daemon that imported the
    builder's modules, so it does not import them again (no task pays for that)."""
    from index_tools.build.spark import _context

    sc = _context("local[1]", tmp_path, {})
    try:
        seen = (
            sc.parallelize(range(2), 2)
            .map(
                lambda _: (
                    getattr(__import__("sys").modules["__main__"].__spec__, "name", ""),
                    "index_tools.build.process" in __import__("sys").modules,
                )
            )
            .collect()
        )
    finally:
        sc.stop()
    assert seen == [("index_tools.build.spark_daemon", True)] * 2
