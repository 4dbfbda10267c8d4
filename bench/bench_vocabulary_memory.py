"""The builder's vocabulary grown to N distinct words: its resident memory and the process's
peak after each growth of its table, the table's words placed all at once or a few at a
time (`REHASH_WORDS`), each way in a fresh process, taking turns.

The vocabulary is what the local builder holds beside the shard it sorts (the words
packed, their offsets and hashes, a table of ids by hash); its table grows (to four times
the words, a power of two) when half full, and the words are placed in the new one: the
work arrays of that placing are the peak above the table's own memory. Words are
generated (`w<hex>_<k>`), a batch at a time as documents bring them.

    .venv/bin/python bench/bench_vocabulary_memory.py --words 17000000 --runs 2 \\
        --out bench/results/vocabulary-memory.md
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ALL_AT_ONCE = 1 << 62

_GROW = """
import json, sys
import numpy as np
from index_tools.build import local
from index_tools.store.shards import packed_words

words, batch, rehash_words = (int(a) for a in sys.argv[1:4])
local.REHASH_WORDS = rehash_words


def kb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class Doc:  # what `Vocabulary.map` reads of a processed document
    def __init__(self, texts):
        self.packed = packed_words(texts)
        self.local_ids = np.arange(len(texts), dtype=np.uint32)

    def pack(self):
        return self


v, i, out = local.Vocabulary(), 0, []
while len(v) < words:
    slots = len(v._slots)
    v.map(Doc([f"w{i + k:x}_{k % 7}" for k in range(batch)]))
    i += batch
    if len(v._slots) != slots:
        out.append({"words": len(v), "slots": len(v._slots), "rss_kb": kb("VmRSS"),
                    "peak_kb": kb("VmHWM")})
out.append({"words": len(v), "slots": len(v._slots), "rss_kb": kb("VmRSS"),
            "peak_kb": kb("VmHWM"), "end": True})
print(json.dumps(out))
"""


def grow(words: int, batch: int, rehash_words: int) -> list[dict]:
    cmd = [sys.executable, "-c", _GROW, str(words), str(batch), str(rehash_words)]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--words", type=int, default=17_000_000, help="distinct words to reach")
    ap.add_argument("--batch", type=int, default=20_000, help="new words a document brings")
    ap.add_argument("--runs", type=int, default=2, help="runs of each way (the lower peak kept)")
    ap.add_argument("--out", type=Path, help="a markdown report to append to")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from index_tools.build.local import REHASH_WORDS

    ways = {"all at once": ALL_AT_ONCE, f"{REHASH_WORDS:,} at a time": REHASH_WORDS}
    best: dict[str, list[dict]] = {}
    for _ in range(args.runs):
        for name, rehash in ways.items():
            rows = grow(args.words, args.batch, rehash)
            if name not in best or rows[-1]["peak_kb"] < best[name][-1]["peak_kb"]:
                best[name] = rows
    names = list(ways)
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.machine()},"
        f" Python {platform.python_version()}; the lower peak of {args.runs} runs a way.",
        "",
        "```",
        f"python bench/bench_vocabulary_memory.py --words {args.words} --batch {args.batch}"
        f" --runs {args.runs}",
        "```",
        "",
        "| the table grown at words | slots | "
        + " | ".join(f"resident MB, {n} | peak MB, {n}" for n in names)
        + " |",
        "| ---: | ---: | " + " | ".join("---: | ---:" for _ in names) + " |",
    ]
    for k, row in enumerate(best[names[0]]):
        words = f"{row['words']:,}" + (" (the end)" if row.get("end") else "")
        cells = [words, f"{row['slots']:,}"]
        for n in names:
            r = best[n][k]
            cells += [f"{r['rss_kb'] >> 10:,}", f"{r['peak_kb'] >> 10:,}"]
        lines.append("| " + " | ".join(cells) + " |")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        with args.out.open("a", encoding="utf-8") as f:
            f.write("\n" + report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
