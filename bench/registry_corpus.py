"""A corpus of over a billion words of real code: popular PyPI and npm packages.

The packages are the committed lists `bench/registry_packages/pypi.txt` (4,000 PyPI projects)
and `bench/registry_packages/npm.txt` (4,000 npm packages), each pinned to one version. They
are fetched through the project's own package sources (`pypi:FILE`, `npm:FILE`: verified
against the registries' digests, several at a time) into `.cache/bench/registry/` and kept
there: a second run, or one after an interruption, downloads only what is missing, and once
every package is there it needs no registry at all (pinned resolutions are cached too).
Packages that cannot be had (gone from the registry, an archive past the limits, larger than
--max-mb) are left out and listed. Words are counted with the index's rule (identifier runs
and single other characters) over the files an index would hold, and kept per archive.

    .venv/bin/python bench/registry_corpus.py                 # fetch, count, print the total
    .venv/bin/python bench/registry_corpus.py --jobs 2 --only pypi
    RECITATION_PACKAGE_CACHE=.cache/bench/registry .venv/bin/recitation-index build \\
        pypi:bench/registry_packages/pypi.txt npm:bench/registry_packages/npm.txt \\
        --keep-going --max-download-mb 200 --out IDX         # the same corpus as an index

Other benchmarks take the documents from `corpus_sources()`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from index_tools.build.sources.npm import open_npm  # noqa: E402
from index_tools.build.sources.packages import RegistryOptions  # noqa: E402
from index_tools.build.sources.pypi import open_pypi  # noqa: E402
from index_tools.text.words import WORD_RE  # noqa: E402

CACHE = ROOT / ".cache" / "bench" / "registry"
LISTS = {
    "pypi": ROOT / "bench" / "registry_packages" / "pypi.txt",
    "npm": ROOT / "bench" / "registry_packages" / "npm.txt",
}
MAX_FILE_BYTES = 1_000_000
COUNT_VERSION = 1


def corpus_sources(only=("pypi", "npm"), jobs: int = 3, max_mb: int = 200, progress=None):
    """The opened package sources of the corpus (fetching what the cache lacks)."""
    opts = RegistryOptions(
        cache=str(CACHE),
        jobs=jobs,
        keep_going=True,
        progress=progress,
        max_download_bytes=max_mb << 20,
    )
    sources = []
    for eco in only:
        opener = open_pypi if eco == "pypi" else open_npm
        sources.append(
            opener(
                f"{eco}:{LISTS[eco]}", str(LISTS[eco]), options=opts, max_file_bytes=MAX_FILE_BYTES
            )
        )
    return sources


def count_package(src, fetched) -> dict:
    """Files, bytes and words of one fetched package, cached beside its archive."""
    side = fetched.archive.with_name(fetched.archive.name + ".words.json")
    try:
        cached = json.loads(side.read_text("utf-8"))
        if (
            cached.get("version") == COUNT_VERSION
            and cached.get("max_file_bytes") == MAX_FILE_BYTES
        ):
            return cached
    except (OSError, ValueError):
        pass
    files = chars = words = 0
    for doc in src.package_documents(fetched):
        files += 1
        chars += len(doc.text)
        words += len(WORD_RE.findall(doc.text))
    record = {"version": COUNT_VERSION, "max_file_bytes": MAX_FILE_BYTES, "files": files,
              "chars": chars, "words": words}  # fmt: skip
    side.write_text(json.dumps(record), "utf-8")
    return record


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jobs", type=int, default=3, help="downloads at a time (default 3)")
    ap.add_argument("--only", choices=("pypi", "npm"), action="append", help="one registry")
    ap.add_argument("--max-mb", type=int, default=200, help="largest archive fetched (MB)")
    ap.add_argument("--no-count", action="store_true", help="fetch only")
    args = ap.parse_args()
    started = time.time()
    only = tuple(args.only or ("pypi", "npm"))
    CACHE.mkdir(parents=True, exist_ok=True)
    sources = corpus_sources(only, args.jobs, args.max_mb, progress=True)
    summary: dict = {"cache": str(CACHE.relative_to(ROOT)), "registries": {}}
    for src in sources:
        entry = {
            "listed": len(src.wanted),
            "fetched": len(src.fetched),
            "archive_bytes": sum(f.archive.stat().st_size for f in src.fetched),
            "unavailable": src.problems,
        }
        if not args.no_count:
            files = chars = words = 0
            for i, f in enumerate(src.fetched, 1):
                c = count_package(src, f)
                files, chars, words = files + c["files"], chars + c["chars"], words + c["words"]
                if i % 200 == 0:
                    print(f"  {src.kind}: counted {i}/{len(src.fetched)} packages, "
                          f"{words / 1e6:,.1f}M words", file=sys.stderr, flush=True)  # fmt: skip
            entry.update(files=files, chars=chars, words=words)
        summary["registries"][src.kind] = entry
    total = sum(e.get("words", 0) for e in summary["registries"].values())
    summary["words"] = total
    summary["seconds"] = round(time.time() - started, 1)
    (CACHE / "summary.json").write_text(json.dumps(summary, indent=2), "utf-8")
    for kind, e in summary["registries"].items():
        print(f"{kind}: {e['fetched']}/{e['listed']} packages, {e['archive_bytes'] / 1e9:.2f} GB "
              f"of archives, {e.get('files', 0):,} files, {e.get('words', 0):,} words; "
              f"{len(e['unavailable'])} unavailable")  # fmt: skip
    print(f"total: {total:,} words in {CACHE}")


if __name__ == "__main__":
    main()
