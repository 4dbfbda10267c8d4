"""Warm from the first lookup: an index opened by a long-lived reader (the language server,
`serve`) rehearses a lookup on each lookup thread once it is mapped ahead, so the first
suggestion asked costs what later ones do. The rehearsal makes what a first lookup would
(every language's keywords, the kernel's vocabulary and scratch arrays, a stored document
read), changes no answer, runs on the lookup threads, and says so; on a damaged index it
says it failed (the lookups then say the damage, never "nothing found"). Real indexes of
the standard library's code; timings are the benchmark's (bench/bench_first_lookup.py)."""

from __future__ import annotations

import json
import random
import sysconfig
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from index_tools import BuildOptions, FollowingIndex, build_index, open_index
from index_tools.match import kernel
from index_tools.match.index import Index
from index_tools.store import generations as store
from index_tools.text import normalize

STDLIB = Path(sysconfig.get_paths()["stdlib"])
MODULES = ["argparse", "textwrap", "shlex", "fractions", "heapq", "bisect", "calendar"]


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("warm")
    src = root / "src"
    src.mkdir()
    for name in MODULES:
        (src / f"{name}.py").write_text((STDLIB / f"{name}.py").read_text(encoding="utf-8"))
    build_index([str(src)], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


def quotes(count: int) -> list[tuple[str, str]]:
    """(context, suggestion) windows of the indexed modules, and some of them shuffled."""
    rng = random.Random(11)
    out = []
    for _ in range(count):
        text = (STDLIB / f"{rng.choice(MODULES)}.py").read_text(encoding="utf-8")
        at = rng.randrange(800, len(text) - 1600)
        context, suggestion = text[at - 800 : at], text[at : at + rng.randrange(300, 1500)]
        if rng.random() < 0.3:  # novel: its lines in another order
            lines = suggestion.split("\n")
            rng.shuffle(lines)
            suggestion = "\n".join(lines)
        out.append((context, suggestion))
    return out


def answers(idx, pairs) -> list[str]:
    return [
        json.dumps(
            [m.to_dict() for m in idx.match(s, context=c, min_tokens=60, language="python")],
            sort_keys=True,
        )
        for c, s in pairs
    ]


def test_the_rehearsal_makes_what_a_first_lookup_would_in_its_thread(index):
    normalize.keywords.cache_clear()
    normalize.grammar_keywords.cache_clear()
    with open_index(index) as idx:
        assert idx._native_vocabulary is None and not idx._cache
        ms = idx.warm()
        assert ms > 0
        # every language's keywords, whichever the first suggestion is in
        assert normalize.keywords.cache_info().currsize == len(normalize.GRAMMARS)
        # a stored document of REHEARSAL_WORDS words or more was read and looked up
        (doc,) = [idx._cache[d] for d in idx._cache]
        assert doc.words >= 200 and doc.language == "python"
        if kernel.available():
            assert idx._native_vocabulary is not None
            # this thread's scratch arrays fit the largest shard's documents
            largest = max(len(s.starts) for s in idx.shards)
            assert len(kernel._scratch.mark) >= largest and len(kernel._scratch.slot) >= largest


def test_a_rehearsed_index_gives_the_same_answers(index, search_path):
    """Every answer byte for byte what an index opened anew without a rehearsal gives,
    quoted and novel, on both search paths."""
    pairs = quotes(40)
    with open_index(index) as cold:
        expected = answers(cold, pairs)
    with open_index(index) as warm:
        warm.warm()
        assert answers(warm, pairs) == expected
    assert sum(a != "[]" for a in expected) >= 20  # (quotes found: the comparison means much)


def test_a_following_index_rehearses_on_the_lookup_threads_and_reports_it(index, monkeypatch):
    threads: list[str] = []
    original = Index.warm

    def warm(self):
        threads.append(threading.current_thread().name)
        return original(self)

    monkeypatch.setattr(Index, "warm", warm)
    lookups = ThreadPoolExecutor(2, thread_name_prefix="lookups")
    following = FollowingIndex(index)
    reports = []
    done = threading.Event()

    def report(held, what) -> None:
        reports.append(what)
        done.set()

    following.map_ahead(threading.Event(), report, lookups=lookups, threads=2)
    assert done.wait(30)
    (what,) = reports
    assert len(what.rehearsed) == 2 and not what.rehearsal_failed
    assert threads and all(name.startswith("lookups") for name in threads)
    assert "; a lookup rehearsed on each of 2 lookup threads in" in what.describe()
    with following.using() as idx:  # and it answers as before
        assert idx.match(*reversed(quotes(1)[0]), min_tokens=60)
    following.close()
    lookups.shutdown()


def test_a_damaged_index_says_the_rehearsal_failed(index, tmp_path):
    """The documents' text cut short after opening: the rehearsal fails and says why, as a
    warning; a lookup then fails with the damage too."""
    copy = tmp_path / "idx"
    gen = store.read_header(index)[0]
    (copy / gen.name).mkdir(parents=True)
    for f in gen.iterdir():
        (copy / gen.name / f.name).write_bytes(f.read_bytes())
    (copy / "CURRENT").write_text((index / "CURRENT").read_text())
    following = FollowingIndex(copy)
    text = copy / gen.name / store.TEXT_NAME
    with open(text, "r+b") as f:
        f.truncate(text.stat().st_size // 2)
    reports = []
    done = threading.Event()
    lookups = ThreadPoolExecutor(1)
    following.map_ahead(
        threading.Event(), lambda held, what: (reports.append(what), done.set()), lookups=lookups
    )
    assert done.wait(30)
    (what,) = reports
    assert "was cut short" in what.rehearsal_failed and not what.rehearsed
    assert what.level == 30  # logging.WARNING
    assert "; a lookup's rehearsal failed (IndexOpenError: index at" in what.describe()
    with following.using() as idx, pytest.raises(store.IndexOpenError, match="cut short"):
        idx.match(*reversed(quotes(1)[0]), min_tokens=60)
    following.close()
    lookups.shutdown()


def test_a_repetitive_quote_imports_nothing_in_its_lookup(index):
    """A quote of a separator line is judged repetitive in Python without importing what
    numpy loads lazily (`np.unique` imports numpy.ma: 12 ms inside a lookup): a fresh
    process looks such a quote up and has not imported it."""
    import subprocess
    import sys

    line = "# " + "-" * 75 + "\n"
    code = (
        "import sys\n"
        "from index_tools import open_index\n"
        "from index_tools.text.kinds import is_repetitive\n"
        f"idx = open_index({str(index)!r})\n"
        f"assert is_repetitive(['#'] + ['-'] * 75)\n"
        f"idx.match({(line * 4)!r} + open({str(STDLIB / 'heapq.py')!r}).read()[:2000],"
        " language='python')\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
