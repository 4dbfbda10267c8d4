"""A build's vocabulary lookup per document, as the vocabulary grows: this engine's
`Vocabulary.map` beside the engine of another commit, taking turns on the same documents.

The vocabulary is filled with N distinct words (`w0`, `w1`, ...), then each engine numbers
the same documents (the standard library's files, every word already known or new), the
engines alternating document by document; reported: the median and total milliseconds a
document, and whether both gave the same ids.

    python bench/bench_vocabulary_lookup.py --before 66969b4 --words 1000000 --words 10000000
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_build_memory import earlier_tree  # noqa: E402

from index_tools.build.local import Vocabulary  # noqa: E402
from index_tools.build.process import process  # noqa: E402
from index_tools.build.sources import open_source  # noqa: E402


def vocabulary_at(commit: str, where: Path) -> type:
    """The builder's `Vocabulary` of `commit`: its `local.py` imported as a module of this
    package (its relative imports resolve here; the vocabulary's code is the commit's)."""
    name = "index_tools.build.local_before"
    spec = importlib.util.spec_from_file_location(
        name, earlier_tree(commit, where) / "index_tools/build/local.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module.Vocabulary


def filled(vocabulary_type: type, words: int):
    vocabulary = vocabulary_type()
    for start in range(0, words, 200_000):
        end = min(words, start + 200_000)
        vocabulary.map(process(" ".join(f"w{k}" for k in range(start, end))).pack())
    return vocabulary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the commit to compare with")
    ap.add_argument("--words", type=int, action="append", required=True)
    ap.add_argument("--documents", type=int, default=300)
    args = ap.parse_args()
    docs = [d.text for d in open_source("python:stdlib").documents()][: args.documents]
    packed = [process(t).pack() for t in docs]
    with tempfile.TemporaryDirectory() as tmp:
        before = vocabulary_at(args.before, Path(tmp))
    print("| vocabulary words | documents | ms a document before (median) | after | "
          "total s before | after | same ids |")  # fmt: skip
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for n in args.words:
        vocabularies = {"before": filled(before, n), "after": filled(Vocabulary, n)}
        times = {k: [] for k in vocabularies}
        same = True
        for i, pd in enumerate(packed):
            ids = {}
            for name in ("before", "after") if i % 2 == 0 else ("after", "before"):
                t = time.perf_counter()
                ids[name] = vocabularies[name].map(pd)
                times[name].append(time.perf_counter() - t)
            same = same and np.array_equal(ids["before"], ids["after"])
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        tot = {k: sum(v) for k, v in times.items()}
        print(f"| {n:,} | {len(packed)} | {med['before']:.2f} | {med['after']:.2f} | "
              f"{tot['before']:.2f} | {tot['after']:.2f} | {'yes' if same else 'NO'} |")  # fmt: skip


if __name__ == "__main__":
    main()
