"""Side by side with established tools, on the same corpus and the same queries, in one run.

- Recitation: `recitation-index build` (local builder) of the corpus folder, then
  `open_index(path).match(snippet)`; a snippet is detected when a span of 60+ words matches.
- infini-gram (PyPI `infini-gram`): suffix array over the corpus as word ids (u16: the most
  frequent words get one id, the others two), built by its indexer from pre-tokenized input;
  a snippet is detected when one of its 60-word windows occurs in the corpus (each window
  counted), the same criterion as Recitation's.
- Dolos (npm `@dodona/dolos-lib`): its winnowing fingerprint index (tree-sitter tokens,
  k-grams of 23, windows of 17) over the corpus files in memory; each snippet is added as a
  file and paired with every corpus file it shares fingerprints with; detected when the
  longest common fragment spans at least --dolos-min k-grams.
- jscpd (npm `jscpd` 5.3.3, a Rust binary): one scan of corpus + snippet files with
  `--min-tokens 60 --min-lines 1`; detected when a clone pairs the snippet with a corpus file.

Corpus: the running Python's standard library (as the default index). Queries: 300-word
snippets cut from corpus files ("quoted", whose true source is known) and from installed
packages that are not in the corpus ("unindexed"; a few may still be copies of stdlib code).

Peers are installed into the git-ignored .cache/peers/ (never committed):

    .venv/bin/python bench/bench_peers.py --setup          # venv with infini-gram, npm packages
    .venv/bin/python bench/bench_peers.py --out bench/results/peers.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import pct  # noqa: E402
from bench_scaling import tree_rss_mb  # noqa: E402

from index_tools import open_index  # noqa: E402
from index_tools.build.sources import open_source  # noqa: E402
from index_tools.match import kernel  # noqa: E402
from index_tools.store import generations as store  # noqa: E402
from index_tools.text.words import WORD_RE, tokenize  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / ".cache" / "peers"
PEER_PY = PEERS / "venv" / "bin" / "python"
NPM_DIR = PEERS / "npm"
SNIPPET_WORDS = 300
MIN_WORDS = 60
U16_SINGLE = 64_000  # word ids 0..63999: the most frequent words
U16_PREFIXES = 1_500  # rare words: (64000 + h % 1500, h2 % 64000)
U16_EOS, U16_VOCAB = 65_533, 65_535

NPM_PACKAGES = ["@dodona/dolos-lib@3.5", "jscpd@5.3.3", "jscpd-linux-x64-gnu@5.3.3"]
PIP_PACKAGES = ["infini-gram==2.6.0", "transformers", "numpy"]

DOLOS_JS = r"""
import fs from "node:fs";
import { File, FingerprintIndex } from "@dodona/dolos-core";
import { LanguagePicker } from "@dodona/dolos-lib";

const [corpusList, queryList, outPath] = process.argv.slice(2);
const corpus = JSON.parse(fs.readFileSync(corpusList, "utf8"));
const queries = JSON.parse(fs.readFileSync(queryList, "utf8"));
const t0 = performance.now();
const language = await new LanguagePicker().findLanguage("python");
const tokenizer = await language.createTokenizer({ includeComments: false });
const index = new FingerprintIndex(23, 17, false);
const files = corpus.map((p) => new File(p, fs.readFileSync(p, "utf8")));
index.addFiles(files.map((f) => tokenizer.tokenizeFile(f)));
const buildMs = performance.now() - t0;
const queryIds = new Set();
const results = [];
for (const q of queries) {
  const t = performance.now();
  const tf = tokenizer.tokenizeFile(new File(q.path, fs.readFileSync(q.path, "utf8")));
  queryIds.add(tf.id);
  index.addFiles([tf]);
  const entry = index.files.get(tf.id);
  const candidates = new Set();
  for (const sf of entry.shared) {
    for (const f of sf.files()) if (!queryIds.has(f.id)) candidates.add(f);
  }
  let best = null;
  let longest = 0;
  for (const f of candidates) {
    const pair = index.getPair(tf, f);
    if (pair.longest > longest) { longest = pair.longest; best = f.path; }
  }
  results.push({ id: q.id, ms: performance.now() - t, longest, best, candidates: candidates.size });
}
fs.writeFileSync(outPath, JSON.stringify({ build_ms: buildMs, files: files.length, results }));
"""

INFINI_QUERY_PY = r"""
import json, sys, time
from infini_gram.engine import InfiniGramEngine

