"""`recitation-index check` in CI: folders (tracked files only in git), excludes, the editor's
verdicts (attribution, the decisions file, the license policy), baselines, SARIF
suppressions and exit codes — real processes on a real index and a real git repository."""

from __future__ import annotations

import json
import subprocess

import pytest
from engine_fixtures import HAVERSINE, make_corpus
from test_cli import run

from index_tools import DecisionsFile, QuoteIdentity

ATTRIBUTION = "# Adapted from https://github.com/acme/widgets/blob/main/src/geo.py, MIT license\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("check")
    info = make_corpus(tmp)
    r = run("build", *info["repos"], "--out", tmp / "idx", "--jobs", 1, "-q")
    assert r.returncode == 0, r.stderr
    return tmp / "idx"


def git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    """A repository with a quoted file, a clean one, a vendored copy and an untracked one."""
    r = tmp_path / "repo"
    (r / "src").mkdir(parents=True)
    (r / "vendor").mkdir()
    (r / "src" / "geo.py").write_text("import math\n\n\n" + HAVERSINE)
    (r / "src" / "clean.py").write_text("def add(a, b):\n    return a + b\n")
    (r / "vendor" / "geo_copy.py").write_text(HAVERSINE)
    git(r, "init", "-q")
    git(r, "add", "src", "vendor")
    (r / "src" / "scratch.py").write_text(HAVERSINE)  # not tracked
    return r


def check(index, *args, cwd):
    return run("check", *args, "--index", index, cwd=cwd)


def results(r) -> list[dict]:
    return json.loads(r.stdout)["results"]


def test_a_folder_in_git_means_its_tracked_files_minus_excludes(index, repo):
    r = check(index, ".", "--format", "json", cwd=repo)
    assert r.returncode == 1, r.stderr
    assert sorted(x["file"] for x in results(r)) == ["src/geo.py", "vendor/geo_copy.py"]
    r = check(index, ".", "--exclude", "vendor/*", "--format", "json", cwd=repo)
    assert [x["file"] for x in results(r)] == ["src/geo.py"]
    assert "1 quote to act on in 2 file(s) (1 warning)" in r.stderr
    r = check(index, "src", "--exclude", "geo.py", cwd=repo)
    assert r.returncode == 0 and "0 quotes to act on in 1 file(s)" in r.stderr


def test_a_folder_outside_git_is_read_whole(index, repo):
    (repo / ".git").rename(repo / "not-git")
    r = check(index, "src", "--format", "json", cwd=repo)
    assert sorted(x["file"] for x in results(r)) == ["src/geo.py", "src/scratch.py"]


def test_an_attributed_quote_does_not_fail_and_is_suppressed_in_source(index, repo):
    (repo / "src" / "geo.py").write_text("import math\n\n" + ATTRIBUTION + HAVERSINE)
    r = check(index, "src", cwd=repo)
    assert r.returncode == 0 and "(1 attributed)" in r.stderr
    assert "src/geo.py" not in r.stdout  # suppressed results are listed only when asked
    r = check(index, "src", "--show-suppressed", cwd=repo)
    assert "src/geo.py:4:1: attributed: Quoted: acme/widgets src/geo.py" in r.stdout
    assert "attributed on line 3" in r.stdout
    r = check(index, "src", "--format", "sarif", cwd=repo)
    (res,) = json.loads(r.stdout)["runs"][0]["results"]
    assert res["level"] == "note"
    assert res["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "attributed on line 3"}
    ]


def test_an_attribution_deep_in_a_large_file_is_named_by_its_line_in_the_file(index, repo):
    """A file read in several windows: the attribution's line counts from the file's
    start, not from the window's."""
    filler = "".join(f"value_{i} = {i} * {i}  # filler line {i}\n" for i in range(40_000))
    head = "import math\n\n" + filler
    assert len(head) > (1 << 20) + (256 << 10)  # past one window and its lookahead
    (repo / "src" / "geo.py").write_text(head + ATTRIBUTION + HAVERSINE)
    line = head.count("\n") + 1  # the attribution's, 1-based
    r = check(index, "src/geo.py", "--format", "json", cwd=repo)
    assert r.returncode == 0, r.stderr
    (found,) = results(r)
    assert found["verdict"]["reason"] == f"attributed on line {line}"
    assert found["verdict"]["attribution_line"] == line - 1
    assert found["range"]["start"]["line"] == line  # the quote: the line after (0-based)


