"""Nothing lost: concurrent writers, Ctrl-C and kill -9 around the swap, a full disk, an
interrupted first build, special files in a corpus and broken datasets never destroy an
index or end in a traceback."""

from __future__ import annotations

import errno
import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from index_tools import BuildError, BuildOptions, add_to_index, build_index, open_index, store
from index_tools.build import InterruptedAfterPublish
from index_tools.cli import main as cli_main

OPTS = dict(jobs=1, progress=False)
CLI = [sys.executable, "-m", "index_tools.cli"]


def snippet(name: str) -> str:
    """A file with 80+ words of its own, findable by its name."""
    body = "".join(
        f"    total_{name}_{i} = compute_{name}(values[{i}], weight={i})\n" for i in range(8)
    )
    return f"def function_{name}(values):\n{body}    return total_{name}_0\n"


def corpus(root: Path, *names: str) -> str:
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / f"{name}.py").write_text(snippet(name))
    return str(root)


def finds(index_dir: Path, name: str) -> bool:
    with open_index(index_dir) as idx:
        return bool(idx.match(snippet(name)))


def generations(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.iterdir() if p.name.startswith("gen-"))


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_concurrent_adds_never_destroy_the_index(tmp_path):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "base", "base")], idx, BuildOptions(**OPTS))
    added = []
    for round_ in range(4):
        names = [f"r{round_}w{w}" for w in range(3)]
        procs = [
            subprocess.Popen(
                [*CLI, "add", str(idx), corpus(tmp_path / n, n), "-q", "--jobs", "1"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in names
        ]
        for name, p in zip(names, procs):
            _, err = p.communicate(timeout=120)
            if p.returncode == 0:
                added.append(name)
            else:
                # the only way to fail: another writer holds the lock, said in one line
                assert p.returncode == 2, err
                assert "being written by another process" in err
                assert len(err.strip().splitlines()) == 1
        # after every round the index opens and holds everything that was added
        assert finds(idx, "base")
        for name in added:
            assert finds(idx, name), name
        assert len(generations(idx)) == 1
    assert added  # some writers got through


def test_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path):
    from index_tools.lock import WriterLock

    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "a", "a")], idx, BuildOptions(**OPTS))
    with WriterLock(idx), pytest.raises(BuildError, match="being written by another process .pid"):
        add_to_index(idx, [corpus(tmp_path / "b", "b")], BuildOptions(**OPTS))
    add_to_index(idx, [corpus(tmp_path / "b", "b")], BuildOptions(**OPTS))
    assert finds(idx, "a") and finds(idx, "b")


def test_ctrl_c_right_after_the_swap_keeps_the_new_index(tmp_path, monkeypatch, capsys):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))

    real_clean = store.clean

    def interrupted(root, staging=True):
        if not staging:  # publish's cleanup, once CURRENT names the new generation
            raise KeyboardInterrupt  # Ctrl-C while the old generations are being removed
        real_clean(root, staging)

    monkeypatch.setattr(store, "clean", interrupted)
    with pytest.raises(InterruptedAfterPublish):
        build_index([corpus(tmp_path / "new", "new")], idx, BuildOptions(**OPTS))
    assert finds(idx, "new") and not finds(idx, "old")
    # the CLI says what happened: the new index is live
    rc = cli_main(["build", corpus(tmp_path / "newer", "newer"), "--out", str(idx), "-q"])
    assert rc == 130
    assert "after the new index was published" in capsys.readouterr().err
    assert finds(idx, "newer")


KILL_AT_SWAP = textwrap.dedent(
    """
    import os, signal, sys
    from index_tools import store
    from index_tools.cli import main
    real_replace = os.replace
    when = sys.argv[1]
    def replace(src, dst):
        if str(dst).endswith(store.CURRENT_NAME) and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)
        if str(dst).endswith(store.CURRENT_NAME) and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
    store.os.replace = replace
    sys.exit(main(sys.argv[2:]))
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
@pytest.mark.parametrize("when", ["before", "after"])
def test_kill_9_around_the_swap(tmp_path, when):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    new = corpus(tmp_path / "new", "new")
    p = subprocess.run(
        [sys.executable, "-c", KILL_AT_SWAP, when, "build", new, "--out", str(idx), "-q"],
        capture_output=True,
        timeout=120,
    )
    assert p.returncode == -signal.SIGKILL
    # either the old or the new index, whole
    assert finds(idx, "new") == (when == "after")
    assert finds(idx, "old") == (when == "before")
    # the next writer cleans what the killed one left
    add_to_index(idx, [corpus(tmp_path / "more", "more")], BuildOptions(**OPTS))
    assert len(generations(idx)) == 1
    assert not [p for p in idx.iterdir() if p.name.startswith(".CURRENT.")]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_an_interrupted_first_build_can_be_built_again(tmp_path):
    idx = tmp_path / "idx"
    src = corpus(tmp_path / "src", "first")
    p = subprocess.run(
        [sys.executable, "-c", KILL_AT_SWAP, "before", "build", src, "--out", str(idx), "-q"],
        capture_output=True,
        timeout=120,
    )
    assert p.returncode == -signal.SIGKILL
    assert generations(idx)  # a complete but unpublished generation was left
    r = run_cli("build", src, "--out", str(idx), "-q")
    assert r.returncode == 0, r.stderr
    assert finds(idx, "first")
    assert len(generations(idx)) == 1
    # a folder that holds anything else is still refused
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    r = run_cli("build", src, "--out", str(other), "-q")
    assert r.returncode == 2 and "is not empty and is not an index" in r.stderr


def test_disk_full_at_publish_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    real_fsync = os.fsync

    def full(fd):
        if any(p.name.startswith(".CURRENT.") for p in idx.iterdir()):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(store.os, "fsync", full)
    with pytest.raises(BuildError, match="No space left on device"):
        build_index([corpus(tmp_path / "new", "new")], idx, BuildOptions(**OPTS))
    monkeypatch.setattr(store.os, "fsync", real_fsync)
    assert finds(idx, "old")
    assert len(generations(idx)) == 1
    assert not [p for p in idx.iterdir() if p.name.startswith(".CURRENT.")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_in_a_corpus_is_skipped_not_waited_on(tmp_path):
    src = Path(corpus(tmp_path / "src", "real"))
    os.mkfifo(src / "pipe.py")
    r = run_cli("build", str(src), "--out", str(tmp_path / "idx"), "-q", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["files"] == 1
    assert summary["skipped"].get("unsupported") == 1
    assert finds(tmp_path / "idx", "real")


@pytest.mark.parametrize("damage", ["truncated", "not gzip"])
def test_a_broken_compressed_dataset_is_one_line(tmp_path, damage):
    rows = "".join(
        json.dumps({"content": snippet(f"n{i}"), "path": f"n{i}.py", "lang": "Python"}) + "\n"
        for i in range(50)
    ).encode()
    data = gzip.compress(rows)
    data = data[: len(data) // 2] if damage == "truncated" else b"\x1f\x8b\x08" + os.urandom(200)
    (tmp_path / "d.jsonl.gz").write_bytes(data)
    r = run_cli("build", str(tmp_path / "d.jsonl.gz"), "--out", str(tmp_path / "idx"), "-q")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and "d.jsonl.gz" in r.stderr
    assert not (tmp_path / "idx" / store.CURRENT_NAME).exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_permission_denied_on_add_is_one_line(tmp_path):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    idx.chmod(0o555)
    try:
        r = run_cli("add", str(idx), corpus(tmp_path / "new", "new"), "-q")
    finally:
        idx.chmod(0o755)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert finds(idx, "old")