index_dir, queries_path, out_path, min_words, eos, vocab = sys.argv[1:7]
min_words, eos, vocab = int(min_words), int(eos), int(vocab)
engine = InfiniGramEngine(index_dir=index_dir, eos_token_id=eos, vocab_size=vocab, token_dtype="u16")
queries = json.load(open(queries_path))
for q in queries[:5]:  # warm the page cache
    engine.count(input_ids=[x for w in q["ids"][:min_words] for x in w])
out = []
for q in queries:
    words = q["ids"]  # one list of ids per word
    t = time.perf_counter()
    hit = -1
    for i in range(0, len(words) - min_words + 1):
        ids = [x for w in words[i : i + min_words] for x in w]
        if engine.count(input_ids=ids)["count"] > 0:
            hit = i
            break
    ms = (time.perf_counter() - t) * 1000
    docs = []
    if hit >= 0:  # the documents holding the first matching window (up to 32 occurrences)
        ids = [x for w in words[hit : hit + min_words] for x in w]
        lo, hi = engine.find(input_ids=ids)["segment_by_shard"][0]
        for rank in range(lo, min(hi, lo + 32)):
            docs.append(engine.get_doc_by_rank(s=0, rank=rank, max_disp_len=10)["doc_ix"])
    t = time.perf_counter()
    engine.find(input_ids=[x for w in words for x in w])
    whole_ms = (time.perf_counter() - t) * 1000
    out.append({"id": q["id"], "detected": hit >= 0, "docs": docs, "ms": ms, "whole_ms": whole_ms})
json.dump(out, open(out_path, "w"))
"""


def setup() -> None:
    PEERS.mkdir(parents=True, exist_ok=True)
    if not PEER_PY.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEERS / "venv")], check=True)
    subprocess.run([str(PEER_PY), "-m", "pip", "install", "-q", *PIP_PACKAGES], check=True)
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    if not (NPM_DIR / "package.json").exists():
        (NPM_DIR / "package.json").write_text('{"name": "peers", "private": true}\n')
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", *NPM_PACKAGES], cwd=NPM_DIR, check=True
    )


def timed_run(cmd: list[str], **kw) -> dict:
    """Run a command; wall time and the peak resident memory of its process tree."""
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, text=True, **kw)
        peak = 0.0
        while proc.poll() is None:
            peak = max(peak, tree_rss_mb(proc.pid))
            time.sleep(0.2)
        wall = time.perf_counter() - t
        so.seek(0), se.seek(0)
        out, err = so.read(), se.read()
    return {
        "rc": proc.returncode,
        "wall_s": round(wall, 2),
        "peak_mb": round(peak),
        "stdout": out,
        "stderr": err,
    }


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- corpus and queries ---------------------------------------------------------------------


def materialize(spec: str, folder: Path) -> list[tuple[str, str]]:
    """Write the corpus's documents as files; returns (relative path, text) in order."""
    out = []
    for doc in open_source(spec).documents():
        if doc.language != "python":
            continue
        rel = doc.origin.path
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(doc.text, encoding="utf-8", errors="surrogatepass")
        out.append((rel, doc.text))
    return out


def snippets(texts: list[tuple[str, str]], count: int, rng: random.Random) -> list[dict]:
    big = [(p, t) for p, t in texts if len(WORD_RE.findall(t)) >= SNIPPET_WORDS + 20]
    out = []
    while len(out) < count and big:
        path, text = rng.choice(big)
        ws = tokenize(text)
        i = rng.randrange(0, len(ws) - SNIPPET_WORDS)
        out.append({"source": path, "text": text[ws[i].start : ws[i + SNIPPET_WORDS - 1].end]})
    return out


def unindexed_texts(exclude: set[str]) -> list[tuple[str, str]]:
    out = []
    for doc in open_source("python:site-packages").documents():
        if doc.language == "python" and doc.text not in exclude:
            out.append((f"{doc.origin.repository}/{doc.origin.path}", doc.text))
    return out


# --- tools -------------------------------------------------------------------------------------


