"""`recitation-index` as users run it: real processes, exit codes, JSON, SARIF."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from engine_fixtures import GEO, HAVERSINE, line_of, make_corpus

CLI = [sys.executable, "-m", "index_tools.cli"]


def run(*args, stdin="", env=None, cwd=None):
    return subprocess.run(
        [*CLI, *map(str, args)], input=stdin, capture_output=True, text=True, timeout=300,
        env={**os.environ, **(env or {})}, cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    info = make_corpus(tmp)
    out = tmp / "idx"
    r = run("build", *info["repos"], "--out", out, "--jobs", 2)
    assert r.returncode == 0, r.stderr
    info["out"] = out
    info["build_stdout"] = r.stdout
    return info


def test_build_prints_a_summary(built):
    out = built["build_stdout"]
    assert "files: 4 (3 unique documents, 1 duplicates)" in out
    assert "skipped: 2 unsupported" in out
    assert "bytes per word" in out and "words/s" in out


def test_stats_json(built):
    r = run("stats", built["out"], "--json")
    assert r.returncode == 0
    s = json.loads(r.stdout)
    for key in ("format_version", "shards", "documents", "files", "words", "vocabulary",
                "bytes", "bytes_per_word"):  # fmt: skip
        assert key in s
    assert s["files"] == 4 and s["documents"] == 3 and s["format_version"] == 8
    assert s["bytes_per_word"] == round(s["bytes"] / s["words"], 3)
    r = run("stats", built["out"], "--verify")
    assert r.returncode == 0 and "all files match" in r.stdout


@pytest.mark.parametrize(
    "env, said",
    [
        ({"RECITATION_SEARCH": ""}, "search: native (libkernel-"),
        ({"RECITATION_SEARCH_THREADS": "2"}, "; a lookup's shards at once, 2 helper threads)"),
        ({"RECITATION_SEARCH_THREADS": "0"}, "; shards one after another)"),
        ({"RECITATION_SEARCH": "python"}, "search: python (chosen by RECITATION_SEARCH=python)"),
        (
            {"RECITATION_KERNEL": "/nonexistent/libkernel.so"},
            "search: python (libkernel.so is missing",
        ),
    ],
)
def test_stats_say_which_search_runs(built, env, said):
    r = run("stats", built["out"], env=env)
    assert r.returncode == 0, r.stderr
    assert said in r.stdout
    s = json.loads(run("stats", built["out"], "--json", env=env).stdout)
    assert said.removeprefix("search: ") in s["search"]


@pytest.mark.parametrize(
    "args, said",
    [
        (["serve", "{idx}", "--header-timeout", "nan"], "--header-timeout: 'nan' is not a number"),
        (
            ["serve", "{idx}", "--lookup-timeout", "-1"],
            "--lookup-timeout: '-1' is not a number above 0",
        ),
        (
            ["serve", "{idx}", "--read-timeout", "-1"],
            "--read-timeout: '-1' is not a number above 0",
        ),
        (
            ["serve", "{idx}", "--port", "70000"],
            "--port: '70000' is not an integer from 0 to 65535",
        ),
        (["serve", "{idx}", "--workers", "0"], "--workers: '0' is not an integer from 1"),
        (["serve", "{idx}", "--max-pending", "inf"], "--max-pending: 'inf' is not an integer"),
        (
            ["serve", "{idx}", "--max-header-bytes", "-5"],
            "--max-header-bytes: '-5' is not an integer",
        ),
        (["serve", "{idx}", "--max-connections", "0"], "--max-connections: '0' is not an integer"),
        (["build", "{idx}", "--out", "{idx}", "--jobs", "0"], "--jobs/-j: '0' is not an integer"),
        (["build", "pypi:x", "--out", "{idx}", "--fetch-jobs", "nan"], "--fetch-jobs: 'nan'"),
        (["build", "pypi:x", "--out", "{idx}", "--max-download-mb", "1e99"], "--max-download-mb"),
    ],
)
def test_numeric_options_are_checked_before_anything_starts(built, args, said):
    """Out-of-range, NaN and infinite values are refused in one line with exit 2 (a server
    that started with them answered nothing, or bound another port)."""
    r = run(*[a.replace("{idx}", str(built["out"])) for a in args])
    assert r.returncode == 2, r.stdout + r.stderr
    assert said in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr


def _pem_pair(folder, name: str) -> tuple:
    """A self-signed certificate and its key, made by the openssl command."""
    import shutil

    if not shutil.which("openssl"):
        pytest.skip("needs the openssl command")
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_tls_files_that_cannot_be_used_are_one_line_naming_the_file(built, tmp_path):
    """`serve --certfile /etc/passwd` once ended in a raw `SSLError: [SSL] PEM lib`, after
    printing "serving … on https://…"."""
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    cert, key = _pem_pair(tmp_path, "one")
    other_cert, _ = _pem_pair(tmp_path, "two")
    cases = [
        (passwd, passwd, f"--certfile {passwd}: not a PEM certificate"),
        (cert, passwd, f"--keyfile {passwd}: not a PEM private key"),
        (tmp_path, key, f"--certfile {tmp_path}: cannot read it: a folder, not a regular file"),
        (cert, tmp_path / "none.key", f"--keyfile {tmp_path / 'none.key'}: cannot read it: "),
        (
            other_cert,
            key,
            f"--certfile {other_cert} with --keyfile {key}: the key does not match the certificate",
        ),
    ]
    for certfile, keyfile, said in cases:
        r = run("serve", built["out"], "--port", "0", "--certfile", certfile, "--keyfile", keyfile)
        assert r.returncode == 2, r.stdout + r.stderr
        assert r.stderr.startswith(f"recitation-index: {said}"), r.stderr
        assert len(r.stderr.splitlines()) == 1 and "serving" not in r.stdout, r.stdout


def test_query_json(built, tmp_path):
    ctx = tmp_path / "ctx.py"
    ctx.write_text("import math\n")
    r = run("query", built["out"], "--json", "--context-file", ctx, stdin=HAVERSINE)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["query_words"] == 2 + out["suggestion_words"]
    (m,) = out["matches"]
    assert set(m) >= {
        "kind",
        "length",
        "range",
        "file_count",
        "file_count_exact",
        "text",
        "sources",
    }
    assert m["kind"] == "recitation" and m["file_count"] == 3 and m["file_count_exact"] is True
    assert m["range"]["start"] == {"line": 0, "character": 0}
    src = next(s for s in m["sources"] if s["repository"] == "acme/widgets")
    a, b = line_of(GEO, HAVERSINE), line_of(GEO, HAVERSINE, last=True)
    assert src == {
        "url": f"https://github.com/acme/widgets/blob/{built['acme_sha']}/src/geo.py#L{a}-L{b}",
        "repository": "acme/widgets", "path": "src/geo.py", "commit": built["acme_sha"],
        "license": "MIT", "start_line": a, "end_line": b, "occurrences": 1,
        "words": m["length"],
    }  # fmt: skip


def test_query_text_and_no_match(built):
    r = run("query", built["out"], stdin=HAVERSINE)
    assert r.returncode == 0
    assert r.stdout.startswith("Quoted: acme/widgets src/geo.py L")
    assert "acme/widgets src/geo.py" in r.stdout
    r = run("query", built["out"], stdin="print('hello')\n")
    assert r.returncode == 0 and r.stdout.startswith("no quoted span of 60+ words")


def test_check_exit_codes_and_formats(built, tmp_path):
    clean = tmp_path / "clean.py"
    clean.write_text("def add(a, b):\n    return a + b\n")
    quoted = tmp_path / "quoted.py"
    quoted.write_text("import os\n\n\n" + HAVERSINE)
    r = run("check", clean, "--index", built["out"])
    assert r.returncode == 0, r.stderr
    r = run("check", clean, quoted, "--index", built["out"])
    assert r.returncode == 1
    assert f"{quoted}:4:1: warning: Quoted: acme/widgets src/geo.py" in r.stdout
    r = run("check", quoted, "--index", built["out"], "--format", "json")
    out = json.loads(r.stdout)
    assert out["version"] == 2
    (item,) = out["results"]
    assert item["file"] == str(quoted) and item["range"]["start"]["line"] == 3


def test_check_sarif(built, tmp_path):
    (tmp_path / "src").mkdir()
    quoted = tmp_path / "src" / "quoted.py"
    quoted.write_text("import os\n\n\n" + HAVERSINE)
    r = run("check", "src/quoted.py", "--index", built["out"], "--format", "sarif", cwd=tmp_path)
    assert r.returncode == 1
    sarif = json.loads(r.stdout)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    run_ = sarif["runs"][0]
    rule_ids = [rule["id"] for rule in run_["tool"]["driver"]["rules"]]
    (res,) = run_["results"]
    assert res["ruleId"] == "recitation/recitation" and res["ruleId"] in rule_ids
    assert run_["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "src/quoted.py"
    assert loc["region"]["startLine"] == 4 and loc["region"]["startColumn"] == 1
    assert res["level"] == "warning"
    assert "https://github.com/acme/widgets/blob/" in res["message"]["text"]
    assert res["partialFingerprints"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["query", "{missing}"], "no index at"),
        (["stats", "{missing}"], "no index at"),
        (["check", "x.py", "--index", "{missing}"], "no index at"),
        (["build", "python:stdlib"], "needs --out"),
        (["build", "{missing}", "--out", "{tmp}/o"], "no such file"),
        (["frobnicate"], "invalid choice"),
        (["query", "--min-tokens", "zero"], "invalid int value"),
        (["add", "{missing}", "python:stdlib"], "no index at"),
        (["build", "{tmp}", "--out", "{tmp}/o", "--renamed-stride", "0"], "renamed stride"),
    ],
)
def test_bad_usage_exits_2_with_one_line(tmp_path, args, message):
    args = [a.format(missing=tmp_path / "missing", tmp=tmp_path) for a in args]
    r = run(*args)
    assert r.returncode == 2
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("what", ["token-file", "context-file", "token-file-env"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_files_the_cli_reads_are_small_regular_files_or_one_line(built, tmp_path, what, kind):
    """A token or context file that is a named pipe once blocked forever; a link to
    /dev/zero grew without end."""
    f = tmp_path / "file"
    if kind == "fifo":
        os.mkfifo(f)
    elif kind == "dev-zero":
        f.symlink_to("/dev/zero")
    else:
        with open(f, "wb") as out:
            out.truncate(17 << 20)
    env = None
    if what == "token-file":
        args = ["query", built["out"], "--token-file", f]
    elif what == "context-file":
        args = ["query", built["out"], "--context-file", f]
    else:  # only read for an index service
        args, env = ["query", "https://127.0.0.1:9"], {"RECITATION_INDEX_TOKEN_FILE": str(f)}
    r = run(*args, stdin="x = 1\n", env=env)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and str(f) in r.stderr
    assert ("larger than" if kind == "huge" else "not a regular file") in r.stderr


def test_a_suggestion_on_stdin_is_bounded(built):
    r = run("query", built["out"], stdin="x = 1\n" * (3 << 20))
    assert r.returncode == 2 and "larger than 16 MiB" in r.stderr


def test_help_explains():
    r = run("--help")
    assert r.returncode == 0
    for word in ("build", "add", "stats", "query", "check", "python:stdlib", "RECITATION_INDEX"):
        assert word in r.stdout
    for sub in ("build", "add", "stats", "query", "check"):
        assert run(sub, "--help").returncode == 0


@pytest.mark.slow
def test_default_index_of_the_standard_library(tmp_path):
    """`build --default` indexes the stdlib; a real stdlib snippet is attributed to CPython."""
    env = {"RECITATION_INDEX": str(tmp_path / "default")}
    r = run("build", "--default", "--quiet", env=env)
    assert r.returncode == 0, r.stderr
    import json.decoder
    from pathlib import Path

    src = Path(json.decoder.__file__).read_text(encoding="utf-8")
    start = src.index("def py_scanstring")
    snippet = src[start : src.index("scanstring = c_scanstring or py_scanstring")]
    r = run("query", "--json", stdin=snippet, env=env)
    (m,) = json.loads(r.stdout)["matches"]
    v = sys.version_info
    src0 = m["sources"][0]
    assert src0["repository"] == "python/cpython" and src0["path"] == "Lib/json/decoder.py"
    assert src0["license"] == "PSF-2.0"
    a = src.count("\n", 0, start) + 1
    assert src0["url"].startswith(
        f"https://github.com/python/cpython/blob/v{v.major}.{v.minor}.{v.micro}/Lib/json/decoder.py#L{a}-L"
    )
    assert m["length"] == len(__import__("index_tools").tokenize(snippet))
    # both views, texts and metadata in at most 12 bytes a word (ids 3, suffix array 4,
    # renamed ids 2, one renamed suffix in four 1, texts about 1)
    stats = json.loads(run("stats", "--json", env=env).stdout)
    assert stats["words"] > 1_000_000 and stats["bytes_per_word"] <= 12


def test_check_finds_a_renamed_copy_by_file_language(built, tmp_path):
    renamed = HAVERSINE
    for old, new in (("lat1", "p"), ("lon1", "q"), ("lat2", "s"), ("lon2", "t")):
        renamed = renamed.replace(old, new)
    f = tmp_path / "renamed.py"
    f.write_text(renamed)
    r = run("check", f, "--index", built["out"])
    assert r.returncode == 1
    assert "Renamed copy: " in r.stdout
    assert "renamed copy: lat1 \u2192 p, lon1 \u2192 q, lat2 \u2192 s, lon2 \u2192 t" in r.stdout
    txt = tmp_path / "renamed.txt"  # no language: exact matching only
    txt.write_text(renamed)
    assert run("check", txt, "--index", built["out"]).returncode == 0
    r = run("query", built["out"], "--json", "--language", "python", stdin=renamed)
    (m,) = json.loads(r.stdout)["matches"]
    assert m["exact"] is False and m["renamed"][0] == {"from": "lat1", "to": "p"}


def test_renamed_stride_trades_size_for_windows(built, tmp_path):
    """`--renamed-stride 1` sorts every suffix of the rename-insensitive view (4 bytes a
    word), the default one in four (about 1 byte a word): the same renamed copy found."""
    full = tmp_path / "full"
    r = run("build", *built["repos"], "--out", full, "--renamed-stride", 1)
    assert r.returncode == 0, r.stderr
    renamed = HAVERSINE.replace("lat1", "p")
    sorted_bytes = {}
    for idx in (built["out"], full):
        r = run("query", idx, "--json", "--language", "python", stdin=renamed)
        (m,) = json.loads(r.stdout)["matches"]
        assert m["exact"] is False and m["file_count"] == 3
        gen = idx / (idx / "CURRENT").read_text().strip()
        header = json.loads((gen / "HEADER.json").read_text())
        sorted_bytes[idx] = header["file_sizes"]["shard-000.rsa"]
        words, docs = header["words"], header["documents"]
    assert sorted_bytes[full] == 4 * words  # every position, 4 bytes each
    assert abs(sorted_bytes[built["out"]] - words) <= 4 * (docs + 1)  # one in four
    assert (
        "rename-insensitive view in 2 bytes a word, every suffix sorted"
        in run("stats", full).stdout
    )
    s = json.loads(run("stats", built["out"], "--json").stdout)
    assert s["renamed_stride"] == 4 and s["shard_id_bytes"] == [3]


@pytest.mark.parametrize(
    "command",
    [
        ["build", "{src}", "--out", "{long}"],
        ["build", "{src}", "--out", "{deep}"],
        ["check", "{long}", "--index", "{idx}"],
        ["check", "{deep}", "--index", "{idx}"],
        ["references", "{log}", "--root", "{long}"],
        ["add", "{idx}", "{long}"],
        ["stats", "{long}"],
    ],
)
def test_a_path_too_long_for_the_system_is_one_line(built, tmp_path, command):
    """A 5,000-character path (one name, or many folders): one line saying so, exit 2."""
    log = tmp_path / "refs.json"
    log.write_text('{"format": "recitation-code-references", "references": []}')
    names = {
        "long": "/tmp/" + "a" * 5000,
        "deep": "b/" * 2500 + "x",
        "src": str(built["repos"][0]),
        "idx": str(built["out"]),
        "log": str(log),
    }
    r = run(*[part.format(**names) for part in command], cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr[-500:])
    (line,) = r.stderr.strip().splitlines()
    assert line.endswith(("path too long", "File name too long")), line[-300:]
    assert "unexpected" not in line and len(line) < 500, line[-300:]


def test_build_names_what_it_indexed_and_the_kinds_it_left_out(tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "a.py").write_text("def f(x):\n    return x + 1\n")
    for name, text in (("README.md", "# x\n"), ("notes.txt", "x\n"), ("a.json", "{}\n"),
                       ("b.json", "{}\n"), ("LICENSE", "MIT\n")):  # fmt: skip
        (src / name).write_text(text)
    r = run("build", src, "--out", tmp_path / "idx")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "sources: proj" in lines, r.stdout  # (a folder by its name, as its files are)
    assert "skipped: 5 unsupported (.json 2, .md 1, .txt 1, no extension 1)" in lines, r.stdout
    summary = json.loads(run("build", src, "--out", tmp_path / "idx", "--json").stdout)
    assert summary["unsupported"] == {".json": 2, ".md": 1, ".txt": 1, "no extension": 1}


@pytest.mark.parametrize(
    "command",
    [["plan", "{loop}"], ["query", "{idx}", "--context-file", "{loop}"], ["build", "{loop}", "--out", "o"],
     ["references", "{log}", "--root", "{loop}"], ["stats", "{loop}"]],
)  # fmt: skip
def test_a_loop_of_links_is_one_line(built, tmp_path, command):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    log = tmp_path / "refs.json"
    log.write_text('{"format": "recitation-code-references", "references": []}')
    names = {"loop": str(loop), "idx": str(built["out"]), "log": str(log)}
    r = run(*[part.format(**names) for part in command], cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    (line,) = r.stderr.strip().splitlines()
    assert "unexpected" not in line and str(loop) in line, line


def test_a_file_limit_of_a_terabyte_reads_small_files(tmp_path):
    """`--max-file-bytes 999999999999` (found by the CLI fuzz: a MemoryError reading a 2 KB
    file, the read sized by the limit)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("def f(x):\n    return x + 1\n" * 50)
    r = run("build", src, "--out", tmp_path / "idx", "--max-file-bytes", "999999999999", "-j", "1")
    assert r.returncode == 0, r.stderr
    assert "files: 1 " in r.stdout