def test_the_decisions_file_dismisses_and_sets_the_policy(index, repo):
    r = check(index, "src", "--format", "json", cwd=repo)
    (found,) = results(r)
    DecisionsFile(repo).dismiss(QuoteIdentity.of_text(found["text"]), "def haversine", "", "")
    r = check(index, ".", "--format", "sarif", cwd=repo)
    # a dismissal is by content: the vendored copy of the same quote is dismissed too
    assert r.returncode == 0 and "(2 dismissed)" in r.stderr
    by_file = {
        x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: x
        for x in json.loads(r.stdout)["runs"][0]["results"]
    }
    assert set(by_file) == {"src/geo.py", "vendor/geo_copy.py"}
    for res in by_file.values():
        (suppression,) = res["suppressions"]
        assert suppression["kind"] == "external"
        assert suppression["justification"].startswith("dismissed (")


def test_policy_sets_the_level_and_fail_on_the_threshold(index, repo):
    (repo / ".recitation.toml").write_text('[policy]\npermissive = "information"\n')
    r = check(index, "src", "--format", "sarif", cwd=repo)
    assert r.returncode == 0  # information is below the default --fail-on warning
    (res,) = json.loads(r.stdout)["runs"][0]["results"]
    assert res["level"] == "note" and res["suppressions"] == []
    assert res["properties"]["verdict"]["reason"] == "license policy for permissive: information"
    assert check(index, "src", "--fail-on", "information", cwd=repo).returncode == 1
    (repo / ".recitation.toml").write_text('[policy]\n"MIT" = "error"\n')
    r = check(index, "src", cwd=repo)
    assert r.returncode == 1 and "src/geo.py:4:1: error: Quoted:" in r.stdout
    (repo / ".recitation.toml").write_text('[allow]\nsources = ["acme/widgets"]\n')
    r = check(index, "src", cwd=repo)
    assert r.returncode == 0 and "(1 allowed)" in r.stderr


def test_a_broken_decisions_file_is_exit_2_with_its_line(index, repo):
    (repo / ".recitation.toml").write_text('version = 1\n[policy]\nMIT = "loud"\n')
    r = check(index, "src", cwd=repo)
    assert r.returncode == 2 and r.stdout == ""
    assert ".recitation.toml: line 3: MIT = 'loud': expected one of" in r.stderr


def test_a_baseline_lets_only_new_quotes_fail(index, repo):
    r = check(index, ".", "--baseline", "recitation-baseline.json", "--update-baseline", cwd=repo)
    assert r.returncode == 0 and "wrote 2 quote(s) to the baseline" in r.stderr
    baseline = json.loads((repo / "recitation-baseline.json").read_text())
    assert sorted(x["file"] for x in baseline["results"]) == ["src/geo.py", "vendor/geo_copy.py"]
    r = check(index, ".", "--baseline", "recitation-baseline.json", cwd=repo)
    assert r.returncode == 0 and "(2 baseline)" in r.stderr
    # the same quote in a new file is new
    (repo / "src" / "more.py").write_text("x = 1\n" + HAVERSINE)
    git(repo, "add", "src/more.py")
    r = check(index, ".", "--baseline", "recitation-baseline.json", cwd=repo)
    assert r.returncode == 1 and "src/more.py:2:1: warning: Quoted:" in r.stdout
    # run from elsewhere: baseline paths are relative to the baseline file
    r = check(index, repo, "--baseline", repo / "recitation-baseline.json", cwd=repo.parent)
    assert r.returncode == 1 and "(2 baseline, " not in r.stderr and "2 baseline" in r.stderr
    r = check(index, ".", "--baseline", "missing.json", cwd=repo)
    assert r.returncode == 2 and "no such baseline" in r.stderr