def run_recitation(corpus_dir: Path, work: Path, queries: list[dict], words: int) -> dict:
    out = work / "recitation-index"
    cmd = [sys.executable, "-m", "index_tools.cli", "build", str(corpus_dir), "--out", str(out)]
    b = timed_run([*cmd, "--json", "-q"])
    if b["rc"]:
        raise RuntimeError(b["stderr"][-2000:])
    summary = json.loads(b["stdout"][b["stdout"].index("{") :])
    per = []
    with open_index(out) as idx:
        for q in queries[:5]:
            idx.match(q["text"], "")
        for i, q in enumerate(queries):
            # the compiled search and the Python one in turn (alternating), same answers
            times, answers = {}, []
            for path in ("native", "python") if i % 2 == 0 else ("python", "native"):
                with kernel.using(path):
                    t = time.perf_counter()
                    ms = idx.match(q["text"], "", min_tokens=MIN_WORDS)
                    times[path] = (time.perf_counter() - t) * 1000
                answers.append([m.to_dict() for m in ms])
            paths = {s.path for m in ms for s in m.sources}
            per.append(
                {
                    "id": q["id"],
                    "detected": bool(ms),
                    "source_found": q["source"] in paths,
                    "ms": times["native"],
                    "python_ms": times["python"],
                    "same_on_both_paths": answers[0] == answers[1],
                }
            )
    return {
        "build_s": b["wall_s"],
        "peak_mb": b["peak_mb"],
        "index_bytes": summary["bytes"],
        "bytes_per_word": round(summary["bytes"] / words, 2),
        "per_query": per,
        "command": "recitation-index build CORPUS --out IDX; "
        "open_index(IDX).match(snippet, min_tokens=60)",
    }


def _vocab(texts: list[str]) -> dict[str, int]:
    counts = Counter()
    for t in texts:
        counts.update(WORD_RE.findall(t))
    return {w: i for i, (w, _) in enumerate(counts.most_common(U16_SINGLE))}


def _word_ids(words: list[str], vocab: dict[str, int]) -> list[list[int]]:
    import xxhash

    out = []
    for w in words:
        i = vocab.get(w)
        if i is not None:
            out.append([i])
        else:
            h = xxhash.xxh3_64_intdigest(w.encode("utf-8", "surrogatepass"))
            out.append([U16_SINGLE + h % U16_PREFIXES, (h >> 32) % U16_SINGLE])
    return out


