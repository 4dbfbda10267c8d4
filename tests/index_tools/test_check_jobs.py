"""`check --jobs N`: files matched on several cores give the report of one, byte for byte, in
every format, with the files, results, baselines, decisions and files not checked in the same
order; a worker that dies is an error, Ctrl-C ends every worker; a served index works the
same. The tree is real: folders of the standard library against an index of two of them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from service_helpers import Service
from test_cli import run

STDLIB = Path(sysconfig.get_paths()["stdlib"])
INDEXED = ("json", "asyncio")  # in the index: every file of theirs is quoted
CHECKED = ("json", "asyncio", "http")
FORMATS = ("text", "json", "sarif", "spdx", "spdx-tv", "cyclonedx")
PINNED = {"SOURCE_DATE_EPOCH": "1700000000"}  # the SBOMs' creation time


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> dict:
    """An index of two stdlib packages; a tree of five (copied, git-free) with what a real
    repository holds besides: a file larger than one window, a binary file, a file in
    UTF-16, a link out of the tree, and decisions files in two folders."""
    tmp = tmp_path_factory.mktemp("jobs")
    index = tmp / "idx"
    r = run("build", *(STDLIB / p for p in INDEXED), "--out", index, "--jobs", 1, "-q")
    assert r.returncode == 0, r.stderr
    root = tmp / "tree"
    for p in CHECKED:
        shutil.copytree(STDLIB / p, root / p, ignore=shutil.ignore_patterns("__pycache__"))
    # several windows, each with quotes: a worker each
    others = sorted(
        f for p in ("email", "xml", "unittest", "logging") for f in (STDLIB / p).rglob("*.py")
    )
    quoted = (STDLIB / "json" / "decoder.py").read_text()
    big = "".join(f.read_text() + (quoted if i % 8 == 0 else "") for i, f in enumerate(others))
    assert len(big) > (1 << 20) + (256 << 10)  # two windows
    (root / "big.py").write_text(big)
    (root / "blob.bin").write_bytes(bytes(range(256)) * 64)
    (root / "wide.py").write_text((STDLIB / "json" / "decoder.py").read_text(), "utf-16")
    (root / "out.py").symlink_to(STDLIB / "json" / "encoder.py")
    (root / "json" / ".recitation.toml").write_text('[allow]\nsources = ["json"]\n')
    (root / "asyncio" / ".recitation.toml").write_text('[policy]\nunknown = "error"\n')
    return {"index": index, "root": root}


def check(tree, *args, jobs: int | None = None, index=None, cwd=None):
    more = () if jobs is None else ("--jobs", jobs)
    return run(
        "check", ".", "--index", index or tree["index"], *args, *more,
        cwd=cwd or tree["root"], env=PINNED,
    )  # fmt: skip


def same(a, b) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def test_jobs_give_the_report_of_one_in_every_format(tree):
    for fmt in FORMATS:
        one = check(tree, "--format", fmt, "--fail-on", "hint", jobs=1)
        assert one.returncode == 1, one.stderr  # quotes found (and files not checked)
        assert one.stdout
        for jobs in (2, 3) if fmt == "json" else (2,):
            same(check(tree, "--format", fmt, "--fail-on", "hint", jobs=jobs), one)
    report = json.loads(check(tree, "--format", "json", jobs=2).stdout)
    files = [r["file"] for r in report["results"]]
    assert "big.py" in files and "wide.py" in files
    assert {r["verdict"]["state"] for r in report["results"] if r["file"].startswith("json/")} == {
        "allowed"  # the decisions file of the folder
    }
    levels = {r["verdict"]["action"] for r in report["results"] if r["file"].startswith("asyncio/")}
    assert "error" in levels  # the policy of the folder's decisions file
    assert len({f for f in files if f.startswith("asyncio/")}) > 20
    assert [n["file"] for n in report["not_checked"]] == ["out.py", "blob.bin"]


def test_every_core_by_default_and_the_same_answers(tree):
    """No --jobs: every core; the suppressed results and the text of each are the same."""
    one = check(tree, "--show-suppressed", "--allow-skipped", jobs=1)
    assert one.returncode == 1 and "attributed" not in one.stderr
    same(check(tree, "--show-suppressed", "--allow-skipped"), one)


def test_a_baseline_written_and_read_with_jobs_is_the_one_of_one_job(tree, tmp_path):
    written = []
    for jobs in (1, 2):
        baseline = tmp_path / f"baseline-{jobs}.json"
        r = check(tree, "--baseline", baseline, "--update-baseline", jobs=jobs)
        assert r.returncode == 0, r.stderr
        written.append(baseline.read_bytes())
    assert written[0] == written[1]
    # the baseline's quotes are kept, a new one fails, in the same order with either
    (tree["root"] / "http" / "more.py").write_text((STDLIB / "json" / "scanner.py").read_text())
    try:
        one = check(tree, "--baseline", tmp_path / "baseline-1.json", "--format", "json", jobs=1)
        assert one.returncode == 1 and "(1 warning" in one.stderr, one.stderr
        same(
            check(tree, "--baseline", tmp_path / "baseline-2.json", "--format", "json", jobs=2), one
        )
    finally:
        (tree["root"] / "http" / "more.py").unlink()


def test_a_bad_decisions_file_fails_as_with_one_job(tree, tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(tree["root"], root, symlinks=True)
    (root / "asyncio" / ".recitation.toml").write_text("[allow]\nsources = 3\n")
    (root / "http" / ".recitation.toml").write_text("allowed = [\n")
    one = check(tree, jobs=1, cwd=root)
    assert one.returncode == 2 and "asyncio/.recitation.toml" in one.stderr, one.stderr
    same(check(tree, jobs=2, cwd=root), one)


def test_jobs_must_be_a_count(tree):
    r = check(tree, jobs=-1)
    assert r.returncode == 2 and "--jobs" in r.stderr


def test_a_served_index_with_jobs_answers_as_with_one(tree):
    with Service(tree["index"]) as service:
        one = check(tree, "--format", "json", jobs=1, index=service.url)
        assert one.returncode == 1, one.stderr
        same(check(tree, "--format", "json", jobs=2, index=service.url), one)


# a check whose workers stop at a window holding the word "haversine_poison": they die there
# (WHEN=die) or wait there, writing their process id (WHEN=wait)
STOPPING = """
import os, sys, time
from pathlib import Path
from index_tools.cli import check_work
from index_tools.cli.commands import main
when, marker = sys.argv[1], Path(sys.argv[2])
real = check_work.window_answer
def stopping(idx, window, language, min_tokens):
    if "haversine_poison" in window.text:
        if when == "die":
            os._exit(9)
        with open(marker, "a") as f:
            f.write(f"{os.getpid()}\\n")
        time.sleep(60)
    return real(idx, window, language, min_tokens)