def test_exit_codes_are_in_the_help():
    r = run("check", "--help")
    assert r.returncode == 0
    assert "0  no open quote at or above --fail-on" in r.stdout
    assert "--update-baseline" in r.stdout and "--exclude" in r.stdout


def test_the_pre_commit_hook_runs_check_on_the_staged_files(index, repo):
    """pre-commit runs `entry` with the staged files' paths appended."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    hook = (root / ".pre-commit-hooks.yaml").read_text()
    entry = next(line.split(":", 1)[1].split() for line in hook.splitlines() if "entry:" in line)
    assert entry[:2] == ["recitation-index", "check"]
    assert 'recitation-index = "index_tools.cli:main"' in (root / "pyproject.toml").read_text()
    assert "language: python" in hook and "id: recitation-check" in hook
    r = check(index, "src/clean.py", cwd=repo)
    assert r.returncode == 0
    r = check(index, "src/clean.py", "src/geo.py", cwd=repo)
    assert r.returncode == 1 and "src/geo.py:4:1: warning:" in r.stdout


def test_a_mistyped_path_is_an_error_not_a_pass(index, repo):
    r = check(index, "src", "scr/geo.py", cwd=repo)
    assert r.returncode == 2 and "cannot read scr/geo.py: no such file or folder" in r.stderr


# -- a gate: every file is checked, or listed and failing -----------------------------------


def not_checked(r) -> list[tuple[str, str]]:
    return [(x["file"], x["reason"]) for x in json.loads(r.stdout)["not_checked"]]


QUOTED = "import math\n\n\n" + HAVERSINE


@pytest.mark.parametrize(
    "encoding",
    ["utf-16", "utf-16-be-bom", "utf-32", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-32-le"],
)
def test_a_file_saved_as_utf16_or_utf32_is_read(index, repo, encoding):
    """Saved as UTF-16 with a BOM, the quote once passed: "0 quotes to act on in 1 file(s)"."""
    import codecs

    if encoding == "utf-16-be-bom":
        data = codecs.BOM_UTF16_BE + QUOTED.encode("utf-16-be")
    else:
        data = QUOTED.encode(encoding)  # utf-16, utf-32 and utf-8-sig write a BOM
    (repo / "src" / "geo.py").write_bytes(data)
    r = check(index, "src/geo.py", "--format", "json", cwd=repo)
    assert r.returncode == 1, r.stderr
    (found,) = results(r)
    assert found["range"]["start"] == {"line": 3, "character": 0}
    assert found["text"].startswith("def haversine(")


def test_stray_nul_bytes_do_not_make_code_binary(index, repo):
    """A NUL byte on the first line once made the file skipped, without a word."""
    (repo / "src" / "geo.py").write_bytes(b"import math\x00\n\n\n" + HAVERSINE.encode())
    r = check(index, "src/geo.py", cwd=repo)
    assert r.returncode == 1 and "src/geo.py:4:1: warning: Quoted:" in r.stdout


def test_a_file_past_4_mib_is_checked_in_windows(index, repo):
    """Padded past 4 MiB, the quote once passed with one line on stderr and exit 0."""
    pad = "".join(f"value_{i} = {i}\n" for i in range(300_000))  # ~5 MiB, 300,000 lines
    assert len(pad) > 4 << 20
    (repo / "src" / "geo.py").write_text(pad + HAVERSINE + pad + HAVERSINE)
    r = check(index, "src/geo.py", "--format", "json", cwd=repo)
    assert r.returncode == 1, r.stderr
    starts = [x["range"]["start"]["line"] for x in results(r)]
    assert starts == [300_000, 600_000 + HAVERSINE.count("\n")]
    assert not_checked(r) == []


def test_a_binary_file_is_listed_and_fails_unless_allowed(index, repo):
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64)
    git(repo, "add", "logo.png")
    r = check(index, ".", "--exclude", "vendor/*", "--format", "json", cwd=repo)
    assert r.returncode == 1  # a quote found: 1 wins
    (repo / "src" / "geo.py").write_text("x = 1\n")
    r = check(index, ".", "--exclude", "vendor/*", cwd=repo)
    assert r.returncode == 3, r.stderr
    assert "logo.png: not checked: binary" in r.stdout
    assert "1 file(s) could not be checked" in r.stderr and "--allow-skipped" in r.stderr
    r = check(index, ".", "--exclude", "vendor/*", "--format", "json", cwd=repo)
    assert r.returncode == 3 and not_checked(r)[0][0] == "logo.png"
    r = check(index, ".", "--exclude", "vendor/*", "--format", "sarif", cwd=repo)
    (invocation,) = json.loads(r.stdout)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = [n for n in invocation["toolExecutionNotifications"] if "locations" in n]
    assert note["level"] == "error" and note["message"]["text"].startswith("not checked: binary")
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "logo.png"
    r = check(index, ".", "--exclude", "vendor/*", "--allow-skipped", cwd=repo)
    assert r.returncode == 0 and "logo.png: not checked (allowed): binary" in r.stdout
    (repo / ".recitation.toml").write_text('[check]\nallow-skipped = ["*.png"]\n')
    r = check(index, ".", "--exclude", "vendor/*", "--format", "json", cwd=repo)
    assert r.returncode == 0 and json.loads(r.stdout)["not_checked"][0]["allowed"] is True
    (repo / ".recitation.toml").write_text('[check]\nallow-skipped = ["assets/*"]\n')
    assert check(index, ".", "--exclude", "vendor/*", cwd=repo).returncode == 3


@pytest.mark.skipif(__import__("os").name != "posix", reason="POSIX links")
def test_links_are_followed_inside_the_repository_only_and_a_loop_is_one_skipped_file(
    index, repo, tmp_path
):
    """A tracked symlink loop once failed the whole run (RuntimeError: Symlink loop) and a
    link out of the repository was read and reported."""
    import os

    outside = tmp_path / "outside.py"
    outside.write_text(HAVERSINE)
    (repo / "src" / "geo.py").write_text("x = 1\n")
    os.symlink("loop_b.py", repo / "src" / "loop_a.py")
    os.symlink("loop_a.py", repo / "src" / "loop_b.py")
    os.symlink(outside, repo / "src" / "outside.py")
    os.symlink("../vendor/geo_copy.py", repo / "src" / "inside.py")
    os.symlink("gone.py", repo / "src" / "broken.py")
    links = ["loop_a.py", "loop_b.py", "outside.py", "inside.py", "broken.py"]
    git(repo, "add", *(f"src/{name}" for name in links))
    r = check(index, "src", "--format", "json", cwd=repo)
    assert r.returncode == 1, r.stderr
    # the link inside the repository is read (its target is not among the files checked)
    assert [x["file"] for x in results(r)] == ["src/inside.py"]
    assert not_checked(r) == [
        ("src/broken.py", "a broken symlink (what it points to is not there)"),
        ("src/loop_a.py", "a symlink loop"),
        ("src/loop_b.py", "a symlink loop"),
        ("src/outside.py", "a symlink to a file outside the repository (not followed)"),
    ]
    # the whole repository: the link's target is checked once, under its own name
    r = check(index, ".", "--format", "json", "--allow-skipped", cwd=repo)
    assert r.returncode == 1 and [x["file"] for x in results(r)] == ["vendor/geo_copy.py"]
    # named on the command line (as pre-commit does), the same
    r = check(index, "src/loop_a.py", "src/outside.py", "src/clean.py", cwd=repo)
    assert r.returncode == 3 and "src/outside.py: not checked: a symlink to a file" in r.stdout
    assert "unexpected" not in r.stderr


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes")
def test_a_named_pipe_outside_git_is_listed_not_waited_on(index, repo):
    import os

    (repo / ".git").rename(repo / "not-git")
    os.mkfifo(repo / "src" / "pipe.py")
    r = check(index, "src", "--format", "json", cwd=repo)
    assert r.returncode == 1  # geo.py and scratch.py quote
    assert not_checked(r) == [("src/pipe.py", "a named pipe, not a regular file")]


def test_untracked_files_left_out_are_counted_with_how_to_include_them(index, repo):
    """A folder of a git repository whose new files are not yet added once said "0 quotes
    to act on in 0 file(s)"."""
    (repo / "src" / "new.py").write_text(HAVERSINE)
    r = check(index, "src", cwd=repo)
    assert "2 untracked files under src left out" in r.stderr and "git add" in r.stderr
    r = check(index, "src", "--format", "json", cwd=repo)
    assert json.loads(r.stdout)["untracked"] == [{"folder": "src", "files": 2}]
    r = check(index, "src", "--exclude", "new.py", "--exclude", "scratch.py", cwd=repo)
    assert "untracked" not in r.stderr
    r = check(index, "src/new.py", cwd=repo)  # named: checked
    assert r.returncode == 1


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_baseline_that_is_no_small_regular_file_is_one_line(index, repo, kind):
    """`--baseline` on a link to /dev/zero once grew to 10 GB in 20 s; a FIFO blocked."""
    import os

    path = repo / "baseline.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as f:
            f.truncate(65 << 20)
    r = check(index, "src", "--baseline", "baseline.json", cwd=repo)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    why = "larger than 64 MiB" if kind == "huge" else "not a regular file"
    assert "baseline.json: cannot read the baseline: " in r.stderr and why in r.stderr
    if kind == "fifo":  # refused, never written through nor replaced (see below)
        r = check(index, "src", "--baseline", "baseline.json", "--update-baseline", cwd=repo)
        assert r.returncode == 2 and path.is_fifo()