def run_infini(corpus: list[tuple[str, str]], work: Path, queries: list[dict], words: int):
    if not PEER_PY.exists():
        return {"error": "not installed: run bench/bench_peers.py --setup"}
    save = work / "infini-index"
    shutil.rmtree(save, ignore_errors=True)
    save.mkdir(parents=True)
    data = work / "infini-data"  # the indexer insists on a data dir; input is pre-tokenized
    data.mkdir(exist_ok=True)
    t = time.perf_counter()
    vocab = _vocab([t for _, t in corpus])
    sep = np.array([0xFFFF], dtype="<u2").tobytes()
    offsets = []
    with open(save / "tokenized.0", "wb") as f:
        for _, text in corpus:
            offsets.append(f.tell())
            ids = [x for w in _word_ids(WORD_RE.findall(text), vocab) for x in w]
            f.write(sep + np.asarray(ids, dtype="<u2").tobytes())
    np.asarray(offsets, dtype="<u8").tofile(save / "offset.0")
    tokenize_s = time.perf_counter() - t
    pkg = subprocess.run(
        [
            str(PEER_PY),
            "-c",
            "import infini_gram, os; print(os.path.dirname(infini_gram.__file__))",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    cmd = [str(PEER_PY), "-m", "infini_gram.indexing", "--data_dir", str(data)]
    cmd += ["--save_dir", str(save), "--token_dtype", "u16", "--cpus", "2", "--mem", "4"]
    cmd += ["--ulimit", "20000"]
    b = timed_run(cmd, cwd=pkg)
    if b["rc"]:
        return {"error": f"indexer failed: {(b['stderr'] or b['stdout'])[-1500:]}"}
    qfile = work / "infini-queries.json"
    qfile.write_text(
        json.dumps(
            [{"id": q["id"], "ids": _word_ids(WORD_RE.findall(q["text"]), vocab)} for q in queries]
        )
    )
    script = work / "infini_query.py"
    script.write_text(INFINI_QUERY_PY)
    res = work / "infini-results.json"
    r = subprocess.run(
        [str(PEER_PY), str(script), str(save), str(qfile), str(res), str(MIN_WORDS)]
        + [str(U16_EOS), str(U16_VOCAB)],
        capture_output=True,
        text=True,
    )
    if r.returncode:
        return {"error": f"queries failed: {r.stderr[-1500:]}"}
    paths = [p for p, _ in corpus]
    per = []
    by_id = {q["id"]: q for q in queries}
    for x in json.loads(res.read_text()):
        srcs = {paths[d] for d in x["docs"] if d < len(paths)}
        per.append(
            {
                "id": x["id"],
                "detected": x["detected"],
                "source_found": by_id[x["id"]]["source"] in srcs,
                "ms": x["ms"],
                "whole_ms": x["whole_ms"],
            }
        )
    size = sum((save / n).stat().st_size for n in ("tokenized.0", "table.0", "offset.0"))
    return {
        "build_s": round(b["wall_s"] + tokenize_s, 2),
        "indexer_s": b["wall_s"],
        "tokenize_s": round(tokenize_s, 2),
        "peak_mb": b["peak_mb"],
        "index_bytes": size,
        "bytes_per_word": round(size / words, 2),
        "per_query": per,
        "command": "python -m infini_gram.indexing --data_dir D --save_dir S --token_dtype u16 "
        "--cpus 2 --mem 4 --ulimit 20000 (S holding tokenized.0 + offset.0); "
        "engine.count() of every 60-word window",
    }


def run_dolos(corpus_dir: Path, corpus, work: Path, qdir: Path, queries, min_kgrams: int):
    if not (NPM_DIR / "node_modules" / "@dodona" / "dolos-lib").exists():
        return {"error": "not installed: run bench/bench_peers.py --setup"}
    script = NPM_DIR / "dolos_bench.mjs"  # beside node_modules, so the imports resolve
    script.write_text(DOLOS_JS)
    clist, qlist, res = work / "dolos-corpus.json", work / "dolos-queries.json", work / "dolos.json"
    clist.write_text(json.dumps([str(corpus_dir / p) for p, _ in corpus]))
    qlist.write_text(json.dumps([{"id": q["id"], "path": str(qdir / q["file"])} for q in queries]))
    b = timed_run(
        ["node", "--max-old-space-size=12000", str(script), str(clist), str(qlist), str(res)]
    )
    if b["rc"]:
        return {"error": f"dolos failed: {b['stderr'][-1500:]}"}
    out = json.loads(res.read_text())
    by_id = {q["id"]: q for q in queries}
    per = []
    for x in out["results"]:
        best = x["best"] and os.path.relpath(x["best"], corpus_dir)
        per.append(
            {
                "id": x["id"],
                "detected": x["longest"] >= min_kgrams,
                "source_found": x["longest"] >= min_kgrams and best == by_id[x["id"]]["source"],
                "ms": x["ms"],
                "longest": x["longest"],
                "candidates": x["candidates"],
            }
        )
    return {
        "build_s": round(out["build_ms"] / 1000, 2),
        "run_s": b["wall_s"],
        "peak_mb": b["peak_mb"],
        "index_bytes": None,
        "bytes_per_word": None,
        "per_query": per,
        "min_kgrams": min_kgrams,
        "command": "FingerprintIndex(23, 17) of the corpus (dolos-lib tokenizer); per snippet: "
        f"addFiles + getPair with each file sharing a fingerprint; longest >= {min_kgrams}",
    }


def run_jscpd(corpus_dir: Path, work: Path, qdir: Path, queries) -> dict:
    exe = NPM_DIR / "node_modules" / ".bin" / "jscpd"
    if not exe.exists():
        return {"error": "not installed: run bench/bench_peers.py --setup"}
    report = work / "jscpd"
    shutil.rmtree(report, ignore_errors=True)
    args = ["--min-tokens", str(MIN_WORDS), "--min-lines", "1", "--format", "python"]
    args += ["--reporters", "json", "--output", str(report)]
    b = timed_run([str(exe), *args, corpus_dir.name, qdir.name], cwd=work)
    if b["rc"] not in (0, 1):
        return {"error": f"jscpd failed: {b['stderr'][-1500:]}"}
    found = next(report.rglob("*.json"), None)
    if found is None:
        return {"error": f"jscpd wrote no report: {b['stderr'][-800:]}"}
    dups = json.loads(found.read_text()).get("duplicates", [])
    snippet = re.compile(r"(?:^|/)q\d{4}\.py$")
    hits: dict[str, set] = {}
    for d in dups:
        a, c = d["firstFile"]["name"], d["secondFile"]["name"]
        for x, y in ((a, c), (c, a)):
            if snippet.search(x) and not snippet.search(y):
                rel = y.removeprefix(str(work) + "/").removeprefix(corpus_dir.name + "/")
                hits.setdefault(Path(x).name, set()).add(rel)
    per = []
    for q in queries:
        srcs = hits.get(q["file"], set())
        per.append({"id": q["id"], "detected": bool(srcs), "source_found": q["source"] in srcs})
    return {
        "build_s": None,
        "run_s": b["wall_s"],
        "peak_mb": b["peak_mb"],
        "index_bytes": None,
        "bytes_per_word": None,
        "per_query": per,
        "clones": len(dups),
        "command": f"jscpd {' '.join(args[:-4])} --reporters json CORPUS SNIPPETS",
    }


# --- report ------------------------------------------------------------------------------------


def summarize(name: str, r: dict, queries: list[dict], reference: dict | None) -> dict:
    if "error" in r:
        return {"tool": name, "error": r["error"]}
    per = {x["id"]: x for x in r["per_query"]}
    quoted = [q for q in queries if q["kind"] == "quoted"]
    unindexed = [q for q in queries if q["kind"] == "unindexed"]
    row = {
        "tool": name,
        "build_s": r.get("build_s"),
        "run_s": r.get("run_s"),
        "peak_mb": r.get("peak_mb"),
        "index_bytes": r.get("index_bytes"),
        "bytes_per_word": r.get("bytes_per_word"),
        "quoted_detected": sum(per[q["id"]]["detected"] for q in quoted) / len(quoted),
        "quoted_source_found": sum(per[q["id"]]["source_found"] for q in quoted) / len(quoted),
        "unindexed_detected": sum(per[q["id"]]["detected"] for q in unindexed) / len(unindexed),
        "command": r["command"],
    }
    times = [x["ms"] for x in r["per_query"] if "ms" in x]
    if times:
        row["query_p50_ms"] = round(pct(times, 50), 2)
        row["query_p99_ms"] = round(pct(times, 99), 2)
    whole = [x["whole_ms"] for x in r["per_query"] if "whole_ms" in x]
    if whole:
        row["whole_snippet_find_p50_ms"] = round(pct(whole, 50), 3)
    if reference is not None:
        ref = {x["id"]: x for x in reference["per_query"]}
        same = sum(per[q["id"]]["detected"] == ref[q["id"]]["detected"] for q in queries)
        row["agreement_with_recitation"] = round(same / len(queries), 3)
    py = [x["python_ms"] for x in r["per_query"] if "python_ms" in x]
    if py:  # Recitation's Python search, on the same lookups in turn
        row["python_search_p50_ms"] = round(pct(py, 50), 2)
        row["python_search_p99_ms"] = round(pct(py, 99), 2)
        row["same_on_both_paths"] = sum(x["same_on_both_paths"] for x in r["per_query"])
    for k in ("indexer_s", "tokenize_s", "min_kgrams", "clones"):
        if k in r:
            row[k] = r[k]
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}


def render_md(report: dict) -> str:
    """The side-by-side table in Markdown."""

    def f(v, fmt="{:,}"):
        return "—" if v is None else fmt.format(v)

    c = report["corpus"]
    out = [
        f"Corpus `{c['spec']}`: {c['files']:,} files, {c['words']:,} words; "
        f"{report['queries']['per_kind']} quoted + {report['queries']['per_kind']} unindexed "
        f"snippets of {report['queries']['words']} words; load average "
        f"{report['load_avg'][0]} on 2 cores.",
        "",
        "| tool | build s | whole run s | peak MB | index bytes/word | query p50 / p99 ms "
        "| quoted detected | quoted, true source | unindexed detected | agrees with Recitation |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        if "error" in r:
            out.append(f"| {r['tool']} | {r['error']} |||||||||")
            continue
        q = (
            f"{r['query_p50_ms']} / {r['query_p99_ms']}"
            if "query_p50_ms" in r
            else "— (batch scan)"
        )
        out.append(
            f"| {r['tool']} | {f(r['build_s'])} | {f(r['run_s'])} | {f(r['peak_mb'])} "
            f"| {f(r['bytes_per_word'])} | {q} | {r['quoted_detected']:.0%} "
            f"| {r['quoted_source_found']:.0%} | {r['unindexed_detected']:.0%} "
            f"| {r.get('agreement_with_recitation', 1.0):.0%} |"
        )
    for r in report["rows"]:
        if "python_search_p50_ms" in r:
            out += [
                "",
                f"{r['tool']} with its Python search instead of the compiled one, the same "
                f"lookups in turn: p50 / p99 {r['python_search_p50_ms']} / "
                f"{r['python_search_p99_ms']} ms; outputs identical on "
                f"{r['same_on_both_paths']} of {len(report['per_query'][r['tool']])} lookups.",
            ]
    out += ["", "How each was run:", ""]
    out += [f"- {r['tool']}: `{r['command']}`" for r in report["rows"] if "command" in r]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup", action="store_true", help="install the peers into .cache/peers")
    ap.add_argument("--corpus", default="python:stdlib")
    ap.add_argument("--queries", type=int, default=100, help="per kind (quoted, unindexed)")
    ap.add_argument("--tools", default="recitation,infini-gram,dolos,jscpd")
    ap.add_argument("--dolos-min", type=int, default=10, help="k-grams of a Dolos detection")
    ap.add_argument("--out", default="bench/results/peers.json")
    args = ap.parse_args()
    if args.setup:
        setup()
        return 0
    tools = set(args.tools.split(","))
    work = PEERS / "work"
    shutil.rmtree(work, ignore_errors=True)
    corpus_dir, qdir = work / "corpus", work / "snippets"
    qdir.mkdir(parents=True)
    rng = random.Random(6)
    corpus = materialize(args.corpus, corpus_dir)
    words = sum(len(WORD_RE.findall(t)) for _, t in corpus)
    print(f"corpus: {len(corpus):,} files, {words:,} words", file=sys.stderr)
    texts = {t for _, t in corpus}
    queries = []
    for kind, pool in (("quoted", corpus), ("unindexed", unindexed_texts(texts))):
        for s in snippets(pool, args.queries, rng):
            s.update(kind=kind, id=len(queries), file=f"q{len(queries):04d}.py")
            (qdir / s["file"]).write_text(s["text"], encoding="utf-8", errors="surrogatepass")
            queries.append(s)
    results, rows = {}, []
    steps = [
        ("recitation", lambda: run_recitation(corpus_dir, work, queries, words)),
        ("infini-gram", lambda: run_infini(corpus, work, queries, words)),
        ("dolos", lambda: run_dolos(corpus_dir, corpus, work, qdir, queries, args.dolos_min)),
        ("jscpd", lambda: run_jscpd(corpus_dir, work, qdir, queries)),
    ]
    for name, run in steps:
        if name not in tools:
            continue
        print(f"{name} ...", file=sys.stderr)
        try:
            results[name] = run()
        except Exception as e:  # one peer failing must not lose the others' figures
            results[name] = {"error": f"{type(e).__name__}: {e}"}
        rows.append(summarize(name, results[name], queries, results.get("recitation")))
        print(json.dumps(rows[-1]), file=sys.stderr)
    report = {
        "corpus": {"spec": args.corpus, "files": len(corpus), "words": words},
        "queries": {"per_kind": args.queries, "words": SNIPPET_WORDS, "min_words": MIN_WORDS},
        "load_avg": [round(x, 1) for x in os.getloadavg()],
        "index_format": store.FORMAT_VERSION,
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip(),
        "rows": rows,
        "per_query": {k: v.get("per_query") for k, v in results.items()},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    Path(args.out).with_suffix(".md").write_text(render_md(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
