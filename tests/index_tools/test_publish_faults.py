"""Nothing lost: concurrent writers, Ctrl-C and kill -9 around the swap, a full disk, an
interrupted first build, special files in a corpus and broken datasets never destroy an
index or end in a traceback."""

from __future__ import annotations

import contextlib
import errno
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from index_tools import BuildError, BuildOptions, add_to_index, build_index, open_index
from index_tools.build.local import InterruptedAfterPublish
from index_tools.cli import main as cli_main
from index_tools.store import generations as store

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
    for round_ in range(6):
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
    from index_tools.store.lock import WriterLock

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
    from index_tools.store import generations as store
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


# --- more writers, more interruptions ------------------------------------------------------


def test_concurrent_builds_and_adds_keep_an_index(tmp_path):
    """Builders (which replace the whole index) and adders race over rounds: whatever wins,
    the index opens after every round, holds what every builder and adder keeps (the base
    corpus), and one generation remains."""
    idx = tmp_path / "idx"
    base = corpus(tmp_path / "base", "base")
    build_index([base], idx, BuildOptions(**OPTS))
    for round_ in range(6):
        extra = corpus(tmp_path / f"x{round_}", f"x{round_}")
        commands = [
            ["build", base, extra, "--out", str(idx)],
            ["add", str(idx), corpus(tmp_path / f"a{round_}", f"a{round_}")],
            ["build", base, "--out", str(idx)],
        ]
        procs = [
            subprocess.Popen(
                [*CLI, *c, "-q", "--jobs", "1"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for c in commands
        ]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode in (0, 2), err
            if p.returncode == 2:
                assert "being written by another process" in err
                assert len(err.strip().splitlines()) == 1
        assert finds(idx, "base")
        assert len(generations(idx)) == 1
        assert [p.name for p in idx.iterdir() if p.name.startswith(".CURRENT.")] == []


PAUSE_AT_SWAP = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from index_tools.store import generations as store
    from index_tools.cli import main
    real_replace = os.replace
    when, marker = sys.argv[1], Path(sys.argv[2])
    def pause():
        marker.write_text(str(os.getpid()))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the test signals us
            time.sleep(0.01)
    def replace(src, dst):
        if str(dst).endswith(store.CURRENT_NAME) and when == "before":
            pause()
        real_replace(src, dst)
        if str(dst).endswith(store.CURRENT_NAME) and when == "after":
            pause()
    store.os.replace = replace
    sys.exit(main(sys.argv[3:]))
    """
)


def default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def paused_writer(tmp_path: Path, when: str, *args: str) -> tuple[subprocess.Popen, Path]:
    """A CLI writer that stops right before or right after replacing CURRENT (holding the
    lock) until it is signalled; returned once it has stopped there."""
    marker = tmp_path / f"paused-{when}"
    p = subprocess.Popen(
        [sys.executable, "-c", PAUSE_AT_SWAP, when, str(marker), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as in a foreground terminal, whatever this test inherited (launched in
        # the background, a shell makes its children ignore SIGINT)
        preexec_fn=default_sigint if os.name == "posix" else None,
    )
    for _ in range(6000):
        if marker.exists() or p.poll() is not None:
            break
        time.sleep(0.01)
    assert marker.exists(), p.communicate()[1]
    return p, marker


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("command", ["build", "add"])
@pytest.mark.parametrize("when", ["before", "after"])
def test_sigint_around_the_swap_says_what_happened(tmp_path, when, command):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    new = corpus(tmp_path / "new", "new")
    args = ["build", new, "--out", str(idx)] if command == "build" else ["add", str(idx), new]
    p, _ = paused_writer(tmp_path, when, *args, "-q", "--jobs", "1")
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert len(err.strip().splitlines()) == 1, err
    if when == "before":
        assert "the published index is unchanged" in err
        assert finds(idx, "old") and not finds(idx, "new")
        assert len(generations(idx)) == 1  # the interrupted one was removed
    else:
        assert "after the new index was published" in err
        assert finds(idx, "new")
        assert finds(idx, "old") == (command == "add")
    # the next writer finds a sound index and leaves one generation
    add_to_index(idx, [corpus(tmp_path / "more", "more")], BuildOptions(**OPTS))
    assert finds(idx, "more") and len(generations(idx)) == 1


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_a_writer_paused_at_the_swap_holds_off_the_others(tmp_path):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    p, _ = paused_writer(
        tmp_path, "after", "add", str(idx), corpus(tmp_path / "a", "a"), "-q", "--jobs", "1"
    )
    try:
        r = run_cli("build", corpus(tmp_path / "b", "b"), "--out", str(idx), "-q")
        assert r.returncode == 2 and f"pid {p.pid}" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        # readers are never held off: the index answers with the new generation
        assert finds(idx, "a") and finds(idx, "old")
    finally:
        p.kill()
        p.communicate(timeout=60)
    # the killed writer's lock is gone with it; its leftovers are cleaned by the next writer
    r = run_cli("add", str(idx), corpus(tmp_path / "c", "c"), "-q")
    assert r.returncode == 0, r.stderr
    assert finds(idx, "a") and finds(idx, "c") and len(generations(idx)) == 1


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_a_killed_add_leaves_no_copy_behind_after_the_next_writer(tmp_path):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    p = subprocess.run(
        [sys.executable, "-c", KILL_AT_SWAP, "before", "add", str(idx),
         corpus(tmp_path / "new", "new"), "-q"],
        capture_output=True,
        timeout=120,
    )  # fmt: skip
    assert p.returncode == -signal.SIGKILL
    assert len(generations(idx)) == 2  # the killed add's full copy
    assert finds(idx, "old") and not finds(idx, "new")
    r = run_cli("add", str(idx), corpus(tmp_path / "more", "more"), "-q")
    assert r.returncode == 0, r.stderr
    assert len(generations(idx)) == 1 and finds(idx, "more")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_an_interrupted_first_default_build_can_be_built_again(tmp_path):
    idx = tmp_path / "cache" / "default-index"
    src = corpus(tmp_path / "src", "first")
    env = {**os.environ, "RECITATION_INDEX": str(idx)}
    p = subprocess.run(
        [sys.executable, "-c", KILL_AT_SWAP, "before", "build", "--default", src, "-q"],
        capture_output=True,
        timeout=120,
        env=env,
    )
    assert p.returncode == -signal.SIGKILL
    assert generations(idx) and not (idx / store.CURRENT_NAME).exists()
    r = subprocess.run(
        [*CLI, "build", "--default", src, "-q"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert finds(idx, "first") and len(generations(idx)) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_worker_does_not_keep_the_lock_of_a_killed_writer(tmp_path):
    from index_tools.store.lock import WriterLock

    script = textwrap.dedent(
        """
        import os, sys, time
        from index_tools.store.lock import WriterLock
        WriterLock(sys.argv[1]).acquire()
        ready, said = os.pipe()
        child = os.fork()  # as the builder's worker pool does
        if child == 0:
            os.write(said, b"x")  # (running: past the fork's hooks)
            time.sleep(60)
            os._exit(0)
        os.read(ready, 1)  # (a busy machine may run the child late)
        print(child, flush=True)
        time.sleep(60)
        """
    )
    p = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    worker = int(p.stdout.readline())
    try:
        with pytest.raises(Exception, match="being written by another process"):
            WriterLock(tmp_path).acquire()
        p.kill()
        p.wait(timeout=60)
        lock = WriterLock(tmp_path)
        lock.acquire()  # the worker is still alive, and does not hold the lock
        lock.release()
    finally:
        p.kill()
        with contextlib.suppress(OSError):
            os.kill(worker, signal.SIGKILL)


def test_a_lock_whose_description_cannot_be_written_is_still_released(tmp_path, monkeypatch):
    from index_tools.store import lock as lock_module

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(lock_module.os, "write", full)
    first = lock_module.WriterLock(tmp_path)
    first.acquire()  # held: describing the holder is best effort
    with pytest.raises(lock_module.IndexBusyError):
        lock_module.WriterLock(tmp_path).acquire()
    first.release()
    again = lock_module.WriterLock(tmp_path)
    again.acquire()
    again.release()


def test_opening_while_a_publish_removes_the_generation_opens_the_new_one(tmp_path, monkeypatch):
    """A reader resolves CURRENT, then a writer publishes and removes that generation before
    the reader has opened its files: the reader opens the new generation, no "damaged"."""
    from index_tools.match import index as index_module

    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    old = store.current_generation(idx)
    real = store.open_problems
    calls = []

    def publish_meanwhile(gen, header, *args, **kwargs):
        if not calls:
            add_to_index(idx, [corpus(tmp_path / "new", "new")], BuildOptions(**OPTS))
            assert not (idx / old).exists()
        calls.append(gen.name)
        return real(gen, header, *args, **kwargs)

    monkeypatch.setattr(index_module.store, "open_problems", publish_meanwhile)
    with open_index(idx) as opened:
        assert opened.generation == store.current_generation(idx) != old
        assert calls == [old, opened.generation]
        assert opened.match(snippet("new")) and opened.match(snippet("old"))


def test_readers_during_many_publishes_never_see_damage(tmp_path):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "base", "base")], idx, BuildOptions(**OPTS))
    script = textwrap.dedent(
        """
        import sys
        from index_tools import BuildOptions, add_to_index
        root, folders = sys.argv[1], sys.argv[2:]
        for f in folders:
            add_to_index(root, [f], BuildOptions(jobs=1, progress=False))
        """
    )
    folders = [corpus(tmp_path / f"c{i}", f"c{i}") for i in range(6)]
    writer = subprocess.Popen([sys.executable, "-c", script, str(idx), *folders])
    opened = 0
    seen = set()
    try:
        while writer.poll() is None or opened < 20:
            with open_index(idx) as i:  # never "damaged", whatever the timing
                assert i.match(snippet("base"))
                seen.add(i.generation)
            opened += 1
    finally:
        assert writer.wait(timeout=120) == 0
    assert all(finds(idx, f"c{i}") for i in range(6))
    assert len(generations(idx)) == 1


def test_cleanup_keeps_every_generation_while_current_is_unreadable(tmp_path):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "a", "a")], idx, BuildOptions(**OPTS))
    live = store.current_generation(idx)
    (idx / store.CURRENT_NAME).write_text("not a generation\n")
    store.clean(idx)
    assert generations(idx) == [live]
    gen = idx / live
    assert store.discard(gen) is False and gen.exists()


def test_a_generation_that_cannot_be_removed_yet_is_removed_later(tmp_path, monkeypatch):
    """Windows refuses to remove files a reader maps: the publish succeeds, the old
    generation stays, and a later writer removes it."""
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    old = store.current_generation(idx)
    real_rmtree = store.shutil.rmtree

    def in_use(path, ignore_errors=False, **kwargs):
        if Path(path).name != old:
            real_rmtree(path, ignore_errors=ignore_errors, **kwargs)

    monkeypatch.setattr(store.shutil, "rmtree", in_use)
    build_index([corpus(tmp_path / "new", "new")], idx, BuildOptions(**OPTS))
    assert old in generations(idx) and len(generations(idx)) == 2
    assert finds(idx, "new") and not finds(idx, "old")
    monkeypatch.setattr(store.shutil, "rmtree", real_rmtree)
    add_to_index(idx, [corpus(tmp_path / "more", "more")], BuildOptions(**OPTS))
    assert len(generations(idx)) == 1


def test_replacing_current_while_a_reader_holds_it_is_retried(tmp_path, monkeypatch):
    """On Windows a reader holding CURRENT open makes replacing it fail for a moment."""
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    real_replace = os.replace
    refused = []

    def busy(src, dst):
        if str(dst).endswith(store.CURRENT_NAME) and len(refused) < 3:
            refused.append(dst)
            raise PermissionError(errno.EACCES, "in use")
        real_replace(src, dst)

    monkeypatch.setattr(store, "_IN_USE_RETRIES", True)
    monkeypatch.setattr(store.os, "replace", busy)
    build_index([corpus(tmp_path / "new", "new")], idx, BuildOptions(**OPTS))
    assert len(refused) == 3 and finds(idx, "new")


@pytest.mark.parametrize("where", ["documents", "header"])
def test_disk_full_while_writing_is_one_line_and_keeps_the_index(tmp_path, monkeypatch, where):
    from index_tools.build import local as build_module

    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    if where == "documents":
        monkeypatch.setattr(build_module.DocStore, "put", full)
    else:
        monkeypatch.setattr(store, "finalize_generation", full)
    rc = cli_main(["build", corpus(tmp_path / "new", "new"), "--out", str(idx), "-q", "-j", "1"])
    assert rc == 2
    monkeypatch.undo()
    assert finds(idx, "old") and len(generations(idx)) == 1


def test_permission_denied_on_add_is_one_line_even_for_root(tmp_path, monkeypatch, capsys):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))

    def denied(root):
        raise PermissionError(errno.EACCES, "Permission denied", str(root))

    monkeypatch.setattr(store, "new_generation", denied)
    rc = cli_main(["add", str(idx), corpus(tmp_path / "new", "new"), "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and "Permission denied" in err and len(err.strip().splitlines()) == 1
    assert "unexpected" not in err
    monkeypatch.undo()
    assert finds(idx, "old")


def test_rows_nested_too_deeply_are_malformed_not_a_crash(tmp_path):
    good = json.dumps({"content": snippet("deep"), "path": "deep.py", "lang": "Python"})
    (tmp_path / "d.jsonl").write_text(good + "\n" + "[" * 100_000 + "\n")
    r = run_cli("build", str(tmp_path / "d.jsonl"), "--out", str(tmp_path / "idx"), "-q", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["skipped"] == {"malformed": 1}
    assert finds(tmp_path / "idx", "deep")


def test_a_broken_parquet_dataset_is_one_line(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{"content": snippet(f"p{i}") * 3, "path": f"p{i}.py"} for i in range(400)]
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=100, compression="snappy")
    data = bytearray(path.read_bytes())
    for offset in range(100, len(data) // 2, 331):  # the pages, not the footer
        data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    r = run_cli("build", str(path), "--out", str(tmp_path / "idx"), "-q")
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "d.parquet" in r.stderr
    assert "unexpected" not in r.stderr and "Traceback" not in r.stderr


def _deep_folder(top: Path, depth_chars: int) -> int:
    """Folders nested under `top` past `depth_chars` characters (made through descriptors,
    no path that long is ever used); returns how many files were put at the bottom."""
    fd = os.open(top, os.O_RDONLY)
    length = len(str(top))
    try:
        while length < depth_chars:
            os.mkdir("d" * 200, dir_fd=fd)
            nxt = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
            length += 201
        for name in ("deep_a.py", "deep_b.py"):
            f = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(f, snippet(name[:-3]).encode())
            os.close(f)
    finally:
        os.close(fd)
    return 2


@pytest.mark.skipif(not hasattr(os, "fwalk") or sys.platform == "win32", reason="dir_fd")
def test_files_under_overlong_paths_are_counted_as_skipped(tmp_path):
    src = Path(corpus(tmp_path / "src", "shallow"))
    limit = os.pathconf(src, "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096
    deep = _deep_folder(src, limit + 300)
    r = run_cli("build", str(src), "--out", str(tmp_path / "idx"), "-q", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["files"] == 1
    assert summary["skipped"] == {"path too long": deep}


def test_a_folder_a_file_manager_has_shown_can_hold_a_first_build(tmp_path):
    idx = tmp_path / "idx"
    idx.mkdir()
    (idx / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    (idx / "Thumbs.db").write_bytes(b"\xd0\xcf")
    build_index([corpus(tmp_path / "src", "shown")], idx, BuildOptions(**OPTS))
    assert finds(idx, "shown")
    # what is not ours is never removed by a cleanup
    add_to_index(idx, [corpus(tmp_path / "more", "more")], BuildOptions(**OPTS))
    assert (idx / ".DS_Store").exists() and (idx / "Thumbs.db").exists()


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="POSIX file size limits")
@pytest.mark.parametrize("limit_kb", [8, 40, 120])
@pytest.mark.parametrize("command", ["build", "add"])
def test_real_write_failures_are_one_line_and_keep_the_index(tmp_path, limit_kb, command):
    """Writes that really fail (a file size limit: EFBIG, as a full disk fails them) at
    several points of a build: one line, exit 2, the index as it was, nothing left."""
    import resource

    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    before = sorted(p.name for p in idx.iterdir())
    big = corpus(tmp_path / "big", *(f"b{i}" for i in range(400)))

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_kb << 10, limit_kb << 10))

    args = ["build", big, "--out", str(idx)] if command == "build" else ["add", str(idx), big]
    r = subprocess.run(
        [*CLI, *args, "-q", "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )
    assert r.returncode == 2, (r.returncode, r.stderr)
    # "File too large" from our writes, "Input/output error" from LMDB's (a short write)
    assert len(r.stderr.strip().splitlines()) == 1 and "cannot write the index" in r.stderr
    assert "unexpected" not in r.stderr
    assert sorted(p.name for p in idx.iterdir()) == before
    assert finds(idx, "old")


# -- Ctrl-C, SIGTERM and kill -9 at any moment --------------------------------------------


@pytest.fixture(scope="module")
def many_files(tmp_path_factory) -> str:
    """A corpus that a 2-worker build takes a few seconds over."""
    return corpus(tmp_path_factory.mktemp("many") / "src", *(f"m{i}" for i in range(3000)))


class ParallelBuild:
    """`build --jobs 2 --progress` in its own process group (as a terminal runs it), its
    stderr read as it comes: `wait_for_files(n)` returns once the bar shows n files."""

    def __init__(self, src: str, out: Path):
        self.p = subprocess.Popen(
            [*CLI, "build", src, "--out", str(out), "--jobs", "2", "--progress"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            # Ctrl-C as a terminal's foreground job gets it, however the tests were launched
            preexec_fn=default_sigint,
        )
        self.err = b""
        self._seen = 0
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while chunk := self.p.stderr.read1(4096):
            with self._changed:
                self.err += chunk
                counts = re.findall(rb"indexing: (\d+) files", self.err)
                self._seen = int(counts[-1]) if counts else 0
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for_files(self, n: int) -> None:
        with self._changed:
            assert self._changed.wait_for(
                lambda: self._seen >= n or not self._reader.is_alive(), timeout=120
            )
        assert self._seen >= n, self.err.decode(errors="replace")

    def end(self, timeout: float = 30) -> tuple[int, list[str]]:
        """(exit status, stderr lines other than the bar's) once every process that held
        its stderr has ended."""
        try:
            self.p.wait(timeout=timeout)
            self._reader.join(timeout=timeout)
            assert not self._reader.is_alive(), "a worker outlived the build"
        finally:  # whatever happened, nothing of it is left running
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.p.pid, signal.SIGKILL)
        text = self.err.decode(errors="replace").replace("\r", "\n")
        return self.p.returncode, [
            line for line in text.splitlines() if line.strip() and not line.startswith("indexing")
        ]


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_parallel_build_ends_promptly_on_ctrl_c_or_sigterm_at_any_moment(
    tmp_path, many_files, sig
):
    """Ctrl-C during `build --jobs 2` once hung in 3 of 8 tries holding the writer lock,
    and the pool's workers printed tracebacks."""
    signum = getattr(signal, sig)
    for after in (1, 150, 600, 1500):
        idx = tmp_path / f"idx-{after}"
        build = ParallelBuild(many_files, idx)
        build.wait_for_files(after)
        os.killpg(build.p.pid, signum)  # as a terminal sends Ctrl-C: to the whole group
        status, lines = build.end()
        assert status == 128 + signum, (after, lines)
        word = "interrupted" if sig == "SIGINT" else "terminated"
        assert lines == [f"recitation-index: {word}; the published index is unchanged"], lines
        # the lock is free: the next writer builds there at once
        build_index([corpus(tmp_path / f"next-{after}", "next")], idx, BuildOptions(**OPTS))
        assert finds(idx, "next") and len(generations(idx)) == 1


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_sigterm_to_the_builder_alone_ends_its_workers_too(tmp_path, many_files):
    build = ParallelBuild(many_files, tmp_path / "idx")
    build.wait_for_files(300)
    build.p.terminate()
    status, lines = build.end()
    assert status == 143 and lines == [
        "recitation-index: terminated; the published index is unchanged"
    ]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers end with the parent")
def test_kill_9_of_a_parallel_build_leaves_no_worker_printing_tracebacks(tmp_path, many_files):
    build = ParallelBuild(many_files, tmp_path / "idx")
    build.wait_for_files(300)
    build.p.kill()
    status, lines = build.end()  # stderr ends when the last worker is gone
    assert status == -signal.SIGKILL and lines == [], lines
    build_index([corpus(tmp_path / "next", "next")], tmp_path / "idx", BuildOptions(**OPTS))
    assert finds(tmp_path / "idx", "next")


def handler_installed(pid: int, signum: int) -> bool:
    """Whether process `pid` catches `signum` (Linux: SigCgt in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux /proc")
@pytest.mark.parametrize("command", ["query", "check"])
def test_sigterm_ends_reading_commands_with_one_line(tmp_path, command):
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "src", "alpha")], idx, BuildOptions(**OPTS))
    big = tmp_path / "big.py"
    big.write_text("".join(f"value_{i} = {i}\n" for i in range(400_000)))
    args = {
        "query": ["query", str(idx)],  # waits on its stdin, left open
        "check": ["check", str(big), "--index", str(idx)],  # seconds of matching
    }[command]
    # (a shell may start the tests with SIGTERM ignored, which a child would inherit)
    ignored = signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        p = subprocess.Popen(
            [*CLI, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    finally:
        if ignored:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
    deadline = time.monotonic() + 60
    while not handler_installed(p.pid, signal.SIGTERM):
        assert p.poll() is None, "ended without ever handling SIGTERM"
        assert time.monotonic() < deadline
        time.sleep(0.005)  # polling for the event (the handler in place), not a fixed wait
    p.terminate()
    _, err = p.communicate(timeout=30)
    assert p.returncode == 143, err
    assert err.decode().splitlines() == ["recitation-index: terminated"]


def test_sigterm_while_a_class_is_made_ends_with_one_line(monkeypatch, capsys):
    """A signal that comes while Python makes a class (a module imported as a command
    starts: `__set_name__` of a dataclass field) is raised wrapped in a RuntimeError on
    Python 3.11: still the signal, one line and 143, not an unexpected error."""
    from index_tools.cli import commands

    def command(args) -> int:
        class Named:
            def __set_name__(self, owner, name):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # (the handler raises in here)

        class Owner:
            files = Named()

        return 0

    monkeypatch.setattr(commands, "cmd_stats", command)
    # (a shell may start the tests with SIGTERM ignored, which the command then keeps)
    monkeypatch.setattr(signal, "getsignal", lambda signum: signal.SIG_DFL)
    assert cli_main(["stats", "unused"]) == 143
    assert capsys.readouterr().err.splitlines() == ["recitation-index: terminated"]


@pytest.mark.parametrize("error", ["lmdb-eio", "enospc"])
def test_a_full_disk_says_disk_full(tmp_path, monkeypatch, capsys, error):
    """LMDB reports a short write on a full disk as `mdb_txn_commit: Input/output error`."""
    import shutil as shutil_module

    import lmdb

    from index_tools.build import local as build_module

    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))

    def full(*args, **kwargs):
        if error == "enospc":
            raise OSError(errno.ENOSPC, "No space left on device")
        raise lmdb.Error("mdb_txn_commit: Input/output error")

    real_usage = shutil_module.disk_usage
    monkeypatch.setattr(build_module.DocStore, "put", full)
    monkeypatch.setattr(
        build_module.shutil, "disk_usage", lambda p: real_usage(p)._replace(free=3 << 20)
    )
    rc = cli_main(["build", corpus(tmp_path / "new", "new"), "--out", str(idx), "-q", "-j", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert f"recitation-index: cannot write the index at {idx}: disk full (" in err
    monkeypatch.undo()
    assert finds(idx, "old") and len(generations(idx)) == 1


def test_add_is_not_refused_when_the_generation_it_first_saw_is_replaced(tmp_path, monkeypatch):
    """`add` looks at the index once before it takes the lock; a writer can publish and
    remove the generation it saw in between (seen once under load: "shard-000.rids is
    missing"). Only the look under the lock counts."""
    idx = tmp_path / "idx"
    build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
    real = store.read_header
    calls = []

    def raced(root):
        calls.append(root)
        if len(calls) == 1:
            raise store.IndexOpenError(f"index at {root} is damaged (x is missing); rebuild it")
        return real(root)

    monkeypatch.setattr(store, "read_header", raced)
    add_to_index(idx, [corpus(tmp_path / "new", "new")], BuildOptions(**OPTS))
    monkeypatch.undo()
    assert finds(idx, "new") and finds(idx, "old")


# --- never through a special file (`store.small_files.replace_file`) ------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("command", ["build", "add"])
@pytest.mark.parametrize(
    ("name", "make", "why"),
    [
        ("CURRENT", os.mkfifo, "a named pipe, not a regular file"),
        ("CURRENT", lambda p: p.symlink_to(os.devnull), "a link, not a regular file"),
        ("CURRENT", lambda p: p.symlink_to("elsewhere"), "a link, not a regular file"),
        (".lock", lambda p: p.symlink_to("../victim.txt"), "a link, not a regular file"),
        (".lock", os.mkfifo, "a named pipe, not a regular file"),
    ],
)
def test_a_special_file_where_the_index_keeps_one_is_refused_not_replaced(
    tmp_path, command, name, make, why
):
    """A named pipe or a link at CURRENT was replaced by the publish; a link at .lock had
    its target truncated and written."""
    idx = tmp_path / "idx"
    if command == "add":
        build_index([corpus(tmp_path / "old", "old")], idx, BuildOptions(**OPTS))
        (idx / name).unlink()
    else:
        idx.mkdir()
    (tmp_path / "victim.txt").write_text("keep me\n")
    (tmp_path / "elsewhere").write_text("keep me\n")
    make(idx / name)
    before = os.lstat(idx / name)
    args = [str(idx), corpus(tmp_path / "new", "new")]
    r = run_cli(command, *(args if command == "add" else [args[1], "--out", args[0]]), "-q")
    assert r.returncode == 2, r.stderr
    if command == "build":
        what = "write to" if name == ".lock" else "write the index at"
        assert r.stderr == f"recitation-index: cannot {what} {idx}: {idx / name}: {why}\n"
    else:  # (`add` reads CURRENT first: a link there can be refused as it is read)
        assert len(r.stderr.splitlines()) == 1 and f"{idx / name}: {why}\n" in r.stderr
    after = os.lstat(idx / name)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert (tmp_path / "victim.txt").read_text() == "keep me\n"
    assert (tmp_path / "elsewhere").read_text() == "keep me\n"
    if command == "build":  # refused before anything was built
        assert sorted(p.name for p in idx.iterdir()) == sorted({".lock", name})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_replace_file_refuses_what_is_no_regular_file_and_follows_a_link_to_one(tmp_path):
    """The one way the tools write a file (baselines, decisions, CURRENT, headers)."""
    import socket

    from index_tools.store.small_files import NotRegularFile, replace_file

    def refused(path, **kw) -> str:
        with pytest.raises(NotRegularFile) as e:
            replace_file(path, b"new\n", **kw)
        assert e.value.filename == str(path)
        return e.value.strerror

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    (tmp_path / "to-null").symlink_to(os.devnull)
    (tmp_path / "to-fifo").symlink_to("fifo")
    (tmp_path / "dangling").symlink_to("missing")
    (tmp_path / "loop").symlink_to("loop")
    with socket.socket(socket.AF_UNIX) as s:
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            s.bind("socket")
        finally:
            os.chdir(cwd)
    assert refused(tmp_path / "fifo") == "a named pipe, not a regular file"
    assert refused(tmp_path / "folder") == "a folder, not a regular file"
    assert refused(tmp_path / "socket") == "a socket, not a regular file"
    assert refused(tmp_path / "to-null") == "a link to a device, not a regular file"
    assert refused(tmp_path / "to-fifo") == "a link to a named pipe, not a regular file"
    assert refused(tmp_path / "dangling") == "a link to a missing file"
    assert refused(tmp_path / "loop") == "a link loop"
    assert not (tmp_path / "missing").exists()

    (tmp_path / "real").write_text("old\n")
    os.chmod(tmp_path / "real", 0o640)
    (tmp_path / "link").symlink_to("real")
    assert refused(tmp_path / "link", follow_links=False) == "a link, not a regular file"
    assert replace_file(tmp_path / "link", b"new\n") == tmp_path / "real"
    assert (tmp_path / "link").is_symlink() and (tmp_path / "real").read_text() == "new\n"
    assert os.stat(tmp_path / "real").st_mode & 0o777 == 0o640  # the file's mode is kept
    assert replace_file(tmp_path / "fresh", b"x") == tmp_path / "fresh"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(
        ["fifo", "folder", "to-null", "to-fifo", "dangling", "loop", "socket", "real", "link",
         "fresh"]
    )  # fmt: skip
