"""What a pause before a lookup costs it, and why: asleep or spinning, short or long.

    python bench/bench_idle.py --index IDX --texts pypi:LIST --queries 400 \\
        --before none,sleep:1,sleep:5,sleep:20,spin:20,sleep:100,spin:100,sleep:100+other \\
        --rounds 2 --out bench/results/idle-1.5b.md

An editor's lookups come after pauses (the user reads, types, accepts the next
suggestion), a benchmark's one after another. The same lookups (the language-server
benchmark's suggestions, asked as the server asks them: parts left for later) run in
passes, one pass a way of coming to each lookup (`--before`), the ways in turn and in the
other order the next round, each pass's lookups in order (each one's lookup before it is
the one before in the list, as in an editor):

- `none`: right after the lookup before;
- `sleep:MS`: after MS ms asleep (the thread blocked, as a server waiting for the editor);
- `spin:MS`: after MS ms spinning on the clock (the core kept, never idle);
- `sleep:MS+other`: after MS ms asleep, then another lookup (not timed) just before.

Sleeping against spinning tells whether the core's going idle is what costs (a virtual
machine's idle core may be given to others, a laptop's may sleep) or time alone (the
caches shared with other work losing the lookup's lines either way); `+other` tells
whether what is lost is the same for every lookup (the interpreter, the search's code, the
top of the suffix arrays: another lookup brings it back) or each lookup's own. The index's
files are read through before each round (a machine may reclaim pages untouched for a
while), then one pass not counted; every pass's page faults read from disk are counted,
and its answers compared with the first pass's on every lookup.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_engines import answer, percentiles, server_suggestions  # noqa: E402
from bench_latency import major_faults, read_through  # noqa: E402
from commit import emit, run_header, shown_argv  # noqa: E402

from index_tools import open_index  # noqa: E402

WARM = 20


class Way:
    """A way of coming to a lookup: `none`, `sleep:MS`, `spin:MS`, `sleep:MS+other`."""

    def __init__(self, spec: str):
        self.spec = spec
        kind, _, rest = spec.partition(":")
        ms, _, other = rest.partition("+")
        if kind not in ("none", "sleep", "spin") or (kind == "none") != (not ms):
            raise ValueError(f"not a way before a lookup: {spec!r}")
        if other not in ("", "other") or (other and kind != "sleep"):
            raise ValueError(f"not a way before a lookup: {spec!r}")
        self.kind, self.seconds, self.other = kind, float(ms or 0) / 1000, bool(other)

    def describe(self) -> str:
        if self.kind == "none":
            return "right after the lookup before"
        ms = f"{self.seconds * 1000:g} ms"
        if self.kind == "spin":
            return f"after {ms} spinning"
        return f"after {ms} asleep" + (", then another lookup" if self.other else "")

    def wait(self) -> None:
        if self.kind == "sleep":
            time.sleep(self.seconds)
        elif self.kind == "spin":
            until = time.perf_counter() + self.seconds
            while time.perf_counter() < until:
                pass


def one_pass(idx, pairs, way: Way) -> tuple[list[float], list[str], int]:
    """Each lookup once, in order, after `way`: (ms, answers, page faults read from disk)."""
    times, said = [], []
    faults = major_faults()
    for i, (ctx, sug) in enumerate(pairs):
        way.wait()
        if way.other:
            octx, osug = pairs[(i + len(pairs) // 2) % len(pairs)]
            idx.match(osug, octx, language="python", defer_parts=True)
        t0 = time.perf_counter()
        found = idx.match(sug, ctx, language="python", defer_parts=True)
        times.append((time.perf_counter() - t0) * 1000)
        said.append(answer(found))
    return times, said, major_faults() - faults


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Ways (--before, comma-separated): none, sleep:MS, spin:MS, sleep:MS+other.",
    )
    ap.add_argument("--index", required=True, help="the index folder")
    ap.add_argument("--texts", required=True, help="where the suggestions come from")
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--before", default="none,sleep:5,sleep:100,spin:100,sleep:100+other",
        help="the ways of coming to each lookup, a pass each",
    )  # fmt: skip
    ap.add_argument("--rounds", type=int, default=2, help="rounds of every way's pass")
    ap.add_argument("--out", help="write markdown here")
    args = ap.parse_args()
    try:
        ways = [Way(s.strip()) for s in args.before.split(",") if s.strip()]
    except ValueError as exc:
        ap.error(str(exc))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    pairs = server_suggestions(args.texts, args.queries, args.seed)
    idx = open_index(args.index)
    try:
        idx.map_ahead()  # (as the language server does)
        for ctx, sug in pairs[:WARM]:
            idx.match(sug, ctx, language="python", defer_parts=True)
        gc.collect()
        gc.freeze()
        times: dict[str, list[list[float]]] = {w.spec: [] for w in ways}
        faults: dict[str, list[int]] = {w.spec: [] for w in ways}
        first, differing, compared = None, 0, 0
        for r in range(args.rounds):
            took = read_through(idx)
            one_pass(idx, pairs, Way("none"))  # (what reading through left out read now)
            print(f"round {r + 1}: files read through in {took:.1f} s", flush=True)
            for way in ways if r % 2 == 0 else ways[::-1]:
                ms, said, read = one_pass(idx, pairs, way)
                if first is None:
                    first = said
                else:
                    differing += sum(a != b for a, b in zip(first, said))
                    compared += len(said)
                times[way.spec].append(ms)
                faults[way.spec].append(read)
                print(f"{way.spec}: {percentiles(ms)} ms, page faults read {read}", flush=True)
    finally:
        idx.close()
    command = "python bench/bench_idle.py " + shown_argv(
        sys.argv[1:], {"--index": "IDX", "--out": "OUT"}
    )
    base = [statistics.median(ms) for ms in times[ways[0].spec]]
    out = [
        *run_header("What a pause before a lookup costs it", command, load),
        f"Index: {idx.header.words:,} words. {len(pairs)} lookups a pass (the "
        f"language-server benchmark's suggestions, seed {args.seed}, parts left for "
        f"later), each pass a way of coming to each lookup, {args.rounds} round(s) of "
        f"the passes in turn (the order reversed every other round); answers differing "
        f"from the first pass's: {differing} of {compared}. ms: p50 / p90 / p99 / max of "
        f"each pass; the p50 against the first way's in the same round.",
        "",
        "| before each lookup | " + " | ".join(f"round {r + 1}" for r in range(args.rounds))
        + " | p50 against the first way's | page faults read from disk |",
        "| --- | " + " | ".join("---" for _ in range(args.rounds)) + " | ---: | ---: |",
    ]  # fmt: skip
    for way in ways:
        rel = [statistics.median(ms) / b for ms, b in zip(times[way.spec], base)]
        out.append(
            f"| {way.describe()} | "
            + " | ".join(percentiles(ms) for ms in times[way.spec])
            + f" | {' / '.join(f'{x:.2f}' for x in rel)} | "
            + f"{', '.join(str(f) for f in faults[way.spec])} |"
        )
    emit(out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