def test_sarif_keeps_a_backslash_in_a_file_name(index, repo):
    import os

    if os.name != "posix":
        pytest.skip("a backslash is a separator on Windows")
    (repo / "src" / "back\\slash.py").write_text(HAVERSINE)
    r = check(index, "src/back\\slash.py", "--format", "sarif", cwd=repo)
    (res,) = json.loads(r.stdout)["runs"][0]["results"]
    uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "src/back%5Cslash.py"


def test_a_decisions_file_with_a_byte_order_mark_is_read(index, repo):
    """Once "Empty key"."""
    (repo / ".recitation.toml").write_bytes(b'\xef\xbb\xbf[allow]\nsources = ["acme/widgets"]\n')
    r = check(index, "src", cwd=repo)
    assert r.returncode == 0 and "(1 allowed)" in r.stderr, r.stderr


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes, links")
@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("fifo", "a named pipe, not a regular file"),
        ("dev-null", "a link to a device, not a regular file"),
        ("folder", "a folder, not a regular file"),
        ("socket", "a socket, not a regular file"),
        ("dangling", "a link to a missing file"),
        ("loop", "a link loop"),
    ],
)
def test_update_baseline_never_replaces_a_special_file(index, repo, kind, why, monkeypatch):
    """`--baseline /dev/null --update-baseline` once replaced /dev/null with a regular file
    (as root, that breaks the machine); a named pipe or a link there was replaced too."""
    import os
    import socket

    path = repo / "baseline.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-null":
        path.symlink_to(os.devnull)
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        monkeypatch.chdir(repo)  # (a socket's path is short)
        s.bind("baseline.json")
        s.close()
    elif kind == "dangling":
        path.symlink_to("missing.json")
    else:
        path.symlink_to("baseline.json")
    before = os.lstat(path)
    r = check(index, "src", "--baseline", "baseline.json", "--update-baseline", cwd=repo)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"recitation-index: baseline.json: cannot write the baseline: {why}\n"
    after = os.lstat(path)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert not (repo / "missing.json").exists()
    assert not [p for p in repo.iterdir() if p.name.endswith(".tmp")]