check_work.window_answer = stopping
sys.exit(main(sys.argv[3:]))
"""


def stopping(tree, tmp_path, when: str) -> tuple[subprocess.Popen, Path]:
    root = tmp_path / "tree"
    shutil.copytree(tree["root"], root, symlinks=True)
    (root / "http" / "poison.py").write_text("haversine_poison = 1\n")
    marker = tmp_path / "marker"
    p = subprocess.Popen(
        [sys.executable, "-c", STOPPING, when, str(marker), "check", ".", "--index",
         str(tree["index"]), "--jobs", "2"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        start_new_session=True,
    )  # fmt: skip
    return p, marker


@pytest.mark.skipif(os.name != "posix", reason="workers killed by POSIX means")
def test_a_worker_that_dies_is_an_error_never_a_file_left_out(tree, tmp_path):
    p, _ = stopping(tree, tmp_path, "die")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2, err
    assert out == ""
    assert err.strip().splitlines() == [
        "recitation-index: a worker process ended unexpectedly (exit status 9)"
    ]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return (
        Path(f"/proc/{pid}").exists()
        and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    )


def said(marker: Path) -> bool:
    return marker.exists() and marker.read_text().endswith("\n")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux /proc")
def test_ctrl_c_ends_check_and_its_workers_at_once(tree, tmp_path):
    p, marker = stopping(tree, tmp_path, "wait")
    deadline = time.monotonic() + 60
    # (its line written, not the file just made: the worker opens it, then writes)
    while not said(marker) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.02)
    assert marker.exists(), p.communicate()[1]
    worker = int(marker.read_text().split()[0])
    os.killpg(p.pid, signal.SIGINT)  # as a terminal sends Ctrl-C: to the whole group
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert err.strip().splitlines() == ["recitation-index: interrupted"]
    for _ in range(100):
        if not alive(worker):
            break
        time.sleep(0.05)
    assert not alive(worker)