def test_update_baseline_through_a_link_writes_its_target(index, repo):
    """The README's rule: a link to a regular file is followed; the link stays."""
    (repo / "shared").mkdir()
    (repo / "shared" / "baseline.json").write_text("{}\n")
    (repo / "baseline.json").symlink_to("shared/baseline.json")
    r = check(index, "src", "--baseline", "baseline.json", "--update-baseline", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert (repo / "baseline.json").is_symlink()
    written = json.loads((repo / "shared" / "baseline.json").read_text())
    assert [e["file"] for e in written["results"]] == ["../src/geo.py"]
    r = check(index, "src", "--baseline", "baseline.json", cwd=repo)
    assert r.returncode == 0 and "(1 baseline)" in r.stderr, r.stderr


FORMATS = ["text", "json", "sarif", "spdx", "spdx-tv", "cyclonedx"]


def check_bytes(index, *args, cwd, env=None):
    """`check` with its output as bytes (the encoding is the test's to decide)."""
    import os
    import sys

    return subprocess.run(
        [sys.executable, "-m", "index_tools.cli", "check", *map(str, args), "--index", str(index)],
        capture_output=True, cwd=cwd, timeout=300, env={**os.environ, **(env or {})},
    )  # fmt: skip


@pytest.mark.skipif(__import__("sys").platform in ("win32", "darwin"), reason="byte names")
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_name_that_is_not_utf8_is_reported_escaped_in_every_format(index, repo, fmt):
    """`check DIR --format sarif` on `bad\\xff\\xfename.py` once ended in `unexpected error:
    UnicodeEncodeError … surrogates not allowed`; JSON held bytes that are not UTF-8."""
    import os

    name = os.fsencode(repo / "src") + b"/bad\xff\xfename.py"
    with open(name, "w") as f:
        f.write(HAVERSINE)
    subprocess.run(["git", "-C", str(repo), "add", "--", name], check=True)
    r = check_bytes(index, "src", "--format", fmt, "--allow-skipped", cwd=repo)
    assert r.returncode == 1, r.stderr
    out = r.stdout.decode("utf-8")  # valid UTF-8, whatever the names hold
    shown = "src/bad\\xff\\xfename.py"
    if fmt == "json":
        assert sorted(x["file"] for x in json.loads(out)["results"]) == [shown, "src/geo.py"]
    elif fmt == "sarif":
        (run_,) = json.loads(out)["runs"]
        uris = sorted(
            x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for x in run_["results"]
        )
        assert uris == ["src/bad%FF%FEname.py", "src/geo.py"]  # the name's own bytes
    elif fmt in ("text", "spdx-tv"):
        assert f"{shown}:1:1: warning: Quoted:" in out if fmt == "text" else f"/{shown}\n" in out
    else:  # the SBOMs name the file, escaped
        assert any(shown in t for t in strings(json.loads(out))), out
    # the baseline records it and reads it back
    r = check_bytes(index, "src", "--baseline", "b.json", "--update-baseline", cwd=repo)
    assert r.returncode == 0, r.stderr
    (repo / "b.json").read_bytes().decode("utf-8")
    r = check_bytes(index, "src", "--baseline", "b.json", cwd=repo)
    assert r.returncode == 0 and b"(2 baseline)" in r.stderr, r.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_output_encoding_that_cannot_hold_a_name_escapes_it(index, repo, fmt):
    """With stdout in cp1252 (a redirected Windows run), `数据.py` made the text and JSON
    formats crash (UnicodeEncodeError)."""
    (repo / "src" / "数据.py").write_text(HAVERSINE, encoding="utf-8")
    git(repo, "add", "src/数据.py")
    r = check_bytes(index, "src", "--format", fmt, cwd=repo, env={"PYTHONIOENCODING": "cp1252"})
    assert r.returncode == 1, r.stderr
    assert b"Traceback" not in r.stderr and b"unexpected error" not in r.stderr
    out = r.stdout.decode("cp1252")
    if fmt in ("json", "sarif", "spdx", "cyclonedx"):  # valid JSON, the name as \\u escapes
        name = "src/%E6%95%B0%E6%8D%AE.py" if fmt == "sarif" else "src/数据.py"
        assert any(name in t for t in strings(json.loads(out))), out
    else:
        assert "src/\\u6570\\u636e.py" in out


def strings(value) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [s for v in items for s in strings(v)]
